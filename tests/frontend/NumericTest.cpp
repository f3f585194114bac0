//===- tests/frontend/NumericTest.cpp - DSL results against plain loops ---===//
//
// Elementwise math with broadcasting, reductions and shape functions, evaluated
// eagerly on the CPU backend, against float64 loops written here; f32 and f64.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include <functional>

namespace graphc {
namespace {

using testing::expectClose;
using testing::randn;
using testing::toDoubles;
using testing::tolFor;

class Numeric : public ::testing::TestWithParam<DType> {
protected:
  void SetUp() override { GRAPHC_USE_TEST_BACKEND(); }
  DType dt() const { return GetParam(); }
};

TEST_P(Numeric, ElementwiseChainWithBroadcast) {
  const int64_t m = 5, n = 7;
  Array xa = randn(dt(), {m, n}, 1), wa = randn(dt(), {m, n}, 2), ba = randn(dt(), {n}, 3);
  Tensor x(xa), w(wa), b(ba);
  Tensor out = relu(x * w + b) * sigmoid(x) + tanh(x - b);
  std::vector<double> X = toDoubles(xa), W = toDoubles(wa), B = toDoubles(ba), want;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double xv = X[i * n + j], bv = B[j];
      want.push_back(std::max(xv * W[i * n + j] + bv, 0.0) / (1 + std::exp(-xv)) +
                     std::tanh(xv - bv));
    }
  expectClose(out.array(), want, tolFor(dt()));
}

TEST_P(Numeric, UnaryOps) {
  Array xa = randn(dt(), {4, 6}, 7);
  Tensor x(xa);
  Tensor pos = abs(x) + 0.5; // a domain for log, sqrt, ...
  std::vector<double> X = toDoubles(xa);
  struct Case {
    const char* name;
    Tensor got;
    std::function<double(double)> ref;
    bool positive;
  };
  std::vector<Case> cases = {
      {"neg", -x, [](double v) { return -v; }, false},
      {"sign", sign(x), [](double v) { return double((v > 0) - (v < 0)); }, false},
      {"exp", exp(x), [](double v) { return std::exp(v); }, false},
      {"log", log(pos), [](double v) { return std::log(v); }, true},
      {"log1p", log1p(pos), [](double v) { return std::log1p(v); }, true},
      {"expm1", expm1(x), [](double v) { return std::expm1(v); }, false},
      {"sqrt", sqrt(pos), [](double v) { return std::sqrt(v); }, true},
      {"rsqrt", rsqrt(pos), [](double v) { return 1 / std::sqrt(v); }, true},
      {"square", square(x), [](double v) { return v * v; }, false},
      {"reciprocal", reciprocal(pos), [](double v) { return 1 / v; }, true},
      {"sin", sin(x), [](double v) { return std::sin(v); }, false},
      {"cos", cos(x), [](double v) { return std::cos(v); }, false},
      {"erf", erf(x), [](double v) { return std::erf(v); }, false},
      {"floor", floor(x * 3.0), [](double v) { return std::floor(v * 3); }, false},
      {"ceil", ceil(x * 3.0), [](double v) { return std::ceil(v * 3); }, false},
      {"round", round(x * 3.0), [](double v) { return std::nearbyint(v * 3); }, false},
  };
  for (Case& c : cases) {
    std::vector<double> want;
    for (double v : X)
      want.push_back(c.ref(c.positive ? std::abs(v) + 0.5 : v));
    expectClose(c.got.array(), want, tolFor(dt()), c.name);
  }
}

TEST_P(Numeric, BinaryOpsAndComparisonsBroadcast) {
  Array aa = randn(dt(), {3, 1}, 11), ba = randn(dt(), {4}, 12);
  Tensor a(aa), b(ba);
  std::vector<double> A = toDoubles(aa), B = toDoubles(ba);
  auto check = [&](const char* name, Tensor got, const std::function<double(double, double)>& f) {
    std::vector<double> want;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j)
        want.push_back(f(A[i], B[j]));
    expectClose(got.array(), want, tolFor(dt()), name);
  };
  check("sub", a - b, std::minus<>());
  check("div", a / (abs(b) + 1.0), [](double x, double y) { return x / (std::abs(y) + 1); });
  check("pow", pow(abs(a) + 1.0, b),
        [](double x, double y) { return std::pow(std::abs(x) + 1, y); });
  check("maximum", maximum(a, b), [](double x, double y) { return std::max(x, y); });
  check("minimum", minimum(a, b), [](double x, double y) { return std::min(x, y); });
  check("atan2", atan2(a, b), [](double x, double y) { return std::atan2(x, y); });
  check("lt", cast(a < b, dt()), [](double x, double y) { return double(x < y); });
  check("ge", cast(a >= b, dt()), [](double x, double y) { return double(x >= y); });
  check("and/or/not", cast(((a > 0.0) & !(b > 0.0)) | ((a == a) & (b != b)), dt()),
        [](double x, double y) { return double((x > 0) && !(y > 0)); });
  check("where", where(a > b, a * 2.0, 1.0 - b),
        [](double x, double y) { return x > y ? 2 * x : 1 - y; });
  check("scalar left", 2.0 / (abs(a) + 1.0) + b,
        [](double x, double y) { return 2 / (std::abs(x) + 1) + y; });
}

