//===- tests/passes/FusedExecutionTest.cpp - Fused == unfused on the CPU --===//
//
// The "cpu" backend runs the lowered program (fused kernels over planned slots, in
// place where the plan says); "cpu-unfused" runs each node with its own kernel
// into a new array. With its kernels interpreted (GRAPHC_CPU_KERNELS=interpret)
// the fused backend uses the same scalar loops and visits reductions in the same
// order, so its outputs must agree exactly, in f32 and f64, on every example graph,
// every fusion and lowering golden case and random graphs; and where one fails the
// other must fail with the same message. Compiled (the default), kernels agree
// exactly too, but for floating-point sums, means, variances and products, which
// they reassociate (runtime/cpu/CompiledKernel.h), and exp, log, expm1, log1p,
// tanh and sigmoid (their own code): there, within a few roundings
// (and a comparison, cast or arg-reduction of such a value may flip).
//
//===----------------------------------------------------------------------===//
#include "bench/Workloads.h"
#include "codegen/Kernel.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "passes/MemoryPlan.h"
#include "passes/PassManager.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
#include "runtime/cpu/FusedKernel.h"
#include "support/GraphFiles.h"
#include "support/Numeric.h"
#include "support/RandomGraph.h"
#include "tests/codegen/KernelCases.h"

