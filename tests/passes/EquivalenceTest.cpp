//===- tests/passes/EquivalenceTest.cpp - Optimized == unoptimized --------===//
//
// Every rewrite must keep the numbers: each graph runs on the CPU backend as
// written (no passes) and through the default pipeline, on the same random f64
// inputs, and the outputs must agree to a tight tolerance. Also checks the run-time
// fallback when a Cholesky the compiler chose fails.
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "passes/LowerLinalg.h"
#include "passes/PassManager.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
#include "support/Numeric.h"
#include "support/RandomGraph.h"
#include "support/SpdBatch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

namespace graphc {
namespace {

using testing::randomInputs;
using testing::relativeDifference;

void expectEquivalent(const ir::Graph& g, uint64_t seed, double tolerance = 1e-10) {
  Backend& cpu = getBackend("cpu");
  auto plain = compile(g, cpu, {"none"});
  auto optimized = compile(g, cpu);
  std::vector<Array> inputs = randomInputs(g, seed);
  std::vector<Array> want = plain->run(inputs), got = optimized->run(inputs);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_LE(relativeDifference(got[i], want[i]), tolerance)
        << "output " << i << " of @" << g.name();
  EXPECT_EQ(optimized->fallbacks(), 0);
}

const char* kLoweringGraphs = R"(
graph @spd(%y: f64[6,6], %b: f64[6,2], %c: f64[6,3]) {
  %g = matmul %y, %y {transpose_b}
  %i = eye : f64[6,6]
  %s = add %g, %i
  %x1 = solve %s, %b
  %x2 = solve %s, %c
  return %x1, %x2
}
graph @triangular(%a: f64[5,5], %b: f64[5,2]) {
  %l = tril %a
  %u = triu %a
  %x = solve %l, %b
  %y = solve %u, %b
  return %x, %y
}
graph @diagonal(%v: f64[4], %b: f64[4,2]) {
  %e = exp %v
  %d = diag %e
  %x = solve %d, %b
  %i = eye : f64[4,4]
  %y = solve %i, %b
  return %x, %y
}
graph @inverse(%a: f64[4,4], %b: f64[4,2]) {
  %ai = inverse %a
  %x = matmul %ai, %b
  %bt = transpose %b {perm=[1,0]}
  %z = matmul %ai, %bt {transpose_b}
  return %x, %z
}
graph @woodbury(%yc: f64[64,4], %b: f64[64,2], %v: f64[64]) {
  %g = matmul %yc, %yc {transpose_b}
  %n = full {value=3.0} : f64[64,64]
  %cyy = div %g, %n
  %i = eye : f64[64,64]
  %r = full {value=0.1} : f64[64,64]
  %ri = mul %i, %r
  %s = add %cyy, %ri
  %x = solve %s, %b
  %q = square %v
  %eps = full {value=0.5} : f64[64]
  %qe = add %q, %eps
  %d = diag %qe
  %gt = matmul %yc, %yc {transpose_b}
  %s2 = add %d, %gt
  %x2 = solve %s2, %b
  return %x, %x2
}
graph @assumed(%y: f64[5,5], %a: f64[5,5], %b: f64[5,2]) {
  %g = matmul %y, %y {transpose_b}
  %s = assume_spd %g
  %x = solve %s, %b
  %t = tril %a
  %l = assume_lower %t
  %xl = solve %l, %b
  %tu = triu %a
  %u = assume_upper %tu
  %xu = solve %u, %b
  %i = eye : f64[5,5]
  %e = mul %a, %i
  %d = assume_diagonal %e
  %xd = solve %d, %b
  return %x, %xl, %xu, %xd
}
graph @syrk(%x: f64[6,3], %bx: f64[2,3,4], %b: f64[6,2]) {
  %g = matmul %x, %x {transpose_b}
  %h = matmul %x, %x {transpose_a}
  %bt = transpose %bx {perm=[0,2,1]}
  %bg = matmul %bt, %bx
  %i = eye : f64[6,6]
  %s = add %g, %i
  %z = solve %s, %b
  return %g, %h, %bg, %z
}
graph @enkf(%xi: f64[8,8], %y: f64[8,8], %obs: f64[8,1]) {
  %xm = mean %xi {axes=[1], keepdims}
  %xb = broadcast_to %xm {shape=[8,8]}
  %xc = sub %xi, %xb
  %ym = mean %y {axes=[1], keepdims}
  %yb = broadcast_to %ym {shape=[8,8]}
  %yc = sub %y, %yb
  %n = full {value=7.0} : f64[8,8]
  %cxy = matmul %xc, %yc {transpose_b}
  %cxyn = div %cxy, %n
  %cyy = matmul %yc, %yc {transpose_b}
  %cyyn = div %cyy, %n
  %i = eye : f64[8,8]
  %r = full {value=0.1} : f64[8,8]
  %ri = mul %i, %r
  %s = add %cyyn, %ri
  %ob = broadcast_to %obs {shape=[8,8]}
  %d = sub %ob, %y
  %z = solve %s, %d
  %k = matmul %cxyn, %z
  %out = add %xi, %k
  return %out
}
graph @enkf_ensemble(%xi: f64[48,4], %y: f64[48,4], %obs: f64[48,1]) {
  %xm = mean %xi {axes=[1], keepdims}
  %xb = broadcast_to %xm {shape=[48,4]}
  %xc = sub %xi, %xb
  %ym = mean %y {axes=[1], keepdims}
  %yb = broadcast_to %ym {shape=[48,4]}
  %yc = sub %y, %yb
  %n = full {value=3.0} : f64[48,48]
  %cxy = matmul %xc, %yc {transpose_b}
  %cxyn = div %cxy, %n
  %cyy = matmul %yc, %yc {transpose_b}
  %cyyn = div %cyy, %n
  %i = eye : f64[48,48]
  %r = full {value=0.1} : f64[48,48]
  %ri = mul %i, %r
  %s = add %cyyn, %ri
  %ob = broadcast_to %obs {shape=[48,4]}
  %d = sub %ob, %y
  %z = solve %s, %d
  %k = matmul %cxyn, %z
  %out = add %xi, %k
  return %out
}
graph @through_rows(%x: f64[8,5], %y: f64[8,8], %obs: f64[8,1], %v: f64[8,1]) {
  %ym = mean %y {axes=[1], keepdims}
  %yb = broadcast_to %ym {shape=[8,8]}
  %yc = sub %y, %yb
  %g = matmul %yc, %yc {transpose_b}
  %c = full {value=0.5} : f64[8,8]
  %gc = mul %c, %g
  %e = exp %v
  %ev = reshape %e {shape=[8]}
  %d = diag %ev
  %s = add %d, %gc
  %p = matmul %x, %yc {transpose_a, transpose_b}
  %two = full {value=2.0} : f64[5,8]
  %p2 = mul %p, %two
  %ob = broadcast_to %obs {shape=[8,8]}
  %r = sub %y, %ob
  %three = full {value=3.0} : f64[8,8]
  %r3 = div %r, %three
  %z = solve %s, %r3
  %k = matmul %p2, %z
  return %k
}
graph @through_columns(%f: f64[7,3], %v: f64[7,1], %w: f64[7,1]) {
  %g = matmul %f, %f {transpose_b}
  %i = eye : f64[7,7]
  %s = add %g, %i
  %vb = broadcast_to %v {shape=[7,3]}
  %wb = broadcast_to %w {shape=[7,3]}
  %r = sub %vb, %wb
  %z = solve %s, %r
  %k = matmul %f, %z {transpose_a}
  return %k
}
graph @inner_gram(%f: f64[9,4], %v: f64[9,1]) {
  %g = matmul %f, %f {transpose_b}
  %i = eye : f64[9,9]
  %h = full {value=0.5} : f64[9,9]
  %hi = mul %h, %i
  %s = add %g, %hi
  %vb = broadcast_to %v {shape=[9,4]}
  %two = full {value=2.0} : f64[9,4]
  %f2 = mul %f, %two
  %r = sub %f2, %vb
  %z = solve %s, %r
  %k = matmul %f, %z {transpose_a}
  return %k
}
graph @through_batched(%xi: f64[3,8,8], %y: f64[3,8,8], %obs: f64[3,8,1]) {
  %xm = mean %xi {axes=[2], keepdims}
  %xb = broadcast_to %xm {shape=[3,8,8]}
  %xc = sub %xi, %xb
  %ym = mean %y {axes=[2], keepdims}
  %yb = broadcast_to %ym {shape=[3,8,8]}
  %yc = sub %y, %yb
  %n = full {value=7.0} : f64[3,8,8]
  %cxy = matmul %xc, %yc {transpose_b}
  %cxyn = div %cxy, %n
  %cyy = matmul %yc, %yc {transpose_b}
  %cyyn = div %cyy, %n
  %i = eye : f64[3,8,8]
  %r = full {value=0.1} : f64[3,8,8]
  %ri = mul %i, %r
  %s = add %cyyn, %ri
  %ob = broadcast_to %obs {shape=[3,8,8]}
  %d = sub %ob, %y
  %z = solve %s, %d
  %k = matmul %cxyn, %z
  %out = add %xi, %k
  return %out
}
)";

TEST(Equivalence, LoweringsKeepTheNumbers) {
  ir::Module m = ir::parseModule(kLoweringGraphs, "lowerings");
  uint64_t seed = 1;
  for (const auto& g : m.graphs)
    expectEquivalent(*g, seed += 10);
}

TEST(Equivalence, PipelineLowersTheGraphsItShould) {
  ir::Module m = ir::parseModule(kLoweringGraphs, "lowerings");
  for (const auto& g : m.graphs) {
    passes::PipelineOptions options;
    options.verifyEach = true;
    std::unique_ptr<ir::Graph> out = passes::runPipeline(*g, passes::defaultPipeline(), options);
    // @inverse has a plain matrix: its solve stays LU, but the inverse goes.
    ir::Op gone = g->name() == "inverse" ? ir::Op::Inverse : ir::Op::Solve;
    for (const ir::Node* n : out->nodes())
      EXPECT_NE(n->op(), gone) << ir::opName(gone).str() << " stayed in @" << g->name();
  }
}

/// The products through a Gram factor above take the form the cost model picks (so
/// the test above checks the numbers of both forms): the inner k x k system where R
/// has a multiple of F, the factor of S where R is broadcast columns only.
TEST(Equivalence, ProductsGoThroughTheGramFactor) {
  ir::Module m = ir::parseModule(kLoweringGraphs, "lowerings");
  std::map<std::string, std::string> form = {{"enkf", "inner-system 1"},
                                             {"through_rows", "inner-system 1"},
                                             {"inner_gram", "inner-system 1"},
                                             {"through_batched", "inner-system 1"},
                                             {"through_columns", "through-factor 1"}};
  for (const auto& [name, rule] : form) {
    passes::PassStats stats;
    passes::lowerLinalg(*m.find(name), stats);
    EXPECT_NE(stats.str().find(rule), std::string::npos) << "@" << name << ": " << stats.str();
  }
}

/// W2's shape (d >> N): re-association and Woodbury together leave no d x d value.
TEST(Equivalence, EnsembleRegimeFormsNoStateByStateMatrix) {
  ir::Module m = ir::parseModule(kLoweringGraphs, "lowerings");
  std::unique_ptr<ir::Graph> out =
      passes::runPipeline(*m.find("enkf_ensemble"), passes::defaultPipeline());
  for (const ir::Node* n : out->nodes())
    EXPECT_NE(n->type().shape, ir::Shape({48, 48})) << ir::opName(n->op()).str();
}

/// Reductions of transposed values reduce the value itself over the axes they are,
/// then transpose (or reshape, or leave) the smaller result: the same numbers, the
/// same argmax positions, and no transpose left before a reduction. An argmax over
/// reduced axes the transpose reorders keeps it (its flattened positions would
/// change), and so does a transpose with another use.
TEST(Equivalence, ReductionsOfTransposesReduceTheirOperand) {
  auto g = ir::parseGraph(R"(
graph @g(%x: f64[5,6,7], %y: f64[5,6,7], %z: f64[5,6,7], %w: f64[5,6,7], %v: f64[5,6,7]) {
  %t = transpose %x {perm=[2,0,1]}
  %s = sum %t {axes=[1]}
  %u = transpose %y {perm=[2,0,1]}
  %m = max %u {axes=[2], keepdims}
  %r = transpose %z {perm=[1,0,2]}
  %d = var %r {axes=[1], keepdims}
  %q = transpose %w {perm=[0,2,1]}
  %a = argmax %q {axes=[0,2]}
  %p = transpose %v {perm=[1,0,2]}
  %b = argmin %p {axes=[0,1]}
  %n = mean %p {axes=[2]}
  return %s, %m, %d, %a, %b, %n
})");
  expectEquivalent(*g, 41);
  std::unique_ptr<ir::Graph> out = passes::runPipeline(*g, passes::defaultPipeline());
  int kept = 0;
  for (const ir::Node* n : out->nodes())
    if (n->kind() == ir::OpKind::Reduce && n->operand(0).node->op() == ir::Op::Transpose) {
      ++kept;
      EXPECT_TRUE(n->op() == ir::Op::Argmin || n->op() == ir::Op::Mean) << ir::printGraph(*out);
    }
  EXPECT_EQ(kept, 2) << ir::printGraph(*out); // %p's argmin and mean
}

/// For each output of `g`, whether an f32 value is computed on the way to it (from
/// a parameter, a source or a cast): the output then has f32's precision.
std::vector<bool> throughF32(const ir::Graph& g) {
  std::vector<bool> f32(g.nodes().size(), false);
  for (const ir::Node* n : g.nodes()) { // in order: operands first
    bool any = n->type().dtype == ir::DType::F32;
    for (ir::Value v : n->operands())
      any = any || f32[v.node->id()];
    f32[n->id()] = any;
  }
  std::vector<bool> out;
  for (ir::Value v : g.outputs())
    out.push_back(f32[v.node->id()]);
  return out;
}

// Random graphs of bounded values through the default pipeline and the fused cpu
// backend, against cpu-unfused without passes: canonicalize's rewrites and fusion
// keep the numbers, to f32's or f64's precision by what each output is computed in.
TEST(Equivalence, CanonicalizeKeepsRandomGraphs) {
  testing::RandomGraphOptions options;
  options.floatOnly = true;
  options.bounded = true;
  options.ops = {ir::Op::Add,       ir::Op::Sub,    ir::Op::Mul,         ir::Op::Neg,
                 ir::Op::Tanh,      ir::Op::Sin,    ir::Op::Maximum,     ir::Op::Full,
                 ir::Op::Constant,  ir::Op::Eye,    ir::Op::BroadcastTo, ir::Op::Reshape,
                 ir::Op::Transpose, ir::Op::Matmul, ir::Op::Sum,         ir::Op::Mean,
                 ir::Op::Cast,      ir::Op::Diag};
  testing::RandomGraphGenerator gen(7, options);
  int outputs = 0, degenerate = 0, f32 = 0;
  for (int i = 0; i < 60; ++i) {
    std::unique_ptr<ir::Graph> g = gen.generate("random" + std::to_string(i));
    SCOPED_TRACE(ir::printGraph(*g));
    std::vector<Array> inputs = testing::boundedInputs(*g, 100 + i);
    std::vector<Array> want = compile(*g, getBackend("cpu-unfused"), {"none"})->run(inputs);
    std::vector<Array> got = compile(*g, getBackend("cpu"))->run(inputs);
    ASSERT_EQ(got.size(), want.size());
    std::vector<bool> single = throughF32(*g);
    for (size_t k = 0; k < want.size(); ++k) {
      EXPECT_LE(relativeDifference(got[k], want[k]), single[k] ? 1e-5 : 1e-10) << "output " << k;
      ++outputs;
      degenerate += testing::degenerate(want[k]);
      f32 += single[k];
    }
  }
  EXPECT_LE(degenerate, outputs / 20) << degenerate << " of " << outputs << " outputs";
  EXPECT_GE(f32, outputs / 4) << f32 << " of " << outputs << " outputs"; // both tolerances used
  EXPECT_LE(f32, outputs * 3 / 4) << f32 << " of " << outputs << " outputs";
}

/// S = Y*Y' + 1e-300*I is SPD in exact arithmetic, but Y has rank 2 with exact
/// entries, so the computed S is exactly singular (the 1e-300 rounds away): the
/// chosen Cholesky fails, the run falls back to LU, and LU reports the singular
/// matrix instead of returning NaNs.
TEST(Fallback, FailedCholeskyFallsBackToLuWhichReportsSingular) {
  std::unique_ptr<ir::Graph> g = testing::tinyShiftGramSolve(4, 2);
  auto exe = compile(*g, getBackend("cpu"));
  std::vector<Array> inputs = {Array::fromVector<double>({1, 0, 0, 1, 1, 0, 0, 1}, {4, 2}),
                               Array::randomNormal(ir::DType::F64, {4, 1}, 4)};
  try {
    exe->run(inputs);
    ADD_FAILURE() << "a singular system was solved";
  } catch (const FallbackError& e) {
    ADD_FAILURE() << "the fallback did not run: " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("singular"), std::string::npos) << e.what();
  }
  EXPECT_EQ(exe->fallbacks(), 1);
}

