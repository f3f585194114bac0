//===- runtime/cuda/Library.h - Linear algebra through cuBLAS/cuSOLVER -*- C++ -*-===//
//
// The library-call steps of the CUDA backend: one linear-algebra ir::Node (matmul,
// syrk, solve, cholesky, triangular_solve, lu, qr, inverse, det, logdet, trace) run
// on dense row-major device buffers with cuBLAS, cuSOLVER and a few small helper
// kernels (compiled with NVRTC once, then loaded from the kernel cache's disk
// folder in later processes). Results match the CPU backend
// (runtime/cpu/Linalg.cpp, docs/ops.md): same layouts, same zeroed triangles, same
// failure messages.
//
// A LibraryContext belongs to one (device, stream). reserve() is called for every
// library node when a program is prepared; it sizes the device workspace once.
// run() then only enqueues work on the stream: no allocation, no synchronization.
// Numeric failures (not positive definite, singular) are written by the device to
// `deviceInfo`, one int per batch item, and decoded after the run by failure():
//
//   ctx.reserve(node);                                  // prepare time
//   ctx.run(node, {a, b}, {x}, info);                   // enqueue
//   ... synchronize, copy infoCount(node) ints to `host` ...
//   if (auto msg = LibraryContext::failure(node, host)) // "matrix is singular (...)"
//
// Row-major data is handed to the column-major libraries as its transpose: C = A*B
// is C' = B'*A', and a row-major lower Cholesky factor is potrf(UPPER) on the same
// memory. Where LAPACK's answer depends on the orientation (LU pivots, QR) the
// matrix is transposed into the workspace first.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "runtime/cuda/Pool.h"

#include "llvm/ADT/ArrayRef.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>

namespace graphc::cuda {

class HelperKernels; // HelperKernels.h: the NVRTC-compiled helper kernels

/// cuBLAS and cuSOLVER handles bound to one stream, and the device workspace of
/// the library calls enqueued on it. Not thread-safe; move-less and copy-less.
class LibraryContext {
public:
  /// Creates the handles on device `device`, bound to `stream`; the workspace
  /// comes from DevicePool::forDevice(device).
  LibraryContext(int device, cudaStream_t stream);
  LibraryContext(const LibraryContext&) = delete;
  LibraryContext& operator=(const LibraryContext&) = delete;
  ~LibraryContext();

  /// True when run() handles `n`: a linear-algebra op on f32/f64 (trace: any
  /// numeric dtype).
  static bool supports(const ir::Node& n);

  /// The number of ints `deviceInfo` must hold for `n`: its batch count (the
  /// product of the leading axes, 1 when there are none) for the ops that can fail
  /// at run time (cholesky, solve, inverse, triangular_solve), 0 for the others.
  static int64_t infoCount(const ir::Node& n);

  /// Grows the workspace to what `n` needs (cuSOLVER's queried work sizes plus
  /// scratch copies). Call once per node before its first run(); may allocate.
  void reserve(const ir::Node& n);

  /// Enqueues `n` on the stream. `inputs` are dense row-major device buffers of the
  /// operand types (not modified); `outputs` are preallocated dense device buffers
  /// of the result types; `deviceInfo` is a device array of infoCount(n) ints
  /// (may be null when that is 0). Item b of deviceInfo becomes 0 on success,
  /// otherwise the 1-based position of the failure in batch item b: the leading
  /// minor (cholesky), i of U(i,i) = 0 (solve, inverse) or of A(i,i) = 0
  /// (triangular_solve). `unread` (bit i for result i) names results nothing reads:
  /// an op may leave them unwritten (qr's Q: no orgqr). Never allocates or
  /// synchronizes; throws graphc::Error for an unsupported node, a launch error, or a
  /// node that was not reserve()d.
  void run(const ir::Node& n, llvm::ArrayRef<const void*> inputs, llvm::ArrayRef<void*> outputs,
           int* deviceInfo, unsigned unread = 0);

  /// Enqueues the value of the source node `n` into the dense device buffer `out`
  /// on `stream` of `device` when `n` is a full or an eye of f32/f64 (a constant
  /// made on the device, not computed on the host and copied); returns false,
  /// enqueuing nothing, for other nodes. Needs no LibraryContext: a program without
  /// library calls makes no cuBLAS or cuSOLVER handles.
  static bool materialize(const ir::Node& n, void* out, int device, cudaStream_t stream);

  /// Decodes infoCount(n) ints copied back from run()'s `deviceInfo`: nullopt when
  /// every batch item succeeded, otherwise the CPU backend's message for the first
  /// failing item, e.g. "matrix is not positive definite (batch item 2, leading
  /// minor 3)" (without the "op (%name): " prefix the executor adds).
  static std::optional<std::string> failure(const ir::Node& n, const int* hostInfo);

  /// Ints of a summary of a batch's info words: the first failing item and its word
  /// (HelperKernels::summarizeInfo).
  static constexpr int64_t kSummaryWords = 2;
  /// failure() of a summary copied back from HelperKernels::summarizeInfo() for `n`.
  static std::optional<std::string> summaryFailure(const ir::Node& n, const int* hostSummary);

  /// With false, LU and QR of batches of small matrices loop over the items with
  /// cuSOLVER as they do for large matrices, instead of taking cuBLAS's batched
  /// routines (to measure one against the other); true by default.
  void setBatchedFactorizations(bool on) { batchedFactorizations_ = on; }
  bool batchedFactorizations() const { return batchedFactorizations_; }

  /// Where QR runs: as passes::preferClusterQr says (the default), always in the
  /// cluster kernel (runtime/cuda/ClusterQr.h) where it takes the shape, or never
  /// (cuBLAS and cuSOLVER only); to test and measure one against the other.
  enum class QrRoute { Auto, Cluster, Library };
  void setQrRoute(QrRoute route) { qrRoute_ = route; }
  QrRoute qrRoute() const { return qrRoute_; }

  /// With true, the context's calls run beside others' on other streams (deferred
  /// runs on several lanes), and routes are chosen for throughput (passes::
  /// preferClusterQr's `sharing`). Set before the first run: a captured run keeps
  /// its routes.
  void setSharing(bool on) { sharing_ = on; }
  bool sharing() const { return sharing_; }

  /// With true, large f32 gemm, syrk and triangular solves run in f64 (operands
  /// converted on the device, results converted back): faster and more accurate on
  /// GPUs whose f64 tensor cores outrun their f32 units. On by default on sm_90.
  /// Set before reserve(): the workspace depends on it.
  void setSingleInDouble(bool on) { singleInDouble_ = on; }
  bool singleInDouble() const { return singleInDouble_; }

  /// Bytes of the device workspace reserved so far.
  size_t workspaceBytes() const { return workspace_.bytes(); }
  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }
  cusolverDnHandle_t cusolver() const { return cusolver_; }

private:
  /// Prints the route of `n` (GRAPHC_LOG=routes).
  void logRoute(const ir::Node& n) const;
  /// Destroys the cuBLAS and cuSOLVER handles made so far.
  void destroyHandles() noexcept;

  int device_;
  cudaStream_t stream_;
  cublasHandle_t cublas_ = nullptr;
  cusolverDnHandle_t cusolver_ = nullptr;
  const HelperKernels* kernels_ = nullptr;
  DeviceBuffer cublasWorkspace_;
  DeviceBuffer workspace_;
  bool batchedFactorizations_ = true;
  QrRoute qrRoute_ = QrRoute::Auto;
  bool sharing_ = false;
  bool singleInDouble_;
  std::set<const ir::Node*> logged_; ///< nodes whose route was printed
};

} // namespace graphc::cuda