#include <cmath>
#include <cstdlib>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace graphc {
namespace {

/// How many kernel steps of g's lowered program build a codegen::Kernel (and run
/// fused), and how many fall back to running node by node.
std::pair<int, int> kernelSteps(const ir::Graph& g) {
  passes::Program p = passes::lowerToProgram(g);
  int built = 0, fallback = 0;
  for (const passes::Step& s : p.steps()) {
    if (s.kind != passes::Step::Kind::Kernel || passes::isDataMovement(s.nodes))
      continue;
    bool ok = std::holds_alternative<codegen::Kernel>(codegen::buildKernel(s.nodes, s.outputs));
    (ok ? built : fallback)++;
  }
  return {built, fallback};
}

/// Per op, the Source instructions (computed full, eye, iota, constant) of the
/// kernels of g's lowered program; a kernel step's source that became a load counts
/// under Op::Parameter.
std::map<ir::Op, int> computedSources(const ir::Graph& g) {
  passes::Program p = passes::lowerToProgram(g);
  std::map<ir::Op, int> count;
  for (const passes::Step& s : p.steps()) {
    if (passes::isDataMovement(s.nodes))
      continue;
    auto built = codegen::buildKernel(s.nodes, s.outputs);
    if (auto* k = std::get_if<codegen::Kernel>(&built))
      for (const codegen::Inst& inst : k->insts) {
        if (inst.kind == codegen::Inst::Kind::Source)
          ++count[inst.node->op()];
        if (inst.kind == codegen::Inst::Kind::Load &&
            passes::computedSource(*k->inputs[inst.input].node))
          ++count[ir::Op::Parameter];
      }
  }
  return count;
}

/// The outputs of `g` on the "cpu" backend with GRAPHC_CPU_KERNELS=`mode`, or the error.
std::pair<std::vector<Array>, std::string> runFused(const ir::Graph& g,
                                                    const std::vector<Array>& inputs,
                                                    const std::string& passes, const char* mode) {
  setenv("GRAPHC_CPU_KERNELS", mode, 1);
  std::pair<std::vector<Array>, std::string> out;
  try {
    auto fused = compile(g, getBackend("cpu"), {passes});
    unsetenv("GRAPHC_CPU_KERNELS");
    out.first = fused->run(inputs);
  } catch (const Error& e) {
    out.second = e.message();
  }
  unsetenv("GRAPHC_CPU_KERNELS");
  return out;
}

/// Does `g` hold a floating-point reduction that compiled kernels reassociate (or an
/// exp, log, tanh, ... they compute with their own code, codegen/LlvmMath.h), and an
/// op whose result can jump where its operand moves by a rounding?
std::pair<bool, bool> reassociates(const ir::Graph& g) {
  bool sums = false, jumps = false;
  for (const ir::Node* n : g.nodes()) {
    ir::Op op = n->op();
    if ((op == ir::Op::Sum || op == ir::Op::Mean || op == ir::Op::Var || op == ir::Op::Prod ||
         op == ir::Op::Exp || op == ir::Op::Log || op == ir::Op::Expm1 || op == ir::Op::Log1p ||
         op == ir::Op::Tanh || op == ir::Op::Sigmoid) &&
        ir::isFloat(n->type().dtype))
      sums = true;
    if (n->kind() == ir::OpKind::Compare || op == ir::Op::Argmax || op == ir::Op::Argmin ||
        op == ir::Op::Floor || op == ir::Op::Ceil || op == ir::Op::Round || op == ir::Op::Sign ||
        (op == ir::Op::Cast && !ir::isFloat(n->type().dtype)))
      jumps = true;
  }
  return {sums, sums && jumps};
}

/// Runs `g` on both backends (after `passes`) on `inputs` and expects identical
/// outputs, or the same error from both (compiled: see the top of the file).
/// Returns the outputs of cpu-unfused (none when it failed).
std::vector<Array> expectSameAsUnfused(const ir::Graph& g, const std::vector<Array>& inputs,
                                       const std::string& passes = "none") {
  SCOPED_TRACE("@" + g.name());
  auto unfused = compile(g, getBackend("cpu-unfused"), {passes});
  std::vector<Array> want;
  std::string wantError;
  try {
    want = unfused->run(inputs);
  } catch (const Error& e) {
    wantError = e.message();
  }
  auto [sums, jumps] = reassociates(g);
  for (const char* mode : {"interpret", "compile"}) {
    if (!cpu::hasCompiledKernels() && std::string(mode) == "compile")
      continue; // built without the JIT (GRAPHC_CPU_JIT=OFF)
    SCOPED_TRACE(mode);
    auto [got, gotError] = runFused(g, inputs, passes, mode);
    EXPECT_EQ(gotError, wantError);
    EXPECT_EQ(got.size(), want.size());
    if (gotError != wantError || got.size() != want.size())
      return want;
    bool compiled = std::string(mode) == "compile";
    if (compiled && jumps)
      continue;
    for (size_t i = 0; i < want.size(); ++i) {
      double tolerance = !(compiled && sums) ? 0 : want[i].dtype() == ir::DType::F32 ? 1e-5 : 1e-12;
      EXPECT_LE(testing::relativeDifference(got[i], want[i]), tolerance)
          << "output " << i << " of\n"
          << ir::printGraph(g);
    }
  }
  return want;
}

/// The same on random inputs from `seed` (testing::randomInputs).
void expectSameAsUnfused(const ir::Graph& g, uint64_t seed, const std::string& passes = "none") {
  expectSameAsUnfused(g, testing::randomInputs(g, seed), passes);
}

/// The most nodes in one kernel step of g's lowered program.
size_t largestKernel(const ir::Graph& g) {
  size_t most = 0;
  passes::Program program = passes::lowerToProgram(g); // outlives the loop over its steps
  for (const passes::Step& s : program.steps())
    if (s.kind == passes::Step::Kind::Kernel)
      most = std::max(most, s.nodes.size());
  return most;
}

/// A lone slice starting inside its operand is copied out of the operand's slot,
/// which the next step reuses (it was a view into it, and the output changed).
TEST(FusedExecution, ALoneSliceOutlivesTheSlotOfItsOperand) {
  auto g = ir::parseGraph(R"(
graph @r(%x: f32[4,4]) {
  %0 = iota {axis=0} : f64[2,2,2]
  %1 = exp %0 : f64[2,2,2]
  %s = slice %1 {start=[0,0,1], stop=[1,1,2]} : f64[1,1,1]
  %m = mean %x {axes=[0], keepdims} : f32[1,4]
  return %m, %s
})");
  expectSameAsUnfused(*g, 3);
  std::vector<Array> out =
      compile(*g, getBackend("cpu"), {"none"})->run(testing::randomInputs(*g, 3));
  EXPECT_EQ(out[1].toVector<double>(), std::vector<double>{1.0}); // exp(0)
}

// A reshape that drops a trailing unit axis, read through the kernel builder's
// per-axis map: the builder read one axis past the end of the reshaped shape (a
// debug build's assertion, ASan under FusedExecution.RandomGraphs).
TEST(FusedExecution, AReshapeDroppingATrailingUnitAxis) {
  auto g = ir::parseGraph(R"(
graph @g(%x: f64[4,3,1]) {
  %e = exp %x
  %r = reshape %e {shape=[4,3]}
  %s = sum %r {axes=[1]}
  return %s
})");
  EXPECT_EQ(kernelSteps(*g), std::make_pair(1, 0));
  expectSameAsUnfused(*g, 5);
  std::vector<Array> inputs = testing::randomInputs(*g, 5);
  std::vector<double> x = inputs[0].toVector<double>(), want(4, 0.0);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      want[i] += std::exp(x[i * 3 + j]);
  std::vector<double> got =
      compile(*g, getBackend("cpu"), {"none"})->run(inputs)[0].toVector<double>();
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(got[i], want[i], 1e-14 * want[i]);
}

// 64 SPD solves in one batch (lowered to a Cholesky with an LU fallback), item 17
// holding a NaN: the other items are solved exactly and item 17 is NaN, as in
// LAPACK; the batch used to fail with "LAPACK getrf failed with info -4".
TEST(FusedExecution, ANaNItemOfABatchedSolveIsNaN) {
  auto g = ir::parseGraph(R"(
graph @g(%y: f64[64,5,5], %b: f64[64,5,2]) {
  %p = matmul %y, %y {transpose_b}
  %i = eye : f64[64,5,5]
  %s = add %p, %i
  %x = solve %s, %b
  return %x, %s
})");
  std::vector<Array> inputs = testing::randomInputs(*g, 9);
  std::vector<double> y = inputs[0].toVector<double>();
  y[17 * 25 + 7] = NAN;
  inputs[0] = Array::fromVector(y, {64, 5, 5});
  std::vector<Array> out = compile(*g, getBackend("cpu"))->run(inputs);
  std::vector<double> x = out[0].toVector<double>(), s = out[1].toVector<double>();
  std::vector<double> b = inputs[1].toVector<double>();
  for (int item = 0; item < 64; ++item) {
    bool anyNaN = false;
    for (int k = 0; k < 10; ++k)
      anyNaN |= std::isnan(x[item * 10 + k]);
    if (item == 17) {
      EXPECT_TRUE(anyNaN);
      continue;
    }
    ASSERT_FALSE(anyNaN) << "item " << item;
    for (int r = 0; r < 5; ++r) // S x == b, in f64 against the inputs
      for (int c = 0; c < 2; ++c) {
        double sum = 0;
        for (int k = 0; k < 5; ++k)
          sum += s[item * 25 + r * 5 + k] * x[item * 10 + k * 2 + c];
        EXPECT_NEAR(sum, b[item * 10 + r * 2 + c], 1e-10) << "item " << item;
      }
  }
}

// R alone from qr: nothing reads Q, so the program marks it unread and the CPU
// skips orgqr. R is that of the graph returning both and of the unfused backend,
// which forms Q (tall, square and wide, batched; Linalg.QrReducedGivesQRWithOrthonormalQ
// checks Q R == A there).
TEST(FusedExecution, QrWithQUnreadGivesTheSameR) {
  for (const char* shape : {"3,7,4", "5,5", "2,3,6"}) {
    auto both = ir::parseGraph(fmt::format(R"(
graph @g(%a: f64[{}]) {{
  %q:2 = qr %a
  return %q#0, %q#1
}})",
                                           shape));
    auto rOnly = ir::parseGraph(fmt::format(R"(
graph @g(%a: f64[{}]) {{
  %q:2 = qr %a
  return %q#1
}})",
                                            shape));
    passes::Program p = passes::lowerToProgram(*rOnly);
    ASSERT_EQ(p.steps().size(), 1u);
    EXPECT_EQ(p.steps()[0].unread, 1u);
    EXPECT_NE(passes::printProgram(p).find("unread"), std::string::npos);
    EXPECT_EQ(passes::lowerToProgram(*both).steps()[0].unread, 0u);

