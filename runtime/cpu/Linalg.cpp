//===- runtime/cpu/Linalg.cpp - Linear algebra through BLAS/LAPACK --------===//
//
// Every op works on row-major matrices in the last two axes and loops over the
// leading (batch) axes, one BLAS/LAPACK call per batch item (batches of solve,
// cholesky and triangular_solve items of order <= 128 and of matmul and syrk items
// of order <= 64 split over the thread pool, OpenBLAS then held to one thread per
// call: SingleThreadedBlas).
// Lapack<T> maps the float and double routines to one name, so each op is written
// once. Matrices of order up to small::kMaxSmallN (16) are factored and solved by
// the loops of runtime/cpu/SmallLinalg.h instead, the batch split over the thread
// pool when it is large: lu, inverse, det and logdet factor with them, and solve,
// cholesky, left-side triangular_solve, matmul and syrk (all dimensions small) run
// entirely on them. Where the caller names the array the first result goes to
// (runLinalg's `into`: a result of the run), matmul, syrk, solve, cholesky,
// triangular_solve and inverse write it there instead of into an array of their own.
//
// LAPACK failures are errors naming the op and every failing batch item (counted
// from 0; a chosen Cholesky's name them in an ItemFallbackError whose run goes on);
// matrix positions follow LAPACK and count from 1:
//   cholesky: matrix is not positive definite (batch item 2, leading minor 3)
//   solve: matrix is singular in 2 of 64 batch items: 0 (U(4,4) = 0), 9 (U(1,1) = 0)
// det of a singular matrix is 0 and logdet (log|det|) is -inf: those are values,
// not failures. lu factors singular matrices too.
//
// NaN and Inf follow IEEE arithmetic as LAPACK itself computes it: LAPACKE's check
// of its arguments for NaN (which makes a NaN operand an argument error) is off,
// so a NaN in a solve's operands gives NaN results, as in NumPy and PyTorch. A NaN
// pivot of potrf is no failure either (OpenBLAS tests `<= 0`): the factor is NaN.
//
//===----------------------------------------------------------------------===//
#include "ir/OpCases.h"
#include "runtime/cpu/Kernels.h"
#include "runtime/cpu/SmallLinalg.h"
#include "runtime/cpu/ThreadPool.h"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

namespace graphc::cpu {
namespace {

using ir::Op;

template <typename T> struct Lapack;
template <> struct Lapack<float> {
  static constexpr auto gemm = cblas_sgemm;
  static constexpr auto syrk = cblas_ssyrk;
  static constexpr auto trsm = cblas_strsm;
  static constexpr auto getrf = LAPACKE_sgetrf;
  static constexpr auto getrs = LAPACKE_sgetrs;
  static constexpr auto getri = LAPACKE_sgetri;
  static constexpr auto potrf = LAPACKE_spotrf;
  static constexpr auto geqrf = LAPACKE_sgeqrf;
  static constexpr auto orgqr = LAPACKE_sorgqr;
};
template <> struct Lapack<double> {
  static constexpr auto gemm = cblas_dgemm;
  static constexpr auto syrk = cblas_dsyrk;
  static constexpr auto trsm = cblas_dtrsm;
  static constexpr auto getrf = LAPACKE_dgetrf;
  static constexpr auto getrs = LAPACKE_dgetrs;
  static constexpr auto getri = LAPACKE_dgetri;
  static constexpr auto potrf = LAPACKE_dpotrf;
  static constexpr auto geqrf = LAPACKE_dgeqrf;
  static constexpr auto orgqr = LAPACKE_dorgqr;
};

/// The matrices of an array: batch count and the last two dimensions.
struct Matrices {
  int64_t batch, rows, cols;

  explicit Matrices(llvm::ArrayRef<int64_t> shape)
      : batch(ir::numElements(shape.drop_back(2))), rows(shape[shape.size() - 2]),
        cols(shape.back()) {}
  explicit Matrices(const Array& a) : Matrices(a.shape()) {}
  int64_t size() const { return rows * cols; }
  /// Leading dimension for BLAS/LAPACK (never 0).
  lapack_int ld() const { return static_cast<lapack_int>(std::max<int64_t>(cols, 1)); }
  template <typename T> T* item(const Array& a, int64_t b) const {
    return a.data<T>() + b * size();
  }
};

/// Turns LAPACKE's NaN check of its arguments off (once): NaN operands are values.
void ieeeLapack() {
  static const bool off = (LAPACKE_set_nancheck(0), true);
  (void)off;
}

/// The batch items a factorization failed on, with LAPACK's info for each: one
/// error naming them all (the first few when there are many).
class ItemFailures {
public:
  explicit ItemFailures(int64_t batch) : batch_(batch) {}

