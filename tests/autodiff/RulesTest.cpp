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
