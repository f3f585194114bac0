//===- tests/passes/SplitReductionsTest.cpp - Split reductions compute the same --===//
//
// passes/SplitReductions.h rewrites a reduction with few outputs into a partial
// reduction and a combine. On the CPU the split graph must agree with the original
// one run node by node ("cpu-unfused") to rounding, in f64 and f32, for every op it
// splits, along leading, middle, trailing and all axes, with prologues that
// broadcast and with epilogues; every kernel of the split graph must build (no
// group falls back to running node by node); and one case is checked against a
// plain loop. The policy (passes/RoutePolicy.h) is pinned on the sweep's shapes.
//
//===----------------------------------------------------------------------===//
#include "passes/SplitReductions.h"
#include "bench/Sweep.h"
#include "codegen/Kernel.h"
#include "ir/Parser.h"
#include "passes/MemoryPlan.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
#include "tests/support/Numeric.h"

#include <cmath>
#include <fmt/format.h>
#include <gtest/gtest.h>

namespace graphc {
namespace {

/// Small thresholds, so that test-sized shapes split (several times).
passes::RoutePolicy smallPolicy() {
  passes::RoutePolicy p;
  p.reduceThreadTarget = 64;
  p.reduceMinSplitWalk = 8;
  p.reduceMinPartWalk = 2;
  p.reduceBlockTarget = 4;
  p.reduceMinSplitLength = 16;
  p.reduceMinChunk = 4;
  return p;
}

int countReductions(const ir::Graph& g) {
  int n = 0;
  for (const ir::Node* node : g.nodes())
    n += ir::opInfo(node->op()).kind == ir::OpKind::Reduce;
  return n;
}

/// Kernel steps of g's lowered program that do not build a codegen::Kernel.
int fallbackKernels(const ir::Graph& g) {
  passes::Program p = passes::lowerToProgram(g);
  int fallback = 0;
  for (const passes::Step& s : p.steps())
    if (s.kind == passes::Step::Kind::Kernel && !passes::isDataMovement(s.nodes))
      fallback +=
          !std::holds_alternative<codegen::Kernel>(codegen::buildKernel(s.nodes, s.outputs));
  return fallback;
}

/// Splits `text`'s graph with the small policy and expects it split, every kernel
/// built, and the same outputs as the original run node by node, within `tol`.
void expectSplitAgrees(const std::string& text, double tol, uint64_t seed = 7) {
  auto g = ir::parseGraph(text);
  SCOPED_TRACE("@" + g->name());
  passes::PassStats stats;
  auto split = passes::splitReductions(*g, smallPolicy(), stats);
  EXPECT_TRUE(stats.changed());
  EXPECT_GT(countReductions(*split), countReductions(*g));
  EXPECT_EQ(fallbackKernels(*split), 0);
  std::vector<Array> inputs = testing::randomInputs(*g, seed);
  std::vector<Array> want = compile(*g, getBackend("cpu-unfused"), {"none"})->run(inputs);
  std::vector<Array> got = compile(*split, getBackend("cpu"), {"none"})->run(inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].type(), want[i].type()) << "output " << i;
    EXPECT_LE(testing::relativeDifference(got[i], want[i]), tol) << "output " << i;
  }
}

std::string reduction(const char* op, const char* dtype, const char* shape, const char* axes,
                      const char* out, bool keepdims) {
  return fmt::format(R"(
graph @{0}_{1}(%x: {1}[{2}]) {{
  %r = {0} %x {{axes=[{3}]{5}}} : {1}[{4}]
  return %r
}})",
                     op, dtype, shape, axes, out, keepdims ? ", keepdims" : "");
}

TEST(SplitReductions, EveryOpAlongEveryKindOfAxes) {
  struct Layout {
    const char *shape, *axes, *out, *kept;
  };
  const Layout layouts[] = {
      {"240,3", "0", "3", "1,3"},       // leading axis, few columns
      {"3,240", "1", "3", "3,1"},       // trailing axis, few rows
      {"960", "0", "", "1"},            // all of a vector
      {"12,20,3", "0,1", "3", "1,1,3"}, // two leading axes
      {"2,120,3", "1", "2,3", "2,1,3"}, // a middle axis
      {"6,8,20", "0,1,2", "", "1,1,1"}, // all axes
  };
  for (const char* op : {"sum", "mean", "var", "max", "min", "argmax", "argmin"})
    for (const char* dtype : {"f64", "f32"})
      for (const Layout& l : layouts)
        for (bool keep : {false, true}) {
          bool arg = op[0] == 'a' && op[1] == 'r';
          std::string text = reduction(op, dtype, l.shape, l.axes, keep ? l.kept : l.out, keep);
          if (arg) // argmax's result is i64
            text.replace(text.rfind(fmt::format(": {}[", dtype)), 6, ": i64[");
          expectSplitAgrees(text, arg ? 0.0 : dtype[1] == '6' ? 1e-13 : 1e-6);
        }
}

