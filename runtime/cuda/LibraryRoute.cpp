//===- runtime/cuda/LibraryRoute.cpp - Which routine runs a library node --===//
#include "runtime/cuda/LibraryRoute.h"

#include "ir/OpCases.h"
#include "passes/RoutePolicy.h"

#include "runtime/cuda/LibraryPlan.h"
#include "support/Error.h"

#include <fmt/format.h>

namespace graphc::cuda::library {

using ir::Op;

namespace {

/// LU through the batched routines, or cuSOLVER per item.
Route lu(const Matrices& a, const RouteFacts& f) {
  return f.batchedFactorizations && batchedFactorization(a) ? Route::BatchedLu : Route::Lu;
}

Route syrk(const ir::Node& n, size_t elementSize, const RouteFacts& f) {
  switch (syrkRoute(n)) {
  case passes::SyrkRoute::TallGram:
    return Route::TallGram;
  case passes::SyrkRoute::SmallGram:
    if (f.kernels.small().fitsGram(Matrices(n.type()).rows, elementSize))
      return Route::SmallGram;
    return Route::GemmGram;
  case passes::SyrkRoute::Gemm:
    return Route::GemmGram;
  case passes::SyrkRoute::Syrk:
    return Route::Syrk;
  }
  return Route::Syrk;
}

Route cholesky(const Matrices& m, size_t elementSize, const RouteFacts& f) {
  if (m.rows <= policy().smallCholeskyMaxN && f.kernels.small().fitsCholesky(m.rows, elementSize))
    return Route::SmallCholesky;
  return m.batch == 1 ? Route::Potrf : Route::PotrfBatched;
}

Route triangularSolve(const ir::Node& n, size_t elementSize, const RouteFacts& f) {
  Matrices a(n.operand(0).type()), x(n.type());
  if (!n.attrs().flag("right_side") && a.rows <= policy().smallSolveMaxN &&
      x.cols <= policy().smallSolveMaxCols &&
      f.kernels.small().fitsTriangularSolve(a.rows, x.cols, elementSize))
    return Route::SmallTrsm;
  if (blockedSolve(n))
    return Route::BlockedTrsm;
  if (oneVector(n))
    return Route::VectorTrsm;
  return x.batch == 1 ? Route::Trsm : Route::TrsmBatched;
}

Route qr(const Matrices& a, size_t elementSize, const RouteFacts& f) {
  int ctas = f.qrRoute == LibraryContext::QrRoute::Library
                 ? 0
                 : f.kernels.qr().ctas(a.rows, a.cols, elementSize);
  if (ctas && (f.qrRoute == LibraryContext::QrRoute::Cluster ||
               passes::preferClusterQr(policy(), a.batch, a.rows, a.cols, f.sharing)))
    return Route::ClusterQr;
  return f.batchedFactorizations && batchedFactorization(a) ? Route::BatchedQr : Route::Qr;
}

} // namespace

Route chooseRoute(const ir::Node& n, size_t elementSize, const RouteFacts& f) {
  auto a = [&] { return Matrices(n.operand(0).type()); };
  switch (n.op()) {
  case Op::Matmul:
    return Route::Gemm;
  case Op::Syrk:
    return syrk(n, elementSize, f);
  case Op::Solve:
  case Op::Inverse:
    return SmallBatched::fitsLuSolve(a().rows) ? Route::TinyLu : lu(a(), f);
  case Op::Lu:
  case Op::Det:
  case Op::Logdet:
    return lu(a(), f);
  case Op::Cholesky:
    return cholesky(a(), elementSize, f);
  case Op::TriangularSolve:
    return triangularSolve(n, elementSize, f);
  case Op::Qr:
    return qr(a(), elementSize, f);
  case Op::Trace:
    return Route::Trace;
  GRAPHC_ALL_BUT_LINALG_CASES:
    break;
  }
  throw Error(fmt::format("internal error: {} is not a library op", ir::opName(n.op()).str()));
}

const char* routeName(Route r) {
  switch (r) {
  case Route::Gemm:
    return "cuBLAS gemm";
  case Route::SmallGram:
    return "SmallBatched's Gram kernel";
  case Route::TallGram:
    return "SmallBatched's tall Gram kernel";
  case Route::GemmGram:
    return "cuBLAS gemm, then the mirror";
  case Route::Syrk:
    return "cuBLAS syrk per item, then the mirror";
  case Route::TinyLu:
    return "SmallBatched's LU in registers";
  case Route::Lu:
    return "cuSOLVER getrf per item";
  case Route::BatchedLu:
    return "cuBLAS getrfBatched";
  case Route::SmallCholesky:
    return "SmallBatched's Cholesky kernel";
  case Route::Potrf:
    return "cuSOLVER potrf";
  case Route::PotrfBatched:
    return "cuSOLVER potrfBatched";
  case Route::SmallTrsm:
    return "SmallBatched's triangular solve kernel";
  case Route::BlockedTrsm:
    return "blocked triangular solve through gemm";
  case Route::VectorTrsm:
    return "SmallBatched's one-vector solve kernel";
  case Route::Trsm:
    return "cuBLAS trsm";
  case Route::TrsmBatched:
    return "cuBLAS trsmBatched";
  case Route::ClusterQr:
    return "the cluster QR kernel";
  case Route::BatchedQr:
    return "cuBLAS geqrfBatched";
  case Route::Qr:
    return "cuSOLVER geqrf and orgqr per item";
  case Route::Trace:
    return "the trace kernel";
  }
  return "?";
}

} // namespace graphc::cuda::library