  void add(int64_t b, lapack_int info) { items_.emplace_back(b, info); }
  bool any() const { return !items_.empty(); }

  /// "`what` (batch item 2, `detail(info)`)" for one item, or "`what` in 3 of 64
  /// batch items: 2 (`detail`), ..." for several (describeItemFailures).
  template <typename Detail> std::string message(const char* what, Detail detail) const {
    std::vector<std::pair<int64_t, std::string>> failures;
    for (const auto& [b, info] : items_)
      failures.emplace_back(b, detail(info));
    return describeItemFailures(what, batch_, failures);
  }

  /// Fails `s` with message() when any item failed.
  template <typename Detail> void throwIfAny(const Step& s, const char* what, Detail detail) const {
    if (any())
      s.fail(message(what, detail));
  }

  /// The failing items, in batch order.
  std::vector<int64_t> items() const {
    std::vector<int64_t> out;
    for (const auto& item : items_)
      out.push_back(item.first);
    return out;
  }

private:
  int64_t batch_;
  std::vector<std::pair<int64_t, lapack_int>> items_;
};

static_assert(std::is_same_v<lapack_int, int>, "SmallLinalg.h takes int pivots");

/// True when the kernels of SmallLinalg.h take n x n matrices.
bool isSmall(int64_t n) {
  return n >= 1 && n <= small::kMaxSmallN;
}

/// Batches whose arithmetic (about batch * n^3 operations) is below this run on the
/// calling thread alone.
constexpr int64_t kParallelWork = int64_t{1} << 16;

/// item(b) for every batch item, split over the thread pool when `work` (the whole
/// batch's) pays for the threads (0: on this thread); split, each library call runs
/// on its pool thread alone (SingleThreadedBlas).
template <typename F> void forEachItem(int64_t batch, int64_t work, F&& item) {
  ThreadPool& pool = ThreadPool::global();
  int64_t parts = work >= kParallelWork ? std::min<int64_t>(pool.threads(), batch) : 1;
  std::optional<SingleThreadedBlas> oneEach;
  if (parts > 1)
    oneEach.emplace();
  pool.parallelFor(batch, parts, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b)
      item(b);
  });
}

/// forEachItem where item(b) returns LAPACK's info: the nonzero ones go to
/// `failures` in batch order.
template <typename F>
void forEachItem(int64_t batch, int64_t work, ItemFailures& failures, F&& item) {
  std::vector<lapack_int> info(batch, 0);
  forEachItem(batch, work, [&](int64_t b) { info[b] = item(b); });
  for (int64_t b = 0; b < batch; ++b)
    if (info[b])
      failures.add(b, info[b]);
}

/// The columns of a panel of a small solve's right-hand sides: n rows of them fill
/// about 32 KiB (the L1 data cache of the machines measured), so that the
/// substitution's n passes over the rows read the cache, not memory (10^5 columns
/// at n = 16: 14 ms a solve for the whole rows, 2026-12-02).
template <typename T> int64_t panelColumns(int64_t n) {
  return std::max<int64_t>(16, (int64_t{32} << 10) / (n * int64_t{sizeof(T)}) / 16 * 16);
}

