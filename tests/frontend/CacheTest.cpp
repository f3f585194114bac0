//===- tests/frontend/CacheTest.cpp - Lazy eval, jit and saved graphs -----===//
//
// The eager cache compiles each graph structure once; jit traces once per input
// signature and retraces for a new shape or dtype; graphs built either way print,
// parse back equal, and run with the same results.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "frontend/Trace.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "runtime/Backends.h"

#include <sstream>

namespace graphc {
namespace {

using testing::expectClose;
using testing::randn;
using testing::toDoubles;

class Cache : public ::testing::Test {
protected:
  void SetUp() override {
    setDefaultBackend("cpu");
    ProgramCache::global().clear();
  }
  size_t compiles() const { return ProgramCache::global().compileCount(); }
};

TEST_F(Cache, EagerCodeIsLazyAndCompilesEachStructureOnce) {
  size_t before = compiles();
  auto f = [](const Tensor& x) { return exp(x) * 2.0 + x; };
  for (uint64_t seed = 0; seed < 3; ++seed) {
    Array xa = randn(DType::F64, {4}, seed);
    Tensor y = f(Tensor(xa));
    EXPECT_FALSE(y.isEvaluated());
    std::vector<double> want;
    for (double v : toDoubles(xa))
      want.push_back(std::exp(v) * 2 + v);
    expectClose(y.array(), want, 1e-12);
    EXPECT_TRUE(y.isEvaluated());
  }
  EXPECT_EQ(compiles(), before + 1) << "same structure, new data: compiled once";
  f(Tensor(randn(DType::F64, {5}, 9))).eval();
  EXPECT_EQ(compiles(), before + 2) << "a new shape compiles again";
  f(Tensor(randn(DType::F32, {5}, 9))).eval();
  EXPECT_EQ(compiles(), before + 3) << "a new dtype compiles again";
}

/// One array bound at leaves of expressions recorded apart is one parameter of the
/// graph eval() runs, as it is in a trace: the passes see one value (the EnKF's y,
/// centered and subtracted from obs, must be one value for lower-linalg's rules).
TEST_F(Cache, OneArrayIsOneParameter) {
  Array ya = randn(DType::F64, {3, 2}, 5), oa = randn(DType::F64, {3, 2}, 6);
  Tensor y(ya), o(oa);
  Tensor diff = o - y; // recorded in o's graph, which takes a leaf for y
  Tensor centered = y - mean(y, 1, true);
  Tensor sum = centered + diff;
  llvm::SmallVector<ir::Value, 4> values;
  std::shared_ptr<detail::TraceGraph> g = detail::unify({sum}, values);
  detail::Extracted e = detail::extract(*g, values, "eager");
  EXPECT_EQ(e.graph->params().size(), 2u) << ir::printGraph(*e.graph);
  std::vector<double> yv = toDoubles(ya), ov = toDoubles(oa), want(yv.size());
  for (size_t r = 0; r < 3; ++r)
    for (size_t c = 0; c < 2; ++c)
      want[r * 2 + c] =
          yv[r * 2 + c] - (yv[r * 2] + yv[r * 2 + 1]) / 2 + ov[r * 2 + c] - yv[r * 2 + c];
  expectClose(sum.array(), want, 1e-12);
}

TEST_F(Cache, EvaluatedValuesAreReusedNotRecomputed) {
  Array xa = randn(DType::F64, {3}, 1);
  Tensor a = Tensor(xa) * 3.0;
  Tensor b = a + 1.0;
  Tensor c = a - 1.0;
  b.eval();
  // b's evaluation computed `a` inside one program; c still needs it, and evaluating a
  // now must not change c's result.
  a.eval();
  EXPECT_EQ(c.graphText().find("mul"), std::string::npos) << c.graphText();
  std::vector<double> want;
  for (double v : toDoubles(xa))
    want.push_back(v * 3 - 1);
  expectClose(c.array(), want, 1e-12);
}

TEST_F(Cache, PrintingEvaluates) {
  Tensor t = Tensor(Array::fromVector<double>({1, 2}, {2})) * 2.0;
  std::ostringstream os;
  os << t;
  EXPECT_NE(os.str().find("[2, 4]"), std::string::npos) << os.str();
}

TEST_F(Cache, JitTracesOncePerSignature) {
  int calls = 0;
  auto f = jit(
      [&](Tensor x, Tensor y) {
        ++calls;
        return matmul(x, y) + 1.0;
      },
      "mm", {"x", "y"});
  auto check = [&](const Array& a, const Array& b) {
    Tensor r = f(a, b);
    EXPECT_TRUE(r.isEvaluated());
    int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
    std::vector<double> A = toDoubles(a), B = toDoubles(b), want(m * n, 1.0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t l = 0; l < k; ++l)
          want[i * n + j] += A[i * k + l] * B[l * n + j];
    expectClose(r.array(), want, a.dtype() == DType::F32 ? 1e-4 : 1e-12);
  };
  check(randn(DType::F64, {3, 4}, 1), randn(DType::F64, {4, 2}, 2));
  EXPECT_EQ(f.traceCount(), 1);
  check(randn(DType::F64, {3, 4}, 3), randn(DType::F64, {4, 2}, 4));
  EXPECT_EQ(f.traceCount(), 1) << "same signature: no retrace";
  EXPECT_EQ(calls, 1);
  check(randn(DType::F64, {5, 4}, 5), randn(DType::F64, {4, 2}, 6));
  EXPECT_EQ(f.traceCount(), 2) << "new shape: retrace";
  check(randn(DType::F32, {3, 4}, 7), randn(DType::F32, {4, 2}, 8));
  EXPECT_EQ(f.traceCount(), 3) << "new dtype: retrace";
  check(randn(DType::F64, {3, 4}, 9), randn(DType::F64, {4, 2}, 10));
  EXPECT_EQ(f.traceCount(), 3);
  const ir::Graph* g = f.graphFor({TensorType(DType::F64, {3, 4}), TensorType(DType::F64, {4, 2})});
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(ir::printGraph(*g).rfind("graph @mm(%x: f64[3,4], %y: f64[4,2])", 0), 0u);
}

TEST_F(Cache, JitReturnsSeveralResultsAndCapturesArrays) {
  Array wa = randn(DType::F64, {3}, 5);
  Tensor w(wa);
  auto f = jit([&](Tensor x) { return std::make_tuple(x * w, sum(x)); });
  Array xa = randn(DType::F64, {3}, 6);
  auto [prodT, total] = f(xa);
  std::vector<double> X = toDoubles(xa), W = toDoubles(wa), want;
  for (int i = 0; i < 3; ++i)
    want.push_back(X[i] * W[i]);
  expectClose(prodT.array(), want, 1e-12);
  expectClose(total.array(), {X[0] + X[1] + X[2]}, 1e-12);
  auto g = jit([](Tensor a) { return qr(a); });
  auto [q, r] = g(randn(DType::F64, {4, 3}, 7));
  EXPECT_EQ(r.shape(), Shape({3, 3}));
}

TEST_F(Cache, SavedGraphsLoadBackAndRun) {
  auto f = [](Tensor x, Tensor y) {
    return solve(matmul(x, x, {.transpose_b = true}) + 1.0 * eye(3), y);
  };
  auto traced = traceToGraph(
      f, {{"x", TensorType(DType::F64, {3, 3})}, {"y", TensorType(DType::F64, {3, 2})}}, "saved");
  std::string text = ir::printGraph(*traced);
  std::unique_ptr<ir::Graph> loaded = ir::parseGraph(text, "saved.gir");
  EXPECT_TRUE(ir::structurallyEqual(*traced, *loaded)) << text;
  EXPECT_EQ(ir::printGraph(*loaded), text);

  Array xa = randn(DType::F64, {3, 3}, 1), ya = randn(DType::F64, {3, 2}, 2);
  std::vector<Array> out = getBackend("cpu").compile(*loaded)->run({xa, ya});
  Tensor want = jit(f)(xa, ya);
  expectClose(out[0], toDoubles(want.array()), 1e-12);

  // An eager expression saves the same way; its leaves become parameters p0, p1, ...
  Tensor e = f(Tensor(xa), Tensor(ya));
  std::unique_ptr<ir::Graph> eager = ir::parseGraph(e.graphText("eager"), "eager.gir");
  ASSERT_EQ(eager->params().size(), 2u);
  expectClose(getBackend("cpu").compile(*eager)->run({xa, ya})[0], toDoubles(e.array()), 1e-12);
}

} // namespace
} // namespace graphc
