//===- tests/golden/GoldenTest.cpp - One gtest per golden case ------------===//
//
// Instantiates a parameterized test for every case of every file of every suite
// registered in Suites.cpp, so ctest lists and reports each case by name.
//
//===----------------------------------------------------------------------===//
#include "golden/Golden.h"

#include <gtest/gtest.h>

namespace graphc::golden {
namespace {

const std::string kRoot = GRAPHC_SOURCE_DIR "/tests/golden";

class GoldenCase : public ::testing::TestWithParam<Case> {};

TEST_P(GoldenCase, Passes) {
  const Case& c = GetParam();
  std::string failure = runCase(c, suites().at(c.suite));
  EXPECT_TRUE(failure.empty()) << c.where() << ": " << failure;
}

INSTANTIATE_TEST_SUITE_P(Golden, GoldenCase, ::testing::ValuesIn(loadAllCases(kRoot)),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.testName();
                         });

/// A suite without cases is most likely a misspelled folder.
TEST(GoldenSuites, EachSuiteHasCases) {
  std::vector<Case> all = loadAllCases(kRoot);
  for (const auto& [name, fn] : suites())
    EXPECT_TRUE(std::any_of(all.begin(), all.end(),
                            [&, &name = name](const Case& c) { return c.suite == name; }))
        << "no cases in tests/golden/" << name;
}

} // namespace
} // namespace graphc::golden
