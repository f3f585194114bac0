//===- tests/passes/ShardTest.cpp - Graphs run as several ranks on the CPU -===//
//
// compile() with CompileOptions::ranks runs a graph as host-thread ranks
// (passes/Shard.h, runtime/core/Sharded.h). Each case runs it over 1 to 5 ranks,
// shares even and uneven, and compares with the graph run whole on the reference
// backend (cpu-unfused, node by node) in f64: the sharded EnKF of the ensemble
// regime, reductions and products over the split axis, a batch split over the
// ranks, a gradient summed over the ranks. Then the host communicator alone, a
// failing rank (its error named, no rank left waiting), the LU fallback, and the
// errors of shapes and ops that cannot be split.
//
//===----------------------------------------------------------------------===//
#include "passes/Shard.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "passes/Derivative.h"
#include "passes/PassManager.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
#include "support/Numeric.h"
#include "support/RandomGraph.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

namespace graphc {
namespace {

using testing::relativeDifference;

/// The EnKF update of DESIGN.md in the ensemble regime (d states, n members):
/// lower-linalg turns its solve into an n x n one (Woodbury), which shards.
std::string enkf(int64_t d, int64_t n) {
  return fmt::format(R"(
graph @enkf(%x: f64[{0},{1}], %y: f64[{0},{1}], %obs: f64[{0},1]) {{
  %xm = mean %x {{axes=[1], keepdims}}
  %xmb = broadcast_to %xm {{shape=[{0},{1}]}}
  %xc = sub %x, %xmb
  %ym = mean %y {{axes=[1], keepdims}}
  %ymb = broadcast_to %ym {{shape=[{0},{1}]}}
  %yc = sub %y, %ymb
  %n1 = full {{value={2}}} : f64[{0},{0}]
  %pxy = matmul %xc, %yc {{transpose_b}}
  %cxy = div %pxy, %n1
  %pyy = matmul %yc, %yc {{transpose_b}}
  %cyy = div %pyy, %n1
  %eye = eye : f64[{0},{0}]
  %tenth = full {{value=0.1}} : f64[{0},{0}]
  %r = mul %eye, %tenth
  %s = add %cyy, %r
  %obsb = broadcast_to %obs {{shape=[{0},{1}]}}
  %innov = sub %obsb, %y
  %z = solve %s, %innov
  %dx = matmul %cxy, %z
  %xa = add %x, %dx
  return %xa
}}
)",
                     d, n, n - 1);
}

/// Runs `text` whole on the reference backend and as 1 to 5 ranks on `backend`,
/// parameter i split along axes[i], on random inputs; expects the same outputs.
void expectShardsAgree(const std::string& text, const std::vector<int>& axes, double tolerance,
                       const char* backend = "cpu") {
  std::unique_ptr<ir::Graph> g = ir::parseGraph(text);
  std::vector<Array> in = testing::randomInputs(*g, 11);
  std::vector<Array> want = compile(*g, getBackend("cpu-unfused"), {.passes = "none"})->run(in);
  for (int ranks = 1; ranks <= 5; ++ranks) {
    auto exe = compile(*g, getBackend(backend), {.ranks = ranks, .splitAxes = axes});
    std::vector<Array> got = exe->run(in);
    ASSERT_EQ(got.size(), want.size());
    for (size_t o = 0; o < got.size(); ++o)
      EXPECT_LE(relativeDifference(got[o], want[o]), tolerance)
          << "@" << g->name() << " output " << o << ", " << ranks << " ranks on " << backend;
    EXPECT_EQ(exe->fallbacks(), 0);
  }
}

TEST(Shard, EnkfOfTheEnsembleRegimeSplitsItsStateRows) {
  // 203 state rows: uneven shares over 2, 3, 4 and 5 ranks.
  for (const char* backend : {"cpu", "cpu-unfused"})
    expectShardsAgree(enkf(203, 8), {0, 0, 0}, 1e-12, backend);
}

TEST(Shard, TheShardedEnkfSumsItsInnerProductsOverTheRanks) {
  std::unique_ptr<ir::Graph> g = ir::parseGraph(enkf(203, 8));
  auto optimized = passes::runPipeline(*g, passes::defaultPipeline());
  passes::ShardedGraph s = passes::shardGraph(*optimized, {0, 0, 0}, 4, 1);
  int allReduces = 0;
  for (const ir::Node* n : s.graph->nodes()) {
    allReduces += n->op() == ir::Op::AllReduce;
    for (const ir::TensorType& t : n->types()) // nothing d x d, nothing of the whole state
      EXPECT_TRUE(t.rank() < 2 || (t.shape[0] != 203 && t.shape[1] != 203)) << t.str();
  }
  EXPECT_GE(allReduces, 1);
  EXPECT_EQ(s.graph->params()[0]->type().shape[0], 51); // rows 51..101 of 203 over 4
  EXPECT_EQ(s.outputAxes, std::vector<int>{0});
}

TEST(Shard, RandomGraphsShardedAgreeWithThemWhole) {
  // Random graphs, random parameters split along random axes: a graph the pass
  // takes must give what it gives whole; one it refuses must say why ("cannot shard
  // ..."), never fail another way. Every other graph comes from the whole op table,
  // the rest from the ops that shard with an all_reduce or move the split axis.
  testing::RandomGraphOptions options;
  options.bounded = true;
  options.floatOnly = true;
  options.maxDim = 6;
  testing::RandomGraphGenerator everyOp(2026, options);
  using ir::Op;
  options.ops = {Op::Parameter, Op::Full,   Op::Add,         Op::Mul,     Op::Tanh,
                 Op::Sum,       Op::Mean,   Op::Var,         Op::Max,     Op::Min,
                 Op::Matmul,    Op::Syrk,   Op::BroadcastTo, Op::Reshape, Op::Transpose,
                 Op::Slice,     Op::Concat, Op::Select,      Op::Gt};
  testing::RandomGraphGenerator reducing(2027, options);
  std::mt19937_64 rng(7);
  int agreed = 0, refused = 0, combined = 0; // combined: with an all_reduce
  for (int i = 0; i < 800 && agreed < 200; ++i) {
    std::unique_ptr<ir::Graph> g = (i % 2 ? reducing : everyOp).generate(fmt::format("r{}", i));
    std::vector<int> axes;
    for (const ir::Node* p : g->params()) {
      std::vector<int> splittable = {passes::kReplicated};
      for (int a = 0; a < p->type().rank(); ++a)
        if (p->type().shape[a] >= 3)
          splittable.push_back(a);
      axes.push_back(splittable[rng() % splittable.size()]);
    }
    if (std::all_of(axes.begin(), axes.end(), [](int a) { return a == passes::kReplicated; }))
      continue;
    std::vector<Array> in = testing::boundedInputs(*g, i), want;
    try {
      want = compile(*g, getBackend("cpu-unfused"), {.passes = "none"})->run(in);
    } catch (const Error&) { // a singular solve, say: nothing to compare
      continue;
    }
    bool refusedHere = false;
    for (const char* passes : {"none", ""}) {
      std::unique_ptr<OptimizedExecutable> exe;
      try {
        exe = compile(*g, getBackend("cpu"), {.passes = passes, .ranks = 3, .splitAxes = axes});
      } catch (const Error& e) {
        EXPECT_NE(e.message().find("cannot shard"), std::string::npos) << e.what() << "\n"
                                                                       << ir::printGraph(*g);
        refusedHere = true;
        break;
      }
      std::vector<Array> got = exe->run(in);
      for (size_t o = 0; o < got.size(); ++o) {
        double tolerance = got[o].dtype() == DType::F32 ? 1e-3 : 1e-9;
        EXPECT_LE(relativeDifference(got[o], want[o]), tolerance)
            << "output " << o << ", passes '" << passes << "'\n"
            << ir::printGraph(*g);
      }
    }
    (refusedHere ? refused : agreed) += 1;
    if (refusedHere)
      continue;
    passes::ShardedGraph rank0 = passes::shardGraph(*g, axes, 3, 0);
    combined += llvm::any_of(rank0.graph->nodes(),
                             [](const ir::Node* n) { return n->op() == ir::Op::AllReduce; });
  }
  EXPECT_GE(agreed, 200) << refused << " refused";
  EXPECT_GE(combined, 25) << "of " << agreed;
}

TEST(Shard, ReductionsOverTheSplitAxisCombineTheRanks) {
  const std::string text = R"(
graph @reductions(%x: f64[13,5], %w: f64[13,5]) {
  %a = mul %x, %w
  %s0 = sum %a {axes=[0]}
  %m01 = mean %a {axes=[0,1]}
  %v0 = var %x {axes=[0], keepdims}
  %x0 = max %x {axes=[0]}
  %n01 = min %a {axes=[0,1]}
  %s1 = sum %a {axes=[1]}
  %m1 = mean %x {axes=[1], keepdims}
  return %s0, %m01, %v0, %x0, %n01, %s1, %m1
}
)";
  expectShardsAgree(text, {0, passes::kReplicated}, 1e-13); // w cut to each rank's share
  expectShardsAgree(text, {0, 0}, 1e-13);
}

