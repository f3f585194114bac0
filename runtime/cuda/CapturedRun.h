//===- runtime/cuda/CapturedRun.h - A run replayed as a CUDA graph -*- C++ -*-===//
//
// A CapturedRun records the work one run enqueues on a stream (fused kernels,
// cuBLAS and cuSOLVER calls, copies) as a CUDA graph, once, and replays it with one
// cudaGraphLaunch per run. The nodes that touch the caller's memory are recorded
// by name while capturing: a fused kernel's node and a copy's node can then be
// pointed at new buffers before a launch (cudaGraphExecKernelNodeSetParams,
// cudaGraphExecMemcpyNodeSetParams1D) without capturing again. Library calls keep
// the pointers they were captured with, so the executor gives them only memory of
// its own (runtime/cuda/CudaBackend.cpp).
//
//   CapturedRun graph;
//   graph.begin(stream);
//   KernelLaunch l = k.launchOf(ins, outs, word);
//   l.enqueue(stream);                  graph.recordKernel(0, l, stream);
//   library.run(...);                                    // captured, fixed pointers
//   copy(out, slot, stream);            graph.recordCopy(0, stream);
//   graph.end(stream);                                    // instantiates
//   ...
//   graph.bindKernel(0, newArgs);  graph.bindCopy(0, out2, slot, bytes);
//   graph.launch(stream);
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/cuda/KernelLibrary.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

namespace graphc::cuda {

/// One run's work as an instantiated CUDA graph with rebindable nodes.
class CapturedRun {
public:
  CapturedRun() = default;
  CapturedRun(const CapturedRun&) = delete;
  CapturedRun& operator=(const CapturedRun&) = delete;
  ~CapturedRun();

  /// Starts capturing the work enqueued on `stream` from this thread.
  void begin(cudaStream_t stream);
  /// Names the launch `l` just captured on `stream` kernel `id` (0, 1, ... in any
  /// order) and remembers its argument values.
  void recordKernel(size_t id, const KernelLaunch& l, cudaStream_t stream);
  /// Names the 1-D copy just captured on `stream` copy `id`.
  void recordCopy(size_t id, void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                  cudaStream_t stream);
  /// Ends the capture and instantiates the graph. Throws graphc::Error when the
  /// capture failed (e.g. a library call that cannot be captured).
  void end(cudaStream_t stream);
  /// Ends a capture that failed on the way, discarding what was captured; safe to
  /// call when no capture is active.
  void abandon(cudaStream_t stream) noexcept;
  /// Ends the capture of `stream`, if one is active, and throws away what it
  /// captured.
  static void discardCapture(cudaStream_t stream) noexcept;

  /// True once end() has instantiated the graph.
  bool ready() const { return exec_ != nullptr; }

  /// Points kernel `id` at new argument values (same count) for the next launches;
  /// does nothing when they are the ones it has.
  void bindKernel(size_t id, llvm::ArrayRef<void*> args);
  /// Points copy `id` at new buffers for the next launches; does nothing when they
  /// are the ones it has.
  void bindCopy(size_t id, void* dst, const void* src);
  /// Enqueues one replay on `stream`.
  void launch(cudaStream_t stream) const;

private:
  struct KernelNode {
    cudaGraphNode_t node = nullptr;
    cudaKernelNodeParams params{};
    llvm::SmallVector<void*, 16> args;
  };
  struct CopyNode {
    cudaGraphNode_t node = nullptr;
    void* dst = nullptr;
    const void* src = nullptr;
    size_t bytes = 0;
    cudaMemcpyKind kind = cudaMemcpyDefault;
  };

  /// The node captured last on `stream`.
  static cudaGraphNode_t lastNode(cudaStream_t stream);

  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  std::vector<KernelNode> kernels_;
  std::vector<CopyNode> copies_;
};

} // namespace graphc::cuda