TEST(SplitReductions, ProductsOfValuesNearOne) {
  // x ~ 1 + 0.01 randn keeps the product of 240 of them finite and away from 0.
  expectSplitAgrees(R"(
graph @prod(%x: f64[240,3]) {
  %h = full {value=0.01} : f64[240,3]
  %one = full {value=1.0} : f64[240,3]
  %s = mul %x, %h
  %y = add %s, %one
  %r = prod %y {axes=[0]} : f64[3]
  return %r
})",
                    1e-13);
}

TEST(SplitReductions, PrologueWithBroadcastsAndEpilogue) {
  // (x - mean(x, 0)) / sqrt(var(x, 0)) * w: the normalization of columns, and the
  // column sums of x * w with w broadcast along the rows.
  expectSplitAgrees(R"(
graph @columns(%x: f64[480,4], %w: f64[4]) {
  %m = mean %x {axes=[0], keepdims} : f64[1,4]
  %v = var %x {axes=[0], keepdims} : f64[1,4]
  %s = sqrt %v
  %mb = broadcast_to %m {shape=[480,4]}
  %sb = broadcast_to %s {shape=[480,4]}
  %c = sub %x, %mb
  %n = div %c, %sb
  %wb = broadcast_to %w {shape=[480,4]}
  %o = mul %n, %wb
  %xw = mul %x, %wb
  %t = sum %xw {axes=[0]} : f64[4]
  return %o, %t
})",
                    1e-12);
  // logsumexp over columns: a max, then a sum of exp(x - max) broadcast back.
  expectSplitAgrees(R"(
graph @lse(%x: f32[512,3]) {
  %m = max %x {axes=[0], keepdims} : f32[1,3]
  %mb = broadcast_to %m {shape=[512,3]}
  %d = sub %x, %mb
  %e = exp %d
  %s = sum %e {axes=[0], keepdims} : f32[1,3]
  %l = log %s
  %r = add %l, %m
  return %r
})",
                    1e-6);
}

TEST(SplitReductions, VarianceOfColumnsAgainstAPlainLoop) {
  const int64_t rows = 1000, cols = 3;
  auto g = ir::parseGraph(reduction("var", "f64", "1000,3", "0", "3", false));
  passes::PassStats stats;
  auto split = passes::splitReductions(*g, smallPolicy(), stats);
  // Far from zero mean: a split that combined raw second moments would lose digits.
  std::vector<double> x(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i)
    x[i] = 1000.0 + std::sin(0.37 * static_cast<double>(i)) * (1 + i % cols);
  std::vector<double> got = compile(*split, getBackend("cpu"), {"none"})
                                ->run({Array::fromVector(x, {rows, cols})})[0]
                                .toVector<double>();
  for (int64_t c = 0; c < cols; ++c) {
    double mean = 0, ss = 0;
    for (int64_t i = 0; i < rows; ++i)
      mean += x[i * cols + c] / rows;
    for (int64_t i = 0; i < rows; ++i)
      ss += (x[i * cols + c] - mean) * (x[i * cols + c] - mean);
    EXPECT_NEAR(got[c], ss / rows, 1e-12 * ss / rows) << "column " << c;
  }
}

TEST(SplitReductions, ArgmaxTakesTheFirstExtremeAcrossPieces) {
  // Ties in every column (values from a few levels), and a NaN in column 1: the
  // first of the extremes (or the first NaN) wins, whichever piece holds it. The
  // pieces compare values of the input's own type: no cast to f64.
  for (const char* dtype : {"f64", "f32"})
    for (const char* op : {"argmax", "argmin"}) {
      SCOPED_TRACE(fmt::format("{} {}", op, dtype));
      auto g = ir::parseGraph(fmt::format(R"(
graph @ties(%x: {}[960,3]) {{
  %r = {} %x {{axes=[0]}} : i64[3]
  return %r
}})",
                                          dtype, op));
      passes::PassStats stats;
      auto split = passes::splitReductions(*g, smallPolicy(), stats);
      ASSERT_TRUE(stats.changed());
      for (const ir::Node* n : split->nodes())
        EXPECT_NE(n->op(), ir::Op::Cast);
      std::vector<double> x(960 * 3);
      for (size_t i = 0; i < x.size(); ++i)
        x[i] = static_cast<double>((i * 7919) % 5);
      x[500 * 3 + 1] = std::nan("");
      x[700 * 3 + 1] = std::nan("");
      std::vector<Array> in{
          std::string(dtype) == "f32"
              ? Array::fromVector(std::vector<float>(x.begin(), x.end()), {960, 3})
              : Array::fromVector(x, {960, 3})};
      EXPECT_EQ(compile(*split, getBackend("cpu"), {"none"})->run(in)[0].toVector<int64_t>(),
                compile(*g, getBackend("cpu-unfused"), {"none"})->run(in)[0].toVector<int64_t>());
    }
}

