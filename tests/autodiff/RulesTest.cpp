//===- tests/autodiff/RulesTest.cpp - Every derivative rule, checked -------===//
//
// Each family of RuleGraphs.h checked against finite differences and the
// transposition identity (DerivativeCheck.h) in f64 on random inputs, with two
// seeds; casts through f32 and the rule table itself.
//
//===----------------------------------------------------------------------===//
#include "DerivativeCheck.h"
#include "RuleGraphs.h"

#include "ir/Parser.h"
#include "passes/Autodiff.h"
#include "passes/Derivative.h"

#include <gtest/gtest.h>

namespace graphc {
namespace {

using testing::RuleFamily;

class AutodiffRules : public ::testing::TestWithParam<RuleFamily> {};

TEST_P(AutodiffRules, MatchFiniteDifferences) {
  ir::Module m = ir::parseModule(GetParam().module, GetParam().name + ".gir");
  for (const auto& g : m.graphs)
    for (uint64_t s = GetParam().seed; s < GetParam().seed + 2; ++s)
      testing::checkDerivatives(*g, s);
}

INSTANTIATE_TEST_SUITE_P(Families, AutodiffRules, ::testing::ValuesIn(testing::ruleFamilies()),
                         [](const auto& info) { return info.param.name; });

/// Second order: the gradient graph of a scalar loss is itself checked like a rule,
/// so its JVP (forward over reverse: Hessian-vector products) meets finite
/// differences of the gradient, and its VJP (reverse over reverse) the identity.
TEST(AutodiffRule, SecondOrderThroughGradientGraphs) {
  ir::Module m = ir::parseModule(R"(
graph @smooth(%x: f64[3,4], %w: f64[4,2]) {
  %p = matmul %x, %w
  %t = tanh %p
  %e = exp %t
  %l = sum %e {axes=[0,1]}
  return %l
}
graph @logdet_solve(%y: f64[4,3], %b: f64[4,2]) {
  %g = syrk %y
  %i = eye : f64[4,4]
  %s = add %g, %i
  %ld = logdet %s
  %x = solve %s, %b
  %m = mul %x, %b
  %q = sum %m {axes=[0,1]}
  %l = add %ld, %q
  return %l
}
graph @qr(%a: f64[5,3]) {
  %f:2 = qr %a
  %q = square %f#0
  %sq = sum %q {axes=[0,1]}
  %sr = sum %f#1 {axes=[0,1]}
  %l = add %sq, %sr
  return %l
}
)",
                                 "second_order.gir");
  for (const auto& g : m.graphs) {
    std::vector<unsigned> wrt;
    for (unsigned i = 0; i < g->params().size(); ++i)
      wrt.push_back(i);
    auto gradient = passes::derivative(*g, passes::DerivativeMode::Grad, wrt);
    testing::checkDerivatives(*gradient, 81);
  }
}

TEST(AutodiffRule, CastsBetweenFloatTypes) {
  // Through f32 the finite differences are too coarse: check that the tangent of
  // cast(cast(x)) is the tangent itself, and the transposition identity.
  auto g = ir::parseGraph(R"(
graph @casts(%x: f64[3,2]) {
  %f = cast %x {dtype=f32}
  %d = cast %f {dtype=f64}
  %i = cast %x {dtype=i32}
  return %d, %i
}
)");
  testing::DerivativeCheckOptions options;
  options.step = 1e-2; // large enough for f32's rounding; the derivative is exactly 1
  options.fdTolerance = 1e-4;
  options.transposeTolerance = 1e-7;
  options.pipeline = false;
  testing::checkDerivatives(*g, 3, options);
}

TEST(AutodiffRule, TableHasAJvpRuleForEveryOp) {
  for (const ir::OpInfo& info : ir::allOps()) {
    const passes::DiffRule& r = passes::diffRule(info.op);
    EXPECT_EQ(r.op, info.op);
    EXPECT_NE(r.jvp, nullptr) << info.name.str();
  }
}

} // namespace
} // namespace graphc
