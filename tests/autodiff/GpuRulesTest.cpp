//===- tests/autodiff/GpuRulesTest.cpp - Every derivative rule on the GPU --===//
//
// The rule families of RuleGraphs.h with their derivative graphs run on the cuda
// backend (optimized and not), checked like on the CPU: against finite differences
// of the graph on the CPU and the transposition identity. Label `gpu`; skips where
// there is no device.
//
//===----------------------------------------------------------------------===//
#include "DerivativeCheck.h"
#include "RuleGraphs.h"

#include "ir/Parser.h"
#include "runtime/Backends.h"
#include "runtime/core/Backend.h"

#include <gtest/gtest.h>

namespace graphc {
namespace {

using testing::RuleFamily;

class AutodiffRulesOnGpu : public ::testing::TestWithParam<RuleFamily> {};

TEST_P(AutodiffRulesOnGpu, MatchFiniteDifferences) {
  try {
    getBackend("cuda");
  } catch (const Error& e) {
    GTEST_SKIP() << e.what();
  }
  ir::Module m = ir::parseModule(GetParam().module, GetParam().name + ".gir");
  testing::DerivativeCheckOptions options;
  options.backend = "cuda";
  for (const auto& g : m.graphs)
    testing::checkDerivatives(*g, GetParam().seed, options);
}

INSTANTIATE_TEST_SUITE_P(Families, AutodiffRulesOnGpu, ::testing::ValuesIn(testing::ruleFamilies()),
                         [](const auto& info) { return info.param.name; });

} // namespace
} // namespace graphc