/// item(b, c0, c1), returning LAPACK's info, for every batch item b, over its
/// `cols` columns in panels of `panel`: each item on one thread, unless there are
/// fewer items than threads; then an item's panels are split too, each part
/// running item() on its columns [c0, c1) (the part with c0 = 0 gives the info).
template <typename F>
void forEachItemColumns(int64_t batch, int64_t cols, int64_t panel, int64_t work,
                        ItemFailures& failures, F&& item) {
  int64_t threads = work >= kParallelWork ? ThreadPool::global().threads() : 1;
  int64_t panels = std::max<int64_t>(1, (cols + panel - 1) / panel);
  int64_t parts = batch >= threads ? 1 : std::min(panels, (threads + batch - 1) / batch);
  std::vector<lapack_int> info(batch, 0);
  forEachItem(batch * parts, work, [&](int64_t u) {
    int64_t b = u / parts, p = u % parts;
    int64_t c0 = panels * p / parts * panel, c1 = std::min(cols, panels * (p + 1) / parts * panel);
    lapack_int i = item(b, c0, c1);
    if (p == 0)
      info[b] = i;
  });
  for (int64_t b = 0; b < batch; ++b)
    if (info[b])
      failures.add(b, info[b]);
}

/// The columns [c0, c1) of item b of `rhs` copied into `x` and solved there by
/// solve(first, width), `first` the panel's first column in x, a panel at a time.
template <typename T, typename Solve>
void solvePanels(const Matrices& mx, const Array& rhs, const Array& x, int64_t b, int64_t c0,
                 int64_t c1, int64_t panel, Solve&& solve) {
  const T* src = mx.item<T>(rhs, b);
  T* dst = mx.item<T>(x, b);
  for (int64_t c = c0; c < c1; c += panel) {
    int64_t width = std::min(panel, c1 - c);
    if (width == mx.cols) // the whole item, its rows side by side
      std::memcpy(dst, src, sizeof(T) * mx.size());
    else
      for (int64_t i = 0; i < mx.rows; ++i)
        std::memcpy(dst + i * mx.cols + c, src + i * mx.cols + c, sizeof(T) * width);
    solve(dst + c, static_cast<int>(width));
  }
}

/// The order up to which OpenBLAS factors and solves on the calling thread alone
/// (getrf: m * n < 10000): batches of such products split over the pool too.
constexpr int64_t kOneThreadLapackN = 64;

/// The order up to which batches of factorizations and solves split over the pool,
/// each item on one thread: up to 128, OpenBLAS's own threads (from m * n >= 10000)
/// gain less than items side by side (200 general solves of order 128 on 2
/// threads: 37 -> 18 ms, measured 2026-12-02; larger orders were not measured).
constexpr int64_t kSplitLapackN = 128;

/// forEachItem's work for one LAPACK call per n x n item of `m`: about batch * n^3
/// when n <= kSplitLapackN, else 0 (on this thread; OpenBLAS has its threads).
int64_t lapackWork(const Matrices& m) {
  return m.rows <= kSplitLapackN ? m.batch * m.rows * m.rows * m.rows : 0;
}

/// forEachItem's work for one BLAS product (m x k by k x n) per batch item: as
/// lapackWork, items of every order up to kOneThreadLapackN split over the pool.
int64_t blasWork(int64_t batch, int64_t m, int64_t n, int64_t k) {
  return std::max({m, n, k}) <= kOneThreadLapackN && batch > 1 ? batch * m * n * k : 0;
}

/// "U(4,4) = 0": the zero pivot getrf's info names.
std::string zeroPivot(lapack_int info) {
  return fmt::format("U({},{}) = 0", info, info);
}

/// Throws for a LAPACK argument error (a bug here) or a workspace failure.
void checkCall(const Step& s, lapack_int info, const char* routine, int64_t b) {
  if (info < 0)
    s.fail(fmt::format("internal error: LAPACK {} failed with info {} (batch item {})", routine,
                       info, b));
}

/// The array the first result of `s` is written into: `into` where runLinalg's
/// caller gave one, else a new one (uninitialized).
Array resultArray(const Step& s, const Array& into) {
  return into.valid() ? into : Array::empty(s.type().dtype, s.type().shape);
}

/// resultArray() with zeros.
Array resultZeros(const Step& s, const Array& into) {
  if (!into.valid())
    return Array::zeros(s.type().dtype, s.type().shape);
  std::memset(into.rawData(), 0, into.type().bytes()); // f32 and f64 zero: all bits 0
  return into;
}

/// resultArray() holding a copy of `a` (of the result's type), for LAPACK to work
/// on in place.
Array resultCopy(const Array& a, const Array& into) {
  if (!into.valid())
    return a.clone();
  std::memcpy(into.rawData(), a.rawData(), a.type().bytes());
  return into;
}