    std::vector<Array> inputs = testing::randomInputs(*rOnly, 4);
    std::vector<Array> full = compile(*both, getBackend("cpu"))->run(inputs);
    Array r = compile(*rOnly, getBackend("cpu"))->run(inputs)[0];
    EXPECT_EQ(r.toVector<double>(), full[1].toVector<double>()) << shape;
    expectSameAsUnfused(*rOnly, 4);
  }
}

TEST(FusedExecution, ExampleGraphsF64AndF32) {
  for (const std::string& file : testing::kExampleGraphFiles)
    for (bool f32 : {false, true}) {
      std::string text = testing::readSourceFile(file);
      for (auto& g : testing::graphsOf(f32 ? testing::toF32(text) : text, file)) {
        expectSameAsUnfused(*g, 11, "none");
        expectSameAsUnfused(*g, 12, ""); // the default pipeline
      }
    }
}

TEST(FusedExecution, EveryFusionAndLoweringGoldenCase) {
  int graphs = 0, fused = 0;
  for (const std::string& file : testing::kFusionGoldenFiles)
    for (bool f32 : {false, true}) {
      std::string text = testing::readSourceFile(file);
      for (auto& g : testing::graphsOf(f32 ? testing::toF32(text) : text, file)) {
        expectSameAsUnfused(*g, 21 + graphs++);
        auto [built, fallback] = kernelSteps(*g);
        fused += built;
        EXPECT_EQ(fallback, 0) << "@" << g->name();
      }
    }
  EXPECT_GE(graphs, 40);
  EXPECT_GE(fused, graphs); // every case has a kernel to run
}

