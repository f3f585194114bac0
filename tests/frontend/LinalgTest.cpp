//===- tests/frontend/LinalgTest.cpp - Linear algebra through the DSL -----===//
//
// Matrix functions evaluated on the CPU backend, checked in float64 against loops
// (matmul, trace) and identities (A x = b, L L' = A, P L U = A, Q R = A, Q'Q = I,
// A A^-1 = I), batched and unbatched, f32 and f64. Numeric failures are errors.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

namespace graphc {
namespace {

using testing::expectClose;
using testing::randn;
using testing::toDoubles;
using testing::tolFor;

/// A batch of row-major matrices as doubles.
struct Mats {
  int64_t batch, rows, cols;
  std::vector<double> v;
  Mats(const Array& a)
      : batch(a.rank() == 3 ? a.shape()[0] : 1), rows(a.shape()[a.rank() - 2]),
        cols(a.shape()[a.rank() - 1]), v(toDoubles(a)) {}
  Mats(int64_t b, int64_t r, int64_t c) : batch(b), rows(r), cols(c), v(b * r * c, 0.0) {}
  double& operator()(int64_t b, int64_t i, int64_t j) { return v[(b * rows + i) * cols + j]; }
};

/// a * b (or with transposes) in float64 loops.
Mats matmulRef(Mats a, Mats b, bool ta = false, bool tb = false) {
  int64_t m = ta ? a.cols : a.rows, k = ta ? a.rows : a.cols, n = tb ? b.rows : b.cols;
  Mats c(a.batch, m, n);
  for (int64_t s = 0; s < a.batch; ++s)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t l = 0; l < k; ++l)
          c(s, i, j) += (ta ? a(s, l, i) : a(s, i, l)) * (tb ? b(s, j, l) : b(s, l, j));
  return c;
}

Mats identity(int64_t batch, int64_t n) {
  Mats e(batch, n, n);
  for (int64_t s = 0; s < batch; ++s)
    for (int64_t i = 0; i < n; ++i)
      e(s, i, i) = 1;
  return e;
}

class Linalg : public ::testing::TestWithParam<DType> {
protected:
  void SetUp() override { GRAPHC_USE_TEST_BACKEND(); }
  DType dt() const { return GetParam(); }
  double tol() const { return tolFor(dt()) * 100; }
  /// Well-conditioned SPD matrices: X X'/n + I.
  Tensor spd(int64_t batch, int64_t n, uint64_t seed) {
    Tensor x(randn(dt(), {batch, n, n}, seed));
    return matmul(x, x, {.transpose_b = true}) / double(n) + eye({batch, n, n}, dt());
  }
};

TEST_P(Linalg, MatmulWithTransposesAndBatches) {
  Array aa = randn(dt(), {2, 3, 4}, 1), ba = randn(dt(), {2, 5, 4}, 2);
  Tensor a(aa), b(ba);
  expectClose(matmul(a, b, {.transpose_b = true}).array(), matmulRef(aa, ba, false, true).v, tol(),
              "a*b'");
  expectClose(matmul(a, a, {.transpose_a = true}).array(), matmulRef(aa, aa, true, false).v, tol(),
              "a'*a");
}

TEST_P(Linalg, SolveAndInverse) {
  const int64_t batch = 3, n = 5;
  Tensor a = spd(batch, n, 3) + 0.5 * Tensor(randn(dt(), {batch, n, n}, 4)); // not symmetric
  Tensor b(randn(dt(), {batch, n, 2}, 5));
  Tensor x = solve(a, b);
  expectClose(matmul(a, x).array(), Mats(b.array()).v, tol(), "A*x == b");
  expectClose(matmul(a, inverse(a)).array(), identity(batch, n).v, tol(), "A*inv(A) == I");
}

TEST_P(Linalg, CholeskyAndTriangularSolve) {
  const int64_t batch = 2, n = 6;
  Tensor a = spd(batch, n, 6);
  Tensor l = cholesky(a);
  Mats L(l.array());
  for (int64_t s = 0; s < batch; ++s)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j)
        ASSERT_EQ(L(s, i, j), 0.0) << "L is not lower triangular";
  expectClose(matmul(l, l, {.transpose_b = true}).array(), Mats(a.array()).v, tol(), "L*L' == A");
  Tensor u = cholesky(a, /*upper=*/true);
  expectClose(matmul(u, u, {.transpose_a = true}).array(), Mats(a.array()).v, tol(), "U'*U == A");
  Tensor b(randn(dt(), {batch, n, 3}, 7));
  Tensor y = triangular_solve(l, b);
  expectClose(matmul(l, y).array(), Mats(b.array()).v, tol(), "L*y == b");
  Tensor z = triangular_solve(l, b, {.transpose_a = true});
  expectClose(matmul(l, z, {.transpose_a = true}).array(), Mats(b.array()).v, tol(), "L'*z == b");
}