/// getrf of each matrix of `lu` in place, calling `f(b, lu, ipiv, info)` per item.
template <typename T, typename F> Array factorLu(const Step& s, Array lu, F&& f) {
  Matrices m(lu);
  std::vector<lapack_int> ipiv(std::max<int64_t>(m.rows, 1));
  for (int64_t b = 0; b < m.batch; ++b) {
    T* p = m.item<T>(lu, b);
    lapack_int info = 0;
    if (m.rows == m.cols && isSmall(m.rows)) {
      info = small::getrf(static_cast<int>(m.rows), p, ipiv.data());
    } else if (m.rows > 0) {
      info = Lapack<T>::getrf(LAPACK_ROW_MAJOR, m.rows, m.cols, p, m.ld(), ipiv.data());
      checkCall(s, info, "getrf", b);
    }
    f(b, p, ipiv.data(), info);
  }
  return lu;
}

template <typename T>
Array matmul(const Step& s, const Array& a, const Array& b, const Array& into) {
  bool ta = s.attrs.flag("transpose_a"), tb = s.attrs.flag("transpose_b");
  Matrices ma(a), mb(b), mc(s.type().shape);
  int64_t k = ta ? ma.rows : ma.cols;
  if (mc.size() > 0 && isSmall(mc.rows) && isSmall(mc.cols) && isSmall(k)) {
    Array c = resultArray(s, into);
    forEachItem(mc.batch, mc.batch * mc.size() * k, [&](int64_t i) {
      small::gemm(static_cast<int>(mc.rows), static_cast<int>(mc.cols), static_cast<int>(k), ta, tb,
                  ma.item<T>(a, i), mb.item<T>(b, i), mc.item<T>(c, i));
    });
    return c;
  }
  if (mc.size() == 0 || k == 0)
    return resultZeros(s, into);
  Array c = resultArray(s, into); // beta = 0: C is not read
  forEachItem(mc.batch, blasWork(mc.batch, mc.rows, mc.cols, k), [&](int64_t i) {
    Lapack<T>::gemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                    mc.rows, mc.cols, k, T(1), ma.item<T>(a, i), ma.ld(), mb.item<T>(b, i), mb.ld(),
                    T(0), mc.item<T>(c, i), mc.ld());
  });
  return c;
}

/// syrk: X*X' (or X'*X with `transpose`); BLAS fills the lower triangle, which is
/// then mirrored so the result is the full symmetric matrix.
template <typename T> Array syrk(const Step& s, const Array& x, const Array& into) {
  bool trans = s.attrs.flag("transpose");
  Matrices mx(x), mc(s.type().shape);
  int64_t n = mc.rows, k = trans ? mx.rows : mx.cols;
  if (isSmall(n) && isSmall(k)) { // op(X) op(X)' as a product: exactly symmetric
    Array c = resultArray(s, into);
    forEachItem(mc.batch, mc.batch * mc.size() * k, [&](int64_t b) {
      const T* px = mx.item<T>(x, b);
      small::gemm(static_cast<int>(n), static_cast<int>(n), static_cast<int>(k), trans, !trans, px,
                  px, mc.item<T>(c, b));
    });
    return c;
  }
  if (mc.size() == 0 || k == 0)
    return resultZeros(s, into);
  Array c = resultArray(s, into); // beta = 0: C is not read
  forEachItem(mc.batch, blasWork(mc.batch, n, n, k), [&](int64_t b) {
    T* pc = mc.item<T>(c, b);
    Lapack<T>::syrk(CblasRowMajor, CblasLower, trans ? CblasTrans : CblasNoTrans, n, k, T(1),
                    mx.item<T>(x, b), mx.ld(), T(0), pc, mc.ld());
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j)
        pc[i * n + j] = pc[j * n + i];
  });
  return c;
}

