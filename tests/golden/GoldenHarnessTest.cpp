//===- tests/golden/GoldenHarnessTest.cpp - Tests of the golden harness ---===//
//
// The harness itself must be able to fail: these feed it outputs and cases that
// break each kind of expectation.
//
//===----------------------------------------------------------------------===//
#include "golden/Golden.h"

#include "ir/Printer.h"

#include <gtest/gtest.h>

namespace graphc::golden {
namespace {

std::vector<Check> checksOf(llvm::StringRef text) {
  std::vector<Case> cs = splitCases(text, "t", "t/x.gir");
  EXPECT_EQ(cs.size(), 1u);
  return cs.empty() ? std::vector<Check>{} : cs[0].checks;
}

const char* kOut = "graph @g(%x: f64[2]) {\n  %0 = neg %x : f64[2]\n  return %0\n}\n";

TEST(GoldenHarness, CheckInOrder) {
  EXPECT_EQ(matchChecks(kOut, checksOf("// CHECK: graph @g\n// CHECK: neg\n// CHECK: return")), "");
  EXPECT_NE(matchChecks(kOut, checksOf("// CHECK: return\n// CHECK: neg")), "");
  EXPECT_NE(matchChecks(kOut, checksOf("// CHECK: exp")), "");
}

TEST(GoldenHarness, CheckNext) {
  EXPECT_EQ(matchChecks(kOut, checksOf("// CHECK: graph\n// CHECK-NEXT: neg %x")), "");
  EXPECT_NE(matchChecks(kOut, checksOf("// CHECK: graph\n// CHECK-NEXT: return")), "");
  EXPECT_EQ(matchChecks(kOut, checksOf("// CHECK-NEXT: graph @g")), "");
  EXPECT_NE(matchChecks(kOut, checksOf("// CHECK: }\n// CHECK-NEXT: x")), "");
}

TEST(GoldenHarness, CheckNot) {
  EXPECT_EQ(matchChecks(kOut, checksOf("// CHECK-NOT: exp")), "");
  EXPECT_NE(matchChecks(kOut, checksOf("// CHECK-NOT: neg")), "");
  // Only the region between the neighbouring matches counts.
  EXPECT_EQ(matchChecks(kOut, checksOf("// CHECK: neg\n// CHECK-NOT: neg\n// CHECK: return")), "");
  EXPECT_NE(matchChecks(kOut, checksOf("// CHECK: graph\n// CHECK-NOT: neg\n// CHECK: return")),
            "");
}

// A node moved to another fusion group, or given a reason not to fuse, is no longer
// the line the check names; nor is a longer name or number.
TEST(GoldenHarness, ChecksMatchWholeAnnotationsAndWords) {
  const char* out = "  %a = exp %x : f64[2]  // group 0; not fused with %x: a reason\n"
                    "  %ab = neg %a : f64[2]  // group 10\n";
  auto match = [&](const char* checks) { return matchChecks(out, checksOf(checks)); };
  EXPECT_NE(match("// CHECK: %a = exp %x : f64[2]  // group 0"), "");
  EXPECT_NE(match("// CHECK: group 0;"), "");
  EXPECT_EQ(match("// CHECK: %a = exp %x : f64[2]  // group 0; not fused with %x: a reason"), "");
  EXPECT_EQ(match("// CHECK: %a = exp %x"), "");
  EXPECT_NE(match("// CHECK: group 1"), "");
  EXPECT_EQ(match("// CHECK: group 10"), "");
  EXPECT_NE(match("// CHECK: = neg %a : f64[2]  // group 1"), "");
  EXPECT_EQ(match("// CHECK: %ab = neg %a"), "");
  EXPECT_NE(match("// CHECK: %a = exp\n// CHECK-NEXT: %a ="), ""); // %a is not %ab
  EXPECT_EQ(match("// CHECK: %a = exp\n// CHECK-NEXT: = neg %a : f64[2]  // group 10"), "");
  EXPECT_NE(match("// CHECK: %a = exp\n// CHECK-NEXT: // group 1"), "");
}

TEST(GoldenHarness, CheckNowhere) {
  EXPECT_EQ(matchChecks(kOut, checksOf("// CHECK: return\n// CHECK-NOWHERE: exp")), "");
  // Unlike a CHECK-NOT after the last match, it sees the lines before it too.
  EXPECT_EQ(matchChecks(kOut, checksOf("// CHECK: return\n// CHECK-NOT: neg")), "");
  EXPECT_NE(matchChecks(kOut, checksOf("// CHECK: return\n// CHECK-NOWHERE: neg")), "");
  EXPECT_NE(matchChecks(kOut, checksOf("// CHECK-NOWHERE: graph @g")), "");
}

TEST(GoldenHarness, SplitsCasesAndLines) {
  std::vector<Case> cs = splitCases("a\n// -----\nb\n// CHECK: x\n// -----\n", "s", "s/f.gir");
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[1].firstLine, 3u);
  EXPECT_EQ(cs[1].input, "b\n// CHECK: x\n");
  ASSERT_EQ(cs[1].checks.size(), 1u);
  EXPECT_EQ(cs[1].checks[0].line, 4u);
  EXPECT_EQ(cs[1].testName(), "s_f_2");
}

TEST(GoldenHarness, MalformedDirectivesFail) {
  auto dump = [](ir::Module& m) { return ir::printModule(m); };
  std::vector<Case> cs =
      splitCases("graph @g(%x: f64[]) {\n return %x\n}\n// CHECK-NXT: x\n", "s", "s/f.gir");
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_NE(runCase(cs[0], dump), "");
  cs = splitCases("graph @g(%x: f64[]) {\n return %x\n}\n// CHECK:\n", "s", "s/f.gir");
  EXPECT_NE(runCase(cs[0], dump), "");
}

TEST(GoldenHarness, Errors) {
  auto dump = [](ir::Module& m) { return ir::printModule(m); };
  auto run = [&](llvm::StringRef text) {
    return runCase(splitCases(text, "s", "s/f.gir").at(0), dump);
  };
  const char* bad = "graph @g(%x: f64[]) {\n  %y = foo %x\n  return %y\n}\n";
  EXPECT_EQ(run(std::string(bad) + "// ERROR: 2:8: error: unknown op 'foo'\n"), "");
  EXPECT_NE(run(std::string(bad) + "// ERROR: 12:8: error: unknown op 'foo'\n"), "");
  EXPECT_NE(run(std::string(bad) + "// ERROR: 2:9: error: unknown op 'foo'\n"), "");
  EXPECT_NE(run(std::string(bad) + "// ERROR: unknown op 'bar'\n"), "");
  EXPECT_NE(run(bad), "");
  // An ERROR case that succeeds fails.
  EXPECT_NE(run("graph @g(%x: f64[]) {\n  return %x\n}\n// ERROR: unknown op\n"), "");
  EXPECT_EQ(run("graph @g(%x: f64[]) {\n  return %x\n}\n// CHECK: return %x\n"), "");
}

} // namespace
} // namespace graphc::golden
