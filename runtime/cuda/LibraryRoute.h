//===- runtime/cuda/LibraryRoute.h - Which routine runs a library node -*- C++ -*-===//
//
// Internal to runtime/cuda/Library*.cpp. chooseRoute() picks the routine a library
// node runs through on the GPU, from its shapes, the thresholds of
// passes/RoutePolicy.h, what the device's kernels fit (shared memory) and the
// context's settings; Call<T> (LibraryCall.h) follows it, and with
// GRAPHC_LOG=routes a context prints each node's route at its first run.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "runtime/cuda/HelperKernels.h"
#include "runtime/cuda/Library.h"

#include <cstddef>
#include <string>

namespace graphc::cuda::library {

/// The routines of the library steps.
enum class Route {
  Gemm,          ///< matmul: cuBLAS gemm
  SmallGram,     ///< syrk: SmallBatched's Gram kernel
  TallGram,      ///< syrk: SmallBatched's tall Gram
  GemmGram,      ///< syrk: one gemm, then the mirror
  Syrk,          ///< syrk: cuBLAS syrk per item, then the mirror
  TinyLu,        ///< solve, inverse: SmallBatched's LU in registers
  Lu,            ///< solve, inverse, lu, det, logdet: cuSOLVER getrf (and getrs) per item
  BatchedLu,     ///< the same through cuBLAS getrfBatched (and getrsBatched)
  SmallCholesky, ///< cholesky: SmallBatched's kernel
  Potrf,         ///< cholesky: cuSOLVER potrf
  PotrfBatched,  ///< cholesky: cuSOLVER potrfBatched
  SmallTrsm,     ///< triangular_solve: SmallBatched's kernel
  BlockedTrsm,   ///< triangular_solve: by blocks through gemm (BlockedSolve.h)
  VectorTrsm,    ///< triangular_solve of one vector: SmallBatched's solveVector
  PanelTrsm,     ///< triangular_solve of a medium triangle: SmallBatched's panelSolve
  Trsm,          ///< triangular_solve: cuBLAS trsm
  TrsmBatched,   ///< triangular_solve: cuBLAS trsmBatched
  ClusterQr,     ///< qr: one kernel per cluster of blocks (ClusterQr.h)
  BatchedQr,     ///< qr: cuBLAS geqrfBatched and a kernel forming Q
  Qr,            ///< qr: cuSOLVER geqrf and orgqr per item
  Trace,         ///< trace: a helper kernel
};

/// What chooseRoute() reads besides the node.
struct RouteFacts {
  const HelperKernels& kernels; ///< the device's kernels and what they fit
  bool batchedFactorizations;   ///< LibraryContext::batchedFactorizations()
  LibraryContext::QrRoute qrRoute;
  bool sharing; ///< LibraryContext::sharing()
};

/// The route of library node `n` computed in elements of `elementSize` bytes (8
/// for the f32 calls that run in f64). With `why`, also the reason, as the log
/// prints it: the shape against the thresholds that decided.
Route chooseRoute(const ir::Node& n, size_t elementSize, const RouteFacts& f,
                  std::string* why = nullptr);

/// The route as a log line names it: "cuSOLVER potrf".
const char* routeName(Route r);

} // namespace graphc::cuda::library