/// solve for n <= kMaxSmallN: each item factored on the stack, its solution written
/// in place of a copy of its right-hand sides.
template <typename T>
Array smallSolve(const Step& s, const Array& a, const Array& rhs, const Array& into) {
  Array x = resultArray(s, into);
  Matrices ma(a), mx(x);
  int n = static_cast<int>(ma.rows);
  int64_t panel = panelColumns<T>(n);
  ItemFailures singular(mx.batch);
  forEachItemColumns(mx.batch, mx.cols, panel, mx.batch * n * n * (n + mx.cols), singular,
                     [&](int64_t b, int64_t c0, int64_t c1) {
                       T lu[small::kMaxSmallN * small::kMaxSmallN];
                       int ipiv[small::kMaxSmallN];
                       std::memcpy(lu, ma.item<T>(a, b), sizeof(T) * n * n);
                       int info = small::getrf(n, lu, ipiv);
                       if (info == 0)
                         solvePanels<T>(mx, rhs, x, b, c0, c1, panel, [&](T* first, int width) {
                           small::getrs(n, width, mx.cols, lu, ipiv, first);
                         });
                       return info;
                     });
  singular.throwIfAny(s, "matrix is singular", zeroPivot);
  return x;
}

/// The rows x cols row-major `src` into `dst` in column-major order (cols x rows
/// row-major), in tiles that stay in the cache.
template <typename T> void transposeInto(const T* src, int64_t rows, int64_t cols, T* dst) {
  constexpr int64_t kTile = 32;
  for (int64_t i0 = 0; i0 < rows; i0 += kTile)
    for (int64_t j0 = 0; j0 < cols; j0 += kTile)
      for (int64_t i = i0; i < std::min(rows, i0 + kTile); ++i)
        for (int64_t j = j0; j < std::min(cols, j0 + kTile); ++j)
          dst[j * rows + i] = src[i * cols + j];
}

/// solve through LAPACK (n > kMaxSmallN): each item's A copied in column-major
/// order (as NumPy's linearize does), factored there, and B (copied into the result)
/// solved in place, in column-major order too when it has several columns. LAPACKE's
/// row-major calls transposed A twice for getrf and once more for getrs, on a copy
/// of the whole batch (1000 items of order 64, one column: 28.5 -> 20.9 ms on 2
/// threads, docs/bench/sweep-cpu.md). The factors are LAPACK's of A, as before.
template <typename T>
Array solve(const Step& s, const Array& a, const Array& rhs, const Array& into) {
  if (isSmall(Matrices(a).rows))
    return smallSolve<T>(s, a, rhs, into);
  Array x = resultCopy(rhs, into);
  Matrices ma(a), mx(x);
  ItemFailures singular(mx.batch);
  lapack_int n = static_cast<lapack_int>(ma.rows), cols = static_cast<lapack_int>(mx.cols);
  forEachItem(ma.batch, lapackWork(ma), singular, [&](int64_t b) {
    if (n == 0)
      return lapack_int{0};
    std::vector<T> f(static_cast<size_t>(n) * n), xt(cols > 1 ? static_cast<size_t>(n) * cols : 0);
    std::vector<lapack_int> ipiv(n);
    transposeInto(ma.item<T>(a, b), n, n, f.data());
    lapack_int info = Lapack<T>::getrf(LAPACK_COL_MAJOR, n, n, f.data(), n, ipiv.data());
    checkCall(s, info, "getrf", b);
    if (info != 0 || cols == 0)
      return info;
    T* xb = mx.item<T>(x, b);
    if (cols > 1)
      transposeInto(xb, n, cols, xt.data());
    T* px = cols > 1 ? xt.data() : xb; // one column: the same in either order
    checkCall(s, Lapack<T>::getrs(LAPACK_COL_MAJOR, 'N', n, cols, f.data(), n, ipiv.data(), px, n),
              "getrs", b);
    if (cols > 1)
      transposeInto(xt.data(), cols, n, xb);
    return info;
  });
  singular.throwIfAny(s, "matrix is singular", zeroPivot);
  return x;
}

/// Zeroes the strict upper (or lower) triangle of the rows x cols matrix at `p`.
template <typename T> void zeroItemTriangle(T* p, int64_t rows, int64_t cols, bool upperPart) {
  for (int64_t i = 0; i < rows; ++i)
    if (upperPart)
      std::fill(p + i * cols + std::min(i + 1, cols), p + (i + 1) * cols, T(0));
    else
      std::fill(p + i * cols, p + i * cols + std::min(i, cols), T(0));
}

