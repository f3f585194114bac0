//===- runtime/cuda/RunBatch.cpp - Deferred runs in one launch ------------===//
#include "runtime/cuda/RunBatch.h"

#include "runtime/cuda/Check.h"

#include <algorithm>

namespace graphc::cuda {
namespace {

bool overlap(ByteRange a, ByteRange b) {
  return a.first < b.second && b.first < a.second;
}

} // namespace

bool anyOverlap(llvm::ArrayRef<ByteRange> xs, llvm::ArrayRef<ByteRange> ys) {
  for (ByteRange x : xs)
    for (ByteRange y : ys)
      if (overlap(x, y))
        return true;
  return false;
}

RunBatch::RunBatch(const CudaFusedKernel& kernel, size_t maxRuns)
    : kernel_(kernel), maxRuns_(maxRuns), width_(kernel.argumentCount()) {
  try {
    for (int t = 0; t < 2; ++t) {
      GRAPHC_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&tables_[t]),
                                      maxRuns_ * width_ * sizeof(void*), cudaHostAllocMapped));
      GRAPHC_CUDA_CHECK(cudaEventCreateWithFlags(&done_[t], cudaEventDisableTiming));
    }
  } catch (...) { // no destructor runs for a constructor that throws
    release();
    throw;
  }
}

RunBatch::~RunBatch() {
  release();
}

void RunBatch::release() noexcept {
  for (int t = 0; t < 2; ++t) { // errors at teardown have nowhere to go
    if (done_[t]) {
      cudaEventSynchronize(done_[t]);
      cudaEventDestroy(done_[t]);
    }
    if (tables_[t])
      cudaFreeHost(tables_[t]);
    done_[t] = nullptr;
    tables_[t] = nullptr;
  }
}

bool RunBatch::independent(llvm::ArrayRef<ByteRange> reads,
                           llvm::ArrayRef<ByteRange> writes) const {
  return !anyOverlap(reads, writes_) && !anyOverlap(writes, reads_) && !anyOverlap(writes, writes_);
}

void RunBatch::add(llvm::ArrayRef<void*> args, llvm::ArrayRef<ByteRange> reads,
                   llvm::ArrayRef<ByteRange> writes, cudaStream_t stream) {
  if (pending_ == maxRuns_ || !independent(reads, writes))
    flush(stream);
  if (pending_ == 0 && used_[current_]) // the device may still read this table
    GRAPHC_CUDA_CHECK(cudaEventSynchronize(done_[current_]));
  std::copy(args.begin(), args.end(), tables_[current_] + pending_ * width_);
  reads_.insert(reads_.end(), reads.begin(), reads.end());
  writes_.insert(writes_.end(), writes.begin(), writes.end());
  ++pending_;
}

void RunBatch::flush(cudaStream_t stream) {
  if (pending_ == 0)
    return;
  void** table = nullptr;
  GRAPHC_CUDA_CHECK(
      cudaHostGetDevicePointer(reinterpret_cast<void**>(&table), tables_[current_], 0));
  kernel_.launchRuns(table, static_cast<unsigned>(pending_), stream);
  GRAPHC_CUDA_CHECK(cudaEventRecord(done_[current_], stream));
  used_[current_] = true;
  current_ ^= 1;
  pending_ = 0;
  reads_.clear();
  writes_.clear();
}

} // namespace graphc::cuda
