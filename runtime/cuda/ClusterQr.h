//===- runtime/cuda/ClusterQr.h - Householder QR in one cluster of blocks -*- C++ -*-===//
//
// Reduced QR of small and medium matrices (up to 512 rows, as many columns as fit
// in the shared memory of a cluster of up to 8 thread blocks) in one kernel launch,
// where cuSOLVER's geqrf and orgqr are chains of dependent launches that leave the
// GPU nearly idle (0.66 ms and 0.24 ms at 256 x 256 f64 on an H200, for 45 MFLOP).
//
// The matrix's columns are dealt out to the cluster's blocks in panels of up to
// 16 columns (RoutePolicy::qrClusterPanelColumns) (at least 32 bytes wide, so that the loads and
// stores of a row fill whole sectors) and stay in shared memory. The block that holds a panel
// factors it alone, its columns in the warps' registers, a few a warp (each
// reflector goes to the later warps through a count in the block's shared
// memory, as it is made); one cluster barrier per
// panel publishes it, every block copies it once from that block's shared
// memory (distributed shared memory) into its own and applies its reflectors to
// its later columns, each column held in registers through all of them. The
// block that holds the next panel updates that panel first and factors it before
// it arrives at the barrier, so the critical path of a panel is one copy, one
// panel update and one panel factorization. Where each block has a
// multiprocessor of its own and columns are longer than 64 rows
// (passes::qrClusterStreamed), the panels are streamed instead: the block that
// makes a reflector publishes it to every block (a count in each block's shared
// memory, raised with release semantics), the next panel's block applies each
// reflector to that panel as it arrives and factors it one column update after
// the last, and the other blocks apply a panel once it is complete (the block of
// the panel after next to that panel first, the rest after it has factored that
// panel, so that it is ready for the next panel's reflectors as they come); no
// cluster barrier until the end. A streamed QR whose share of Q's rows fits
// beside the panels in each block (passes::qrClusterQByRows) accumulates Q by
// rows meanwhile: each block applies every complete panel to its rows of Q (Q's
// row i is e_i' H(0) ... H(k - 1)), off the critical path, and Q is done with
// R. Otherwise, and where a panel is not finite, Q is formed after R from the
// panels from the last one down, each of Q's columns on the block of A's
// column, with no cluster barrier; a block starts at the last panel that
// reaches its columns (so that the blocks copy different panels at once), and
// its updates are unmasked while every panel so far is finite (the same bits:
// see applyPanel). A column of R, and a row or column of Q, receives the
// reflectors in the order of the unblocked algorithm, so the results do not
// depend on the panel width or on streaming (Q by rows has other bits than Q
// formed after R). At 256 x 256 f64 on an H100, R alone takes 0.500 ms with
// barriers and 0.420 streamed, Q and R 0.669 and 0.494 (cuSOLVER 0.775): the
// kernel beats cuSOLVER on batches (whose clusters run side by side) and on
// single matrices of up to 256 rows, not on longer ones (300 x 300: 1.226
// against 1.009; 512 x 128 0.458 against 0.483, from two runs, not yet
// compared in one); the route is passes::preferClusterQr's.
//
// Results are LAPACK's: the reflectors of dlarfg (R's diagonal -sign(alpha) times
// the column's norm; a zero column gets H = I), Q of those reflectors, the norms
// scaled as dnrm2 scales them when a sum of squares would overflow or underflow.
// Inputs and outputs are row-major (runtime/cuda/Library.h): A batch x m x n, Q
// batch x m x k, R batch x k x n, k = min(m, n), R's lower part zero.
//
// The kernels need compute capability 9.0 (clusters); on older devices ctas()
// is 0 for every shape and the library keeps cuSOLVER.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/RoutePolicy.h"
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
  /// elements, or 0 when it does not take them.
  int ctas(int64_t m, int64_t n, size_t elementSize) const { return shape(m, n, elementSize).ctas; }

  /// The kernel's shape for m x n matrices (passes::chooseQrCluster), with panels
  /// of at most `widest` columns (0: the policy's).
  passes::QrCluster shape(int64_t m, int64_t n, size_t elementSize, int widest = 0) const;

  /// Reduced QR of the `batch` row-major m x n matrices `a` into `q` (m x k) and `r`
  /// (k x n); `q` may be null for R alone. Only enqueues on `stream`. Throws
  /// graphc::Error when ctas(m, n) is 0. `widest` caps the panel width as in
  /// shape(); without `mayStream`, R is factored with a cluster barrier a panel
  /// and Q formed after R where passes::qrClusterStreamed would stream it (the
  /// tests compare both).
  template <typename T>
  void qr(int64_t batch, int64_t m, int64_t n, const T* a, T* q, T* r, cudaStream_t stream,
          int widest = 0, bool mayStream = true) const;

  /// The kernels' CUDA C++ and name expressions.
  static ModuleSource moduleSource();

private:
  std::shared_ptr<const LoadedModule> module_;
  std::map<std::string, Kernel> kernels_;
  size_t maxSharedBytes_ = 0; ///< opt-in shared memory per block; 0 without clusters
  int multiprocessors_ = 0;
};

} // namespace graphc::cuda