/// Reductions the interpreter walks differently: segments that are not contiguous
/// (a middle or leading axis), several axes, no keepdims, a full reduction,
/// argmax/argmin, integer products, and epilogues back on the domain.
TEST(FusedExecution, ReductionLayouts) {
  const char* text = R"(
graph @middle(%x: f64[3,5,4], %g: f64[3,1,4]) {
  %s = sum %x {axes=[1], keepdims}
  %m = max %x {axes=[1], keepdims}
  %q = mul %s, %g
  %b = broadcast_to %q {shape=[3,5,4]}
  %c = broadcast_to %m {shape=[3,5,4]}
  %y = sub %x, %b
  %z = div %y, %c
  return %z, %q
}
graph @leading(%x: f32[64,3]) {
  %e = exp %x
  %a = argmax %e {axes=[0]}
  %n = argmin %x {axes=[0]}
  %p = mean %e {axes=[0]}
  return %a, %n, %p
}
graph @several(%x: f64[2,3,4,5]) {
  %t = tanh %x
  %s = sum %t {axes=[0,2]}
  %r = reshape %s {shape=[15]}
  %l = log1p %r
  return %l
}
graph @full(%x: f64[37,41]) {
  %sq = square %x
  %s = sum %sq {axes=[0,1]}
  %r = sqrt %s
  return %r
}
graph @ints(%x: i64[6,7]) {
  %p = prod %x {axes=[1]}
  %s = sum %x {axes=[1]}
  %d = sub %p, %s
  return %d
}
graph @long(%x: f32[3,5000]) {
  %m = mean %x {axes=[1], keepdims}
  %b = broadcast_to %m {shape=[3,5000]}
  %c = sub %x, %b
  %sq = square %c
  %v = mean %sq {axes=[1], keepdims}
  return %c, %v
}
)";
  ir::Module m = ir::parseModule(text, "layouts");
  for (size_t i = 0; i < m.graphs.size(); ++i) {
    expectSameAsUnfused(*m.graphs[i], 40 + i);
    EXPECT_EQ(kernelSteps(*m.graphs[i]).second, 0) << m.graphs[i]->name();
  }
}

