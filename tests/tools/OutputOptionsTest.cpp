//===- tests/tools/OutputOptionsTest.cpp - -o, run --passes, early checks -===//
//
// `-o FILE` / `--output=FILE` writes what `opt` and `dump` print into FILE (the same
// text), fails before reading the input when FILE cannot be made, leaves FILE as it
// was when the command fails, and may name the input itself. `graphc run --passes`
// runs the passes named, as `opt` does, and times the upload, the runs and the
// download apart, as text or --json. Options that name parameters (--input,
// --donate) or directories (--output-dir) are checked before anything is compiled.
//
//===----------------------------------------------------------------------===//
#include "RunTool.h"
#include "support/ScratchDir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <regex>

using namespace graphc::testing;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

namespace fs = std::filesystem;

const std::string kEnkf = sourcePath("examples/enkf.gir");

/// The names of the files in `dir`.
std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace

TEST(GraphcOutput, WritesWhatWouldBePrinted) {
  ScratchDir dir("output-writes");
  struct Case {
    std::vector<std::string> command;
  };
  for (const Case& c : std::vector<Case>{
           {{"opt", kEnkf}},
           {{"opt", "--facts", kEnkf}},
           {{"dump", kEnkf}},
           {{"dump", "--format=dot", kEnkf}},
           {{"dump", "--lowered", kEnkf}},
           {{"dump", "--after=all", kEnkf}},
           {{"dump", "--cuda", kEnkf}},
       }) {
    SCOPED_TRACE(c.command[0] + " " + c.command[1]);
    ToolResult printed = runGraphc(c.command);
    ASSERT_EQ(printed.exitCode, 0) << printed.describe();
    ASSERT_FALSE(printed.out.empty());
    for (std::string flag : {"-o", "--output"}) {
      fs::path file = dir / "out.txt";
      std::vector<std::string> args = c.command;
      args.insert(args.begin() + 1, {flag, file.string()});
      ToolResult r = runGraphc(args);
      ASSERT_EQ(r.exitCode, 0) << r.describe();
      EXPECT_EQ(r.out, "");
      EXPECT_EQ(readFile(file.string()), printed.out);
    }
  }
  ToolResult eq = runGraphc({"opt", "--output=" + (dir / "eq.gir").string(), kEnkf});
  ASSERT_EQ(eq.exitCode, 0) << eq.describe();
  EXPECT_EQ(readFile((dir / "eq.gir").string()), runGraphc({"opt", kEnkf}).out);
  EXPECT_EQ(listing(dir.path()), (std::vector<std::string>{"eq.gir", "out.txt"}))
      << "no temporary files";
  EXPECT_THAT(runGraphc({"opt", "--help"}).out, HasSubstr("-o, --output=FILE"));
  EXPECT_THAT(runGraphc({"dump", "--help"}).out, HasSubstr("-o, --output=FILE"));
}

TEST(GraphcOutput, AFileThatCannotBeMadeFailsBeforeTheInputIsRead) {
  ScratchDir dir("output-cannot");
  std::string out = (dir / "missing" / "out.gir").string();
  // The input does not parse, but the output is checked first.
  ToolResult r = runGraphc({"opt", "-", "-o", out}, "graph @g(%x: f64[2]) {\n  %y = frob %x\n");
  EXPECT_EQ(r.exitCode, 1) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("--output " + out +
                               ": cannot write the file: No such file or "
                               "directory"));
  EXPECT_THAT(r.err, Not(HasSubstr("frob")));
  ToolResult noValue = runGraphc({"opt", kEnkf, "-o"});
  EXPECT_EQ(noValue.exitCode, 2) << noValue.describe();
  EXPECT_THAT(noValue.err, HasSubstr("option -o needs a value"));
}

TEST(GraphcOutput, AFailingCommandLeavesTheFileAsItWas) {
  ScratchDir dir("output-failing");
  fs::path file = dir.write("kept.gir", "the old contents\n");
  ToolResult r =
      runGraphc({"opt", "-", "-o", file.string()}, "graph @g(%x: f64[2]) {\n  %y = frob %x\n");
  EXPECT_EQ(r.exitCode, 1) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("<stdin>:2:"));
  EXPECT_EQ(readFile(file.string()), "the old contents\n");
  EXPECT_EQ(listing(dir.path()), (std::vector<std::string>{"kept.gir"})) << "no temporary files";
}

TEST(GraphcOutput, TheInputMayBeTheOutput) {
  ScratchDir dir("output-inplace");
  fs::path file = dir / "enkf.gir";
  fs::copy_file(kEnkf, file);
  std::string want = runGraphc({"opt", kEnkf}).out;
  ToolResult r = runGraphc({"opt", file.string(), "-o", file.string()});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_EQ(readFile(file.string()), want);
}