TEST(Shard, ProductsOverTheSplitAxisAreSummedAndKeptAxesStaySplit) {
  const std::string text = R"(
graph @products(%y: f64[17,4], %d: f64[17,3], %b: f64[4,2]) {
  %g = syrk %y {transpose}
  %yd = matmul %y, %d {transpose_a}
  %yb = matmul %y, %b
  %t = transpose %yb {perm=[1,0]}
  %r = reshape %yb {shape=[17,2,1]}
  %m = mean %y {axes=[0]}
  return %g, %yd, %t, %r, %m
}
)";
  expectShardsAgree(text, {0, 0, passes::kReplicated}, 1e-13);
}

TEST(Shard, ABatchSplitsOverTheRanks) {
  std::unique_ptr<ir::Graph> g = ir::parseGraph(R"(
graph @spd(%x: f64[6,6], %b: f64[6,1]) {
  %g = syrk %x
  %i = eye : f64[6,6]
  %s = add %g, %i
  %z = solve %s, %b
  return %z
}
)");
  for (int ranks : {1, 3, 4}) {
    auto exe = compile(*g, getBackend("cpu"), {.batch = 11, .ranks = ranks});
    auto whole = compile(*g, getBackend("cpu-unfused"), {.batch = 11});
    std::vector<Array> in = {Array::randomNormal(DType::F64, {11, 6, 6}, 3),
                             Array::randomNormal(DType::F64, {11, 6, 1}, 4)};
    EXPECT_LE(relativeDifference(exe->run(in)[0], whole->run(in)[0]), 1e-13) << ranks;
  }
}

