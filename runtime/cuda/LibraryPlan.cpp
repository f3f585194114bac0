//===- runtime/cuda/LibraryPlan.cpp - Shapes and workspace of library calls ===//
#include "runtime/cuda/LibraryPlan.h"

#include "ir/OpCases.h"

#include "runtime/cuda/Check.h"
#include "runtime/cuda/Routines.h"
#include "runtime/cuda/SmallBatched.h"
#include "support/Error.h"

#include <climits>
#include <fmt/format.h>

namespace graphc::cuda::library {

using ir::Op;

/// The route thresholds (passes/RoutePolicy.h).
const passes::RoutePolicy& policy() {
  return passes::RoutePolicy::gpu();
}

/// True when LU and QR of `m` take cuBLAS's batched routines.
bool batchedFactorization(const Matrices& m) {
  return m.batch > 1 && std::max(m.rows, m.cols) <= policy().batchedFactorMaxN;
}

/// A dimension as the int cuBLAS and cuSOLVER take.
int toInt(int64_t v) {
  if (v > INT_MAX)
    throw Error(fmt::format("matrix dimension {} is too large for cuBLAS/cuSOLVER", v));
  return static_cast<int>(v);
}

/// The column-major solve behind the row-major triangular_solve `n` when it goes by
/// blocks (BlockedSolve.h): op(A) X = B is X' op(A)' = B', and X op(A) = B is
/// op(A)' X' = B', where A read column-major is A' (its lower triangle is the upper
/// one there): the side flips, the transpose stays.
std::optional<BlockedSolve> blockedSolve(const ir::Node& n) {
  Matrices mx(n.type());
  BlockedSolve s;
  s.left = n.attrs().flag("right_side");
  s.m = mx.cols;
  s.n = mx.rows;
  s.upper = n.attrs().flag("lower");
  s.transpose = n.attrs().flag("transpose_a");
  s.unit = n.attrs().flag("unit_diagonal");
  return solvesByBlocks(s) ? std::optional(s) : std::nullopt;
}

/// True when triangular solve `n` solves for one vector: one column, or one row on
/// the right side.
bool oneVector(const ir::Node& n) {
  Matrices mx(n.type());
  return n.attrs().flag("right_side") ? mx.rows == 1 : mx.cols == 1;
}

/// How syrk `n` runs (passes::chooseSyrkRoute).
passes::SyrkRoute syrkRoute(const ir::Node& n) {
  Matrices x(n.operand(0).type()), c(n.type());
  bool transpose = n.attrs().flag("transpose");
  return passes::chooseSyrkRoute(policy(), c.batch, c.rows, transpose ? x.rows : x.cols, transpose,
                                 kTallGramMaxN);
}

/// True when the f32 call `n` runs in f64 on a device whose f64 tensor cores are
/// faster (`fastDouble`): gemm, syrk and blocked triangular solves, each dimension
/// at least policy().singleInDoubleMinN.
bool widens(const ir::Node& n, bool fastDouble) {
  Op op = n.op();
  if (!fastDouble || n.operand(0).type().dtype != ir::DType::F32 ||
      (op != Op::Matmul && op != Op::Syrk && op != Op::TriangularSolve))
    return false;
  Matrices a(n.operand(0).type()), c(n.type());
  if (op == Op::TriangularSolve)
    return blockedSolve(n) && std::min({a.rows, c.rows, c.cols}) >= policy().singleInDoubleMinN;
  return std::min({a.rows, a.cols, c.rows, c.cols}) >= policy().singleInDoubleMinN;
}

namespace {

/// What a node needs besides its inputs and outputs, in elements.
struct Layout {
  int64_t matrix = 0;   ///< T: a column-major copy of the operand, or a blocked solve's work
  int64_t second = 0;   ///< T: a column-major right-hand side, or QR's tau
  int64_t pivots = 0;   ///< int: getrf pivots
  int64_t info = 0;     ///< int: info of calls whose failures are not reported
  int64_t pointers = 0; ///< void*: pointer arrays of batched routines
  int64_t work = 0;     ///< T: cuSOLVER work (lwork)
  int64_t widened = 0;  ///< double: the f64 copies of an f32 call's operands and results
  int64_t partials = 0; ///< double: a tall Gram's partial sums
};

Scratch carve(const Layout& l, int64_t elementSize, void* base) {
  size_t offset = 0;
  auto take = [&](int64_t count, int64_t size) -> void* {
    size_t at = offset;
    offset += (count * size + 255) / 256 * 256;
    return base && count ? static_cast<char*>(base) + at : nullptr;
  };
  Scratch s;
  s.matrix = take(l.matrix, elementSize);
  s.second = take(l.second, elementSize);
  s.pivots = static_cast<int*>(take(l.pivots, sizeof(int)));
  s.info = static_cast<int*>(take(l.info, sizeof(int)));
  s.pointers = static_cast<void**>(take(l.pointers, sizeof(void*)));
  s.work = take(l.work, elementSize);
  s.widened = take(l.widened, elementSize);
  s.partials = static_cast<double*>(take(l.partials, sizeof(double)));
  s.lwork = toInt(l.work);
  s.bytes = offset;
  return s;
}

/// The workspace `n` needs, with cuSOLVER's work size for element type T.
template <typename T> Layout planFor(cusolverDnHandle_t solver, const ir::Node& n) {
  Matrices ma(n.operand(0).type());
  int rows = toInt(ma.rows), cols = toInt(ma.cols), lwork = 0;
  Layout l;
  switch (n.op()) {
  case Op::Solve:
  case Op::Inverse:
    if (SmallBatched::fitsLuSolve(ma.rows)) { // luSolve needs only the info words
      l.info = ma.batch;
      break;
    }
    if (n.op() == Op::Solve)
      l.second = ma.batch * ma.rows * Matrices(n.operand(1).type()).cols;
    [[fallthrough]];
  case Op::Lu:
  case Op::Det:
  case Op::Logdet:
    l.matrix = ma.batch * ma.size();
    l.pivots = ma.batch * ma.rows;
    l.info = ma.batch;
    // The factors' pointers, and for getrsBatched the right-hand sides'.
    if (batchedFactorization(ma))
      l.pointers = (n.op() == Op::Solve || n.op() == Op::Inverse ? 2 : 1) * ma.batch;
    // cuSOLVER's work also when batched: LibraryContext can be told to loop.
    if (rows > 0)
      GRAPHC_CUDA_CHECK(Lib<T>::getrfWork(solver, rows, rows, nullptr, rows, &lwork));
    l.work = lwork;
    break;
  case Op::Cholesky:
    if (!n.attrs().flag("upper"))
      l.matrix = ma.batch * ma.size(); // the factor before its transpose
    if (ma.batch > 1)
      l.pointers = ma.batch;
    else if (rows > 0)
      GRAPHC_CUDA_CHECK(
          Lib<T>::potrfWork(solver, CUBLAS_FILL_MODE_LOWER, rows, nullptr, rows, &lwork));
    l.work = lwork;
    break;
  case Op::TriangularSolve:
    l.pointers = ma.batch > 1 ? 2 * ma.batch : 0;
    if (oneVector(n))
      l.info = ma.batch; // solveVector's counters
    if (auto blocked = blockedSolve(n))
      l.matrix = blockedSolveWorkspace(*blocked);
    break;
  case Op::Qr: {
    int k = std::min(rows, cols), qrWork = 0;
    l.matrix = ma.batch * ma.size();
    l.second = ma.batch * k;
    l.info = ma.batch;
    if (batchedFactorization(ma))
      l.pointers = 2 * ma.batch; // the matrices' and tau's
    if (k > 0) {
      GRAPHC_CUDA_CHECK(Lib<T>::geqrfWork(solver, rows, cols, nullptr, rows, &lwork));
      GRAPHC_CUDA_CHECK(Lib<T>::orgqrWork(solver, rows, k, k, nullptr, rows, nullptr, &qrWork));
    }
    l.work = std::max(lwork, qrWork);
    break;
  }
  case Op::Syrk:
    if (syrkRoute(n) == passes::SyrkRoute::TallGram)
      l.partials = SmallBatched::tallGramPartials(ma.batch, ma.rows, ma.cols);
    break;
  case Op::Matmul: // matmul and trace need nothing
  case Op::Trace:
  GRAPHC_ALL_BUT_LINALG_CASES:
    break;
  }
  return l;
}

} // namespace

Scratch plan(cusolverDnHandle_t solver, const ir::Node& n, void* base, bool fastDouble) {
  ir::DType dtype = n.operand(0).type().dtype;
  if (!ir::isFloat(dtype))
    return carve(Layout{}, 1, base);
  if (widens(n, fastDouble)) {
    Layout l = planFor<double>(solver, n);
    for (ir::Value v : n.operands())
      l.widened += v.type().numel();
    for (const ir::TensorType& t : n.types())
      l.widened += t.numel();
    return carve(l, sizeof(double), base);
  }
  return visitFloat(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return carve(planFor<T>(solver, n), sizeof(T), base);
  });
}

} // namespace graphc::cuda::library