/// Zeroes the strict upper (or lower) triangle of every matrix of `a`.
template <typename T> void zeroTriangle(Array& a, bool upperPart) {
  Matrices m(a);
  for (int64_t b = 0; b < m.batch; ++b)
    zeroItemTriangle(m.item<T>(a, b), m.rows, m.cols, upperPart);
}

/// Fails cholesky step `s` whose factor `l` could not be had for the items
/// `indefinite` names. A `cholesky {fallback}` of a batch fails with those items
/// named and their factors set to the identity (ItemsFailed): the run goes on, its
/// other items right, and only the failed ones are redone with LU.
template <typename T>
void failCholesky(const Step& s, const Array& l, const ItemFailures& indefinite) {
  auto leadingMinor = [](lapack_int info) { return fmt::format("leading minor {}", info); };
  if (!indefinite.any())
    return;
  llvm::ArrayRef<int64_t> shape = l.shape();
  if (!s.attrs.flag("fallback") || shape.size() < 3)
    indefinite.throwIfAny(s, "matrix is not positive definite", leadingMinor);
  Matrices m(l);
  std::vector<int64_t> items = indefinite.items();
  for (int64_t b : items) {
    T* p = m.item<T>(l, b);
    std::fill(p, p + m.size(), T(0));
    for (int64_t i = 0; i < m.rows; ++i)
      p[i * m.cols + i] = T(1);
  }
  std::string message = fmt::format(
      "{}: {}", s.who(), indefinite.message("matrix is not positive definite", leadingMinor));
  throw ItemsFailed(ItemFallbackError(message, s.loc, items, shape.drop_back(2).vec()), l);
}

template <typename T> Array cholesky(const Step& s, const Array& a, const Array& into) {
  bool upper = s.attrs.flag("upper");
  Matrices m(a);
  ItemFailures indefinite(m.batch);
  if (isSmall(m.rows)) { // each item copied where it is factored; potrf zeroes the other half
    Array l = resultArray(s, into);
    int n = static_cast<int>(m.rows);
    forEachItem(m.batch, m.batch * n * n * n, indefinite, [&](int64_t b) {
      std::memcpy(m.item<T>(l, b), m.item<T>(a, b), sizeof(T) * m.size());
      return small::potrf(n, upper, m.item<T>(l, b));
    });
    failCholesky<T>(s, l, indefinite);
    return l;
  }
  // Each item copied, factored and its other half zeroed while in the cache. The
  // row-major triangle is the column-major one of the other side (A is read in one
  // triangle only): LAPACKE then factors in place instead of transposing twice.
  Array l = resultArray(s, into);
  if (m.rows > 0)
    forEachItem(m.batch, lapackWork(m), indefinite, [&](int64_t b) {
      T* f = m.item<T>(l, b);
      std::memcpy(f, m.item<T>(a, b), sizeof(T) * m.size());
      lapack_int info = Lapack<T>::potrf(LAPACK_COL_MAJOR, upper ? 'L' : 'U', m.rows, f, m.ld());
      checkCall(s, info, "potrf", b);
      zeroItemTriangle(f, m.rows, m.cols, /*upperPart=*/!upper);
      return info;
    });
  failCholesky<T>(s, l, indefinite);
  return l;
}

