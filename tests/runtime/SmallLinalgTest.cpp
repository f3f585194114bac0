//===- tests/runtime/SmallLinalgTest.cpp - Tiny matrices without LAPACK ---===//
//
// The loops of runtime/cpu/SmallLinalg.h (orders 1 to 16) against LAPACK called
// here on the same matrices: getrf's pivots exactly and its factors up to
// rounding, potrf's factor, getrs's and trsm's solutions, and the identities
// A*x == b and L*L' == A in double. Through the cpu backend too, on batches large
// enough to be split over the thread pool, orders 17 and 20 (LAPACK's path)
// beside them: solve, cholesky and triangular_solve, f32 and f64, with singular,
// indefinite and NaN items among good ones, reported per item as LAPACK reports
// them. Batched matmul and syrk of small matrices against loops.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/SmallLinalg.h"

#include "support/Error.h"
#include "tests/runtime/TestUtil.h"

#include <gtest/gtest.h>

#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <string>
#include <tuple>
#include <vector>

namespace graphc::testing {
namespace {

using ir::Op;

constexpr DType kTypes[] = {DType::F32, DType::F64};

/// LAPACKE's routines under one name for float and double.
template <typename T> struct Ref;
template <> struct Ref<float> {
  static constexpr auto getrf = LAPACKE_sgetrf;
  static constexpr auto getrs = LAPACKE_sgetrs;
  static constexpr auto potrf = LAPACKE_spotrf;
};
template <> struct Ref<double> {
  static constexpr auto getrf = LAPACKE_dgetrf;
  static constexpr auto getrs = LAPACKE_dgetrs;
  static constexpr auto potrf = LAPACKE_dpotrf;
};

/// A seeded normal rows x cols matrix of T.
template <typename T> std::vector<T> randomMatrix(int rows, int cols, uint64_t seed) {
  std::vector<double> v = doubles(randn(DType::F64, {rows, cols}, seed));
  return {v.begin(), v.end()};
}

double eps(DType dt) {
  return dt == DType::F32 ? 1e-6 : 1e-15;
}

template <typename T> void luAndSolveMatchLapack(DType dt) {
  for (int n = 1; n <= cpu::small::kMaxSmallN; ++n) {
    SCOPED_TRACE(fmt::format("n = {}", n));
    std::vector<T> a = randomMatrix<T>(n, n, 100 + n), lu = a, ref = a;
    std::vector<int> ipiv(n), refPiv(n);
    EXPECT_EQ(cpu::small::getrf(n, lu.data(), ipiv.data()), 0);
    ASSERT_EQ(Ref<T>::getrf(LAPACK_ROW_MAJOR, n, n, ref.data(), n, refPiv.data()), 0);
    EXPECT_EQ(ipiv, refPiv) << "pivots";
    double scale = 0;
    for (T x : ref)
      scale = std::max(scale, std::abs(static_cast<double>(x)));
    std::vector<double> got(lu.begin(), lu.end()), want(ref.begin(), ref.end());
    expectClose(got, want, 50 * n * eps(dt) * scale, "LU factors");
    // Three right-hand sides: LAPACK's getrs on its factors, and A*x == b.
    int cols = 3;
    std::vector<T> b = randomMatrix<T>(n, cols, 300 + n);
    std::vector<T> x = b, refX = b;
    cpu::small::getrs(n, cols, cols, lu.data(), ipiv.data(), x.data());
    Ref<T>::getrs(LAPACK_ROW_MAJOR, 'N', n, cols, ref.data(), n, refPiv.data(), refX.data(), cols);
    double xs = 0;
    for (T v : refX)
      xs = std::max(xs, std::abs(static_cast<double>(v)));
    expectClose({x.begin(), x.end()}, {refX.begin(), refX.end()}, 1e3 * n * eps(dt) * xs, "x");
    std::vector<double> ad(a.begin(), a.end()), xd(x.begin(), x.end());
    expectClose(matmulRef(ad, xd, n, n, cols), {b.begin(), b.end()}, 1e3 * n * eps(dt) * xs, "A*x");
  }
}

TEST(SmallLinalg, LuPivotsAndSolvesMatchLapack) {
  luAndSolveMatchLapack<float>(DType::F32);
  luAndSolveMatchLapack<double>(DType::F64);
}

template <typename T> void choleskyMatchesLapack(DType dt) {
  for (int n = 1; n <= cpu::small::kMaxSmallN; ++n)
    for (bool upper : {false, true}) {
      SCOPED_TRACE(fmt::format("n = {}, upper = {}", n, upper));
      std::vector<double> s = doubles(spd(DType::F64, {n, n}, 400 + n));
      std::vector<T> l(s.begin(), s.end()), ref = l;
      EXPECT_EQ(cpu::small::potrf(n, upper, l.data()), 0);
      ASSERT_EQ(Ref<T>::potrf(LAPACK_ROW_MAJOR, upper ? 'U' : 'L', n, ref.data(), n), 0);
      for (int i = 0; i < n; ++i) // LAPACK leaves the other triangle as it was
        for (int j = 0; j < n; ++j)
          if (upper ? j < i : j > i)
            ref[i * n + j] = 0;
      std::vector<double> got(l.begin(), l.end()), want(ref.begin(), ref.end());
      expectClose(got, want, 20 * n * eps(dt) * std::sqrt(2.0 * n), "factor");
      std::vector<double> lt = transposeRef(got, n, n);
      expectClose(upper ? matmulRef(lt, got, n, n, n) : matmulRef(got, lt, n, n, n), s,
                  20 * n * eps(dt) * 2 * n, "L*L'");
    }
}

TEST(SmallLinalg, CholeskyMatchesLapack) {
  choleskyMatchesLapack<float>(DType::F32);
  choleskyMatchesLapack<double>(DType::F64);
}

/// The order of the batched tests: every specialized order, the run-time one, and
/// LAPACK's beyond kMaxSmallN.
constexpr int kOrders[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 20};

/// Items of the batched tests: enough to split tiny orders over the pool.
int64_t batchFor(int n) {
  return n <= 4 ? 5000 : 300;
}

/// A x - b, relative to |x|, of every item of a batched solve in double.
void expectSolved(const std::vector<double>& a, const std::vector<double>& x,
                  const std::vector<double>& b, int64_t batch, int n, int cols, DType dt,
                  const std::string& what) {
  for (int64_t i = 0; i < batch; ++i) {
    std::vector<double> xi = batchItem(x, i, n * cols);
    double xs = 1;
    for (double v : xi)
      xs = std::max(xs, std::abs(v));
    std::vector<double> ax = matmulRef(batchItem(a, i, n * n), xi, n, n, cols);
    std::vector<double> bi = batchItem(b, i, n * cols);
    for (size_t k = 0; k < bi.size(); ++k)
      if (!(std::abs(ax[k] - bi[k]) <= 200 * n * n * eps(dt) * xs)) {
        ADD_FAILURE() << what << ": item " << i << " element " << k << ": " << ax[k] << " vs "
                      << bi[k];
        return;
      }
  }
}

TEST(SmallLinalg, BatchedSolveCholeskyAndTriangularSolve) {
  for (DType dt : kTypes)
    for (int n : kOrders) {
      SCOPED_TRACE(fmt::format("{} n = {}", ir::dtypeName(dt).str(), n));
      int64_t batch = batchFor(n);
      int cols = n == 4 ? 1 : 2;
      Array a = randn(dt, {batch, n, n}, 500 + n), b = randn(dt, {batch, n, cols}, 600 + n);
      std::vector<double> ad = doubles(a), bd = doubles(b);
      expectSolved(ad, doubles(runOp1(Op::Solve, {a, b})), bd, batch, n, cols, dt, "solve");
      Array s = spd(dt, {batch, n, n}, 700 + n);
      std::vector<double> sd = doubles(s);
      for (bool upper : {false, true}) {
        ir::Attrs attrs;
        attrs.set("upper", upper);
        Array l = runOp1(Op::Cholesky, {s}, attrs);
        std::vector<double> ld = doubles(l);
        for (int64_t i = 0; i < batch; i += batch / 7) { // L*L' == S on a few items
          std::vector<double> li = batchItem(ld, i, n * n), lt = transposeRef(li, n, n);
          expectClose(upper ? matmulRef(lt, li, n, n, n) : matmulRef(li, lt, n, n, n),
                      batchItem(sd, i, n * n), tolerance(dt, 4.0 * n * n), "L*L'");
        }
        // op(L) x = b for every combination of flags, against the triangle itself.
        for (int flags = 0; flags < 4; ++flags) {
          bool trans = flags & 1, unit = flags & 2;
          ir::Attrs t;
          t.set("lower", !upper).set("transpose_a", trans).set("unit_diagonal", unit);
          std::vector<double> x = doubles(runOp1(Op::TriangularSolve, {l, b}, t));
          std::vector<double> op;
          for (int64_t i = 0; i < batch; ++i) {
            std::vector<double> li = batchItem(ld, i, n * n);
            if (unit)
              for (int k = 0; k < n; ++k)
                li[k * n + k] = 1;
            if (trans)
              li = transposeRef(li, n, n);
            op.insert(op.end(), li.begin(), li.end());
          }
          expectSolved(
              op, x, bd, batch, n, cols, dt,
              fmt::format("triangular_solve upper={} trans={} unit={}", upper, trans, unit));
        }
      }
    }
}

TEST(SmallLinalg, WideRightHandSidesGoInPanelsAndSplitOverThreads) {
  // Few items with many columns: each item's columns in panels of 32 KiB (past one
  // panel, and a last panel of odd width), an item's panels split over the pool
  // when the items are fewer than its threads: A x == b for solve and every
  // triangle and transpose of triangular_solve.
  for (DType dt : kTypes)
    for (int n : {3, 4, 9, 16})
      for (auto [batch, cols] : {std::pair<int64_t, int>{1, 5001}, {3, 1203}}) {
        SCOPED_TRACE(
            fmt::format("{} n = {}, {} x {} columns", ir::dtypeName(dt).str(), n, batch, cols));
        Array a = wellConditioned(dt, {batch, n, n}, 1700 + n);
        Array b = randn(dt, {batch, n, cols}, 1800 + n);
        std::vector<double> ad = doubles(a), bd = doubles(b);
        std::vector<double> x = doubles(runOp1(Op::Solve, {a, b}));
        expectSolved(ad, x, bd, batch, n, cols, dt, "solve");
        for (int flags = 0; flags < 4; ++flags) {
          bool lower = flags & 1, trans = flags & 2;
          ir::Attrs t;
          t.set("lower", lower).set("transpose_a", trans);
          Array tri = runOp1(lower ? Op::Tril : Op::Triu, {a});
          std::vector<double> op = doubles(tri);
          if (trans)
            for (int64_t i = 0; i < batch; ++i) {
              std::vector<double> ti = transposeRef(batchItem(op, i, n * n), n, n);
              std::copy(ti.begin(), ti.end(), op.begin() + i * n * n);
            }
          expectSolved(op, doubles(runOp1(Op::TriangularSolve, {tri, b}, t)), bd, batch, n, cols,
                       dt, fmt::format("triangular_solve lower={} trans={}", lower, trans));
        }
      }
}

TEST(SmallLinalg, BatchedMatmulAndSyrkAgainstLoops) {
  // The products' rows are 4, 8 or 16 wide (n padded) and go four at a time: every
  // width and row count around those, and one past the small kernels (k = 17).
  std::vector<std::tuple<int, int, int>> shapes{
      {4, 4, 4}, {3, 5, 2}, {16, 1, 16}, {16, 16, 17}, {7, 9, 8}};
  for (int m : {1, 4, 5, 16})
    for (int n : {1, 3, 4, 5, 8, 9, 15, 16})
      for (int k : {1, 6, 16})
        shapes.emplace_back(m, n, k);
  for (DType dt : kTypes)
    for (auto [m, n, k] : shapes) {
      SCOPED_TRACE(fmt::format("{} {}x{}x{}", ir::dtypeName(dt).str(), m, n, k));
      int64_t batch = 1200; // split over the pool for 4 x 4 x 4 already
      for (int flags = 0; flags < 4; ++flags) {
        bool ta = flags & 1, tb = flags & 2;
        Array a = randn(dt, {batch, ta ? k : m, ta ? m : k}, 1400 + flags);
        Array b = randn(dt, {batch, tb ? n : k, tb ? k : n}, 1500 + flags);
        ir::Attrs attrs;
        attrs.set("transpose_a", ta).set("transpose_b", tb);
        std::vector<double> c = doubles(runOp1(Op::Matmul, {a, b}, attrs));
        std::vector<double> ad = doubles(a), bd = doubles(b);
        for (int64_t i = 0; i < batch; i += 199) {
          std::vector<double> ai = batchItem(ad, i, m * k), bi = batchItem(bd, i, k * n);
          expectClose(batchItem(c, i, m * n),
                      matmulRef(ta ? transposeRef(ai, k, m) : ai, tb ? transposeRef(bi, n, k) : bi,
                                m, k, n),
                      tolerance(dt, 4.0 * k), fmt::format("matmul ta={} tb={} item {}", ta, tb, i));
        }
      }
      for (bool trans : {false, true}) {
        Array x = randn(dt, {batch, trans ? k : m, trans ? m : k}, 1600 + trans);
        ir::Attrs attrs;
        attrs.set("transpose", trans);
        std::vector<double> c = doubles(runOp1(Op::Syrk, {x}, attrs)), xd = doubles(x);
        for (int64_t i = 0; i < batch; i += 199) {
          std::vector<double> xi = batchItem(xd, i, m * k);
          if (trans)
            xi = transposeRef(xi, k, m);
          std::vector<double> ci = batchItem(c, i, m * m);
          expectClose(ci, matmulRef(xi, transposeRef(xi, m, k), m, k, m), tolerance(dt, 4.0 * k),
                      fmt::format("syrk trans={} item {}", trans, i));
          EXPECT_EQ(ci, transposeRef(ci, m, m)) << "syrk is exactly symmetric";
        }
      }
    }
}

/// The message of `f`'s graphc::Error ("" and a failure when none is thrown).
template <typename F> std::string errorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.message();
  }
  ADD_FAILURE() << "no error";
  return "";
}

