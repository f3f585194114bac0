//===- tests/tools/RunErrorsTest.cpp - `graphc run` on bad arguments ------===//
//
// Every way `graphc run` can be misused ends with a message that says what is wrong
// (exit 2 for usage errors, 1 for bad input), never "internal error": a malformed
// --input, an unknown parameter, a bad --seed, a missing or unknown --graph, an
// .npy file that is not one, an output directory that cannot be written.
//
//===----------------------------------------------------------------------===//
#include "RunTool.h"
#include "support/ScratchDir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

using namespace graphc::testing;
using ::testing::HasSubstr;

namespace {

namespace fs = std::filesystem;

const char* kOne = "graph @g(%x: f64[3]) {\n  %y = neg %x\n  return %y\n}\n";
const char* kTwo = "graph @a(%x: f64[3]) {\n  return %x\n}\n"
                   "graph @b(%x: f64[3]) {\n  %y = neg %x\n  return %y\n}\n";

struct Case {
  std::vector<std::string> args;
  int exitCode;
  std::string message;
};

} // namespace

TEST(GraphcRun, MisuseIsAClearError) {
  ScratchDir scratch("run-errors");
  std::string one = scratch.write("one.gir", kOne), two = scratch.write("two.gir", kTwo);
  std::string notNpy = scratch.write("not.npy", "PK\3\4 a zip file");
  std::string file = scratch.write("file", "a regular file");
  const std::vector<Case> cases{
      {{"run", one, "--input", "x"}, 2, "--input 'x' is not NAME=PATH.npy"},
      {{"run", one, "--input"}, 2, "--input needs a value NAME=PATH.npy"},
      {{"run", one, "--random-inputs", "--input", "nope=" + notNpy},
       1,
       "@g has no parameter %nope"},
      {{"run", one, "--input", "x=" + notNpy}, 1, "not.npy: not a .npy file (bad magic"},
      {{"run", one}, 1, "no input for parameter %x (f64[3]) of @g"},
      {{"run", one, "--random-inputs", "--seed", "abc"}, 2, "--seed 'abc' is not a number"},
      {{"run", one, "--random-inputs", "--seed", "-1"}, 2, "--seed '-1' is not a number"},
      {{"run", one, "--random-inputs", "--repeat", "0"},
       2,
       "--repeat '0' is not a positive number"},
      {{"run", one, "--random-inputs", "--seed", "1.5"}, 2, "--seed '1.5' is not a number"},
      {{"run", one, "--random-inputs", "--seed", "99999999999999999999"},
       2,
       "--seed '99999999999999999999' is not a number"},
      {{"run", one, "--input", "x=" + notNpy, "--input", "%x=" + file},
       2,
       "--input x is given twice (" + notNpy + ", then " + file + ")"},
      {{"run", one, "--input=x"}, 2, "--input 'x' is not NAME=PATH.npy"},
      {{"run", one, "--input", "=" + notNpy}, 2, "is not NAME=PATH.npy"},
      {{"run", two, "--random-inputs"}, 2, "holds 2 graphs (@a, @b); choose one with --graph"},
      {{"run", two, "--random-inputs", "--graph", "c"}, 1, "has no graph @c (its graphs: @a, @b)"},
      {{"run", two, "--random-inputs", "--graph"}, 2, "option --graph needs a value"},
      {{"run", two, "--random-inputs", "--graph="}, 2, "option --graph needs a value"},
      {{"run", two, "--random-inputs", "--graph", "a", "--graph", "b"},
       2,
       "option --graph is given twice ('a', then 'b')"},
      {{"run", two, "--random-inputs", "--backend", "gpu"}, 2, "invalid value 'gpu' for --backend"},
      {{"run", one, "--random-inputs", "--output-dir", file + "/out"},
       1,
       "--output-dir " + file + "/out: cannot create the directory: Not a directory"},
  };
  for (const Case& c : cases) {
    ToolResult r = runGraphc(c.args);
    SCOPED_TRACE(c.message);
    EXPECT_EQ(r.exitCode, c.exitCode) << r.describe();
    EXPECT_THAT(r.err, HasSubstr(c.message)) << r.describe();
    EXPECT_THAT(r.err, ::testing::Not(HasSubstr("internal error"))) << r.describe();
  }
}

// --graph takes the name with or without its '@'.
TEST(GraphcRun, GraphNamesTakeTheirAt) {
  ScratchDir scratch("run-errors");
  std::string two = scratch.write("two.gir", kTwo);
  for (const char* name : {"b", "@b"}) {
    ToolResult r = runGraphc({"run", two, "--random-inputs", "--backend", "cpu", "--graph", name});
    EXPECT_EQ(r.exitCode, 0) << r.describe();
    EXPECT_THAT(r.out, HasSubstr("@b on cpu")) << r.describe();
  }
}

// The outputs cannot be written where --output-dir points: the error names the path.
TEST(GraphcRun, AnUnwritableOutputIsAClearError) {
  ScratchDir scratch("run-errors");
  std::string one = scratch.write("one.gir", kOne);
  fs::path dir = scratch / "readonly";
  fs::create_directories(dir);
  std::string blocker = (dir / "g_out0.npy").string();
  fs::create_directories(blocker); // a directory where the file would go
  ToolResult r = runGraphc({"run", one, "--random-inputs", "--output-dir", dir.string()});
  EXPECT_EQ(r.exitCode, 1) << r.describe();
  EXPECT_THAT(r.err, HasSubstr(blocker + ": cannot write")) << r.describe();
}