/// A solve with a (possibly wrong) assume_spd: the compiler chooses a Cholesky.
constexpr const char* kAssumedSpd = R"(
graph @wrong(%a: f64[3,3], %b: f64[3,2]) {
  %s = assume_spd %a
  %x = solve %s, %b
  return %x
}
)";

/// Symmetric, not positive definite: the Cholesky kAssumedSpd chose fails on it.
Array indefinite3x3() {
  return Array::fromVector<double>({1, 2, 0, 2, 1, 0, 0, 0, 3}, {3, 3});
}

/// A wrong assume_spd (a symmetric indefinite matrix) makes the chosen Cholesky fail
/// at run time: the run falls back to LU and gives LU's answer.
TEST(Fallback, WrongAssumeSpdFallsBackToLu) {
  std::unique_ptr<ir::Graph> g = ir::parseGraph(kAssumedSpd);
  auto exe = compile(*g, getBackend("cpu"));
  auto plain = compile(*g, getBackend("cpu"), {"none"});
  std::vector<Array> inputs = {indefinite3x3(), Array::randomNormal(ir::DType::F64, {3, 2}, 6)};
  std::vector<Array> got = exe->run(inputs), want = plain->run(inputs);
  EXPECT_LE(relativeDifference(got[0], want[0]), 1e-12);
  EXPECT_EQ(exe->fallbacks(), 1);
}

