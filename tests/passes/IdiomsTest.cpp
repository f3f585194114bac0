//===- tests/passes/IdiomsTest.cpp - The forms users write, seen through ---===//
//
// The rewrites that see through the ways users write covariances, quadratic forms,
// traces, inverses, log-determinants and products (passes/Centering.h,
// passes/LinalgForms.h, passes/MatmulChains.h) and that read a reduction through a
// partial one (passes/Canonicalize.h):
// every case of their golden files and the uncentered EnKF give the numbers of the
// graph as written (run node by node on `cpu-unfused`, no passes) on random f64
// inputs; the uncentered EnKF becomes a Cholesky; and the centered covariance is the
// accurate one, measured against a reference in higher precision for data with a
// large mean.
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"
#include "passes/PassManager.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
#include "support/GraphFiles.h"
#include "support/Numeric.h"

#include <gtest/gtest.h>

#include <cmath>

namespace graphc {
namespace {

using testing::relativeDifference;

/// `g` through the default pipeline on `cpu` against `g` as written on
/// `cpu-unfused`, on random inputs.
void expectMatchesUnoptimized(const ir::Graph& g, uint64_t seed, double tolerance = 1e-10) {
  auto plain = compile(g, getBackend("cpu-unfused"), {"none"});
  auto optimized = compile(g, getBackend("cpu"));
  std::vector<Array> inputs = testing::randomInputs(g, seed);
  std::vector<Array> want = plain->run(inputs), got = optimized->run(inputs);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_LE(relativeDifference(got[i], want[i]), tolerance)
        << "output " << i << " of @" << g.name();
  EXPECT_EQ(optimized->fallbacks(), 0) << "@" << g.name();
}

/// Every case of a golden file, must-not-fire cases included.
void expectGoldenCasesMatch(const std::string& file, uint64_t seed) {
  for (const auto& g : testing::graphsOf(testing::readSourceFile(file), file))
    expectMatchesUnoptimized(*g, seed++);
}

/// The counters of `pass` when the default pipeline runs on `g`.
std::string countersOf(const ir::Graph& g, llvm::StringRef pass) {
  std::string out;
  passes::PipelineOptions options;
  options.afterPass = [&](const passes::Pass& p, const ir::Graph&, const passes::PassStats& s) {
    if (p.name == pass)
      out += s.str();
  };
  passes::runPipeline(g, passes::defaultPipeline(), options);
  return out;
}

TEST(Centering, GoldenCasesKeepTheNumbers) {
  expectGoldenCasesMatch("tests/golden/center/center.gir", 300);
}

/// W1b (examples/enkf_orig.gir): both covariances are centered, and the product
/// with the solve goes through the inner N x N system like W1's, the R added to the
/// right-hand side included; no LU is left.
TEST(Centering, UncenteredEnkfGoesThroughTheInnerSystem) {
  auto g = ir::parseGraph(testing::readSourceFile("examples/enkf_orig.gir"), "enkf_orig.gir");
  expectMatchesUnoptimized(*g, 11, 1e-9);
  EXPECT_EQ(countersOf(*g, "center"), "centered 2");
  EXPECT_EQ(countersOf(*g, "lower-linalg"), "syrk 1, inner-system 1");
  std::unique_ptr<ir::Graph> out = passes::runPipeline(*g, passes::defaultPipeline());
  for (const ir::Node* n : out->nodes())
    EXPECT_NE(n->op(), ir::Op::Solve);
}

/// A right-hand side with diagonal terms (uniform and not) beside sigma*F and
/// broadcast columns, against a non-uniform D, batched: the inner system keeps the
/// numbers of the graph as written.
TEST(Centering, InnerSystemTakesADiagonalInTheRightHandSide) {
  auto g = ir::parseGraph(R"(
graph @rhs_diagonal(%x: f64[2,5,7], %f: f64[2,7,7], %v: f64[2,7], %w: f64[2,7], %u: f64[2,7,1]) {
  %g = matmul %f, %f {transpose_b}
  %ev = exp %v
  %d = diag %ev
  %s = add %g, %d
  %p = matmul %x, %f {transpose_b}
  %ub = broadcast_to %u {shape=[2,7,7]}
  %r0 = sub %ub, %f
  %ew = exp %w
  %e = diag %ew
  %i = eye : f64[2,7,7]
  %c = full {value=0.3} : f64[2,7,7]
  %ci = mul %c, %i
  %r1 = add %r0, %e
  %r = sub %r1, %ci
  %z = solve %s, %r
  %k = matmul %p, %z
  return %k
}
)");
  expectMatchesUnoptimized(*g, 12, 1e-9);
  EXPECT_EQ(countersOf(*g, "lower-linalg"), "syrk 1, inner-system 1");
}

/// The covariance (y*y' - n*m*m') / (n - 1) of d series of n samples.
const char* kUncenteredCovariance = R"(
graph @cov(%y: f64[12,64]) {
  %my = mean %y {axes=[1], keepdims}
  %g = matmul %y, %y {transpose_b}
  %o = matmul %my, %my {transpose_b}
  %n = full {value=64.0} : f64[12,12]
  %no = mul %n, %o
  %d = sub %g, %no
  %m1 = full {value=63.0} : f64[12,12]
  %c = div %d, %m1
  return %c
}
)";

/// max |c - ref| / max |ref| for a 12 x 12 result against long-double loops over
/// the centered data.
double covarianceError(const Array& c, const std::vector<double>& y) {
  const int d = 12, n = 64;
  std::vector<long double> yc(y.begin(), y.end());
  for (int i = 0; i < d; ++i) {
    long double mu = 0;
    for (int j = 0; j < n; ++j)
      mu += yc[i * n + j];
    mu /= n;
    for (int j = 0; j < n; ++j)
      yc[i * n + j] -= mu;
  }
  std::vector<double> got = testing::asDoubles(c);
  long double err = 0, scale = 0;
  for (int i = 0; i < d; ++i)
    for (int k = 0; k < d; ++k) {
      long double ref = 0;
      for (int j = 0; j < n; ++j)
        ref += yc[i * n + j] * yc[k * n + j];
      ref /= n - 1;
      err = std::max(err, std::abs(got[i * d + k] - ref));
      scale = std::max(scale, std::abs(ref));
    }
  return static_cast<double>(err / scale);
}

/// Data with a mean large against its spread: the uncentered form loses the
/// covariance to cancellation, the centered one (what the pass makes of it) keeps it.
/// f32 data against a reference in higher precision (mean 1000, spread 1), and f64
/// data (mean 1e6).
TEST(Centering, CenteredCovarianceIsTheAccurateOne) {
  for (ir::DType dtype : {ir::DType::F32, ir::DType::F64}) {
    bool single = dtype == ir::DType::F32;
    std::string text = single ? testing::toF32(kUncenteredCovariance) : kUncenteredCovariance;
    auto g = ir::parseGraph(text);
    Array y = Array::randomNormal(dtype, {12, 64}, 5, single ? 1e3 : 1e6, 1.0);
    std::vector<double> yd = testing::asDoubles(y);
    double asWritten =
        covarianceError(compile(*g, getBackend("cpu-unfused"), {"none"})->run({y})[0], yd);
    double optimized = covarianceError(compile(*g, getBackend("cpu"))->run({y})[0], yd);
    RecordProperty(single ? "f32_as_written" : "f64_as_written", std::to_string(asWritten));
    RecordProperty(single ? "f32_centered" : "f64_centered", std::to_string(optimized));
    std::printf("%s, mean %g: relative error as written %.2e, centered %.2e\n",
                single ? "f32" : "f64", single ? 1e3 : 1e6, asWritten, optimized);
    EXPECT_LE(optimized, single ? 1e-5 : 1e-14);
    EXPECT_GE(asWritten, 1000 * optimized);
  }
}

TEST(MatmulChains, GoldenCasesKeepTheNumbers) {
  expectGoldenCasesMatch("tests/golden/matmul_chains/reassociate.gir", 500);
  expectGoldenCasesMatch("tests/golden/matmul_chains/sums.gir", 600);
}

TEST(Canonicalize, PartialReductionsKeepTheNumbers) {
  expectGoldenCasesMatch("tests/golden/canonicalize/partial_reductions.gir", 700);
}

TEST(LinalgForms, GoldenCasesKeepTheNumbers) {
  expectGoldenCasesMatch("tests/golden/linalg_forms/forms.gir", 400);
}

/// The GP log marginal likelihood (case gp_lml of the benchmarks), batched, and
/// the forms of a quadratic form, a trace and an inverse against a batch of S.
const char* kFactorShared = R"(
graph @gp_lml(%x: f64[2,8,8], %y: f64[2,8,1]) {
  %k = matmul %x, %x {transpose_b}
  %i = eye : f64[2,8,8]
  %c = full {value=0.5} : f64[2,8,8]
  %ci = mul %c, %i
  %s = add %k, %ci
  %ld = logdet %s
  %z = solve %s, %y
  %q = matmul %y, %z {transpose_a}
  %qr = reshape %q {shape=[2]}
  %l = add %ld, %qr
  %si = inverse %s
  %t = trace %si
  %yt = transpose %y {perm=[0,2,1]}
  %r = matmul %yt, %si
  return %l, %t, %r
}
)";

