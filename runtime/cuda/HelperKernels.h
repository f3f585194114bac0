//===- runtime/cuda/HelperKernels.h - The library's helper kernels -*- C++ -*-===//
//
// The small CUDA kernels the library steps need around cuBLAS and cuSOLVER
// (transposes, triangle masks, identities, permutations, determinants from LU
// factors, traces, fills, pointer arrays for batched routines, Q from Householder
// reflectors), the batched small-matrix kernels of SmallBatched.h and the cluster
// QR of ClusterQr.h. Each of the three is one NVRTC translation unit per compute
// capability, compiled once per process at most through KernelCache::global() (a
// later process finds it in the disk cache).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/cuda/ClusterQr.h"
#include "runtime/cuda/KernelCache.h"
#include "runtime/cuda/KernelLibrary.h"
#include "runtime/cuda/SmallBatched.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace graphc::cuda {

/// Blocks of 32 x 8 threads, one per 32 x 32 tile of `batch` rows x cols
/// matrices, and along z the first 65535 items (the kernels loop over the rest).
/// Throws graphc::Error when the rows need more than one grid of tiles.
LaunchConfig tiledLaunch(int64_t batch, int64_t rows, int64_t cols, cudaStream_t stream);

/// The unsigned type the data movement kernels move elements of `bytes` (1, 2, 4
/// or 8) as: "unsigned char", ..., "unsigned long long".
const char* movedType(int64_t bytes);

/// The helper kernels of the current device's compute capability.
class HelperKernels {
public:
  /// The kernels for the current device, made on first use and kept to exit.
  static const HelperKernels& forCurrentDevice();

  /// The kernel named by `expression`, e.g. "transpose<double>". Throws
  /// graphc::Error for an unknown one.
  Kernel operator[](const std::string& expression) const;

  /// Enqueues out = the transposes of the `batch` row-major rows x cols matrices
  /// `in` (items `inStride` elements apart; out's `outStride` apart), elements of
  /// `bytes` (1, 2, 4 or 8) moved as bits, through shared-memory tiles.
  void transpose(int64_t batch, int64_t rows, int64_t cols, int64_t bytes, const void* in,
                 int64_t inStride, void* out, int64_t outStride, cudaStream_t stream) const;

  /// Enqueues `summary` (LibraryContext::kSummaryWords ints, 8-byte aligned, zero
  /// before) = the first of the `count` info words `words` that is not 0, with its
  /// item, so that a run copies back 8 bytes rather than an int per item
  /// (LibraryContext::summaryFailure decodes it).
  void summarizeInfo(int64_t count, const int* words, int* summary, cudaStream_t stream) const;

  /// The batched small-matrix kernels.
  const SmallBatched& small() const { return small_; }
  /// The QR kernel of small and medium matrices.
  const ClusterQr& qr() const { return qr_; }

  /// The kernels' CUDA C++ and name expressions (what the constructor compiles,
  /// besides the modules of SmallBatched and ClusterQr).
  static ModuleSource moduleSource();
  /// Both modules the constructor compiles: to compile them in parallel with other
  /// work first (KernelCache::compileAll), so that the constructor finds them.
  static std::vector<ModuleSource> moduleSources();

private:
  HelperKernels();

  std::shared_ptr<const LoadedModule> module_;
  std::map<std::string, Kernel> kernels_;
  Kernel firstFailure_;
  SmallBatched small_;
  ClusterQr qr_;
};

} // namespace graphc::cuda