/// "what in K of B batch items: i (detail), ..." as runtime/cpu/Linalg.cpp words it.
std::string itemsMessage(const std::string& what, const std::vector<std::pair<int64_t, int>>& bad,
                         int64_t batch, const char* detail) {
  std::string list;
  for (size_t i = 0; i < bad.size() && i < 8; ++i)
    list += fmt::format("{}{} ({})", i ? ", " : "", bad[i].first,
                        fmt::format(fmt::runtime(detail), bad[i].second));
  return fmt::format("{} in {} of {} batch items: {}", what, bad.size(), batch, list);
}

TEST(SmallLinalg, FailingItemsAreReportedAsLapackReportsThem) {
  for (DType dt : kTypes)
    for (int n : {3, 4, 9, 17}) {
      SCOPED_TRACE(fmt::format("{} n = {}", ir::dtypeName(dt).str(), n));
      int64_t batch = batchFor(n);
      std::vector<double> a = doubles(wellConditioned(DType::F64, {batch, n, n}, 800 + n));
      std::vector<double> s = doubles(spd(DType::F64, {batch, n, n}, 900 + n));
      // Items 5, 77 and 250: a zero column (at n - 1, 0 and n / 2); the same items of
      // s indefinite at a diagonal entry (n - 1, 0, n / 2).
      std::vector<std::pair<int64_t, int>> bad = {{5, n - 1}, {77, 0}, {250, n / 2}};
      for (auto [item, col] : bad) {
        for (int r = 0; r < n; ++r)
          a[item * n * n + r * n + col] = 0;
        s[item * n * n + col * n + col] = -1e3;
      }
      // What LAPACK says about each.
      std::vector<std::pair<int64_t, int>> singular, indefinite;
      for (auto [item, col] : bad) {
        std::vector<double> ai = batchItem(a, item, n * n), si = batchItem(s, item, n * n);
        std::vector<int> piv(n);
        singular.emplace_back(item,
                              LAPACKE_dgetrf(LAPACK_ROW_MAJOR, n, n, ai.data(), n, piv.data()));
        indefinite.emplace_back(item, LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, si.data(), n));
        EXPECT_GT(singular.back().second, 0);
        EXPECT_GT(indefinite.back().second, 0);
      }
      auto cast = [&](const std::vector<double>& v) {
        return runOp1(Op::Cast, {Array::fromVector(v, {batch, n, n})}, {{"dtype", dt}});
      };
      Array rhs = randn(dt, {batch, n, 1}, 1000 + n);
      EXPECT_EQ(errorOf([&] {
                  runOp1(Op::Solve, {cast(a), rhs});
                }),
                "solve: " + itemsMessage("matrix is singular", singular, batch, "U({0},{0}) = 0"));
      EXPECT_EQ(errorOf([&] { runOp1(Op::Cholesky, {cast(s)}); }),
                "cholesky: " + itemsMessage("matrix is not positive definite", indefinite, batch,
                                            "leading minor {}"));
    }
}

