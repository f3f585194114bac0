//===- runtime/cuda/ClusterQr.h - Householder QR in one cluster of blocks -*- C++ -*-===//
//
// Reduced QR of small and medium matrices (up to 512 rows, as many columns as fit
// in the shared memory of a cluster of up to 8 thread blocks) in one kernel launch,
// where cuSOLVER's geqrf and orgqr are chains of dependent launches that leave the
// GPU nearly idle (0.66 ms and 0.24 ms at 256 x 256 f64 on an H200, for 45 MFLOP).
//
// The matrix's columns are dealt out to the cluster's blocks in runs of 32 bytes
// (so that the loads and stores of a row fill whole sectors) and stay in shared
// memory. Step j of the unblocked Householder QR makes reflector j in the block
// that holds column j; one cluster barrier publishes it, every block copies it
// once from that block's shared memory (distributed shared memory) into its own,
// and every warp applies it to its own columns. The warp that holds column j + 1
// updates it first and makes the next reflector before it arrives at the
// barrier, so the critical path of a step is one barrier, one copy, one column
// update and one reflector. Q is then formed column by column from the
// reflectors (each of Q's columns on the block of A's column), with no cluster
// barrier. A step costs 1-2 us on an H200 whatever the size: the kernel beats
// cuSOLVER on batches (whose clusters run side by side) and on single matrices
// of up to about 128 rows, not on one 256 x 256 (0.94 ms against 0.77); the
// route is passes::preferClusterQr's.
//
// Results are LAPACK's: the reflectors of dlarfg (R's diagonal -sign(alpha) times
// the column's norm; a zero column gets H = I), Q as dorgqr forms it, the norms
// scaled as dnrm2 scales them when a sum of squares would overflow or underflow.
// Inputs and outputs are row-major (runtime/cuda/Library.h): A batch x m x n, Q
// batch x m x k, R batch x k x n, k = min(m, n), R's lower part zero.
//
// The kernels need compute capability 9.0 (clusters); on older devices ctas()
// is 0 for every shape and the library keeps cuSOLVER.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/cuda/KernelLibrary.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace graphc::cuda {

struct LoadedModule;
struct ModuleSource;

/// The cluster QR kernels of the current device.
class ClusterQr {
public:
  /// Loads the kernels for the current device (from the kernel cache) when it has
  /// clusters; keep one per device (HelperKernels holds it).
  ClusterQr();

  /// The blocks per matrix the kernel takes for m x n matrices of `elementSize`-byte
  /// elements (passes::chooseQrClusterSize), or 0 when it does not take them.
  int ctas(int64_t m, int64_t n, size_t elementSize) const;

  /// Reduced QR of the `batch` row-major m x n matrices `a` into `q` (m x k) and `r`
  /// (k x n); `q` may be null for R alone. Only enqueues on `stream`. Throws
  /// graphc::Error when ctas(m, n) is 0.
  template <typename T>
  void qr(int64_t batch, int64_t m, int64_t n, const T* a, T* q, T* r, cudaStream_t stream) const;

  /// The kernels' CUDA C++ and name expressions.
  static ModuleSource moduleSource();

private:
  std::shared_ptr<const LoadedModule> module_;
  std::map<std::string, Kernel> kernels_;
  size_t maxSharedBytes_ = 0; ///< opt-in shared memory per block; 0 without clusters
};

} // namespace graphc::cuda