/// Deferred runs: the one whose chosen Cholesky fails is redone with LU when
/// finishing, and so is every run after it; the others keep the Cholesky results.
TEST(Fallback, DeferredRunThatFailsIsRedoneWithLu) {
  std::unique_ptr<ir::Graph> g = ir::parseGraph(kAssumedSpd);
  auto exe = compile(*g, getBackend("cpu"));
  auto plain = compile(*g, getBackend("cpu"), {"none"});
  Array spd = Array::fromVector<double>({4, 1, 0, 1, 3, 1, 0, 1, 2}, {3, 3});
  Array indefinite = indefinite3x3();
  std::vector<std::vector<Array>> ins;
  std::vector<Array> outs;
  for (int k = 0; k < 4; ++k) {
    ins.push_back({k == 1 ? indefinite : spd, Array::randomNormal(ir::DType::F64, {3, 2}, 10 + k)});
    outs.push_back(Array::zeros(ir::DType::F64, {3, 2}));
    exe->enqueue(ins.back(), {outs.back()});
  }
  exe->finish();
  EXPECT_EQ(exe->fallbacks(), 1);
  for (int k = 0; k < 4; ++k)
    EXPECT_LE(relativeDifference(outs[k], plain->run(ins[k])[0]), 1e-12) << "run " << k;
}