/// Reductions in stages, each one kernel: the segment is walked once per stage.
TEST(FusedExecution, ReductionStages) {
  const char* text = R"(
graph @softmax_then_mean(%x: f64[6,50]) {
  %m = max %x {axes=[1], keepdims}
  %mb = broadcast_to %m {shape=[6,50]}
  %d = sub %x, %mb
  %e = exp %d
  %s = sum %e {axes=[1], keepdims}
  %sb = broadcast_to %s {shape=[6,50]}
  %p = div %e, %sb
  %q = mul %p, %x
  %t = sum %q {axes=[1], keepdims}
  %tb = broadcast_to %t {shape=[6,50]}
  %y = sub %x, %tb
  return %y, %p
}
graph @columns(%x: f32[40,7]) {
  %m = mean %x {axes=[0], keepdims}
  %mb = broadcast_to %m {shape=[40,7]}
  %c = sub %x, %mb
  %q = square %c
  %v = mean %q {axes=[0], keepdims}
  %vb = broadcast_to %v {shape=[40,7]}
  %z = div %c, %vb
  return %z, %v
}
)";
  ir::Module m = ir::parseModule(text, "stages");
  for (size_t i = 0; i < m.graphs.size(); ++i) {
    expectSameAsUnfused(*m.graphs[i], 60 + i);
    EXPECT_EQ(kernelSteps(*m.graphs[i]), std::make_pair(1, 0)) << m.graphs[i]->name();
  }
  passes::Program p = passes::lowerToProgram(*m.graphs[0]);
  auto k =
      std::get<codegen::Kernel>(codegen::buildKernel(p.steps()[0].nodes, p.steps()[0].outputs));
  EXPECT_EQ(k.stages(), 3); // max, then the sum of exp, then the weighted sum
}

/// Kernels over more than 2^18 points split their blocks, or chunks of segments,
/// over the hardware threads: the same numbers, and an error in any part reaches
/// the caller.
TEST(FusedExecution, LargeKernelsSplitOverThreads) {
  const char* text = R"(
graph @layernorm(%x: f64[300,1000]) {
  %m = mean %x {axes=[1], keepdims}
  %mb = broadcast_to %m {shape=[300,1000]}
  %c = sub %x, %mb
  %q = square %c
  %v = mean %q {axes=[1], keepdims}
  %vb = broadcast_to %v {shape=[300,1000]}
  %z = div %c, %vb
  return %z, %v
}
graph @columns(%x: f32[1000,300]) {
  %e = exp %x
  %s = sum %e {axes=[0]}
  return %s
}
)";
  ir::Module m = ir::parseModule(text, "large");
  m.graphs.push_back(ir::parseGraph(bench::chainGraph(600000, "f32")));
  for (size_t i = 0; i < m.graphs.size(); ++i)
    expectSameAsUnfused(*m.graphs[i], 80 + i);

  auto g = ir::parseGraph(R"(
graph @intdiv(%a: i32[300000], %b: i32[300000]) {
  %q = div %a, %b
  %r = add %q, %a
  return %r
})");
  std::vector<int32_t> ones(300000, 1);
  ones.back() = 0; // in the last thread's part
  std::vector<Array> in = {Array::fromVector(ones, {300000}), Array::fromVector(ones, {300000})};
  try {
    getBackend("cpu").compile(*g)->run(in);
    FAIL() << "expected an integer division by zero";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("integer division by zero"), std::string::npos) << e.message();
  }
}

TEST(FusedExecution, EmptyReductionFailsLikeTheUnfusedOne) {
  auto g = ir::parseGraph(R"(
graph @empty(%x: f64[4,0]) {
  %e = exp %x
  %m = max %e {axes=[1]}
  return %m
})");
  expectSameAsUnfused(*g, 1);
  EXPECT_THROW(compile(*g, getBackend("cpu"))->run(testing::randomInputs(*g, 1)), Error);
}

