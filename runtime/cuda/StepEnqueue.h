//===- runtime/cuda/StepEnqueue.h - One run's steps on a lane's stream -*- C++ -*-===//
//
// Internal to the cuda backend. A StepEnqueuer puts the work of one run of a
// prepared program (runtime/cuda/PreparedProgram.h) on a lane's stream
// (runtime/cuda/Lane.h), step by step: it zeroes the check words, copies the staged
// inputs, enqueues each step (a fused kernel, a library call, a data movement, nodes
// run on the host, a Cholesky solve kernel) with the buffers it finds in the run, and
// copies the outputs and the check words into the lane's ring. While a run is
// captured it names the nodes the CUDA graph (runtime/cuda/CapturedRun.h) rebinds,
// and it points a captured run at a new run's buffers. Which lane a run takes,
// capturing and reading the checks back are the executor's
// (runtime/cuda/CudaBackend.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/cuda/CapturedRun.h"
#include "runtime/cuda/HelperKernels.h"
#include "runtime/cuda/Lane.h"
#include "runtime/cuda/PreparedProgram.h"
#include "runtime/cuda/StepProfile.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

namespace graphc::cuda {

/// The caller's buffers of one run.
struct RunBuffers {
  llvm::ArrayRef<const void*> params;
  llvm::ArrayRef<void*> outputs;
};

/// The buffers of a fused kernel step in a run.
struct KernelCall {
  llvm::SmallVector<const void*, 8> ins;
  llvm::SmallVector<void*, 4> outs;
  int* errorWord;
};

/// Enqueues the runs of one prepared program (see the file comment).
class StepEnqueuer {
public:
  /// Runs of `prepared`, whose parameters have types `paramTypes`; `profile`, when
  /// not null, times each step. The enqueuer keeps the three.
  StepEnqueuer(const PreparedProgram& prepared, llvm::ArrayRef<ir::TensorType> paramTypes,
               StepProfile* profile);

  /// Enqueues a run with buffers `b` step by step on `lane`'s stream, its check
  /// words copied to the ring's slot `ringSlot`; with `record`, names the nodes a
  /// capture needs to rebind.
  void enqueue(Lane& lane, const RunBuffers& b, size_t ringSlot, CapturedRun* record) const;
  /// Points `lane`'s captured run's kernels and copies at the buffers `b` and the
  /// ring's slot `ringSlot`.
  void rebind(Lane& lane, const RunBuffers& b, size_t ringSlot) const;
  /// The buffers of kernel step `p` in a run on `lane` with buffers `b`.
  KernelCall kernelCall(const Lane& lane, const RunBuffers& b, const PreparedStep& p) const;

private:
  void* resolve(const Lane& lane, const RunBuffers& b, Source s) const;
  /// The buffers of `sources` in a run.
  llvm::SmallVector<const void*, 4> resolveAll(const Lane& lane, const RunBuffers& b,
                                               llvm::ArrayRef<Source> sources) const;
  /// The launch of CholeskySolve step `p` in a run.
  KernelLaunch choleskySolveLaunch(const Lane& lane, const RunBuffers& b,
                                   const PreparedStep& p) const;
  /// The copies of a run, in order: staged inputs, outputs, check words. Calls
  /// f(id, dst, src, bytes, kind) for each that moves bytes.
  template <typename F>
  void forEachCopy(const Lane& lane, const RunBuffers& b, size_t ringSlot, F&& f) const;
  void runLibrary(Lane& lane, const RunBuffers& b, const PreparedStep& p) const;
  /// Summarizes a batched step's info words into its check words (on the device).
  void summarizeInfo(Lane& lane, const PreparedStep& p) const;
  /// Runs a step's nodes on the host: downloads their operands, uploads results.
  void runOnHost(Lane& lane, const RunBuffers& b, const PreparedStep& p) const;

  const PreparedProgram& prepared_;
  llvm::ArrayRef<ir::TensorType> paramTypes_;
  StepProfile* profile_;
  const HelperKernels* helpers_ = nullptr; ///< when a step's info words are summarized
};

} // namespace graphc::cuda
