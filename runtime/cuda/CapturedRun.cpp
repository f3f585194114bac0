//===- runtime/cuda/CapturedRun.cpp - A run replayed as a CUDA graph ------===//
#include "runtime/cuda/CapturedRun.h"

#include "runtime/cuda/Check.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>

namespace graphc::cuda {

CapturedRun::~CapturedRun() {
  // Errors at teardown have nowhere to go.
  if (exec_)
    cudaGraphExecDestroy(exec_);
  if (graph_)
    cudaGraphDestroy(graph_);
}

void CapturedRun::begin(cudaStream_t stream) {
  GRAPHC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
}

cudaGraphNode_t CapturedRun::lastNode(cudaStream_t stream) {
  cudaStreamCaptureStatus status;
  const cudaGraphNode_t* deps = nullptr;
  size_t count = 0;
  GRAPHC_CUDA_CHECK(
      cudaStreamGetCaptureInfo(stream, &status, nullptr, nullptr, &deps, nullptr, &count));
  if (status != cudaStreamCaptureStatusActive || count != 1)
    throw Error(fmt::format("CUDA graph capture: expected one node at the end of the stream, "
                            "found {} (capture {})",
                            count, status == cudaStreamCaptureStatusActive ? "active" : "broken"));
  return deps[0];
}

void CapturedRun::recordKernel(size_t id, const KernelLaunch& l, cudaStream_t stream) {
  // The node's parameters come from the launch: cudaGraphKernelNodeGetParams
  // cannot name a kernel of a library loaded at run time (it fails with
  // cudaErrorInvalidDeviceFunction).
  KernelNode k;
  k.node = lastNode(stream);
  k.params.func = static_cast<void*>(l.kernel.handle());
  k.params.gridDim = l.config.grid;
  k.params.blockDim = l.config.block;
  k.params.sharedMemBytes = static_cast<unsigned>(l.config.sharedBytes);
  k.args.assign(l.args.begin(), l.args.end());
  kernels_.resize(std::max(kernels_.size(), id + 1));
  kernels_[id] = std::move(k);
}

void CapturedRun::recordCopy(size_t id, void* dst, const void* src, size_t bytes,
                             cudaMemcpyKind kind, cudaStream_t stream) {
  copies_.resize(std::max(copies_.size(), id + 1));
  copies_[id] = CopyNode{lastNode(stream), dst, src, bytes, kind};
}

void CapturedRun::end(cudaStream_t stream) {
  GRAPHC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
  GRAPHC_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
}

void CapturedRun::discardCapture(cudaStream_t stream) noexcept {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) == cudaSuccess &&
      status != cudaStreamCaptureStatusNone) {
    cudaGraph_t partial = nullptr;
    if (cudaStreamEndCapture(stream, &partial) == cudaSuccess && partial)
      cudaGraphDestroy(partial);
  }
  cudaGetLastError(); // the failed capture's error is reported by the caller
}

void CapturedRun::abandon(cudaStream_t stream) noexcept {
  discardCapture(stream);
  kernels_.clear();
  copies_.clear();
}

void CapturedRun::bindKernel(size_t id, llvm::ArrayRef<void*> args) {
  KernelNode& k = kernels_.at(id);
  if (llvm::ArrayRef<void*>(k.args) == args)
    return;
  k.args.assign(args.begin(), args.end());
  llvm::SmallVector<void*, 16> addresses;
  for (void*& v : k.args)
    addresses.push_back(&v);
  cudaKernelNodeParams p = k.params;
  p.kernelParams = addresses.data();
  GRAPHC_CUDA_CHECK(cudaGraphExecKernelNodeSetParams(exec_, k.node, &p));
}

void CapturedRun::bindCopy(size_t id, void* dst, const void* src) {
  CopyNode& c = copies_.at(id);
  if (c.dst == dst && c.src == src)
    return;
  c.dst = dst;
  c.src = src;
  GRAPHC_CUDA_CHECK(cudaGraphExecMemcpyNodeSetParams1D(exec_, c.node, dst, src, c.bytes, c.kind));
}

void CapturedRun::launch(cudaStream_t stream) const {
  GRAPHC_CUDA_CHECK(cudaGraphLaunch(exec_, stream));
}

} // namespace graphc::cuda
