//===- runtime/cuda/RunBatch.h - Deferred runs in one launch -----*- C++ -*-===//
//
// A program that is one fused kernel is mostly launch overhead when its arrays are
// small: K deferred runs of it cost K launches. A RunBatch gathers deferred runs
// and launches them together through the kernel's table entry point
// (codegen::runsName): one launch, run r in the blocks with blockIdx.y = r, its
// buffers read from row r of a table in pinned, device-mapped host memory.
//
// Runs in one launch execute in no particular order, so a run joins the pending
// ones only when it does not touch what they touch in a conflicting way (it reads
// no buffer they write, writes none they read or write); otherwise, and when the
// table is full, the pending runs are launched first. Two tables alternate, so
// the host fills one while the device may still read the other.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/cuda/FusedKernel.h"

#include "llvm/ADT/ArrayRef.h"

#include <cuda_runtime_api.h>

#include <utility>
#include <vector>

namespace graphc::cuda {

/// The bytes [first, second) a run reads or writes.
using ByteRange = std::pair<const char*, const char*>;

/// True when some range of `xs` and some range of `ys` share a byte.
bool anyOverlap(llvm::ArrayRef<ByteRange> xs, llvm::ArrayRef<ByteRange> ys);

/// Deferred runs of one fused kernel, launched together.
class RunBatch {
public:
  /// Runs of `kernel` (which must outlive the batch), at most `maxRuns` a launch.
  RunBatch(const CudaFusedKernel& kernel, size_t maxRuns);
  RunBatch(const RunBatch&) = delete;
  RunBatch& operator=(const RunBatch&) = delete;
  ~RunBatch();

  /// Adds a run with argument values `args` (CudaFusedKernel::arguments) that reads
  /// `reads` and writes `writes`, first launching the pending runs on `stream` when
  /// it conflicts with them or the table is full.
  void add(llvm::ArrayRef<void*> args, llvm::ArrayRef<ByteRange> reads,
           llvm::ArrayRef<ByteRange> writes, cudaStream_t stream);
  /// Launches the pending runs on `stream` (nothing when there are none).
  void flush(cudaStream_t stream);

private:
  /// True when a run reading `reads` and writing `writes` may run alongside the
  /// pending ones.
  bool independent(llvm::ArrayRef<ByteRange> reads, llvm::ArrayRef<ByteRange> writes) const;
  /// Waits for the tables' last launches and frees them and their events.
  void release() noexcept;

  const CudaFusedKernel& kernel_;
  size_t maxRuns_, width_;
  void** tables_[2] = {nullptr, nullptr};    ///< pinned rows of argument values
  cudaEvent_t done_[2] = {nullptr, nullptr}; ///< the last launch reading each table
  bool used_[2] = {false, false};            ///< done_ was recorded
  int current_ = 0;
  size_t pending_ = 0;
  std::vector<ByteRange> reads_, writes_; ///< of the pending runs
};

} // namespace graphc::cuda
