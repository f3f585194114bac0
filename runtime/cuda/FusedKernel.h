//===- runtime/cuda/FusedKernel.h - Running a kernel on the GPU -*- C++ -*-===//
//
// A codegen::Kernel made ready to run on the current device: its CUDA source
// (codegen/Cuda.h), compiled and loaded through a KernelCache. launch() only
// enqueues the kernel on a stream: no allocation, no synchronization.
//
// Integer division or remainder by zero and negative integer powers, errors on the
// CPU, cannot be reported by a launch that does not wait. A kernel that can meet
// them writes a code into its device error word (errorWord(), 0 when all went
// well); the executor copies it back with the run's other checks and calls
// throwIfFailed().
//
//   CudaFusedKernel k(kernel);                  // compiles or finds it in the cache
//   k.launch({x, w}, {out}, stream);             // enqueues
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Cuda.h"
#include "codegen/Kernel.h"
#include "runtime/cuda/KernelCache.h"

#include "llvm/ADT/ArrayRef.h"

#include <cuda_runtime_api.h>

#include <memory>
#include <string>

namespace graphc::cuda {

/// A fused kernel ready to launch on the GPU.
class CudaFusedKernel {
public:
  /// Generates, compiles (or finds in `cache`) and loads `kernel`'s CUDA kernel;
  /// allocates the error word when the kernel has one. Throws graphc::Error.
  explicit CudaFusedKernel(codegen::Kernel kernel, KernelCache& cache = KernelCache::global());
  CudaFusedKernel(const CudaFusedKernel&) = delete;
  CudaFusedKernel& operator=(const CudaFusedKernel&) = delete;
  ~CudaFusedKernel();

  /// Enqueues the kernel on `stream`. `inputs` are dense device buffers of
  /// Kernel::inputs' types, `outputs` of Kernel::outputs'; an output may be the
  /// buffer of an input of the same size (in place). Throws graphc::Error on a
  /// wrong argument count, a launch error, or (as the CPU) a max, min, mean,
  /// argmax or argmin over zero elements.
  void launch(llvm::ArrayRef<const void*> inputs, llvm::ArrayRef<void*> outputs,
              cudaStream_t stream) const;

  const codegen::Kernel& kernel() const { return k_; }
  /// The generated kernel: source and launch shape.
  const codegen::CudaKernel& cuda() const { return cuda_; }

  /// The device int the kernel stores an error code in, or nullptr when it cannot
  /// fail. It starts at 0 and keeps the first error until resetError().
  int* errorWord() const { return error_; }
  /// Enqueues setting the error word back to 0 (nothing without one).
  void resetError(cudaStream_t stream) const;
  /// Throws the CPU backend's graphc::Error for error code `code` (copied back
  /// from errorWord()); does nothing for 0.
  void throwIfFailed(int code) const;

private:
  codegen::Kernel k_;
  codegen::CudaKernel cuda_;
  std::shared_ptr<const LoadedKernel> loaded_;
  int* error_ = nullptr;
  std::string emptyReduction_; ///< the error every launch throws, if any
};

} // namespace graphc::cuda
