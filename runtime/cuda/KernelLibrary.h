//===- runtime/cuda/KernelLibrary.h - Load and launch kernels ---*- C++ -*-===//
//
// Loads a compiled module (runtime/cuda/Nvrtc.h) into the current context and
// launches its kernels, all through the CUDA runtime API (cudaLibraryLoadData,
// cudaLibraryGetKernel, cudaLaunchKernel; cudaLaunchKernelExC for clusters), so
// libcuda is loaded by cudart on demand and never linked.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/cuda/Nvrtc.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cuda_runtime_api.h>

namespace graphc::cuda {

/// Grid, block, dynamic shared memory and stream of one launch.
struct LaunchConfig {
  dim3 grid{1, 1, 1};
  dim3 block{1, 1, 1};
  size_t sharedBytes = 0;
  cudaStream_t stream = nullptr;
  unsigned cluster = 1; ///< blocks per cluster along x (compute capability 9.0)

  /// A 1-D launch covering `n` threads in blocks of `blockSize`.
  static LaunchConfig linear(int64_t n, unsigned blockSize = 256, cudaStream_t stream = nullptr);
};

/// A kernel of a loaded library. Valid while the library lives.
class Kernel {
public:
  Kernel() = default;
  explicit Kernel(cudaKernel_t k) : kernel_(k) {}

  /// Launches the kernel. `args[i]` points at the value of parameter i. Launch
  /// errors throw graphc::Error; errors during execution show at the next sync.
  void launch(const LaunchConfig& config, llvm::ArrayRef<void*> args) const;
  cudaKernel_t handle() const { return kernel_; }

private:
  cudaKernel_t kernel_ = nullptr;
};

/// One launch of a kernel: the kernel, its grid and shared memory, and the values
/// of its parameters, each in a pointer-sized slot (CapturedRun::bindKernel's
/// form). `config.stream` is not used.
struct KernelLaunch {
  Kernel kernel;
  LaunchConfig config;
  llvm::SmallVector<void*, 16> args;

  /// Enqueues it on `stream` (nothing when the grid is empty).
  void enqueue(cudaStream_t stream) const;
};

/// A loaded code image (RAII around cudaLibrary_t). Move-only.
class KernelLibrary {
public:
  /// Loads `module`'s CUBIN or PTX. Throws graphc::Error.
  explicit KernelLibrary(const CompiledModule& module);
  KernelLibrary(KernelLibrary&& other) noexcept;
  KernelLibrary& operator=(KernelLibrary&& other) noexcept;
  KernelLibrary(const KernelLibrary&) = delete;
  KernelLibrary& operator=(const KernelLibrary&) = delete;
  ~KernelLibrary();

  /// The kernel with (mangled or extern "C") name `name`. Throws graphc::Error.
  Kernel kernel(llvm::StringRef name) const;

private:
  cudaLibrary_t library_ = nullptr;
};

} // namespace graphc::cuda
