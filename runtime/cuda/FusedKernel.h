//===- runtime/cuda/FusedKernel.h - Running a kernel on the GPU -*- C++ -*-===//
//
// A codegen::Kernel made ready to run on the current device: its CUDA source
// (codegen/Cuda.h), compiled and loaded through a KernelCache. launch() only
// enqueues the kernel on a stream: no allocation, no synchronization.
//
// Integer division or remainder by zero and negative integer powers, errors on the
// CPU, cannot be reported by a launch that does not wait. A kernel that can meet
// them (hasErrorWord()) takes a device int from the caller, which it leaves alone
// when all goes well and otherwise sets, once, to an error code; the executor
// zeroes it before the run, copies it back with the run's other checks and calls
// throwIfFailed().
//
//   CudaFusedKernel k(kernel);                      // compiles or finds it in the cache
//   k.launch({x, w}, {out}, errorWord, stream);      // enqueues
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Cuda.h"
#include "codegen/Kernel.h"
#include "runtime/cuda/KernelCache.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cuda_runtime_api.h>

#include <memory>
#include <string>

namespace graphc::cuda {

/// What the current device lets a generated kernel use (its shared memory per
/// block), for codegen::emitCuda.
codegen::CudaTarget currentTarget();

/// A fused kernel ready to launch on the GPU.
class CudaFusedKernel {
public:
  /// Generates (for currentTarget()), compiles (or finds in `cache`) and loads
  /// `kernel`'s CUDA kernel. Throws graphc::Error.
  explicit CudaFusedKernel(const codegen::Kernel& kernel,
                           KernelCache& cache = KernelCache::global());
  /// The same for `kernel` whose CUDA kernel `cuda` (codegen::emitCuda) is already
  /// generated, e.g. to compile many in parallel first (KernelCache::compileAll).
  CudaFusedKernel(codegen::Kernel kernel, codegen::CudaKernel cuda,
                  KernelCache& cache = KernelCache::global());

  /// Enqueues the kernel on `stream`. `inputs` are dense device buffers of
  /// Kernel::inputs' types, `outputs` of Kernel::outputs'; an output may be the
  /// buffer of an input of the same size (in place). `errorWord` is a zeroed device
  /// int when hasErrorWord(), ignored otherwise. Throws graphc::Error on a wrong
  /// argument count, a launch error, or alwaysFails().
  void launch(llvm::ArrayRef<const void*> inputs, llvm::ArrayRef<void*> outputs, int* errorWord,
              cudaStream_t stream) const {
    launchOf(inputs, outputs, errorWord).enqueue(stream);
  }
  /// The launch launch() enqueues: to enqueue, or to record in a CUDA graph.
  KernelLaunch launchOf(llvm::ArrayRef<const void*> inputs, llvm::ArrayRef<void*> outputs,
                        int* errorWord) const;

  /// Enqueues `runs` runs in one launch (codegen::runsName): row r of `table`, a
  /// device-readable array of runs x arguments().size() values, holds run r's
  /// arguments. Throws like launch().
  void launchRuns(void* const* table, unsigned runs, cudaStream_t stream) const;

  /// How many parameters the kernel takes (arguments()' size).
  size_t argumentCount() const {
    return k_.inputs.size() + k_.outputs.size() + cuda_.hasErrorWord + (cuda_.size >= 0);
  }
  /// The values of the kernel's parameters for a launch, in order: what launch()
  /// passes, for a caller that launches it another way (a CUDA graph node, a
  /// table of runs). A point count the kernel takes (CudaKernel::size) comes last.
  llvm::SmallVector<void*, 16> arguments(llvm::ArrayRef<const void*> inputs,
                                         llvm::ArrayRef<void*> outputs, int* errorWord) const;

  const codegen::Kernel& kernel() const { return k_; }
  /// The generated kernel: source and launch shape.
  const codegen::CudaKernel& cuda() const { return cuda_; }

  /// True when the kernel reports errors through an error word.
  bool hasErrorWord() const { return cuda_.hasErrorWord; }
  /// The error every launch throws before enqueuing anything (as the CPU: a max,
  /// min, mean, argmax or argmin over zero elements), or "" when there is none.
  const std::string& alwaysFails() const { return emptyReduction_; }
  /// Throws the CPU backend's graphc::Error for error code `code` (copied back
  /// from the error word); does nothing for 0.
  void throwIfFailed(int code) const;

private:
  codegen::Kernel k_;
  codegen::CudaKernel cuda_;
  std::shared_ptr<const LoadedKernel> loaded_;
  Kernel runs_;                ///< the kernel computing several runs per launch
  std::string emptyReduction_; ///< the error every launch throws, if any
};

} // namespace graphc::cuda
