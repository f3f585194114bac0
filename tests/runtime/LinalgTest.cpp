//===- tests/runtime/LinalgTest.cpp - Linear algebra ----------------------===//
//
// Linear algebra checked by identities computed here in double: A*x == b,
// L*L' == A, P*L*U == A, Q*R == A with Q'Q == I, A*inv(A) == I, det against a
// Laplace expansion; matmul against a triple loop. f32 and f64, batched over rank-3
// and rank-4 inputs. The numeric failures (not SPD, singular) are errors naming
// the op and the batch item.
//
//===----------------------------------------------------------------------===//
#include "tests/runtime/TestUtil.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>

namespace graphc::testing {
namespace {

using ir::Op;
using Ints = std::vector<int64_t>;

/// Batch shapes the tests run over: unbatched, rank 3 and rank 4.
const Ints kBatches[] = {{}, {3}, {2, 2}};

Ints withMatrix(const Ints& batch, int64_t m, int64_t n) {
  Ints s = batch;
  s.push_back(m);
  s.push_back(n);
  return s;
}

int64_t count(const Ints& batch) {
  return ir::numElements(batch);
}

std::vector<double> identity(int64_t n) {
  std::vector<double> e(n * n, 0.0);
  for (int64_t i = 0; i < n; ++i)
    e[i * n + i] = 1;
  return e;
}

std::string label(DType dt, const Ints& batch) {
  return fmt::format("{} batch {}", ir::dtypeName(dt).str(), ir::shapeString(batch));
}

TEST(Linalg, MatmulWithTransposeFlags) {
  for (DType dt : kFloatTypes)
    for (const Ints& batch : kBatches)
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          int64_t m = 4, k = 5, n = 3;
          Array a = randn(dt, withMatrix(batch, ta ? k : m, ta ? m : k), 81);
          Array b = randn(dt, withMatrix(batch, tb ? n : k, tb ? k : n), 82);
          ir::Attrs attrs;
          attrs.set("transpose_a", ta).set("transpose_b", tb);
          Array c = runOp1(Op::Matmul, {a, b}, attrs);
          ASSERT_EQ(c.shape(), llvm::ArrayRef<int64_t>(withMatrix(batch, m, n)));
          std::vector<double> da = doubles(a), db = doubles(b), want;
          for (int64_t i = 0; i < count(batch); ++i) {
            std::vector<double> ai = batchItem(da, i, m * k), bi = batchItem(db, i, k * n);
            if (ta)
              ai = transposeRef(ai, k, m);
            if (tb)
              bi = transposeRef(bi, n, k);
            std::vector<double> ci = matmulRef(ai, bi, m, k, n);
            want.insert(want.end(), ci.begin(), ci.end());
          }
          expectClose(doubles(c), want, tolerance(dt, 10),
                      fmt::format("matmul ta={} tb={} {}", ta, tb, label(dt, batch)));
        }
  // A contraction over zero elements is a zero matrix.
  Array z =
      runOp1(Op::Matmul, {Array::zeros(DType::F64, {2, 0}), Array::zeros(DType::F64, {0, 3})});
  EXPECT_EQ(z.toVector<double>(), std::vector<double>(6, 0.0));
}

TEST(Linalg, SyrkAgainstATripleLoop) {
  for (DType dt : kFloatTypes)
    for (const Ints& batch : kBatches)
      for (bool trans : {false, true}) {
        int64_t n = 5, k = 3;
        Array x = randn(dt, withMatrix(batch, trans ? k : n, trans ? n : k), 85);
        ir::Attrs attrs;
        attrs.set("transpose", trans);
        Array c = runOp1(Op::Syrk, {x}, attrs);
        ASSERT_EQ(c.shape(), llvm::ArrayRef<int64_t>(withMatrix(batch, n, n)));
        std::vector<double> dx = doubles(x), want;
        for (int64_t b = 0; b < count(batch); ++b) {
          std::vector<double> xb = batchItem(dx, b, n * k);
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double acc = 0;
              for (int64_t p = 0; p < k; ++p)
                acc += trans ? xb[p * n + i] * xb[p * n + j] : xb[i * k + p] * xb[j * k + p];
              want.push_back(acc);
            }
        }
        expectClose(doubles(c), want, tolerance(dt, 10),
                    fmt::format("syrk transpose={} {}", trans, label(dt, batch)));
      }
  // An empty inner dimension gives zeros.
  Array z = runOp1(Op::Syrk, {Array::zeros(DType::F32, {2, 3, 0})});
  EXPECT_EQ(z.toVector<float>(), std::vector<float>(18, 0.0f));
}

