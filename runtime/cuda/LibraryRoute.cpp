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

/// A route and, where the log asks for it, why: the shape against the thresholds
/// (passes/RoutePolicy.h) that chose it.
class Choice {
public:
  explicit Choice(std::string* why) : why_(why) {}
  template <typename... Args>
  Route operator()(Route r, fmt::format_string<Args...> reason, Args&&... args) const {
    if (why_)
      *why_ = fmt::format(reason, std::forward<Args>(args)...);
    return r;
  }

private:
  std::string* why_;
};

/// LU through the batched routines, or cuSOLVER per item.
Route lu(const Matrices& a, const RouteFacts& f, const Choice& c) {
  const int64_t order = std::max(a.rows, a.cols), most = policy().batchedFactorMaxN;
  if (a.batch == 1)
    return c(Route::Lu, "one matrix");
  if (!f.batchedFactorizations)
    return c(Route::Lu, "batched factorizations are off");
  if (batchedFactorization(a))
    return c(Route::BatchedLu, "a batch, order {} <= batchedFactorMaxN {}", order, most);
  return c(Route::Lu, "order {} > batchedFactorMaxN {}", order, most);
}

Route syrk(const ir::Node& n, size_t elementSize, const RouteFacts& f, const Choice& c) {
  const Matrices x(n.operand(0).type()), out(n.type());
  const int64_t k = n.attrs().flag("transpose") ? x.rows : x.cols;
  const passes::RoutePolicy& p = policy();
  switch (syrkRoute(n)) {
  case passes::SyrkRoute::TallGram:
    return c(Route::TallGram, "X'X of {} <= {} columns, {} >= tallGramMinRows {} rows", out.rows,
             kTallGramMaxN, k, p.tallGramMinRows);
  case passes::SyrkRoute::SmallGram:
    if (f.kernels.small().fitsGram(out.rows, elementSize))
      return c(Route::SmallGram, "a batch, order {} <= smallGramMaxN {}", out.rows,
               p.smallGramMaxN);
    return c(Route::GemmGram, "order {} does not fit the Gram kernel", out.rows);
  case passes::SyrkRoute::Gemm:
    return c(Route::GemmGram, "order {} <= gemmSyrkMaxN {}", out.rows, p.gemmSyrkMaxN);
  case passes::SyrkRoute::Syrk:
    break;
  }
  return c(Route::Syrk, "order {} > gemmSyrkMaxN {}", out.rows, p.gemmSyrkMaxN);
}

Route cholesky(const Matrices& m, size_t elementSize, const RouteFacts& f, const Choice& c) {
  const int64_t most = policy().smallCholeskyMaxN;
  if (m.rows <= most && f.kernels.small().fitsCholesky(m.rows, elementSize))
    return c(Route::SmallCholesky, "order {} <= smallCholeskyMaxN {}", m.rows, most);
  Route library = m.batch == 1 ? Route::Potrf : Route::PotrfBatched;
  if (m.rows <= most)
    return c(library, "order {} does not fit the small kernel", m.rows);
  return c(library, "order {} > smallCholeskyMaxN {}", m.rows, most);
}

Route triangularSolve(const ir::Node& n, size_t elementSize, const RouteFacts& f, const Choice& c) {
  const Matrices a(n.operand(0).type()), x(n.type());
  const passes::RoutePolicy& p = policy();
  const bool right = n.attrs().flag("right_side");
  const int64_t columns = right ? x.rows : x.cols;
  if (!right && a.rows <= p.smallSolveMaxN && x.cols <= p.smallSolveMaxCols &&
      f.kernels.small().fitsTriangularSolve(a.rows, x.cols, elementSize))
    return c(Route::SmallTrsm, "order {} <= smallSolveMaxN {}, {} <= smallSolveMaxCols {} columns",
             a.rows, p.smallSolveMaxN, x.cols, p.smallSolveMaxCols);
  if (blockedSolve(n))
    return c(Route::BlockedTrsm,
             "order {} against blockedSolveMinN {}, {} right-hand sides against "
             "blockedSolveManyColumns {}",
             a.rows, p.blockedSolveMinN, columns, p.blockedSolveManyColumns);
  if (oneVector(n))
    return c(Route::VectorTrsm, "one right-hand side");
  const Route library = x.batch == 1 ? Route::Trsm : Route::TrsmBatched;
  if (!passes::preferPanelSolve(p, a.rows))
    return c(library, "order {} > panelSolveMaxN {}", a.rows, p.panelSolveMaxN);
  if (f.kernels.small().fitsPanelSolve(a.rows, elementSize))
    return c(Route::PanelTrsm, "order {} <= panelSolveMaxN {}", a.rows, p.panelSolveMaxN);
  return c(library, "order {} does not fit the panel solve", a.rows);
}

Route qr(const Matrices& a, size_t elementSize, const RouteFacts& f, const Choice& c) {
  using QrRoute = LibraryContext::QrRoute;
  const int ctas =
      f.qrRoute == QrRoute::Library ? 0 : f.kernels.qr().ctas(a.rows, a.cols, elementSize);
  if (ctas && f.qrRoute == QrRoute::Cluster)
    return c(Route::ClusterQr, "the context asks for the cluster kernel");
  if (ctas && passes::preferClusterQr(policy(), a.batch, a.rows, a.cols, f.sharing))
    return c(Route::ClusterQr, "{} rows on {} blocks{}", a.rows, ctas,
             f.sharing ? ", beside other runs" : "");
  // The reasons are formatted only where the log asks for them (Choice).
  const Route library =
      f.batchedFactorizations && batchedFactorization(a) ? Route::BatchedQr : Route::Qr;
  if (f.qrRoute == QrRoute::Library)
    return c(library, "the context asks for the library");
  if (ctas == 0)
    return c(library, "the cluster kernel does not take it");
  if (a.batch <= 1 && !f.sharing)
    return c(library, "one matrix of {} > qrClusterSingleMaxRows {} rows", a.rows,
             policy().qrClusterSingleMaxRows);
  return c(library, "{} matrices of {} x {}: faster in the library (preferClusterQr)", a.batch,
           a.rows, a.cols);
}

} // namespace

Route chooseRoute(const ir::Node& n, size_t elementSize, const RouteFacts& f, std::string* why) {
  auto a = [&] { return Matrices(n.operand(0).type()); };
  const Choice c(why);
  switch (n.op()) {
  case Op::Matmul:
    return c(Route::Gemm, "every product");
  case Op::Syrk:
    return syrk(n, elementSize, f, c);
  case Op::Solve:
  case Op::Inverse:
    if (SmallBatched::fitsLuSolve(a().rows))
      return c(Route::TinyLu, "order {} <= {}", a().rows, kTinyLuMaxN);
    return lu(a(), f, c);
  case Op::Lu:
  case Op::Det:
  case Op::Logdet:
    return lu(a(), f, c);
  case Op::Cholesky:
    return cholesky(a(), elementSize, f, c);
  case Op::TriangularSolve:
    return triangularSolve(n, elementSize, f, c);
  case Op::Qr:
    return qr(a(), elementSize, f, c);
  case Op::Trace:
    return c(Route::Trace, "every trace");
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
  case Route::PanelTrsm:
    return "SmallBatched's panel solve kernel";
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