TEST(SmallLinalg, NaNItemsGiveNaNAndTheOthersTheirSolutions) {
  for (DType dt : kTypes)
    for (int n : {4, 9, 17}) {
      SCOPED_TRACE(fmt::format("{} n = {}", ir::dtypeName(dt).str(), n));
      int64_t batch = batchFor(n);
      std::vector<double> a = doubles(wellConditioned(DType::F64, {batch, n, n}, 1100 + n));
      std::vector<double> s = doubles(spd(DType::F64, {batch, n, n}, 1200 + n));
      a[3 * n * n + n + 1] = NAN;
      s[3 * n * n] = NAN; // S(0,0) of item 3
      auto cast = [&](const std::vector<double>& v) {
        return runOp1(Op::Cast, {Array::fromVector(v, {batch, n, n})}, {{"dtype", dt}});
      };
      Array rhs = randn(dt, {batch, n, 1}, 1300 + n);
      std::vector<double> x = doubles(runOp1(Op::Solve, {cast(a), rhs}));
      std::vector<double> x3 = batchItem(x, 3, n);
      EXPECT_TRUE(std::any_of(x3.begin(), x3.end(), [](double v) { return std::isnan(v); }));
      std::vector<double> rd = doubles(rhs);
      for (int64_t i : {int64_t{0}, int64_t{2}, batch - 1})
        expectSolved(batchItem(a, i, n * n), batchItem(x, i, n), batchItem(rd, i, n), 1, n, 1, dt,
                     fmt::format("solve item {}", i));
      // Cholesky: no failure (OpenBLAS's potrf passes a NaN pivot) but a NaN factor.
      std::vector<double> l = doubles(runOp1(Op::Cholesky, {cast(s)}));
      EXPECT_TRUE(std::isnan(l[3 * n * n]));
      std::vector<double> l0 = batchItem(l, 0, n * n);
      EXPECT_FALSE(std::any_of(l0.begin(), l0.end(), [](double v) { return std::isnan(v); }));
    }
}

} // namespace
} // namespace graphc::testing
