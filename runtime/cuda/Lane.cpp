//===- runtime/cuda/Lane.cpp - A stream and what a run on it needs --------===//
#include "runtime/cuda/Lane.h"

#include <algorithm>

namespace graphc::cuda {

Lane::Lane(const PreparedProgram& prepared, DevicePool& pool,
           llvm::ArrayRef<ir::TensorType> paramTypes)
    : ring(prepared.checkWords() * (prepared.checkWords() ? kRingRuns : 0)) {
  if (prepared.callsLibrary())
    library.emplace(0, stream);
  for (const PreparedStep& p : prepared.steps())
    if (p.how == PreparedStep::How::Library)
      library->reserve(*p.step->nodes.front());
  for (const passes::Slot& s : prepared.program().slots())
    slots.emplace_back(pool, std::max<int64_t>(s.bytes, 1), stream);
  for (int param : prepared.staged())
    staging.emplace_back(pool, std::max<int64_t>(paramTypes[param].bytes(), 1), stream);
  int64_t words = std::max<int64_t>(prepared.deviceWords(), 1);
  checks = DeviceBuffer(pool, words * sizeof(int), stream);
  GRAPHC_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void Lane::settle() noexcept {
  // Errors here have nowhere to go: the run's own failure is being reported.
  CapturedRun::discardCapture(stream);
  cudaStreamSynchronize(stream);
  cudaGetLastError();
  queued = 0;
  runs.clear();
  failure.reset();
}

} // namespace graphc::cuda