TEST(Linalg, AssumeOpsReturnTheirOperand) {
  for (Op op :
       {Op::AssumeSpd, Op::AssumeSymmetric, Op::AssumeLower, Op::AssumeUpper, Op::AssumeDiagonal})
    for (DType dt : {DType::F32, DType::F64, DType::I32, DType::I64})
      for (const Ints& batch : kBatches) {
        // Any matrix passes: the assertion is not checked.
        Array a =
            runOp1(Op::Cast, {randn(DType::F64, withMatrix(batch, 3, 3), 87)}, {{"dtype", dt}});
        Array out = runOp1(op, {a});
        EXPECT_EQ(out.dtype(), dt);
        EXPECT_EQ(out.shape(), a.shape());
        EXPECT_EQ(doubles(out), doubles(a)) << ir::opName(op).str() << " " << label(dt, batch);
      }
}

TEST(Linalg, SolveSatisfiesAxEqualsB) {
  for (DType dt : kFloatTypes)
    for (const Ints& batch : kBatches) {
      int64_t n = 6, r = 2;
      Array a = wellConditioned(dt, withMatrix(batch, n, n), 91);
      Array b = randn(dt, withMatrix(batch, n, r), 92);
      Array x = runOp1(Op::Solve, {a, b});
      std::vector<double> da = doubles(a), dx = doubles(x), ax;
      for (int64_t i = 0; i < count(batch); ++i) {
        std::vector<double> p =
            matmulRef(batchItem(da, i, n * n), batchItem(dx, i, n * r), n, n, r);
        ax.insert(ax.end(), p.begin(), p.end());
      }
      expectClose(ax, doubles(b), tolerance(dt, 50), "solve " + label(dt, batch));
    }
}

// Orders past the small loops go to LAPACK, each item copied in column-major order
// (batches up to order 128 split over the pool, one item alone or larger orders on
// OpenBLAS's threads), with one right-hand side and several.
TEST(Linalg, LapackSolvesSatisfyAxEqualsB) {
  for (DType dt : kFloatTypes)
    for (int64_t n : {17, 64, 128, 129, 200})
      for (int64_t batch : {1, 3})
        for (int64_t r : {1, 3}) {
          Array a = wellConditioned(dt, {batch, n, n}, 93 + n);
          Array b = randn(dt, {batch, n, r}, 94 + n);
          std::vector<double> da = doubles(a), dx = doubles(runOp1(Op::Solve, {a, b})), ax;
          for (int64_t i = 0; i < batch; ++i) {
            std::vector<double> p =
                matmulRef(batchItem(da, i, n * n), batchItem(dx, i, n * r), n, n, r);
            ax.insert(ax.end(), p.begin(), p.end());
          }
          expectClose(
              ax, doubles(b), tolerance(dt, 4.0 * n),
              fmt::format("solve {} n={} batch={} rhs={}", ir::dtypeName(dt).str(), n, batch, r));
        }
}

TEST(Linalg, CholeskyLowerAndUpper) {
  for (DType dt : kFloatTypes)
    for (const Ints& batch : kBatches)
      for (bool upper : {false, true}) {
        int64_t n = 5;
        Array a = spd(dt, withMatrix(batch, n, n), 101);
        ir::Attrs attrs;
        attrs.set("upper", upper);
        Array f = runOp1(Op::Cholesky, {a}, attrs);
        std::vector<double> df = doubles(f), rebuilt;
        for (int64_t i = 0; i < count(batch); ++i) {
          std::vector<double> fi = batchItem(df, i, n * n);
          for (int64_t r = 0; r < n; ++r)
            for (int64_t c = 0; c < n; ++c) {
              if (upper ? c < r : c > r) {
                ASSERT_EQ(fi[r * n + c], 0.0) << "the other triangle is zero";
              }
            }
          std::vector<double> p = upper ? matmulRef(transposeRef(fi, n, n), fi, n, n, n)
                                        : matmulRef(fi, transposeRef(fi, n, n), n, n, n);
          rebuilt.insert(rebuilt.end(), p.begin(), p.end());
        }
        expectClose(rebuilt, doubles(a), tolerance(dt, 50),
                    fmt::format("cholesky upper={} {}", upper, label(dt, batch)));
      }
}