TEST(Shard, AGradientWithRespectToAReplicatedParameterSumsTheRanksShares) {
  // Least squares over rows split across the ranks: the gradient with respect to w,
  // which every rank holds, is the sum of each rank's X_r'(X_r w - y_r) terms.
  std::unique_ptr<ir::Graph> g = ir::parseGraph(R"(
graph @lsq(%w: f64[5,1], %x: f64[40,5], %y: f64[40,1]) {
  %p = matmul %x, %w
  %e = sub %p, %y
  %e2 = mul %e, %e
  %l = sum %e2 {axes=[0,1]}
  return %l
}
)");
  auto grad = passes::derivative(*g, passes::DerivativeMode::Grad, {0});
  std::vector<Array> in = testing::randomInputs(*grad, 5);
  std::vector<Array> want = compile(*grad, getBackend("cpu-unfused"))->run(in);
  for (int ranks : {2, 3}) {
    auto exe = compile(*grad, getBackend("cpu"), {.ranks = ranks, .splitAxes = {-1, 0, 0}});
    std::vector<Array> got = exe->run(in);
    for (size_t o = 0; o < got.size(); ++o)
      EXPECT_LE(relativeDifference(got[o], want[o]), 1e-12) << "output " << o << ", " << ranks;
  }
}

TEST(Shard, AFailingRankIsNamedAndTheOthersDoNotWait) {
  // Item 7 of 8 is singular: the rank holding it fails in its solve, while the
  // others wait in the all_reduce of the sum over the batch.
  std::unique_ptr<ir::Graph> g = ir::parseGraph(R"(
graph @solves(%a: f64[8,3,3], %b: f64[8,3,1]) {
  %z = solve %a, %b
  %s = sum %z {axes=[0]}
  return %s
}
)");
  Array a = Array::randomNormal(DType::F64, {8, 3, 3}, 1);
  for (int64_t i = 0; i < 9; ++i)
    a.data<double>()[7 * 9 + i] = 0;
  auto exe = compile(*g, getBackend("cpu"), {.ranks = 4, .splitAxes = {0, 0}});
  try {
    exe->run({a, Array::randomNormal(DType::F64, {8, 3, 1}, 2)});
    ADD_FAILURE() << "a singular solve ran";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("rank 3 of 4: solve"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("singular"), std::string::npos) << e.message();
  }
}