template <typename T>
Array triangularSolve(const Step& s, const Array& a, const Array& rhs, const Array& into) {
  bool lower = s.attrs.flag("lower"), right = s.attrs.flag("right_side");
  bool trans = s.attrs.flag("transpose_a"), unit = s.attrs.flag("unit_diagonal");
  Matrices ma(a), mx(rhs);
  auto zeroOnDiagonal = [&](const T* pa) -> lapack_int {
    for (int64_t i = 0; i < ma.rows && !unit; ++i)
      if (pa[i * ma.cols + i] == T(0))
        return static_cast<lapack_int>(i + 1); // the first zero on the diagonal, from 1
    return 0;
  };
  bool useSmall = !right && isSmall(ma.rows);
  // The small loops copy each panel where they solve it; LAPACK's run on a copy.
  Array x = useSmall ? resultArray(s, into) : resultCopy(rhs, into);
  ItemFailures singular(ma.batch);
  if (useSmall) {
    int n = static_cast<int>(ma.rows);
    int64_t panel = panelColumns<T>(n);
    forEachItemColumns(ma.batch, mx.cols, panel, ma.batch * ma.size() * mx.cols, singular,
                       [&](int64_t b, int64_t c0, int64_t c1) {
                         const T* pa = ma.item<T>(a, b);
                         lapack_int info = zeroOnDiagonal(pa);
                         if (info == 0)
                           solvePanels<T>(mx, rhs, x, b, c0, c1, panel, [&](T* first, int width) {
                             small::trsm(n, width, mx.cols, lower, trans, unit, pa, first);
                           });
                         return info;
                       });
  } else {
    forEachItem(ma.batch, lapackWork(ma), singular, [&](int64_t b) {
      const T* pa = ma.item<T>(a, b);
      lapack_int info = zeroOnDiagonal(pa);
      if (info == 0 && mx.size() > 0)
        Lapack<T>::trsm(CblasRowMajor, right ? CblasRight : CblasLeft,
                        lower ? CblasLower : CblasUpper, trans ? CblasTrans : CblasNoTrans,
                        unit ? CblasUnit : CblasNonUnit, mx.rows, mx.cols, T(1), pa, ma.ld(),
                        mx.item<T>(x, b), mx.ld());
      return info;
    });
  }
  singular.throwIfAny(s, "matrix is singular",
                      [](lapack_int i) { return fmt::format("A({},{}) = 0", i, i); });
  return x;
}

/// lu: A = P * L * U with P a permutation, L unit lower, U upper triangular.
template <typename T> Arrays lu(const Step& s, const Array& a) {
  Matrices m(a);
  int64_t n = m.rows;
  Array p = Array::zeros(a.dtype(), a.shape()), l = Array::zeros(a.dtype(), a.shape());
  Array u = factorLu<T>(s, a.clone(), [&](int64_t b, T* f, lapack_int* ipiv, lapack_int) {
    // Row i of L*U is row perm[i] of A, so P[perm[i], i] = 1.
    std::vector<int64_t> perm(n);
    for (int64_t i = 0; i < n; ++i)
      perm[i] = i;
    for (int64_t i = 0; i < n; ++i)
      std::swap(perm[i], perm[ipiv[i] - 1]);
    T* pp = m.item<T>(p, b);
    T* pl = m.item<T>(l, b);
    for (int64_t i = 0; i < n; ++i) {
      pp[perm[i] * n + i] = T(1);
      pl[i * n + i] = T(1);
      for (int64_t j = 0; j < i; ++j)
        pl[i * n + j] = f[i * n + j];
    }
  });
  zeroTriangle<T>(u, /*upperPart=*/false);
  return {p, l, u};
}

/// qr, reduced: Q [m,k] with orthonormal columns, R [k,n] upper, k = min(m, n).
/// Q is left unwritten (no orgqr) where nothing reads it (Step::unread).
template <typename T> Arrays qr(const Step& s, const Array& a) {
  Matrices ma(a), mq(s.type(0).shape), mr(s.type(1).shape);
  const bool formQ = !(s.unread & 1);
  Array q =
      formQ ? Array::zeros(a.dtype(), s.type(0).shape) : Array::empty(a.dtype(), s.type(0).shape);
  Array r = Array::zeros(a.dtype(), s.type(1).shape);
  int64_t k = mq.cols;
  if (k == 0)
    return {q, r};
  Array f = a.clone();
  std::vector<T> tau(k);
  for (int64_t b = 0; b < ma.batch; ++b) {
    T* pf = ma.item<T>(f, b);
    checkCall(s, Lapack<T>::geqrf(LAPACK_ROW_MAJOR, ma.rows, ma.cols, pf, ma.ld(), tau.data()),
              "geqrf", b);
    T* pr = mr.item<T>(r, b);
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = i; j < ma.cols; ++j)
        pr[i * ma.cols + j] = pf[i * ma.cols + j];
    if (!formQ)
      continue;
    T* pq = mq.item<T>(q, b);
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < k; ++j)
        pq[i * k + j] = pf[i * ma.cols + j];
    for (int64_t i = k; i < ma.rows; ++i)
      for (int64_t j = 0; j < k; ++j)
        pq[i * k + j] = pf[i * ma.cols + j];
    checkCall(s, Lapack<T>::orgqr(LAPACK_ROW_MAJOR, ma.rows, k, k, pq, mq.ld(), tau.data()),
              "orgqr", b);
  }
  return {q, r};
}

