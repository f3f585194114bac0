//===- runtime/cuda/Library.cpp - Linear algebra through cuBLAS/cuSOLVER --===//
//
// Each op is written once for float and double: Lib<T> (Routines.h) maps the S/D routines of
// cuBLAS and cuSOLVER to one name (as Lapack<T> does in runtime/cpu/Linalg.cpp),
// and the helper kernels are templates instantiated for both. Batches of matrices
// are laid out back to back; cuBLAS calls take the whole batch where cuBLAS has a
// batched routine (gemm, trsm; potrfBatched for Cholesky), cuSOLVER calls loop over
// the items on the stream. Batches of small matrices take runtime/cuda/SmallBatched.h's
// kernels for Cholesky and left-side triangular solves, a batched gemm for syrk, and
// cuBLAS's batched LU and QR (with a helper kernel forming Q) for the LU-based ops and qr.
// General solves and inverses up to n = 8 take SmallBatched's LU in registers,
// batched or not.
// Large triangular solves go by blocks through gemm (BlockedSolve.h).
//
// The workspace of a node is planned by plan(), the same function for reserve()
// and run(), so run() can check that the reserved workspace is large enough.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Library.h"

#include "ir/OpCases.h"
#include "passes/RoutePolicy.h"

#include "runtime/cuda/BlockedSolve.h"
#include "runtime/cuda/Check.h"
#include "runtime/cuda/Device.h"
#include "runtime/cuda/HelperKernels.h"
#include "runtime/cuda/KernelCache.h"
#include "runtime/cuda/Routines.h"
#include "runtime/cuda/SmallBatched.h"
#include "support/Error.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <fmt/format.h>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

namespace graphc::cuda {

namespace {

using ir::Op;

//===----------------------------------------------------------------------===//
// Shapes, workspace
//===----------------------------------------------------------------------===//

/// The matrices of an array: batch count and the last two dimensions.
struct Matrices {
  int64_t batch, rows, cols;