TEST(Shard, AChosenCholeskyThatFailsRedoesTheRunWholeWithLu) {
  // The Gram matrix minus a diagonal it cannot carry: SPD by assumption only.
  std::unique_ptr<ir::Graph> g = ir::parseGraph(R"(
graph @assumed(%y: f64[30,4], %b: f64[4,1]) {
  %g = syrk %y {transpose}
  %i = eye : f64[4,4]
  %c = full {value=1000} : f64[4,4]
  %d = mul %i, %c
  %t = sub %g, %d
  %s = assume_spd %t
  %z = solve %s, %b
  return %z
}
)");
  std::vector<Array> in = testing::randomInputs(*g, 9);
  auto exe = compile(*g, getBackend("cpu"), {.ranks = 3, .splitAxes = {0, -1}});
  ::testing::internal::CaptureStderr();
  Array x = exe->run(in)[0];
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(exe->fallbacks(), 1);
  EXPECT_NE(log.find("rank 0 of 3: cholesky"), std::string::npos) << log; // every rank fails it
  Array want = compile(*g, getBackend("cpu-unfused"), {.passes = "none"})->run(in)[0];
  EXPECT_LE(relativeDifference(x, want), 1e-10);
}

/// The message of compiling `text` sharded as `axes` over 4 ranks.
std::string shardError(const std::string& text, const std::vector<int>& axes) {
  std::unique_ptr<ir::Graph> g = ir::parseGraph(text);
  try {
    compile(*g, getBackend("cpu"), {.passes = "none", .ranks = 4, .splitAxes = axes});
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Shard, WhatNeedsAnotherRanksShareIsAnErrorNamingTheOp) {
  EXPECT_NE(shardError("graph @g(%x: f64[8,3]) {\n  %m = argmax %x {axes=[0]}\n  return %m\n}", {0})
                .find("2:8: error: cannot shard argmax: a reduction over the split axis 0"),
            std::string::npos);
  EXPECT_NE(shardError("graph @g(%x: f64[8,3]) {\n  %g = syrk %x\n  return %g\n}", {0})
                .find("cannot shard syrk: its operand is split along the kept axis 0"),
            std::string::npos);
  EXPECT_NE(
      shardError("graph @g(%a: f64[8,8], %b: f64[8,1]) {\n  %z = solve %a, %b\n  return %z\n}",
                 {0, 0})
          .find("cannot shard solve: a matrix split along axis 0"),
      std::string::npos);
  EXPECT_NE(shardError("graph @g(%x: f64[8,8], %y: f64[8,8]) {\n  %s = add %x, %y\n  return %s\n}",
                       {0, 1})
                .find("cannot shard add: operands split along axes 0 and 1"),
            std::string::npos);
  EXPECT_NE(shardError("graph @g(%x: f64[3,2]) {\n  %n = neg %x\n  return %n\n}", {0})
                .find("parameter %x (f64[3,2]): axis 0 of length 3 cannot be split over 4 ranks"),
            std::string::npos);
  EXPECT_NE(shardError("graph @g(%x: f64[8,2]) {\n  %n = neg %x\n  return %n\n}", {2})
                .find("parameter %x (f64[8,2]): no axis 2 to split"),
            std::string::npos);
  EXPECT_NE(shardError("graph @g(%x: f64[8,2]) {\n  %n = neg %x\n  return %n\n}", {})
                .find("4 ranks given without split axes or a batch"),
            std::string::npos);
}

TEST(Shard, OneRankOfABackendWithoutCollectivesRunsAndMoreAreRefused) {
  struct OneRank final : Backend { // forwards to cpu, runs no collectives
    llvm::StringRef name() const override { return "one-rank"; }
    std::unique_ptr<Executable> compile(const ir::Graph& g) override {
      return getBackend("cpu").compile(g);
    }
  } backend;
  std::unique_ptr<ir::Graph> g =
      ir::parseGraph("graph @g(%x: f64[8,2]) {\n  %s = sum %x {axes=[0]}\n  return %s\n}");
  Array x = Array::randomNormal(DType::F64, {8, 2}, 1);
  Array got = compile(*g, backend, {.ranks = 1, .splitAxes = {0}})->run({x})[0];
  EXPECT_LE(relativeDifference(got, compile(*g, getBackend("cpu"))->run({x})[0]), 1e-15);
  try {
    compile(*g, backend, {.ranks = 2, .splitAxes = {0}});
    ADD_FAILURE() << "two ranks compiled";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "the one-rank backend runs no sharded programs (2 ranks asked for)");
  }
}

} // namespace
} // namespace graphc