TEST_P(Linalg, LuAndQr) {
  const int64_t n = 5;
  Tensor a(randn(dt(), {n, n}, 8));
  auto [p, l, u] = lu(a);
  evalAll({p, l, u});
  expectClose(matmul(p, matmul(l, u)).array(), Mats(a.array()).v, tol(), "P*L*U == A");
  Tensor tall(randn(dt(), {2, 6, 4}, 9));
  auto [q, r] = qr(tall);
  EXPECT_EQ(q.shape(), Shape({2, 6, 4}));
  EXPECT_EQ(r.shape(), Shape({2, 4, 4}));
  expectClose(matmul(q, r).array(), Mats(tall.array()).v, tol(), "Q*R == A");
  expectClose(matmul(q, q, {.transpose_a = true}).array(), identity(2, 4).v, tol(), "Q'*Q == I");
}

TEST_P(Linalg, DetLogdetTrace) {
  Array aa = randn(dt(), {2, 3, 3}, 10);
  Tensor a(aa);
  Mats A(aa);
  std::vector<double> dets, logdets, traces;
  for (int64_t s = 0; s < 2; ++s) {
    double d = A(s, 0, 0) * (A(s, 1, 1) * A(s, 2, 2) - A(s, 1, 2) * A(s, 2, 1)) -
               A(s, 0, 1) * (A(s, 1, 0) * A(s, 2, 2) - A(s, 1, 2) * A(s, 2, 0)) +
               A(s, 0, 2) * (A(s, 1, 0) * A(s, 2, 1) - A(s, 1, 1) * A(s, 2, 0));
    dets.push_back(d);
    logdets.push_back(std::log(std::abs(d)));
    traces.push_back(A(s, 0, 0) + A(s, 1, 1) + A(s, 2, 2));
  }
  expectClose(det(a).array(), dets, tol(), "det");
  expectClose(logdet(a).array(), logdets, tol(), "logdet");
  expectClose(trace(a).array(), traces, tol(), "trace");
}

TEST_P(Linalg, SyrkAndAssumptions) {
  Array xa = randn(dt(), {2, 4, 3}, 11);
  Tensor x(xa);
  expectClose(syrk(x).array(), matmulRef(xa, xa, false, true).v, tol(), "syrk(x) == x*x'");
  expectClose(syrk(x, /*transpose=*/true).array(), matmulRef(xa, xa, true, false).v, tol(),
              "syrk(x, true) == x'*x");
  Tensor a = spd(2, 4, 12);
  for (auto assume : {assume_spd, assume_symmetric, assume_lower, assume_upper, assume_diagonal})
    expectClose(assume(a, SrcLoc::current()).array(), Mats(a.array()).v, 0.0, "assume_* is id");
  Tensor b(randn(dt(), {2, 4, 2}, 13));
  Tensor z = solve(assume_spd(a), b);
  EXPECT_EQ(z.value().node->op(), ir::Op::Solve); // the compiler decides, not the DSL
  expectClose(matmul(a, z).array(), Mats(b.array()).v, tol(), "A*solve(assume_spd(A), b) == b");
}

TEST_P(Linalg, CholeskyOfANonSpdMatrixIsAnError) {
  Tensor a = -eye(4, dt());
  try {
    cholesky(a).eval();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("cholesky"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Linalg, ::testing::Values(DType::F32, DType::F64),
                         [](const auto& info) { return ir::dtypeName(info.param).str(); });

} // namespace
} // namespace graphc
