//===- tests/passes/CholeskySolvesTest.cpp - Factor and solve in one step -===//
//
// fuseCholeskySolves on lowered programs: the plain and the formed (Gram) matrix,
// what it must leave alone (values others read, other solve flags, a target that
// declines), what it asks the target, and the memory plan after it. The fused
// step's numbers are checked on the GPU (tests/gpu/SmallBatchedTest.cpp).
//
//===----------------------------------------------------------------------===//
#include "passes/CholeskySolves.h"

#include "bench/Workloads.h"
#include "ir/Parser.h"
#include "passes/MemoryPlan.h"
#include "passes/PassManager.h"
#include "passes/Rewrite.h"
#include "support/SpdBatch.h"

#include <gtest/gtest.h>

namespace graphc::passes {
namespace {

bool always(const SpdMatrices&, int64_t, size_t) {
  return true;
}

/// The unplanned program of `g`.
Program program(const ir::Graph& g) {
  return Program(g, partitionForFusion(g));
}

std::string kinds(const Program& p) {
  std::string out;
  for (const Step& s : p.steps())
    out +=
        std::string(out.empty() ? "" : " ") + (s.kind == Step::Kind::Kernel    ? "Kernel"
                                               : s.kind == Step::Kind::Library ? "Library"
                                                                               : "CholeskySolve");
  return out;
}

const char* kPlain = R"(
graph @s(%a: f64[8,8], %b: f64[8,3]) {
  %l = cholesky %a
  %y = triangular_solve %l, %b {lower}
  %x = triangular_solve %l, %y {lower, transpose_a}
  return %x
})";

TEST(CholeskySolves, FusesAFactorAndItsTwoSolves) {
  auto g = ir::parseGraph(kPlain);
  Program p = program(*g);
  int64_t before = p.stats().trafficBytes;
  EXPECT_EQ(fuseCholeskySolves(p, always), 1);
  ASSERT_EQ(p.steps().size(), 1u);
  const Step& s = p.steps().front();
  EXPECT_EQ(s.kind, Step::Kind::CholeskySolve);
  EXPECT_EQ(s.name(), "cholesky_solve[cholesky, triangular_solve, triangular_solve]");
  EXPECT_EQ(s.spd.form, SpdMatrices::Matrix);
  EXPECT_EQ(s.spd.n, 8);
  ASSERT_EQ(s.inputs.size(), 2u);
  EXPECT_EQ(s.inputs[0], g->params()[0]->result());
  EXPECT_EQ(s.inputs[1], g->params()[1]->result());
  ASSERT_EQ(s.outputs.size(), 1u);
  EXPECT_EQ(s.outputs[0], g->outputs()[0]);
  // A and B read once, X written once: 8*8 + 8*3 + 8*3 doubles.
  EXPECT_EQ(p.stats().trafficBytes, (64 + 24 + 24) * 8);
  EXPECT_LT(p.stats().trafficBytes, before);
}

TEST(CholeskySolves, FormsTheGramMatrixInTheSolve) {
  struct Case {
    std::string text;
    SpdMatrices want;
  };
  for (const Case& c :
       {Case{bench::batchedSpdGraph(300, 32, "f64"), {SpdMatrices::Gram, 32, 64, 1.0 / 64, 0.1}},
        Case{testing::kTransposedGramSolve, {SpdMatrices::GramTransposed, 9, 24, 0.25, 1}}}) {
    auto g = runPipeline(*ir::parseGraph(c.text), defaultPipeline());
    SCOPED_TRACE(c.text);
    Program p = program(*g);
    EXPECT_EQ(fuseCholeskySolves(p, always), 1);
    ASSERT_EQ(kinds(p), "CholeskySolve");
    const Step& s = p.steps().front();
    EXPECT_EQ(s.spd.form, c.want.form);
    EXPECT_EQ(s.spd.n, c.want.n);
    EXPECT_EQ(s.spd.k, c.want.k);
    EXPECT_DOUBLE_EQ(s.spd.scale, c.want.scale);
    EXPECT_DOUBLE_EQ(s.spd.shift, c.want.shift);
    EXPECT_EQ(s.inputs[0], g->params()[0]->result()); // X itself, not A
    EXPECT_EQ(s.inputs[1], g->params()[1]->result());
    EXPECT_EQ(s.outputs[0], g->outputs()[0]);
    EXPECT_NE(s.name().find("{A = "), std::string::npos) << s.name();
  }
}

TEST(CholeskySolves, LeavesWhatOthersRead) {
  // S returned too: the solve factors S, the steps forming it stay.
  auto g = runPipeline(*ir::parseGraph(testing::kGramSolveMatrixReturned), defaultPipeline());
  Program p = program(*g);
  EXPECT_EQ(fuseCholeskySolves(p, always), 1);
  EXPECT_EQ(kinds(p), "Library Kernel CholeskySolve");
  EXPECT_EQ(p.steps().back().spd.form, SpdMatrices::Matrix);

  // Each must leave the three library steps as they are.
  const char* head = "graph @s(%a: f64[8,8], %b: f64[8,3]) {{\n  %l = cholesky %a{}\n";
  struct Case {
    const char *chol, *first, *second, *returns;
  };
  for (const Case& c : {
           Case{"", "{lower}", "{lower, transpose_a}", "%x, %l"},     // the factor returned
           Case{"", "{lower}", "{lower, transpose_a}", "%x, %y"},     // Y returned
           Case{" {upper}", "{lower}", "{lower, transpose_a}", "%x"}, // the upper factor
           Case{"", "{lower, unit_diagonal}", "{lower, transpose_a}", "%x"},
           Case{"", "{lower}", "{lower}", "%x"}, // no transpose
           Case{"", "{lower, transpose_a}", "{lower, transpose_a}", "%x"},
       }) {
    std::string text = fmt::format(fmt::runtime(head), c.chol) +
                       fmt::format("  %y = triangular_solve %l, %b {}\n"
                                   "  %x = triangular_solve %l, %y {}\n  return {}\n}}",
                                   c.first, c.second, c.returns);
    SCOPED_TRACE(text);
    auto g = ir::parseGraph(text);
    Program p = program(*g);
    EXPECT_EQ(fuseCholeskySolves(p, always), 0);
    EXPECT_EQ(kinds(p), "Library Library Library");
  }
  // A right-side solve X A = B.
  auto right = ir::parseGraph(R"(
graph @s(%a: f64[8,8], %b: f64[3,8]) {
  %l = cholesky %a
  %y = triangular_solve %l, %b {lower, right_side}
  %x = triangular_solve %l, %y {lower, transpose_a, right_side}
  return %x
})");
  Program pr = program(*right);
  EXPECT_EQ(fuseCholeskySolves(pr, always), 0);
}

TEST(CholeskySolves, TheTargetDecides) {
  auto g = ir::parseGraph(kPlain);
  Program p = program(*g);
  std::vector<std::tuple<int64_t, int64_t, size_t>> asked;
  auto declines = [&](const SpdMatrices& a, int64_t cols, size_t bytes) {
    asked.emplace_back(a.n, cols, bytes);
    return false;
  };
  EXPECT_EQ(fuseCholeskySolves(p, declines), 0);
  EXPECT_EQ(kinds(p), "Library Library Library");
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0], std::make_tuple(int64_t{8}, int64_t{3}, size_t{8}));

  // A target that takes the matrix but not its Gram form keeps the steps forming it.
  auto w5 = runPipeline(*ir::parseGraph(bench::batchedSpdGraph(300, 32, "f32")), defaultPipeline());
  Program q = program(*w5);
  auto plainOnly = [](const SpdMatrices& a, int64_t, size_t bytes) {
    return a.form == SpdMatrices::Matrix && bytes == 4;
  };
  EXPECT_EQ(fuseCholeskySolves(q, plainOnly), 1);
  EXPECT_EQ(kinds(q), "Library Kernel CholeskySolve");
}

TEST(CholeskySolves, TheSolutionGetsABufferOfItsOwn) {
  // A and B are intermediates that die at the fused step: X must not take their
  // buffers, since the kernel's blocks write X while others still read A and B.
  auto g = ir::parseGraph(R"(
graph @s(%p: f64[4,8,8], %q: f64[4,8,8]) {
  %eye = eye : f64[4,8,8]
  %a = add %p, %eye
  %two = full {value=2.0} : f64[4,8,8]
  %b = mul %q, %two
  %l = cholesky %a
  %y = triangular_solve %l, %b {lower}
  %x = triangular_solve %l, %y {lower, transpose_a}
  return %x
})");
  Program p = program(*g);
  ASSERT_EQ(fuseCholeskySolves(p, always), 1);
  planMemory(p);
  const Step& s = p.steps().back();
  ASSERT_EQ(s.kind, Step::Kind::CholeskySolve);
  Storage x = p.storage(s.outputs[0]);
  for (ir::Value in : s.inputs) {
    Storage st = p.storage(in);
    ASSERT_EQ(st.kind, Storage::Slot);
    EXPECT_NE(st.index, x.index);
  }
}

} // namespace
} // namespace graphc::passes