/// One factorization serves logdet, the quadratic form, the trace of the inverse and
/// the right-side solves, and the numbers are those of the graph as written.
TEST(LinalgForms, OneCholeskyServesLogdetSolvesAndInverse) {
  auto g = ir::parseGraph(kFactorShared);
  expectMatchesUnoptimized(*g, 21);
  EXPECT_EQ(countersOf(*g, "linalg-forms"), "logdet 1, quadratic-form 2, right-solve 1");
  std::unique_ptr<ir::Graph> out = passes::runPipeline(*g, passes::defaultPipeline());
  int cholesky = 0;
  for (const ir::Node* n : out->nodes()) {
    EXPECT_NE(n->op(), ir::Op::Solve);
    EXPECT_NE(n->op(), ir::Op::Inverse);
    EXPECT_NE(n->op(), ir::Op::Logdet);
    cholesky += n->op() == ir::Op::Cholesky;
  }
  EXPECT_EQ(cholesky, 1);
}

/// W7's S = F*F' + 0.1*I: logdet and det by the matrix determinant lemma, sharing
/// the k x k factor of the Woodbury solve; batched, and against a non-uniform D.
TEST(LinalgForms, DeterminantLemmaSharesWoodburysFactor) {
  auto g = ir::parseGraph(R"(
graph @lemma(%f: f64[2,48,3], %v: f64[2,48], %y: f64[2,48,2]) {
  %g = matmul %f, %f {transpose_b}
  %ev = exp %v
  %d = diag %ev
  %s = add %g, %d
  %ld = logdet %s
  %dt = det %s
  %z = solve %s, %y
  return %ld, %dt, %z
}
)");
  expectMatchesUnoptimized(*g, 31);
  std::string counters = countersOf(*g, "lower-linalg");
  EXPECT_NE(counters.find("determinant-lemma 2, woodbury 1"), std::string::npos) << counters;
  std::unique_ptr<ir::Graph> out = passes::runPipeline(*g, passes::defaultPipeline());
  int cholesky = 0;
  for (const ir::Node* n : out->nodes()) {
    EXPECT_NE(n->type().shape, ir::Shape({2, 48, 48})) << ir::opName(n->op()).str();
    cholesky += n->op() == ir::Op::Cholesky;
  }
  EXPECT_EQ(cholesky, 1);
}

} // namespace
} // namespace graphc