template <typename T> Array inverse(const Step& s, const Array& a, const Array& into) {
  Matrices m(a);
  ItemFailures singular(m.batch);
  Array out =
      factorLu<T>(s, resultCopy(a, into), [&](int64_t b, T* f, lapack_int* ipiv, lapack_int info) {
        if (info > 0)
          singular.add(b, info);
        else if (m.rows > 0)
          checkCall(s, Lapack<T>::getri(LAPACK_ROW_MAJOR, m.rows, f, m.ld(), ipiv), "getri", b);
      });
  singular.throwIfAny(s, "matrix is singular", zeroPivot);
  return out;
}

/// det (or log|det| for logdet) from the LU factors: the product of U's diagonal
/// and the permutation's sign.
template <typename T> Array determinant(const Step& s, const Array& a) {
  Matrices m(a);
  Array out = Array::empty(s.type().dtype, s.type().shape);
  T* o = out.data<T>();
  bool logAbs = s.op == Op::Logdet;
  factorLu<T>(s, a.clone(), [&](int64_t b, T* f, lapack_int* ipiv, lapack_int) {
    double det = 1.0, logdet = 0.0;
    for (int64_t i = 0; i < m.rows; ++i) {
      double d = f[i * m.cols + i];
      det *= (ipiv[i] - 1 != i) ? -d : d;
      logdet += std::log(std::abs(d));
    }
    o[b] = static_cast<T>(logAbs ? logdet : det);
  });
  return out;
}

/// trace: the sum of the diagonal, for any numeric dtype.
Array trace(const Step& s, const Array& a) {
  Matrices m(a);
  Array out = Array::empty(s.type().dtype, s.type().shape);
  visitNumeric(s, a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
    for (int64_t b = 0; b < m.batch; ++b) {
      Acc acc = 0;
      for (int64_t i = 0; i < std::min(m.rows, m.cols); ++i)
        acc = wrapAdd(acc, static_cast<Acc>(m.item<T>(a, b)[i * m.cols + i]));
      out.data<T>()[b] = static_cast<T>(acc);
    }
  });
  return out;
}

/// Calls `f(TypeTag<T>{})` for T = float or double.
template <typename F> Arrays visitFloat(const Step& s, DType dtype, F&& f) {
  if (dtype == DType::F32)
    return f(TypeTag<float>{});
  if (dtype == DType::F64)
    return f(TypeTag<double>{});
  s.fail("internal error: linear algebra needs f32 or f64");
}

} // namespace

Arrays runLinalg(const Step& s, llvm::ArrayRef<Array> xs, const Array& into) {
  ieeeLapack();
  ThreadPool::global(); // GRAPHC_NUM_THREADS bounds OpenBLAS's threads from the first call
  if (s.op == Op::Trace)
    return {trace(s, xs[0])};
  return visitFloat(s, xs[0].dtype(), [&](auto tag) -> Arrays {
    using T = typename decltype(tag)::type;
    switch (s.op) {
    case Op::Matmul:
      return {matmul<T>(s, xs[0], xs[1], into)};
    case Op::Syrk:
      return {syrk<T>(s, xs[0], into)};
    case Op::Solve:
      return {solve<T>(s, xs[0], xs[1], into)};
    case Op::Cholesky:
      return {cholesky<T>(s, xs[0], into)};
    case Op::TriangularSolve:
      return {triangularSolve<T>(s, xs[0], xs[1], into)};
    case Op::Lu:
      return lu<T>(s, xs[0]);
    case Op::Qr:
      return qr<T>(s, xs[0]);
    case Op::Inverse:
      return {inverse<T>(s, xs[0], into)};
    case Op::Det:
    case Op::Logdet:
      return {determinant<T>(s, xs[0])};
    case Op::Trace:
    GRAPHC_ALL_BUT_LINALG_CASES:
      s.fail("internal error: not a linear-algebra op");
    }
    ir::unknownOp();
  });
}

} // namespace graphc::cpu