TEST(Linalg, TriangularSolveEveryFlagCombination) {
  for (DType dt : kFloatTypes)
    for (const Ints& batch : {Ints{}, Ints{2, 2}})
      for (int flags = 0; flags < 16; ++flags) {
        bool lower = flags & 1, right = flags & 2, trans = flags & 4, unit = flags & 8;
        int64_t n = 4, r = 3;
        Array a = wellConditioned(dt, withMatrix(batch, n, n), 111);
        Ints bshape = right ? withMatrix(batch, r, n) : withMatrix(batch, n, r);
        Array b = randn(dt, bshape, 112);
        ir::Attrs attrs;
        attrs.set("lower", lower).set("right_side", right).set("transpose_a", trans);
        attrs.set("unit_diagonal", unit);
        Array x = runOp1(Op::TriangularSolve, {a, b}, attrs);
        std::vector<double> da = doubles(a), dx = doubles(x), rebuilt;
        for (int64_t i = 0; i < count(batch); ++i) {
          // The triangle the op reads, with a unit diagonal when asked.
          std::vector<double> t = batchItem(da, i, n * n);
          for (int64_t p = 0; p < n; ++p)
            for (int64_t q = 0; q < n; ++q) {
              if (lower ? q > p : q < p)
                t[p * n + q] = 0;
              if (unit && p == q)
                t[p * n + q] = 1;
            }
          if (trans)
            t = transposeRef(t, n, n);
          std::vector<double> xi = batchItem(dx, i, n * r);
          std::vector<double> p = right ? matmulRef(xi, t, r, n, n) : matmulRef(t, xi, n, n, r);
          rebuilt.insert(rebuilt.end(), p.begin(), p.end());
        }
        expectClose(rebuilt, doubles(b), tolerance(dt, 50),
                    fmt::format("triangular_solve lower={} right={} trans={} unit={} {}", lower,
                                right, trans, unit, label(dt, batch)));
      }
}

TEST(Linalg, LuGivesPLU) {
  for (DType dt : kFloatTypes)
    for (const Ints& batch : kBatches) {
      int64_t n = 5;
      Array a = randn(dt, withMatrix(batch, n, n), 121);
      std::vector<Array> plu = runOp(Op::Lu, {a});
      ASSERT_EQ(plu.size(), 3u);
      std::vector<double> dp = doubles(plu[0]), dl = doubles(plu[1]), du = doubles(plu[2]);
      std::vector<double> rebuilt;
      for (int64_t i = 0; i < count(batch); ++i) {
        std::vector<double> p = batchItem(dp, i, n * n), l = batchItem(dl, i, n * n),
                            u = batchItem(du, i, n * n);
        for (int64_t r = 0; r < n; ++r) {
          double rowSum = 0, colSum = 0;
          for (int64_t c = 0; c < n; ++c) {
            EXPECT_TRUE(p[r * n + c] == 0 || p[r * n + c] == 1);
            rowSum += p[r * n + c];
            colSum += p[c * n + r];
            if (c > r) {
              EXPECT_EQ(l[r * n + c], 0.0);
            }
            if (c < r) {
              EXPECT_EQ(u[r * n + c], 0.0);
            }
          }
          EXPECT_EQ(rowSum, 1.0);
          EXPECT_EQ(colSum, 1.0);
          EXPECT_EQ(l[r * n + r], 1.0);
        }
        std::vector<double> plu1 = matmulRef(p, matmulRef(l, u, n, n, n), n, n, n);
        rebuilt.insert(rebuilt.end(), plu1.begin(), plu1.end());
      }
      expectClose(rebuilt, doubles(a), tolerance(dt, 20), "lu " + label(dt, batch));
    }
}