/// A backend whose programs fail like a numerically indefinite Cholesky wherever the
/// compiler chose one, and run on the CPU otherwise.
class FailingCholeskyBackend final : public Backend {
public:
  llvm::StringRef name() const override { return "failing-cholesky"; }
  std::unique_ptr<Executable> compile(const ir::Graph& g) override {
    for (const ir::Node* n : g.nodes())
      if (n->op() == ir::Op::Cholesky && n->attrs().flag("fallback"))
        return std::make_unique<Failing>(g);
    return getBackend("cpu").compile(g);
  }

private:
  struct Failing final : Executable {
    explicit Failing(const ir::Graph& g) : Executable(Signature::of(g)) {}
    llvm::StringRef backendName() const override { return "failing-cholesky"; }
    std::vector<Array> execute(llvm::ArrayRef<Array>) override {
      throw FallbackError("cholesky: matrix is not positive definite (batch item 0, "
                          "leading minor 3)");
    }
  };
};

TEST(Fallback, FallbackRunGivesTheLuAnswer) {
  ir::Module m = ir::parseModule(kLoweringGraphs, "lowerings");
  ir::Graph* g = m.find("enkf");
  FailingCholeskyBackend failing;
  auto exe = compile(*g, failing);
  auto plain = compile(*g, getBackend("cpu"), {"none"});
  std::vector<Array> inputs = randomInputs(*g, 5);
  for (int run = 1; run <= 2; ++run) {
    std::vector<Array> got = exe->run(inputs), want = plain->run(inputs);
    EXPECT_LE(relativeDifference(got[0], want[0]), 1e-12);
    EXPECT_EQ(exe->fallbacks(), run);
  }
}

TEST(Fallback, UnknownPassIsAnError) {
  std::unique_ptr<ir::Graph> g = ir::parseGraph("graph @f(%x: f64[2]) {\n  return %x\n}\n");
  EXPECT_THROW(compile(*g, getBackend("cpu"), {"canonicalize,nope"}), Error);
}

} // namespace
} // namespace graphc
