//===- tests/tools/GraphcCliTest.cpp - `graphc` exit codes and messages ---===//
#include "RunTool.h"
#include "support/ScratchDir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace graphc::testing;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

const std::string kExample = sourcePath("examples/enkf_small.gir");

/// A graph whose second line uses an op that does not exist.
const std::string kUnknownOp = "graph @g(%x: f64[2]) {\n  %y = frob %x\n  return %y\n}\n";

} // namespace

TEST(GraphcCli, HelpListsCommands) {
  ToolResult r = runGraphc({"--help"});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_THAT(r.out, StartsWith("usage: graphc <command>"));
  EXPECT_THAT(r.out, HasSubstr("\n  dump "));
  EXPECT_EQ(r.err, "");
}

TEST(GraphcCli, NoArgumentsIsAUsageError) {
  ToolResult r = runGraphc({});
  EXPECT_EQ(r.exitCode, 2) << r.describe();
  EXPECT_THAT(r.err, StartsWith("usage: graphc"));
}

TEST(GraphcCli, UnknownCommandIsAUsageError) {
  ToolResult r = runGraphc({"frobnicate"});
  EXPECT_EQ(r.exitCode, 2) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("graphc: error: unknown command 'frobnicate'"));
  EXPECT_THAT(r.err, HasSubstr("graphc --help"));
}

TEST(GraphcCli, DumpHelpListsOptions) {
  ToolResult r = runGraphc({"dump", "--help"});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_THAT(r.out, StartsWith("usage: graphc dump [options] FILE"));
  EXPECT_THAT(r.out, HasSubstr("--format=FMT"));
}

TEST(GraphcCli, DumpUsageErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{"dump", "--bogus", kExample}, "unknown option '--bogus'"},
           {{"dump", "-x", kExample}, "unknown option '-x'"},
           {{"dump", "--format=xml", kExample}, "invalid value 'xml' for --format"},
           {{"dump", kExample, "--format"}, "option --format needs a value"},
           {{"dump"}, "missing input FILE"},
           {{"dump", kExample, kExample}, "expected exactly one FILE"},
           // --after and --passes (tests/tools/OptDumpTest.cpp has the working cases)
           {{"dump", "--after=frob", kExample}, "unknown pass 'frob' (known: canonicalize"},
           {{"dump", "--after=lower-linalg", "--passes=canonicalize", kExample},
            "--after=lower-linalg: the pipeline (canonicalize) does not run it"},
           {{"dump", "--passes=canonicalize", kExample}, "--passes needs --after"},
           {{"dump", "--after=all", "--format=dot", kExample},
            "--after and --facts print text, not --format=dot"},
           {{"dump", "--facts", "--format=dot", kExample},
            "--after and --facts print text, not --format=dot"},
       }) {
    ToolResult r = runGraphc(c.args);
    EXPECT_EQ(r.exitCode, 2) << r.describe();
    EXPECT_THAT(r.err, HasSubstr("graphc dump: error: " + c.message));
    EXPECT_THAT(r.err, HasSubstr("Run 'graphc dump --help' for usage."));
  }
}

TEST(GraphcCli, DumpMissingFile) {
  ToolResult r = runGraphc({"dump", "no/such/file.gir"});
  EXPECT_EQ(r.exitCode, 1) << r.describe();
  EXPECT_EQ(r.err,
            "graphc dump: error: cannot read 'no/such/file.gir': No such file or directory\n");
  EXPECT_EQ(r.out, "");
}

TEST(GraphcCli, DumpPrintsTheExample) {
  ToolResult r = runGraphc({"dump", kExample});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_THAT(r.out, StartsWith("graph @enkf_small(%x: f64[6,4], %y: f64[6,4], %obs: f64[6,4]) {"));
  EXPECT_THAT(r.out, HasSubstr("  %z = solve %s, %innov : f64[6,4]\n"));
  EXPECT_EQ(r.err, "");
}

TEST(GraphcCli, DumpReadsStandardInput) {
  ToolResult fromFile = runGraphc({"dump", kExample});
  ToolResult fromStdin = runGraphc({"dump", "-"}, readFile(kExample));
  ASSERT_EQ(fromStdin.exitCode, 0) << fromStdin.describe();
  EXPECT_EQ(fromStdin.out, fromFile.out);
}

TEST(GraphcCli, DumpDot) {
  ToolResult r = runGraphc({"dump", "--format=dot", kExample});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_THAT(r.out, StartsWith("digraph \"@enkf_small\" {\n"));
  EXPECT_THAT(r.out, HasSubstr("[label=\"%z = solve\\nf64[6,4]\"]"));
  ToolResult spaced = runGraphc({"dump", "--format", "dot", kExample});
  EXPECT_EQ(spaced.out, r.out);
}

TEST(GraphcCli, BadInputOnStdinNamesThePosition) {
  ToolResult r = runGraphc({"dump", "-"}, kUnknownOp);
  EXPECT_EQ(r.exitCode, 1) << r.describe();
  EXPECT_THAT(r.err, StartsWith("<stdin>:2:8: error: "));
  EXPECT_THAT(r.err, HasSubstr("frob"));
  EXPECT_EQ(r.out, "");
}

TEST(GraphcCli, BadInputFileNamesThePosition) {
  ScratchDir dir("cli");
  // Line 3 breaks a typing rule: matmul of f64[2,3] by f64[2,3].
  std::string file = dir.write("bad.gir", "// comment\ngraph @g(%a: f64[2,3]) {\n"
                                          "  %m = matmul %a, %a\n  return %m\n}\n");
  ToolResult r = runGraphc({"dump", file});
  EXPECT_EQ(r.exitCode, 1) << r.describe();
  EXPECT_THAT(r.err, StartsWith(file + ":3:"));
  EXPECT_THAT(r.err, HasSubstr(": error: "));
  EXPECT_THAT(r.err, HasSubstr("matmul"));
}