TEST(Linalg, QrReducedGivesQRWithOrthonormalQ) {
  for (DType dt : kFloatTypes)
    for (const Ints& batch : kBatches)
      for (auto [m, n] : {std::pair<int64_t, int64_t>{6, 4}, {4, 6}, {5, 5}}) {
        int64_t k = std::min(m, n);
        Array a = randn(dt, withMatrix(batch, m, n), 131);
        std::vector<Array> qr = runOp(Op::Qr, {a});
        ASSERT_EQ(qr[0].shape(), llvm::ArrayRef<int64_t>(withMatrix(batch, m, k)));
        ASSERT_EQ(qr[1].shape(), llvm::ArrayRef<int64_t>(withMatrix(batch, k, n)));
        std::vector<double> dq = doubles(qr[0]), dr = doubles(qr[1]), rebuilt, gram;
        for (int64_t i = 0; i < count(batch); ++i) {
          std::vector<double> q = batchItem(dq, i, m * k), r = batchItem(dr, i, k * n);
          for (int64_t p = 0; p < k; ++p)
            for (int64_t c = 0; c < p; ++c)
              EXPECT_EQ(r[p * n + c], 0.0);
          std::vector<double> qr1 = matmulRef(q, r, m, k, n);
          rebuilt.insert(rebuilt.end(), qr1.begin(), qr1.end());
          std::vector<double> g = matmulRef(transposeRef(q, m, k), q, k, m, k);
          expectClose(g, identity(k), tolerance(dt, 10), "Q'Q " + label(dt, batch));
        }
        expectClose(rebuilt, doubles(a), tolerance(dt, 20),
                    fmt::format("qr {}x{} {}", m, n, label(dt, batch)));
      }
}

TEST(Linalg, InverseTimesAIsIdentity) {
  for (DType dt : kFloatTypes)
    for (const Ints& batch : kBatches) {
      int64_t n = 5;
      Array a = wellConditioned(dt, withMatrix(batch, n, n), 141);
      std::vector<double> da = doubles(a), di = doubles(runOp1(Op::Inverse, {a}));
      for (int64_t i = 0; i < count(batch); ++i)
        expectClose(matmulRef(batchItem(da, i, n * n), batchItem(di, i, n * n), n, n, n),
                    identity(n), tolerance(dt, 20), "inverse " + label(dt, batch));
    }
}

double laplaceDet(const std::vector<double>& a, int64_t n) {
  if (n == 1)
    return a[0];
  double det = 0;
  for (int64_t c = 0; c < n; ++c) {
    std::vector<double> minor;
    for (int64_t r = 1; r < n; ++r)
      for (int64_t q = 0; q < n; ++q)
        if (q != c)
          minor.push_back(a[r * n + q]);
    det += (c % 2 ? -1 : 1) * a[c] * laplaceDet(minor, n - 1);
  }
  return det;
}

TEST(Linalg, DetLogdetTrace) {
  for (DType dt : kFloatTypes)
    for (const Ints& batch : kBatches)
      for (int64_t n : {1, 3, 4}) {
        Array a = randn(dt, withMatrix(batch, n, n), 151 + n);
        std::vector<double> da = doubles(a), det, logdet, trace;
        for (int64_t i = 0; i < count(batch); ++i) {
          std::vector<double> ai = batchItem(da, i, n * n);
          det.push_back(laplaceDet(ai, n));
          logdet.push_back(std::log(std::abs(det.back())));
          double t = 0;
          for (int64_t p = 0; p < n; ++p)
            t += ai[p * n + p];
          trace.push_back(t);
        }
        std::string what = fmt::format("n={} {}", n, label(dt, batch));
        Array d = runOp1(Op::Det, {a});
        EXPECT_EQ(d.shape(), llvm::ArrayRef<int64_t>(batch));
        expectClose(doubles(d), det, tolerance(dt, 20), "det " + what);
        expectClose(doubles(runOp1(Op::Logdet, {a})), logdet, tolerance(dt, 20), "logdet " + what);
        expectClose(doubles(runOp1(Op::Trace, {a})), trace, tolerance(dt, 10), "trace " + what);
      }
  Array singular = Array::fromVector<double>({1, 2, 2, 4}, {2, 2});
  EXPECT_EQ(runOp1(Op::Det, {singular}).toVector<double>()[0], 0.0);
  EXPECT_EQ(runOp1(Op::Logdet, {singular}).toVector<double>()[0], -INFINITY);
  Array ints = Array::fromVector<int32_t>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {3, 2, 2});
  EXPECT_EQ(runOp1(Op::Trace, {ints}).toVector<int32_t>(), (std::vector<int32_t>{5, 13, 21}));
}

