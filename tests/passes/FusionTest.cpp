//===- tests/passes/FusionTest.cpp - Fusion legality and policy -----------===//
//
// The golden suite tests/golden/fuse shows partitions under the default policy;
// these tests call canFuse directly and swap the policy.
//
//===----------------------------------------------------------------------===//
#include "passes/Fusion.h"

#include "ir/Parser.h"

#include <algorithm>
#include <fmt/format.h>

#include <gtest/gtest.h>

namespace graphc::passes {
namespace {

const char* kChain = R"(
graph @chain(%x: f32[64], %w: f32[64]) {
  %a = mul %x, %w
  %b = exp %a
  return %b
})";

const char* kSiblings = R"(
graph @siblings(%x: f64[4,8], %y: f64[4,8]) {
  %s = sum %x {axes=[1]}
  %t = sum %y {axes=[1]}
  return %s, %t
})";

TEST(Fusion, RolesFollowTheOpKind) {
  auto g = ir::parseGraph(R"(
graph @roles(%x: f64[4,4]) {
  %a = neg %x
  %b = transpose %a {perm=[1,0]}
  %c = matmul %a, %b
  %d = sum %c {axes=[0]}
  %e = reshape %d {shape=[2,2]}
  return %e
})");
  auto role = [&](size_t i) { return fusionRole(*g->nodes()[i]); };
  EXPECT_EQ(role(0), FusionRole::Source);
  EXPECT_EQ(role(1), FusionRole::Elementwise);
  EXPECT_EQ(role(2), FusionRole::Permute);
  EXPECT_EQ(role(3), FusionRole::Library);
  EXPECT_EQ(role(4), FusionRole::Reduction);
  EXPECT_EQ(role(5), FusionRole::Relabel);
}

TEST(Fusion, CanFuseExplainsARefusal) {
  auto g = ir::parseGraph(kChain);
  FusionState state(*g);
  const ir::Node& mul = *g->nodes()[2];
  const ir::Node& exp = *g->nodes()[3];
  int group = state.newGroup(exp);
  EXPECT_TRUE(canFuse(mul, group, state));
  FusionDecision source = canFuse(*g->nodes()[0], group, state);
  EXPECT_FALSE(source);
  EXPECT_EQ(source.reason, "a source is an input of kernels, not a member");
}

TEST(Fusion, DefaultPolicyFusesAChain) {
  auto g = ir::parseGraph(kChain);
  FusionPartition p = partitionForFusion(*g);
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].nodes.size(), 2u);
}

TEST(Fusion, APolicyCanDeclineLegalFusions) {
  auto g = ir::parseGraph(kChain);
  FusionPartition p = partitionForFusion(*g, [](const FusionOption&) { return 0.0; });
  ASSERT_EQ(p.groups.size(), 2u);
  EXPECT_EQ(p.reason(*g->nodes()[3], 0), "the cost policy declined it");
  EXPECT_EQ(p.reason(*g->nodes()[2], 0), ""); // a parameter: an input, not an edge
}

TEST(Fusion, SiblingsOfDifferentInputsMergeWhenThePolicyWantsIt) {
  auto g = ir::parseGraph(kSiblings);
  EXPECT_EQ(partitionForFusion(*g).groups.size(), 2u); // nothing shared to read once
  FusionPartition p = partitionForFusion(*g, [](const FusionOption&) { return 1.0; });
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].reductions.size(), 2u);
}

/// The square root of per-column values broadcast over a 2^20 x 64 domain would be
/// computed again at 16384 points per element: it makes a group of its own. A
/// cast is not arithmetic, and a small domain or a producer of the domain's own
/// reduction (layernorm's rsqrt of the variance, computed once per row) joins.
TEST(Fusion, ArithmeticBroadcastOverAHugeDomainIsNotRecomputed) {
  auto graph = [](const char* rows, const char* reduced) {
    return ir::parseGraph(fmt::format(R"(
graph @g(%x: f32[{0},64], %p: f32[{1},64]) {{
  %v = mean %p {{axes=[0], keepdims}}
  %s = sqrt %v
  %c = cast %s {{dtype=f64}}
  %cs = cast %c {{dtype=f32}}
  %sb = broadcast_to %cs {{shape=[{0},64]}}
  %r = div %x, %sb
  return %r
}})",
                                      rows, reduced));
  };
  // Whether sqrt (node 3) is in the group of div (node 7).
  auto withDiv = [](const ir::Graph& g) {
    for (const FusionGroup& group : partitionForFusion(g).groups)
      if (std::count(group.nodes.begin(), group.nodes.end(), g.nodes()[3]))
        return std::count(group.nodes.begin(), group.nodes.end(), g.nodes()[7]) > 0;
    return false;
  };
  auto huge = graph("1048576", "64");
  EXPECT_FALSE(withDiv(*huge));
  EXPECT_EQ(partitionForFusion(*huge).reason(*huge->nodes()[4], 0), "the cost policy declined it");
  EXPECT_TRUE(withDiv(*graph("1024", "64")));
  auto layernormLike = graph("1048576", "1048576");
  EXPECT_TRUE(withDiv(*layernormLike));
  EXPECT_EQ(partitionForFusion(*layernormLike).groups.size(), 1u);
}