/// A broadcast seen through a reshape that regroups axes has no affine index map:
/// the group runs node by node (its eye too), with the same numbers.
TEST(FusedExecution, GroupsWithoutAffineMapsRunNodeByNode) {
  auto g = ir::parseGraph(R"(
graph @regroup(%v: f64[3], %y: f64[6]) {
  %b = broadcast_to %v {shape=[2,3]}
  %e = eye : f64[2,3]
  %be = add %b, %e
  %r = reshape %be {shape=[6]}
  %z = mul %r, %y
  return %z
})");
  passes::Program p = passes::lowerToProgram(*g);
  ASSERT_EQ(p.steps().size(), 1u);
  auto built = codegen::buildKernel(p.steps()[0].nodes, p.steps()[0].outputs);
  ASSERT_TRUE(std::holds_alternative<std::string>(built));
  EXPECT_NE(std::get<std::string>(built).find("reshape that regroups axes"), std::string::npos);
  std::vector<Array> in = testing::randomInputs(*g, 5);
  Array z = getBackend("cpu").compile(*g)->run(in)[0];
  for (int64_t i = 0; i < 6; ++i) // z[i] = (v[i % 3] + eye[i / 3, i % 3]) * y[i]
    EXPECT_EQ(z.at<double>({i}),
              (in[0].at<double>({i % 3}) + (i / 3 == i % 3)) * in[1].at<double>({i}));
}

TEST(FusedExecution, RandomGraphs) {
  testing::RandomGraphOptions options;
  options.numNodes = 14;
  options.ops = {ir::Op::Add,       ir::Op::Sub,      ir::Op::Mul,         ir::Op::Div,
                 ir::Op::Neg,       ir::Op::Exp,      ir::Op::Tanh,        ir::Op::Sigmoid,
                 ir::Op::Maximum,   ir::Op::Select,   ir::Op::Lt,          ir::Op::Cast,
                 ir::Op::Full,      ir::Op::Iota,     ir::Op::BroadcastTo, ir::Op::Reshape,
                 ir::Op::Transpose, ir::Op::Sum,      ir::Op::Mean,        ir::Op::Max,
                 ir::Op::Argmin,    ir::Op::Prod,     ir::Op::Matmul,      ir::Op::Slice,
                 ir::Op::Eye,       ir::Op::Constant, ir::Op::Var};
  options.bounded = true;
  testing::RandomGraphGenerator gen(2026, options);
  std::map<ir::Op, int> computed;
  int outputs = 0, degenerate = 0, fused = 0;
  for (int i = 0; i < 300; ++i) {
    std::unique_ptr<ir::Graph> g = gen.generate("random" + std::to_string(i));
    for (const Array& out : expectSameAsUnfused(*g, testing::boundedInputs(*g, 1000 + i))) {
      ++outputs;
      degenerate += testing::degenerate(out);
    }
    fused += largestKernel(*g) >= 3;
    for (auto [op, n] : computedSources(*g))
      computed[op] += n;
  }
  // The comparisons are of numbers that say something (finite, not all zero: 68 of
  // 900 are not), and of fused kernels: 152 of the graphs have a kernel of three
  // nodes or more (the unbounded generator: 151 of 564 outputs and 44 graphs).
  EXPECT_LE(degenerate, outputs / 10) << degenerate << " of " << outputs << " outputs";
  EXPECT_GE(fused, 120) << fused << " of 300 graphs";
  // Fused kernels computed every kind of source, and loaded none of them.
  for (ir::Op op : {ir::Op::Full, ir::Op::Eye, ir::Op::Iota, ir::Op::Constant})
    EXPECT_GE(computed[op], 10) << ir::opName(op).str();
  EXPECT_EQ(computed[ir::Op::Parameter], 0);
}

/// Sources computed inside fused kernels at their index, seen through broadcasts,
/// reshapes that keep or regroup axes, batch axes, reductions (domain and reduced
/// space) and casts, in f64, f32 and integers: the same numbers as the materialized
/// arrays of cpu-unfused, and no constant left in the program.
TEST(FusedExecution, ComputedSourcesMatchMaterializedOnes) {
  for (const char* dtype : {"f64", "f32"})
    for (const testing::KernelCase& c : testing::computedSourceCases(dtype)) {
      std::unique_ptr<ir::Graph> g = ir::parseGraph(c.text, c.name);
      expectSameAsUnfused(*g, 41);
      EXPECT_TRUE(passes::lowerToProgram(*g).constants().empty()) << c.name;
      std::map<ir::Op, int> computed = computedSources(*g);
      EXPECT_GE(computed[ir::Op::Full] + computed[ir::Op::Eye] + computed[ir::Op::Iota], 1)
          << c.name;
      EXPECT_EQ(computed[ir::Op::Parameter], 0) << c.name;
    }
}

} // namespace
} // namespace graphc