TEST(GraphcRun, PassesPicksThePipeline) {
  setenv("GRAPHC_LOG", "passes", 1);
  ToolResult some =
      runGraphc({"run", kEnkf, "--random-inputs", "--backend", "cpu", "--passes", "canonicalize"});
  ToolResult none =
      runGraphc({"run", kEnkf, "--random-inputs", "--backend", "cpu", "--passes=none"});
  ToolResult all = runGraphc({"run", kEnkf, "--random-inputs", "--backend", "cpu"});
  unsetenv("GRAPHC_LOG");
  ASSERT_EQ(some.exitCode, 0) << some.describe();
  ASSERT_EQ(none.exitCode, 0) << none.describe();
  ASSERT_EQ(all.exitCode, 0) << all.describe();
  EXPECT_THAT(some.out, HasSubstr("passes canonicalize, compiled in"));
  EXPECT_THAT(none.out, HasSubstr("passes none, compiled in"));
  EXPECT_THAT(some.err, HasSubstr("@enkf: canonicalize: "));
  EXPECT_THAT(all.err, HasSubstr("@enkf: lower-linalg: "));
  EXPECT_THAT(some.err, Not(HasSubstr("lower-linalg")));
  EXPECT_THAT(none.err, Not(HasSubstr("lower-linalg")));
  // The same numbers whichever passes ran: the solve by LU, or by Cholesky.
  std::vector<double> want = outputSums(none.out);
  ASSERT_FALSE(want.empty()) << none.out;
  for (const ToolResult* r : {&some, &all}) {
    std::vector<double> got = outputSums(r->out);
    ASSERT_EQ(got.size(), want.size()) << r->out;
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-9 * (1 + std::abs(want[i]))) << r->out;
  }
  ToolResult bad = runGraphc({"run", kEnkf, "--random-inputs", "--passes", "canonicalise"});
  EXPECT_EQ(bad.exitCode, 2) << bad.describe();
  EXPECT_THAT(bad.err, HasSubstr("unknown pass 'canonicalise' (known: "));
}

TEST(GraphcOptions, NamesAreCheckedBeforeAnythingIsCompiled) {
  ScratchDir dir("output-names");
  fs::path file = dir.write("file", "a regular file");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           // The output directory before the inputs (none is given).
           {{"run", kEnkf, "--output-dir", (file / "out").string()},
            "--output-dir " + (file / "out").string() + ": cannot create the directory"},
           // An unknown --input before any .npy file is read (neither exists).
           {{"run", kEnkf, "--input", "xi=/nonexistent/xi.npy", "--input", "q=/nonexistent/q.npy"},
            "--input q=/nonexistent/q.npy: @enkf has no parameter %q (its parameters: %xi, "},
           {{"dump", "--lowered", "--donate=xi,q", kEnkf},
            "--donate xi,q: @enkf has no parameter %q (its parameters: %xi, "},
       }) {
    SCOPED_TRACE(c.message);
    ToolResult r = runGraphc(c.args);
    EXPECT_EQ(r.exitCode, 1) << r.describe();
    EXPECT_THAT(r.err, HasSubstr(c.message)) << r.describe();
  }
  ToolResult donated = runGraphc({"dump", "--lowered", "--donate=%xi", kEnkf});
  ASSERT_EQ(donated.exitCode, 0) << donated.describe();
  EXPECT_NE(donated.out, runGraphc({"dump", "--lowered", kEnkf}).out) << "%xi is donated";
}

TEST(GraphcRun, TimesTheUploadTheRunsAndTheDownloadApartAndPrintsJson) {
  std::vector<std::string> args = {"run",      kEnkf, "--random-inputs", "--backend", "cpu",
                                   "--repeat", "3"};
  ToolResult text = runGraphc(args);
  args.push_back("--json");
  ToolResult json = runGraphc(args);
  ASSERT_EQ(text.exitCode, 0) << text.describe();
  ASSERT_EQ(json.exitCode, 0) << json.describe();
  EXPECT_THAT(text.out, testing::ContainsRegex("\nupload: [0-9.]+ ms\ntime per run: [0-9.]+ ms "
                                               "\\(median of 3, on arrays in the backend's "
                                               "memory\\)\ndownload: [0-9.]+ ms\n"));
  EXPECT_THAT(json.out,
              testing::StartsWith("{\"graph\": \"enkf\", \"backend\": \"cpu\", \"auto\": "
                                  "null, \"passes\": null, \"ranks\": null, \"inputs\": 3, "));
  EXPECT_THAT(json.out,
              testing::ContainsRegex("\"upload_ms\": [0-9.e-]+, \"run_ms\": \\{\"median\": "
                                     "[0-9.e-]+, \"min\": [0-9.e-]+, \"runs\": 3\\}, "
                                     "\"download_ms\": [0-9.e-]+, \"outputs\": \\["));
  EXPECT_EQ(json.out.back(), '\n');
  // The same checksums as the text, to every digit printed.
  std::vector<double> want = outputSums(text.out), got;
  std::regex sum("\"sum\": ([-+0-9.eE]+)");
  for (auto it = std::sregex_iterator(json.out.begin(), json.out.end(), sum);
       it != std::sregex_iterator(); ++it)
    got.push_back(std::stod((*it)[1]));
  ASSERT_FALSE(want.empty());
  EXPECT_EQ(got, want);
}