TEST(SplitReductions, ALongPrologueIsRegroupedWithoutRecursion) {
  // 20,000 elementwise ops before the reduction: the regrouping walks them with its
  // own stack.
  std::string text = "graph @chain(%x: f32[960,3]) {\n  %y0 = exp %x\n";
  const int ops = 20000;
  for (int i = 1; i <= ops; ++i)
    text += fmt::format("  %y{} = add %y{}, %x\n", i, i - 1);
  text += fmt::format("  %r = sum %y{} {{axes=[0]}}\n  return %r\n}}", ops);
  auto g = ir::parseGraph(text);
  passes::PassStats stats;
  auto split = passes::splitReductions(*g, smallPolicy(), stats);
  EXPECT_TRUE(stats.changed());
  EXPECT_GT(countReductions(*split), 1);
}

TEST(SplitReductions, ManyOutputsStayWhole) {
  passes::PassStats stats;
  // Rows of a wide matrix: enough blocks already, on the GPU's own policy.
  auto rows = ir::parseGraph(reduction("sum", "f32", "8192,8192", "1", "8192", false));
  passes::splitReductions(*rows, stats);
  EXPECT_FALSE(stats.changed());
}

TEST(SplitReductions, EverySweepCaseBuildsItsKernelsSplit) {
  for (const bench::SweepCase& c : bench::sweepCases()) {
    SCOPED_TRACE(c.name);
    auto g = ir::parseGraph(c.graph(c, c.dtype));
    passes::PassStats stats;
    auto split =
        passes::splitReductions(*passes::runPipeline(*g, passes::defaultPipeline()), stats);
    EXPECT_EQ(fallbackKernels(*split), 0);
  }
}

TEST(RoutePolicy, ReductionSplitsOnTheSweepsShapes) {
  const passes::RoutePolicy& p = passes::RoutePolicy::gpu();
  struct Expect {
    int64_t outputs, extent;
    bool contiguous, splits;
  };
  const Expect cases[] = {
      {4, 1048576, false, true},  // sum over axis 0 of f32[1048576,4]
      {64, 100000, false, true},  // f32[100000,64]
      {8192, 8192, false, true},  // axis 0 of f32[8192,8192]
      {1, 16777216, true, true},  // all of f32[16777216]
      {4, 1000000, true, true},   // axis 1 of f32[4,1000000]
      {8192, 8192, true, false},  // axis 1 of f32[8192,8192]: 8192 blocks
      {1048576, 4, true, false},  // axis 1 of f32[1048576,4]
      {100000, 64, false, false}, // enough threads
      {4, 100, false, false},     // a short walk
      {4096, 32768, true, false}, // argmax's rows
  };
  for (const Expect& e : cases) {
    passes::ReductionSplit s = passes::chooseReductionSplit(p, e.outputs, e.extent, e.contiguous);
    SCOPED_TRACE(fmt::format("{} x {} {}: {}", e.outputs, e.extent, e.contiguous, s.reason));
    EXPECT_EQ(s.chunks > 0, e.splits);
    if (s.chunks) {
      EXPECT_EQ(e.extent % s.chunks, 0);
      EXPECT_GE(e.extent / s.chunks, e.contiguous ? p.reduceMinChunk : p.reduceMinPartWalk);
    }
  }
  // A prime extent has no divisor to split by.
  EXPECT_EQ(passes::chooseReductionSplit(p, 4, 1000003, false).chunks, 0);
}

TEST(RoutePolicy, SolveColumnChunks) {
  const passes::RoutePolicy& p = passes::RoutePolicy::gpu();
  // One small matrix, 10^5 right-hand sides: spread over many units.
  EXPECT_GT(passes::chooseSolveColumnChunks(p, 1, 100000, true), 1000);
  EXPECT_GT(passes::chooseSolveColumnChunks(p, 1, 100000, false), 100);
  // Every chunk keeps enough columns to pay for its factorization.
  EXPECT_LE(passes::chooseSolveColumnChunks(p, 1, 1000, false) * p.solveMinChunkCols, 1000 + 31);
  // Batches of one right-hand side, or enough matrices: one unit per matrix.
  EXPECT_EQ(passes::chooseSolveColumnChunks(p, 4096, 1, true), 1);
  EXPECT_EQ(passes::chooseSolveColumnChunks(p, 100000, 64, true), 1);
}

} // namespace
} // namespace graphc