  explicit Matrices(const ir::TensorType& t)
      : batch(ir::numElements(llvm::ArrayRef<int64_t>(t.shape).drop_back(2))),
        rows(t.shape[t.shape.size() - 2]), cols(t.shape.back()) {}
  int64_t size() const { return rows * cols; }
  /// Leading dimension of the column-major view (never 0).
  int ld() const { return static_cast<int>(std::max<int64_t>(cols, 1)); }
};

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

/// The workspace cut into a Layout's regions (all null when `base` is null).
struct Scratch {
  void* matrix;
  void* second;
  int* pivots;
  int* info;
  void** pointers;
  void* work;
  void* widened;
  double* partials;
  int lwork;
  size_t bytes; ///< total size, with alignment
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

//===----------------------------------------------------------------------===//
// The library routines for float and double
//===----------------------------------------------------------------------===//

/// Calls `f(std::type_identity<T>{})` for the float dtype `dtype`.
template <typename F> decltype(auto) visitFloat(ir::DType dtype, F&& f) {
  if (dtype == ir::DType::F32)
    return f(std::type_identity<float>{});
  return f(std::type_identity<double>{});
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
  GRAPHC_SOURCE_CASES:
  GRAPHC_ELEMENTWISE_CASES:
  GRAPHC_SHAPE_CASES:
  GRAPHC_REDUCE_CASES:
  GRAPHC_ASSUME_CASES:
    break;
  }
  return l;
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

//===----------------------------------------------------------------------===//
// The ops
//===----------------------------------------------------------------------===//

/// One run of one node with element type T: the ops as methods over the node's
/// operands, results, workspace and stream.
template <typename T> class Call {
public:
  Call(const LibraryContext& ctx, const HelperKernels& kernels, const ir::Node& n, const Scratch& s,
       int* info)
      : n_(n), s_(s), info_(info), kernels_(kernels), blas_(ctx.cublas()), solver_(ctx.cusolver()),
        stream_(ctx.stream()),
        batchedFactors_(ctx.batchedFactorizations() && batchedFactorization(operand(0))),
        qrRoute_(ctx.qrRoute()), sharing_(ctx.sharing()) {}

  void matmul(const T* a, const T* b, T* c) {
    bool ta = flag("transpose_a"), tb = flag("transpose_b");
    Matrices ma = operand(0), mb = operand(1), mc = result(0);
    int64_t k = ta ? ma.rows : ma.cols;
    if (mc.size() == 0)
      return;
    if (k == 0)
      return zero(c, mc);
    // Row-major C = op(A) op(B) is column-major C' = op(B)' op(A)'.
    GRAPHC_CUDA_CHECK(Lib<T>::gemmStridedBatched(
        blas_, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, toInt(mc.cols),
        toInt(mc.rows), toInt(k), &one_, b, mb.ld(), mb.size(), a, ma.ld(), ma.size(), &zero_, c,
        mc.ld(), mc.size(), toInt(mc.batch)));
  }

  /// X X' (X' X with `transpose`): syrk fills one triangle, mirrored onto the other.
  void syrk(const T* x, T* c) {
    bool trans = flag("transpose");
    Matrices mx = operand(0), mc = result(0);
    int64_t k = trans ? mx.rows : mx.cols;
    if (mc.size() == 0)
      return;
    if (k == 0)
      return zero(c, mc);
    const SmallBatched& small = kernels_.small();
    passes::SyrkRoute route = syrkRoute(n_);
    if (route == passes::SyrkRoute::TallGram)
      return small.tallGram(mc.batch, k, mc.rows, x, s_.partials, c, stream_);
    if (route == passes::SyrkRoute::SmallGram && small.fitsGram(mc.rows, sizeof(T)))
      return small.gram(mc.batch, mc.rows, k, x, c, stream_);
    // X row-major is X' column-major: X X' = (X')' X' is syrk with op T, or one
    // gemm with ops T, N.
    if (route != passes::SyrkRoute::Syrk)
      GRAPHC_CUDA_CHECK(Lib<T>::gemmStridedBatched(
          blas_, trans ? CUBLAS_OP_N : CUBLAS_OP_T, trans ? CUBLAS_OP_T : CUBLAS_OP_N,
          toInt(mc.rows), toInt(mc.rows), toInt(k), &one_, x, mx.ld(), mx.size(), x, mx.ld(),
          mx.size(), &zero_, c, mc.ld(), mc.size(), toInt(mc.batch)));
    else
      for (int64_t b = 0; b < mc.batch; ++b)
        GRAPHC_CUDA_CHECK(Lib<T>::syrk(
            blas_, CUBLAS_FILL_MODE_LOWER, trans ? CUBLAS_OP_N : CUBLAS_OP_T, toInt(mc.rows),
            toInt(k), &one_, x + b * mx.size(), mx.ld(), &zero_, c + b * mc.size(), mc.ld()));
    // Column-major lower is row-major upper.
    kernels_[fmt::format("mirrorUpper<{}>", Lib<T>::name)].launch(
        tiledLaunch(mc.batch, mc.rows, mc.rows, stream_), {&mc.batch, &mc.rows, &c});
  }

  void solve(const T* a, const T* rhs, T* x) {
    Matrices mx = result(0);
    if (SmallBatched::fitsLuSolve(mx.rows))
      return kernels_.small().luSolve(mx.batch, mx.rows, mx.cols, a, rhs, x, info_, stream_);
    LuFactors lu = factorLu(a, info_);
    if (mx.size() == 0)
      return;
    T* cm = static_cast<T*>(s_.second); // the right-hand sides, column-major
    transpose(mx.batch, mx.rows, mx.cols, rhs, cm);
    solveLu(lu, CUBLAS_OP_N, cm);
    transpose(mx.batch, mx.cols, mx.rows, cm, x);
  }

  /// potrf is much faster on column-major lower factors (1.3 ms against 3.7 ms for
  /// upper at n = 3000 f64 on an H200). A row-major symmetric A is its own
  /// column-major view, and the column-major lower factor L (A = L L') read row-major
  /// is L': the upper factor `upper` asks for. The lower one is its transpose.
  void cholesky(const T* a, T* l) {
    bool upper = flag("upper");
    Matrices m = operand(0);
    const SmallBatched& small = kernels_.small();
    if (m.rows <= policy().smallCholeskyMaxN && small.fitsCholesky(m.rows, sizeof(T)))
      return small.cholesky(m.batch, m.rows, a, l, upper, info_, stream_);
    T* f = upper ? l : static_cast<T*>(s_.matrix);
    copy(a, f, m);
    if (m.size() == 0)
      return;
    if (m.batch == 1)
      GRAPHC_CUDA_CHECK(Lib<T>::potrf(solver_, CUBLAS_FILL_MODE_LOWER, toInt(m.rows), f, m.ld(),
                                      static_cast<T*>(s_.work), s_.lwork, info_));
    else
      GRAPHC_CUDA_CHECK(Lib<T>::potrfBatched(solver_, CUBLAS_FILL_MODE_LOWER, toInt(m.rows),
                                             pointers(f, m, 0), m.ld(), info_, toInt(m.batch)));
    if (!upper)
      transpose(m.batch, m.rows, m.cols, f, l);
    int upperPart = !upper;
    launch("zeroTriangle", m.batch * m.size(), {&m.batch, &m.rows, &m.cols, &l, &upperPart});
  }

  /// op(A) X = B is X' op(A)' = B' column-major: the side and triangle flip.
  void triangularSolve(const T* a, const T* rhs, T* x) {
    bool lower = flag("lower"), right = flag("right_side");
    bool trans = flag("transpose_a"), unit = flag("unit_diagonal");
    Matrices ma = operand(0), mx = result(0);
    const SmallBatched& small = kernels_.small();
    if (!right && ma.rows <= policy().smallSolveMaxN && mx.cols <= policy().smallSolveMaxCols &&
        small.fitsTriangularSolve(ma.rows, mx.cols, sizeof(T)))
      return small.triangularSolve(mx.batch, ma.rows, mx.cols, a, rhs, x, {lower, trans, unit},
                                   info_, stream_);
    if (!unit) // run() zeroed the info words
      launch("firstZeroDiagonal", ma.batch * ma.rows, {&ma.batch, &ma.rows, &a, &info_});
    if (auto blocked = blockedSolve(n_)) {
      for (int64_t b = 0; b < mx.batch; ++b)
        solveByBlocks(blas_, small, stream_, *blocked, a + b * ma.size(), rhs + b * mx.size(),
                      x + b * mx.size(), static_cast<T*>(s_.matrix));
      return;
    }
    copy(rhs, x, mx);
    if (mx.size() == 0)
      return;
    auto side = right ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT;
    auto uplo = lower ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    auto op = trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    auto diag = unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
    int m = toInt(mx.cols), n = toInt(mx.rows);
    // One vector: SmallBatched's kernel, 0.14 ms at n = 3000 (H200, f64), against
    // 0.19 for trsv and 1.48 for trsm. X op(A) = B for a row is op(A)' X' = B'.
    if (oneVector(n_)) {
      small.solveVector(mx.batch, ma.rows, a, ma.size(), {lower, trans != right, unit}, x,
                        mx.size(), s_.info, stream_);
      return;
    }
    if (mx.batch == 1)
      GRAPHC_CUDA_CHECK(
          Lib<T>::trsm(blas_, side, uplo, op, diag, m, n, &one_, a, ma.ld(), x, mx.ld()));
    else
      GRAPHC_CUDA_CHECK(Lib<T>::trsmBatched(blas_, side, uplo, op, diag, m, n, &one_,
                                            pointers(const_cast<T*>(a), ma, 0), ma.ld(),
                                            pointers(x, mx, mx.batch), mx.ld(), toInt(mx.batch)));
  }

  void lu(const T* a, T* p, T* l, T* u) {
    Matrices m = operand(0);
    T* f = factorLu(a, s_.info).factors;
    if (m.size() == 0)
      return;
    int *pivots = s_.pivots, *info = s_.info;
    if (batchedFactors_)
      launch("refactorSingular", m.batch, {&m.batch, &m.rows, &a, &f, &pivots, &info});
    zero(p, m);
    launch("permutation", m.batch * m.rows, {&m.batch, &m.rows, &pivots, &p});
    unpackTriangle(m.batch, m.rows, m.cols, f, m.rows, m.size(), l, /*unitLower=*/1);
    unpackTriangle(m.batch, m.rows, m.cols, f, m.rows, m.size(), u, /*unitLower=*/0);
  }

  /// Reduced QR of A: in one cluster kernel where it takes the shape (ClusterQr.h),
  /// else with A transposed into the workspace first (so that LAPACK sees A, not
  /// A'): geqrf, R from its upper part, orgqr, Q back to row-major.
  void qr(const T* a, T* q, T* r) {
    Matrices ma = operand(0), mq = result(0), mr = result(1);
    int64_t k = mq.cols;
    if (k == 0) {
      zero(q, mq);
      return zero(r, mr);
    }
    const ClusterQr& cluster = kernels_.qr();
    int ctas = qrRoute_ == LibraryContext::QrRoute::Library
                   ? 0
                   : cluster.ctas(ma.rows, ma.cols, sizeof(T));
    if (ctas && (qrRoute_ == LibraryContext::QrRoute::Cluster ||
                 passes::preferClusterQr(passes::RoutePolicy::gpu(), ma.batch, ma.rows, ma.cols,
                                         sharing_))) {
      if (passes::logRoutes())
        fmt::print(stderr, "[graphc] route: qr of {} x {} x {}: cluster of {} blocks\n", ma.batch,
                   ma.rows, ma.cols, ctas);
      return cluster.qr(ma.batch, ma.rows, ma.cols, a, q, r, stream_);
    }
    T* f = static_cast<T*>(s_.matrix);
    T* tau = static_cast<T*>(s_.second);
    transpose(ma.batch, ma.rows, ma.cols, a, f);
    if (batchedFactors_)
      return batchedQr(f, tau, q, r);
    for (int64_t b = 0; b < ma.batch; ++b)
      GRAPHC_CUDA_CHECK(Lib<T>::geqrf(solver_, toInt(ma.rows), toInt(ma.cols), f + b * ma.size(),
                                      toInt(ma.rows), tau + b * k, static_cast<T*>(s_.work),
                                      s_.lwork, s_.info + b));
    unpackTriangle(ma.batch, k, ma.cols, f, ma.rows, ma.size(), r, /*unitLower=*/0);
    for (int64_t b = 0; b < ma.batch; ++b)
      GRAPHC_CUDA_CHECK(Lib<T>::orgqr(solver_, toInt(ma.rows), toInt(k), toInt(k),
                                      f + b * ma.size(), toInt(ma.rows), tau + b * k,
                                      static_cast<T*>(s_.work), s_.lwork, s_.info + b));
    // Q is column-major rows x k with leading dimension rows, i.e. row-major k x rows.
    launchTranspose(ma.batch, k, ma.rows, f, ma.size(), q, mq.size());
  }

  /// A^-1 = X with A' X' = I: getrs with op T on A's LU factors leaves X' in
  /// column-major order, which is X row-major.
  void inverse(const T* a, T* x) {
    Matrices m = operand(0);
    if (SmallBatched::fitsLuSolve(m.rows))
      return kernels_.small().luSolve<T>(m.batch, m.rows, m.rows, a, nullptr, x, info_, stream_);
    LuFactors lu = factorLu(a, info_);
    if (m.size() == 0)
      return;
    launch("identity", m.batch * m.size(), {&m.batch, &m.rows, &x});
    solveLu(lu, CUBLAS_OP_T, x);
  }

  void determinant(const T* a, T* out) {
    Matrices m = operand(0);
    T* lu = factorLu(a, s_.info).factors;
    int* pivots = s_.pivots;
    int logAbs = n_.op() == Op::Logdet;
    launch("luDeterminant", m.batch, {&m.batch, &m.rows, &lu, &pivots, &out, &logAbs});
  }

private:
  bool flag(const char* name) const { return n_.attrs().flag(name); }
  Matrices operand(unsigned i) const { return Matrices(n_.operand(i).type()); }
  Matrices result(unsigned i) const { return Matrices(n_.type(i)); }

  void zero(T* p, const Matrices& m) {
    GRAPHC_CUDA_CHECK(cudaMemsetAsync(p, 0, m.batch * m.size() * sizeof(T), stream_));
  }
  void copy(const T* from, T* to, const Matrices& m) {
    GRAPHC_CUDA_CHECK(cudaMemcpyAsync(to, from, m.batch * m.size() * sizeof(T),
                                      cudaMemcpyDeviceToDevice, stream_));
  }

  /// Launches the T instantiation of helper `name` over `threads` threads.
  void launch(const char* name, int64_t threads, std::initializer_list<void*> args) {
    if (threads > 0)
      kernels_[fmt::format("{}<{}>", name, Lib<T>::name)].launch(
          LaunchConfig::linear(threads, 256, stream_), args);
  }

  /// `to` = the column-major copies of the rows x cols matrices `from`.
  void transpose(int64_t batch, int64_t rows, int64_t cols, const T* from, T* to) {
    launchTranspose(batch, rows, cols, from, rows * cols, to, rows * cols);
  }
  void launchTranspose(int64_t batch, int64_t rows, int64_t cols, const T* from, int64_t fromStride,
                       T* to, int64_t toStride) {
    kernels_.transpose(batch, rows, cols, sizeof(T), from, fromStride, to, toStride, stream_);
  }

  void unpackTriangle(int64_t batch, int64_t rows, int64_t cols, const T* from, int64_t ld,
                      int64_t fromStride, T* to, int unitLower) {
    launch("unpackTriangle", batch * rows * cols,
           {&batch, &rows, &cols, &from, &ld, &fromStride, &to, &unitLower});
  }

  /// Device pointers to the matrices of `base`, in the pointer workspace from
  /// `slot` on.
  T** pointers(T* base, const Matrices& m, int64_t slot) {
    return pointers(base, m.batch, m.size(), slot);
  }
  /// Device pointers to `batch` arrays of `base`, `stride` elements apart.
  T** pointers(T* base, int64_t batch, int64_t stride, int64_t slot) {
    void** ptrs = s_.pointers + slot;
    int64_t strideBytes = stride * sizeof(T);
    kernels_["pointerArray"].launch(LaunchConfig::linear(batch, 256, stream_),
                                    {&batch, &base, &strideBytes, &ptrs});
    return reinterpret_cast<T**>(ptrs);
  }

  /// LU factors in the workspace: the column-major items, and on the batched path
  /// the device array of pointers to them (else null). Pivots are in s_.pivots.
  struct LuFactors {
    T* factors;
    T** items;
  };

  /// getrf of A itself (transposed into the workspace, so the pivots and U(i,i)
  /// are LAPACK's on row-major A), pivots in the workspace, info in `info`: one
  /// getrfBatched for a batch of small matrices (its info is per item, on the
  /// device, LAPACK's), else cuSOLVER per item.
  LuFactors factorLu(const T* a, int* info) {
    Matrices m = operand(0);
    LuFactors lu{static_cast<T*>(s_.matrix), nullptr};
    if (m.size() == 0)
      return lu;
    transpose(m.batch, m.rows, m.cols, a, lu.factors);
    if (batchedFactors_) {
      lu.items = pointers(lu.factors, m, 0);
      GRAPHC_CUDA_CHECK(Lib<T>::getrfBatched(blas_, toInt(m.rows), lu.items, m.ld(), s_.pivots,
                                             info, toInt(m.batch)));
      return lu;
    }
    for (int64_t b = 0; b < m.batch; ++b)
      GRAPHC_CUDA_CHECK(Lib<T>::getrf(solver_, toInt(m.rows), toInt(m.rows),
                                      lu.factors + b * m.size(), m.ld(), static_cast<T*>(s_.work),
                                      s_.pivots + b * m.rows, info + b));
    return lu;
  }

  /// op(A) X = B in place on the column-major n x cols right-hand sides `b` (cols
  /// from the result type), from factorLu's factors. Singular items were reported
  /// by getrf; getrsBatched's own info is a host word for invalid arguments only.
  void solveLu(const LuFactors& lu, cublasOperation_t op, T* b) {
    Matrices ma = operand(0), mx = result(0);
    int n = toInt(ma.rows), cols = toInt(mx.cols);
    if (lu.items) {
      int invalid = 0;
      GRAPHC_CUDA_CHECK(Lib<T>::getrsBatched(blas_, op, n, cols, lu.items, ma.ld(), s_.pivots,
                                             pointers(b, mx, mx.batch), ma.ld(), &invalid,
                                             toInt(mx.batch)));
      return checkArguments("getrsBatched", invalid);
    }
    for (int64_t i = 0; i < ma.batch; ++i)
      GRAPHC_CUDA_CHECK(Lib<T>::getrs(solver_, op, n, cols, lu.factors + i * ma.size(), ma.ld(),
                                      s_.pivots + i * ma.rows, b + i * mx.size(), ma.ld(),
                                      s_.info + i));
  }

  /// The batched tail of qr() on the column-major copies `f`: geqrfBatched (its info
  /// is a host word for invalid arguments only: QR cannot fail), R from its upper
  /// part, Q formed from the reflectors straight into row-major `q` (cuBLAS has no
  /// batched orgqr).
  void batchedQr(T* f, T* tau, T* q, T* r) {
    Matrices ma = operand(0);
    int64_t k = std::min(ma.rows, ma.cols);
    int invalid = 0;
    GRAPHC_CUDA_CHECK(Lib<T>::geqrfBatched(
        blas_, toInt(ma.rows), toInt(ma.cols), pointers(f, ma, 0), toInt(ma.rows),
        pointers(tau, ma.batch, k, ma.batch), &invalid, toInt(ma.batch)));
    checkArguments("geqrfBatched", invalid);
    unpackTriangle(ma.batch, k, ma.cols, f, ma.rows, ma.size(), r, /*unitLower=*/0);
    int64_t stride = ma.size();
    launch("householderQ", ma.batch * k, {&ma.batch, &ma.rows, &k, &f, &stride, &tau, &q});
  }

  /// Throws for the host info word of a batched cuBLAS solver routine.
  static void checkArguments(const char* routine, int invalid) {
    if (invalid != 0)
      throw Error(fmt::format("internal error: argument {} of {} was invalid", -invalid, routine));
  }

  const ir::Node& n_;
  const Scratch& s_;
  int* info_; ///< the caller's deviceInfo, or workspace for ops that cannot fail
  const HelperKernels& kernels_;
  cublasHandle_t blas_;
  cusolverDnHandle_t solver_;
  cudaStream_t stream_;
  bool batchedFactors_; ///< LU and QR through the batched routines
  LibraryContext::QrRoute qrRoute_;
  bool sharing_; ///< LibraryContext::sharing()
  const T one_ = T(1), zero_ = T(0);
};

/// Runs one float node of a supported op.
template <typename T>
void runFloat(Call<T>& call, Op op, llvm::ArrayRef<const void*> in, llvm::ArrayRef<void*> out) {
  auto i = [&](unsigned k) { return static_cast<const T*>(in[k]); };
  auto o = [&](unsigned k) { return static_cast<T*>(out[k]); };
  switch (op) {
  case Op::Matmul:
    return call.matmul(i(0), i(1), o(0));
  case Op::Syrk:
    return call.syrk(i(0), o(0));
  case Op::Solve:
    return call.solve(i(0), i(1), o(0));
  case Op::Cholesky:
    return call.cholesky(i(0), o(0));
  case Op::TriangularSolve:
    return call.triangularSolve(i(0), i(1), o(0));
  case Op::Lu:
    return call.lu(i(0), o(0), o(1), o(2));
  case Op::Qr:
    return call.qr(i(0), o(0), o(1));
  case Op::Inverse:
    return call.inverse(i(0), o(0));
  case Op::Det:
  case Op::Logdet:
    return call.determinant(i(0), o(0));
  case Op::Trace:
  GRAPHC_SOURCE_CASES:
  GRAPHC_ELEMENTWISE_CASES:
  GRAPHC_SHAPE_CASES:
  GRAPHC_REDUCE_CASES:
  GRAPHC_ASSUME_CASES:
    throw Error(fmt::format("internal error: {} is not a library op", ir::opName(op).str()));
  }
}

/// Runs the f32 node `n` in f64 (widens()): its operands converted into the
/// workspace, the f64 call, its results converted back.
void runWidened(const LibraryContext& ctx, const HelperKernels& kernels, const ir::Node& n,
                const Scratch& s, llvm::ArrayRef<const void*> inputs, llvm::ArrayRef<void*> outputs,
                int* info) {
  auto convert = [&](const char* kernel, int64_t count, const void* from, void* to) {
    if (count > 0)
      kernels[kernel].launch(LaunchConfig::linear(count, 256, ctx.stream()), {&count, &from, &to});
  };
  double* at = static_cast<double*>(s.widened);
  std::vector<const void*> in;
  for (unsigned i = 0; i < inputs.size(); ++i) {
    convert("convert<float, double>", n.operand(i).type().numel(), inputs[i], at);
    in.push_back(at);
    at += n.operand(i).type().numel();
  }
  std::vector<void*> out;
  for (const ir::TensorType& t : n.types()) {
    out.push_back(at);
    at += t.numel();
  }
  Call<double> call(ctx, kernels, n, s, info);
  runFloat(call, n.op(), in, out);
  for (unsigned i = 0; i < outputs.size(); ++i)
    convert("convert<double, float>", n.type(i).numel(), out[i], outputs[i]);
}

/// trace for any numeric dtype.
void runTrace(const HelperKernels& kernels, const ir::Node& n, const void* a, void* out,
              cudaStream_t stream) {
  Matrices m(n.operand(0).type());
  const char* name = nullptr;
  switch (n.type().dtype) {
  case ir::DType::F32:
    name = "trace<float, double>";
    break;
  case ir::DType::F64:
    name = "trace<double, double>";
    break;
  case ir::DType::I32:
    name = "trace<int, unsigned>";
    break;
  default:
    name = "trace<long long, unsigned long long>";
    break;
  }
  if (m.batch > 0)
    kernels[name].launch(LaunchConfig::linear(m.batch, 256, stream),
                         {&m.batch, &m.rows, &m.cols, &a, &out});
}

/// The CPU backend's message for the info word `info` (not 0) of batch item `b` of
/// `n` (without the "op (%name): " prefix).
std::string itemFailure(const ir::Node& n, int64_t b, int info) {
  if (info < 0)
    return fmt::format("internal error: argument {} of the library call was invalid "
                       "(batch item {})",
                       -info, b);
  switch (n.op()) {
  case Op::Cholesky:
    return fmt::format("matrix is not positive definite (batch item {}, leading minor {})", b,
                       info);
  case Op::TriangularSolve:
    return fmt::format("matrix is singular (batch item {}, A({},{}) = 0)", b, info, info);
  case Op::Matmul:
  case Op::Solve:
  case Op::Lu:
  case Op::Qr:
  case Op::Inverse:
  case Op::Det:
  case Op::Logdet:
  case Op::Trace:
  case Op::Syrk:
  GRAPHC_SOURCE_CASES:
  GRAPHC_ELEMENTWISE_CASES:
  GRAPHC_SHAPE_CASES:
  GRAPHC_REDUCE_CASES:
  GRAPHC_ASSUME_CASES:
    break;
  }
  return fmt::format("matrix is singular (batch item {}, U({},{}) = 0)", b, info, info);
}

} // namespace

//===----------------------------------------------------------------------===//
// LibraryContext
//===----------------------------------------------------------------------===//

/// cuBLAS's own workspace (the size NVIDIA recommends for Hopper), given to it so
/// that it never allocates while a graph runs.
constexpr size_t kCublasWorkspaceBytes = 32u << 20;

LibraryContext::LibraryContext(int device, cudaStream_t stream)
    : device_(device), stream_(stream),
      // sm_90 (H100, H200): dgemm at 58.8 TFLOP/s on the f64 tensor cores, sgemm at
      // 41.7 on the FMA units. Other GPUs either lack f64 tensor cores or run f64 at
      // a fraction of f32 (sm_80's are even, sm_100's f64 is half its f32).
      singleInDouble_(deviceInfo(device).major == 9) {
  ScopedDevice on(device);
  kernels_ = &HelperKernels::forCurrentDevice();
  GRAPHC_CUDA_CHECK(cublasCreate(&cublas_));
  GRAPHC_CUDA_CHECK(cusolverDnCreate(&cusolver_));
  GRAPHC_CUDA_CHECK(cublasSetStream(cublas_, stream));
  GRAPHC_CUDA_CHECK(cusolverDnSetStream(cusolver_, stream));
  cublasWorkspace_ = DeviceBuffer(DevicePool::forDevice(device), kCublasWorkspaceBytes, stream);
  GRAPHC_CUDA_CHECK(cublasSetWorkspace(cublas_, cublasWorkspace_.data(), kCublasWorkspaceBytes));
}

LibraryContext::~LibraryContext() {
  // Errors at teardown have nowhere to go.
  if (cusolver_)
    cusolverDnDestroy(cusolver_);
  if (cublas_)
    cublasDestroy(cublas_);
}

bool LibraryContext::supports(const ir::Node& n) {
  if (n.kind() != ir::OpKind::Linalg || n.operands().empty())
    return false;
  ir::DType dtype = n.operand(0).type().dtype;
  return n.op() == Op::Trace ? ir::isNumeric(dtype) : ir::isFloat(dtype);
}

int64_t LibraryContext::infoCount(const ir::Node& n) {
  switch (n.op()) {
  case Op::Cholesky:
  case Op::Solve:
  case Op::Inverse:
  case Op::TriangularSolve:
    return Matrices(n.operand(0).type()).batch;
  case Op::Matmul:
  case Op::Lu:
  case Op::Qr:
  case Op::Det:
  case Op::Logdet:
  case Op::Trace:
  case Op::Syrk:
  GRAPHC_SOURCE_CASES:
  GRAPHC_ELEMENTWISE_CASES:
  GRAPHC_SHAPE_CASES:
  GRAPHC_REDUCE_CASES:
  GRAPHC_ASSUME_CASES:
    return 0;
  }
  ir::unknownOp();
}

void LibraryContext::reserve(const ir::Node& n) {
  if (!supports(n))
    throw Error(fmt::format("internal error: {} on {} is not a CUDA library call",
                            ir::opName(n.op()).str(), n.operand(0).type().str()));
  ScopedDevice on(device_);
  size_t need = plan(cusolver_, n, nullptr, singleInDouble_).bytes;
  if (need > workspace_.bytes())
    workspace_ = DeviceBuffer(DevicePool::forDevice(device_), need, stream_);
}

void LibraryContext::run(const ir::Node& n, llvm::ArrayRef<const void*> inputs,
                         llvm::ArrayRef<void*> outputs, int* deviceInfo) {
  if (!supports(n) || inputs.size() != n.operands().size() || outputs.size() != n.numResults())
    throw Error(fmt::format("internal error: bad library call of {} ({} inputs, {} outputs)",
                            ir::opName(n.op()).str(), inputs.size(), outputs.size()));
  ScopedDevice on(device_);
  Scratch s = plan(cusolver_, n, workspace_.data(), singleInDouble_);
  if (s.bytes > workspace_.bytes())
    throw Error(fmt::format("internal error: {} needs {} bytes of workspace, {} are reserved "
                            "(LibraryContext::reserve was not called for it)",
                            ir::opName(n.op()).str(), s.bytes, workspace_.bytes()));
  int64_t count = infoCount(n);
  if (count > 0) {
    if (!deviceInfo)
      throw Error(
          fmt::format("internal error: {} needs a deviceInfo array", ir::opName(n.op()).str()));
    GRAPHC_CUDA_CHECK(cudaMemsetAsync(deviceInfo, 0, count * sizeof(int), stream_));
  }
  if (n.op() == Op::Trace)
    return runTrace(*kernels_, n, inputs[0], outputs[0], stream_);
  int* info = count > 0 ? deviceInfo : s.info;
  if (widens(n, singleInDouble_))
    return runWidened(*this, *kernels_, n, s, inputs, outputs, info);
  visitFloat(n.operand(0).type().dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    Call<T> call(*this, *kernels_, n, s, info);
    runFloat(call, n.op(), inputs, outputs);
  });
}

bool LibraryContext::materialize(const ir::Node& n, void* out, int device, cudaStream_t stream) {
  const ir::TensorType& t = n.type();
  if ((n.op() != Op::Full && (n.op() != Op::Eye || t.shape.size() < 2)) || !ir::isFloat(t.dtype))
    return false;
  if (t.numel() == 0)
    return true;
  ScopedDevice on(device);
  const HelperKernels& kernels = HelperKernels::forCurrentDevice();
  const char* type = t.dtype == ir::DType::F32 ? "float" : "double";
  int64_t count = t.numel();
  auto config = LaunchConfig::linear(count, 256, stream);
  if (n.op() == Op::Full) {
    double value = n.attrs().getFloat("value");
    kernels[fmt::format("fill<{}>", type)].launch(config, {&count, &value, &out});
  } else {
    Matrices m(t);
    kernels[fmt::format("eye<{}>", type)].launch(config, {&m.batch, &m.rows, &m.cols, &out});
  }
  return true;
}

std::optional<std::string> LibraryContext::failure(const ir::Node& n, const int* hostInfo) {
  int64_t count = infoCount(n);
  for (int64_t b = 0; b < count; ++b)
    if (hostInfo[b] != 0)
      return itemFailure(n, b, hostInfo[b]);
  return std::nullopt;
}

void LibraryContext::summarizeInfo(int64_t count, const int* deviceInfo, int* summary,
                                   cudaStream_t stream) {
  if (count > 0)
    HelperKernels::forCurrentDevice()["firstFailure"].launch(
        LaunchConfig::linear(count, 256, stream), {&count, &deviceInfo, &summary});
}

std::optional<std::string> LibraryContext::summaryFailure(const ir::Node& n,
                                                          const int* hostSummary) {
  uint64_t key = 0; // ~(item << 32 | word), as firstFailure leaves it
  std::memcpy(&key, hostSummary, sizeof(key));
  if (key == 0)
    return std::nullopt;
  key = ~key;
  return itemFailure(n, static_cast<int64_t>(key >> 32), static_cast<int>(key & 0xffffffffu));
}

} // namespace graphc::cuda