TEST_P(Numeric, Reductions) {
  const int64_t p = 2, q = 3, r = 4;
  Array xa = randn(dt(), {p, q, r}, 21);
  Tensor x(xa);
  std::vector<double> X = toDoubles(xa);
  auto at = [&](int64_t i, int64_t j, int64_t k) { return X[(i * q + j) * r + k]; };
  std::vector<double> sumLast, meanMid, varMid, maxFirst, all(1, 0.0), argmaxLast;
  for (int64_t i = 0; i < p; ++i)
    for (int64_t j = 0; j < q; ++j) {
      double s = 0;
      int64_t best = 0;
      for (int64_t k = 0; k < r; ++k) {
        s += at(i, j, k);
        if (at(i, j, k) > at(i, j, best))
          best = k;
      }
      sumLast.push_back(s);
      argmaxLast.push_back(double(best));
      all[0] += s;
    }
  for (int64_t i = 0; i < p; ++i)
    for (int64_t k = 0; k < r; ++k) {
      double s = 0;
      for (int64_t j = 0; j < q; ++j)
        s += at(i, j, k);
      meanMid.push_back(s / q);
      double squares = 0;
      for (int64_t j = 0; j < q; ++j)
        squares += (at(i, j, k) - s / q) * (at(i, j, k) - s / q);
      varMid.push_back(squares / q);
    }
  for (int64_t j = 0; j < q; ++j)
    for (int64_t k = 0; k < r; ++k)
      maxFirst.push_back(std::max(at(0, j, k), at(1, j, k)));
  double tol = tolFor(dt()) * 10;
  Tensor s = sum(x, -1, true);
  EXPECT_EQ(s.shape(), Shape({p, q, 1}));
  expectClose(s.array(), sumLast, tol, "sum");
  expectClose(mean(x, 1).array(), meanMid, tol, "mean");
  expectClose(var(x, 1).array(), varMid, tol, "var");
  expectClose(max(x, 0).array(), maxFirst, tol, "max");
  expectClose(sum(x).array(), all, tol, "sum all");
  expectClose(argmax(x, -1).array(), argmaxLast, 0, "argmax");
  std::vector<double> minAll = {*std::min_element(X.begin(), X.end())};
  expectClose(min(x).array(), minAll, tol, "min");
  std::vector<double> prodFirst;
  for (int64_t j = 0; j < q; ++j)
    for (int64_t k = 0; k < r; ++k)
      prodFirst.push_back(at(0, j, k) * at(1, j, k));
  expectClose(prod(x, {0}).array(), prodFirst, tol, "prod");
}

TEST_P(Numeric, ShapeFunctions) {
  const int64_t m = 3, n = 4;
  Array xa = randn(dt(), {m, n}, 31);
  Tensor x(xa);
  std::vector<double> X = toDoubles(xa);
  std::vector<double> t, sl, cat, tu, dg, bc;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i)
      t.push_back(X[i * n + j]);
  for (int64_t i = 1; i < m; ++i)
    for (int64_t j = 0; j < n; j += 2)
      sl.push_back(X[i * n + j]);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < 2 * n; ++j)
      cat.push_back(X[i * n + j % n]);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      tu.push_back(j >= i + 1 ? X[i * n + j] : 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < m; ++j)
      dg.push_back(i == j ? X[i * n + i] : 0.0);
  for (int64_t k = 0; k < 2; ++k)
    bc.insert(bc.end(), X.begin(), X.end());
  expectClose(transpose(x).array(), t, 0, "transpose");
  expectClose(reshape(transpose(x), {-1}).array(), t, 0, "reshape");
  expectClose(slice(x, {1, 0}, {m, n}, {1, 2}).array(), sl, 0, "slice");
  expectClose(concat({x, x}, -1).array(), cat, 0, "concat");
  expectClose(triu(x, 1).array(), tu, 0, "triu");
  expectClose(diag(diag_part(x)).array(), dg, 0, "diag");
  expectClose(broadcast_to(x, {2, m, n}).array(), bc, 0, "broadcast_to");
  std::vector<double> io;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      io.push_back(double(j) + (i == j) + 0.5);
  expectClose((cast(iota({m, n}, 1), dt()) + eye({m, n}, dt()) + full({m, n}, 0.5, dt())).array(),
              io, 0, "factories");
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Numeric, ::testing::Values(DType::F32, DType::F64),
                         [](const auto& info) { return ir::dtypeName(info.param).str(); });

} // namespace
} // namespace graphc