/// Expects `f` to throw a graphc::Error whose message is `message`.
template <typename F> void expectMessage(F&& f, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "no error; expected: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), message);
  }
}

TEST(Linalg, NumericFailuresAreErrors) {
  for (DType dt : kFloatTypes) {
    // Batch item 2 is indefinite in its third leading minor.
    Array a = spd(DType::F64, {4, 4, 4}, 161);
    std::vector<double> v = a.toVector<double>();
    v[2 * 16 + 2 * 4 + 2] = -100;
    Array bad = runOp1(Op::Cast, {Array::fromVector(v, {4, 4, 4})}, {{"dtype", dt}});
    expectMessage([&] { runOp1(Op::Cholesky, {bad}); },
                  "cholesky: matrix is not positive definite (batch item 2, leading minor 3)");
    // A singular first matrix (row 3 = row 0 + row 1) in a batch of two.
    Array s = randn(DType::F64, {2, 4, 4}, 162);
    std::vector<double> sv = s.toVector<double>();
    for (int64_t c = 0; c < 4; ++c)
      sv[3 * 4 + c] = sv[c] + sv[4 + c];
    sv[0] = sv[4] = sv[8] = sv[12] = 0; // column 0 zero: exactly singular in floating point
    Array sing = runOp1(Op::Cast, {Array::fromVector(sv, {2, 4, 4})}, {{"dtype", dt}});
    Array rhs = randn(dt, {2, 4, 1}, 163);
    expectMessage(
        [&] {
          runOp1(Op::Solve, {sing, rhs});
        },
        "solve: matrix is singular (batch item 0, U(1,1) = 0)");
    expectMessage([&] { runOp1(Op::Inverse, {sing}); },
                  "inverse: matrix is singular (batch item 0, U(1,1) = 0)");
    Array tri = Array::zeros(dt, {2, 3, 3});
    expectMessage(
        [&] {
          runOp1(Op::TriangularSolve, {tri, Array::zeros(dt, {2, 3, 1})});
        },
        "triangular_solve: matrix is singular in 2 of 2 batch items: 0 (A(1,1) = 0), "
        "1 (A(1,1) = 0)");
  }
}

TEST(Linalg, BatchedFailuresNameEveryFailingItem) {
  // Items 1 and 4 of six SPD matrices are indefinite (at leading minors 2 and 1).
  std::vector<double> v = spd(DType::F64, {6, 3, 3}, 171).toVector<double>();
  v[1 * 9 + 1 * 3 + 1] = -50;
  v[4 * 9] = -1;
  expectMessage(
      [&] {
        runOp1(Op::Cholesky, {Array::fromVector(v, {6, 3, 3})});
      },
      "cholesky: matrix is not positive definite in 2 of 6 batch items: 1 (leading "
      "minor 2), 4 (leading minor 1)");
  // Items 0 and 2 of three are singular (a zero first column); item 1 is solved.
  std::vector<double> w = wellConditioned(DType::F64, {3, 3, 3}, 172).toVector<double>();
  for (int64_t b : {0, 2})
    for (int64_t r = 0; r < 3; ++r)
      w[b * 9 + r * 3] = 0;
  Array rhs = randn(DType::F64, {3, 3, 2}, 173);
  expectMessage(
      [&] {
        runOp1(Op::Solve, {Array::fromVector(w, {3, 3, 3}), rhs});
      },
      "solve: matrix is singular in 2 of 3 batch items: 0 (U(1,1) = 0), 2 (U(1,1) = 0)");
}

/// True when some element is NaN.
bool anyNaN(const std::vector<double>& xs) {
  return std::any_of(xs.begin(), xs.end(), [](double x) { return std::isnan(x); });
}

