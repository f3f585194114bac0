//===- tests/tools/RobustnessTest.cpp - Bad input never crashes graphc ----===//
//
// Feeds `graphc dump -` every prefix of the example file and many randomly
// corrupted copies of it. Each run must end with status 0 (still valid) or 1 with
// a `<stdin>:LINE:COL: error:` message: never a signal, a hang or another status.
//
//===----------------------------------------------------------------------===//
#include "RunTool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

using namespace graphc::testing;

namespace {

std::string exampleText() {
  std::ifstream in(sourcePath("examples/enkf_small.gir"));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void expectCleanOutcome(const std::string& input) {
  ToolResult r = runGraphc({"dump", "-"}, input, /*timeoutSeconds=*/10);
  ASSERT_EQ(r.signal, 0) << "input:\n" << input << "\n" << r.describe();
  ASSERT_TRUE(r.exitCode == 0 || r.exitCode == 1) << "input:\n" << input << "\n" << r.describe();
  if (r.exitCode == 1) {
    ASSERT_THAT(r.err, ::testing::ContainsRegex("^<stdin>:[0-9]+:[0-9]+: error: ")) << "input:\n"
                                                                                    << input;
  }
}

} // namespace

TEST(Robustness, EveryPrefixOfTheExample) {
  std::string text = exampleText();
  // Every 3rd prefix keeps the run short while cutting every token somewhere.
  for (size_t n = 0; n <= text.size(); n += 3)
    expectCleanOutcome(text.substr(0, n));
}

TEST(Robustness, RandomCorruptions) {
  std::string text = exampleText();
  const std::string alphabet = "%@#:=,{}[]()-+.0123456789abfx_\n \"\x01\xff";
  std::mt19937 rng(42);
  for (int round = 0; round < 150; ++round) {
    std::string s = text;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % s.size();
      switch (rng() % 3) {
      case 0:
        s[pos] = alphabet[rng() % alphabet.size()];
        break;
      case 1:
        s.erase(pos, 1 + rng() % 8);
        break;
      default:
        s.insert(pos, 1, alphabet[rng() % alphabet.size()]);
      }
    }
    expectCleanOutcome(s);
  }
}