/// A transpose is an index map of groups without a reduction: x + x' is one group.
/// A transpose of a large value stays out of a reduction's group (either way round),
/// a small one joins it; none joins from below a reshape that regroups its axes,
/// and a value the group reads transposed is not also written.
TEST(Fusion, TransposesJoinGroupsWithoutReductions) {
  auto partition = [](const char* body, int n = 8) {
    auto g = ir::parseGraph(fmt::format("graph @g(%x: f64[{0},{0}], %z: f64[64]) {{\n{1}\n}}", n,
                                        fmt::format(fmt::runtime(body), n)));
    FusionPartition p = partitionForFusion(*g);
    return std::pair{std::move(g), std::move(p)};
  };
  auto [xt, pxt] = partition("  %t = transpose %x {{perm=[1,0]}}\n  %y = add %x, %t\n  return %y");
  ASSERT_EQ(pxt.groups.size(), 1u);
  EXPECT_EQ(pxt.groups[0].nodes.size(), 2u);

  // Node 2 is %t, node 3 its user. 512 x 512 f64 is 2 MB, past kTransposedReadMaxBytes.
  const char* sumOfTranspose = "  %t = transpose %x {{perm=[1,0]}}\n  %s = sum %t {{axes=[1]}}\n"
                               "  return %s";
  auto [sum, psum] = partition(sumOfTranspose, 512);
  EXPECT_EQ(psum.groups.size(), 2u);
  EXPECT_EQ(psum.reason(*sum->nodes()[3], 0),
            "a transpose of a large value joins no group with a reduction stage: the segments "
            "would be read across rows");
  auto [small, psmall] = partition(sumOfTranspose, 256);
  EXPECT_EQ(psmall.groups.size(), 1u);
  const char* transposedAfterSum = "  %s = sum %x {{axes=[1], keepdims}}\n  %b = broadcast_to %s "
                                   "{{shape=[{0},{0}]}}\n  %t = transpose %b {{perm=[1,0]}}\n"
                                   "  %y = add %x, %t\n  return %y";
  auto [after, pafter] = partition(transposedAfterSum, 512);
  EXPECT_EQ(pafter.reason(*after->nodes()[3], 0),
            "the group reads a large value transposed: the reduction's segments would be read "
            "across rows");
  auto [afterSmall, pafterSmall] = partition(transposedAfterSum, 8);
  EXPECT_EQ(pafterSmall.groups.size(), 1u);
  auto [flat, pflat] = partition("  %t = transpose %x {{perm=[1,0]}}\n  %r = reshape %t "
                                 "{{shape=[64]}}\n  %y = add %r, %z\n  return %y");
  EXPECT_EQ(pflat.reason(*flat->nodes()[3], 0),
            "%r regroups the transposed axes: no permutation of axes follows its flat index");
  auto [both, pboth] = partition("  %a = exp %x\n  %t = transpose %a {{perm=[1,0]}}\n  %y = "
                                 "add %a, %t\n  return %y, %a");
  EXPECT_EQ(pboth.reason(*both->nodes()[3], 0),
            "it is also needed outside the group, which reads it transposed");
  EXPECT_EQ(pboth.groups.size(), 2u);
}

/// Two groups can wait for each other through a third: {%ym, %w} feeds %f's group
/// through %yc, and %r, in %f's group, feeds %w. No path of uses leads from a
/// member back into its own group, so the check must follow groups, not nodes.
TEST(Fusion, NoCycleThroughAnotherGroup) {
  auto g = ir::parseGraph(R"(
graph @g(%y: f64[8,8], %v: f64[8,1], %obs: f64[8,1]) {
  %ym = mean %y {axes=[1], keepdims}
  %yb = broadcast_to %ym {shape=[8,8]}
  %yc = sub %y, %yb
  %r = rsqrt %v
  %rb = broadcast_to %r {shape=[8,8]}
  %f = mul %yc, %rb
  %s = syrk %f {transpose}
  %u = add %obs, %ym
  %w = mul %u, %r
  %q = matmul %f, %w {transpose_a}
  return %s, %q
})");
  FusionPartition p = partitionForFusion(*g);
  std::vector<int> position(p.groups.size());
  for (size_t i = 0; i < p.schedule.size(); ++i)
    if (p.schedule[i].group >= 0)
      position[p.schedule[i].group] = static_cast<int>(i);
  // every operand made by another group is made by an earlier step
  for (const ir::Node* n : g->nodes())
    for (ir::Value v : n->operands())
      if (p.group(*n) >= 0 && p.group(*v.node) >= 0 && p.group(*v.node) != p.group(*n)) {
        EXPECT_LT(position[p.group(*v.node)], position[p.group(*n)]);
      }
}

} // namespace
} // namespace graphc::passes