// NaN in, NaN out, as LAPACK computes it (LAPACKE's argument check would make it an
// "info -4" error): solve, inverse, det, lu, qr and cholesky of a batch whose item
// 1 holds one NaN give NaN there (where the algorithm's arithmetic meets it) and the
// exact results for the other items.
TEST(Linalg, NaNOperandsGiveNaNResults) {
  for (DType dt : kFloatTypes) {
    SCOPED_TRACE(ir::dtypeName(dt).str());
    std::vector<double> av = wellConditioned(DType::F64, {3, 4, 4}, 181).toVector<double>();
    av[16 + 5] = NAN; // item 1, A(1,1) (from 0)
    Array a = runOp1(Op::Cast, {Array::fromVector(av, {3, 4, 4})}, {{"dtype", dt}});
    Array b = randn(dt, {3, 4, 2}, 182);
    std::vector<double> x = doubles(runOp1(Op::Solve, {a, b}));
    std::vector<double> ad = doubles(a), bd = doubles(b);
    for (int64_t i : {0, 2}) // the others solve A x = b
      expectClose(matmulRef(batchItem(ad, i, 16), batchItem(x, i, 8), 4, 4, 2), batchItem(bd, i, 8),
                  tolerance(dt, 100), "A*x");
    EXPECT_TRUE(anyNaN(batchItem(x, 1, 8)));
    std::vector<double> inv = doubles(runOp1(Op::Inverse, {a}));
    EXPECT_TRUE(std::isnan(batchItem(inv, 1, 16)[5]));
    expectClose(matmulRef(batchItem(ad, 0, 16), batchItem(inv, 0, 16), 4, 4, 4), identity(4),
                tolerance(dt, 100), "A*inv(A)");
    EXPECT_TRUE(std::isnan(doubles(runOp1(Op::Det, {a}))[1]));
    EXPECT_FALSE(std::isnan(doubles(runOp1(Op::Det, {a}))[0]));
    std::vector<Array> qr = runOp(Op::Qr, {a});
    EXPECT_TRUE(std::isnan(batchItem(doubles(qr[1]), 1, 16)[5]));
    std::vector<Array> lu = runOp(Op::Lu, {a});
    EXPECT_TRUE(anyNaN(batchItem(doubles(lu[1]), 1, 16)) ||
                anyNaN(batchItem(doubles(lu[2]), 1, 16)));
    EXPECT_FALSE(anyNaN(batchItem(doubles(lu[2]), 0, 16)));
    // A NaN right-hand side, too.
    std::vector<double> bv = bd;
    bv[0] = NAN;
    Array bn = runOp1(Op::Cast, {Array::fromVector(bv, {3, 4, 2})}, {{"dtype", dt}});
    std::vector<double> xn = doubles(runOp1(Op::Solve, {a, bn}));
    EXPECT_TRUE(std::isnan(xn[0]));
    // Cholesky: OpenBLAS's potrf tests its pivots with `<= 0`, which a NaN passes:
    // the factor is NaN (reference LAPACK would report the leading minor).
    std::vector<double> sv = spd(DType::F64, {2, 4, 4}, 183).toVector<double>();
    sv[16] = NAN;
    Array sn = runOp1(Op::Cast, {Array::fromVector(sv, {2, 4, 4})}, {{"dtype", dt}});
    std::vector<double> l = doubles(runOp1(Op::Cholesky, {sn}));
    EXPECT_TRUE(std::isnan(l[16]));
    EXPECT_FALSE(anyNaN(batchItem(l, 0, 16)));
  }
}

TEST(Linalg, SingularAtALaterPivot) {
  // [[2,1,1],[4,2,2],[1,0,1]]: rows 0 and 1 are dependent, so U(3,3) = 0 after pivoting.
  Array a = Array::fromVector<double>({2, 1, 1, 4, 2, 2, 1, 0, 1}, {3, 3});
  try {
    runOp1(Op::Solve, {a, Array::zeros(DType::F64, {3, 1})});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("solve: matrix is singular (batch item 0, U("), std::string::npos)
        << e.message();
  }
}

} // namespace
} // namespace graphc::testing
