//===- tests/tools/OptDumpTest.cpp - `graphc opt` and `dump --after` ------===//
//
// Runs the built binary on examples/enkf.gir (the EnKF update, whose C_yy + R is
// SPD) and checks that `graphc opt` lowers the solve to a Cholesky with an LU
// fallback, that --passes, --facts and --verify-each behave, that `graphc dump
// --after=PASS|all` prints one block per pass of the pipeline under a header with
// the pass's counters, and that GRAPHC_LOG=passes reports the counters on stderr.
// Expected pass names and summaries come from the pass registry, so a new pass
// needs no test edit. `graphc dump --lowered` prints the lowered program, `--cuda`
// the generated kernels, `--fusion` the fusion groups and why edges are not fused.
//
//===----------------------------------------------------------------------===//
#include "RunTool.h"

#include "passes/PassManager.h"

#include "llvm/ADT/StringRef.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <sstream>

using namespace graphc::testing;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

namespace {

const std::string kEnkf = sourcePath("examples/enkf.gir");

/// The lines of `text` that start with `prefix`.
std::vector<std::string> linesStartingWith(const std::string& text, llvm::StringRef prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (llvm::StringRef(line).startswith(prefix))
      out.push_back(line);
  return out;
}

/// The line of `text` that defines `%name` (starts with "  %name = "), or "".
std::string definition(const std::string& text, const std::string& name) {
  std::vector<std::string> lines = linesStartingWith(text, "  " + name + " = ");
  return lines.empty() ? "" : lines.front();
}

/// Sets an environment variable for the life of the object (children inherit it).
struct ScopedEnv {
  std::string name;
  ScopedEnv(std::string n, const char* value) : name(std::move(n)) {
    setenv(name.c_str(), value, 1);
  }
  ~ScopedEnv() { unsetenv(name.c_str()); }
};

/// Runs graphc without GRAPHC_LOG, whatever the caller's environment says.
ToolResult runQuiet(const std::vector<std::string>& args, const std::string& input = "") {
  unsetenv("GRAPHC_LOG");
  return runGraphc(args, input);
}

/// What `graphc dump -` prints for `text`; fails the test when it does not parse.
std::string reparsed(const std::string& text) {
  ToolResult r = runQuiet({"dump", "-"}, text);
  EXPECT_EQ(r.exitCode, 0) << r.describe();
  return r.out;
}

/// "  canonicalize  fold ..." rows for every registered pass are in `help`.
void expectListsPasses(const std::string& help) {
  ASSERT_FALSE(graphc::passes::registeredPasses().empty());
  for (const graphc::passes::Pass& p : graphc::passes::registeredPasses())
    EXPECT_THAT(help, testing::ContainsRegex("\n  " + p.name.str() + " +" + p.summary.str()))
        << p.name.str();
}

/// The header of a `dump --after` block for `pass`: "// ----- after NAME: ".
std::string afterHeader(llvm::StringRef pass) {
  return "// ----- after " + pass.str() + ": ";
}

} // namespace

TEST(GraphcOpt, HelpExplainsAndListsPasses) {
  ToolResult r = runQuiet({"opt", "--help"});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_THAT(r.out, StartsWith("usage: graphc opt [options] FILE"));
  for (const char* flag : {"--passes=A,B,...", "--verify-each", "--facts"})
    EXPECT_THAT(r.out, HasSubstr(flag));
  expectListsPasses(r.out);
  EXPECT_THAT(runQuiet({"--help"}).out, HasSubstr("\n  opt "));
}

TEST(GraphcOpt, DefaultPipelineLowersTheSolveToCholesky) {
  ToolResult r = runQuiet({"opt", kEnkf});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, StartsWith("graph @enkf("));
  EXPECT_THAT(r.out, testing::ContainsRegex(
                         " = cholesky %[0-9a-z_]+ \\{fallback, upper\\} : f64\\[6,6\\]"));
  EXPECT_THAT(r.out, HasSubstr(" = triangular_solve "));
  EXPECT_THAT(r.out, Not(HasSubstr(" = solve ")));
  EXPECT_THAT(r.out, Not(HasSubstr("//"))) << "no facts unless asked";

  // The output is .gir text: dumping it gives it back.
  EXPECT_EQ(reparsed(r.out), r.out);
}

TEST(GraphcOpt, CanonicalizeAloneKeepsTheSolve) {
  ToolResult r = runQuiet({"opt", "--passes=canonicalize", kEnkf});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_THAT(r.out, HasSubstr(" = solve "));
  EXPECT_THAT(r.out, Not(HasSubstr("cholesky")));
  // Spaced form, standard input.
  ToolResult spaced = runQuiet({"opt", "--passes", "canonicalize", "-"}, readFile(kEnkf));
  ASSERT_EQ(spaced.exitCode, 0) << spaced.describe();
  EXPECT_EQ(spaced.out, r.out);
}

TEST(GraphcOpt, UnknownPassIsAUsageErrorListingTheKnownOnes) {
  std::string known;
  for (const graphc::passes::Pass& p : graphc::passes::registeredPasses())
    known += (known.empty() ? "" : ", ") + p.name.str();
  ToolResult r = runQuiet({"opt", "--passes=canonicalize,frob", kEnkf});
  EXPECT_EQ(r.exitCode, 2) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("graphc opt: error: unknown pass 'frob' (known: " + known + ")"));
  EXPECT_THAT(r.err, HasSubstr("Run 'graphc opt --help' for usage."));
  EXPECT_EQ(r.out, "");
}

TEST(GraphcOpt, UsageAndInputErrors) {
  EXPECT_EQ(runQuiet({"opt"}).exitCode, 2);
  EXPECT_EQ(runQuiet({"opt", kEnkf, kEnkf}).exitCode, 2);
  EXPECT_EQ(runQuiet({"opt", "--verify-each=yes", kEnkf}).exitCode, 2);
  ToolResult bad =
      runQuiet({"opt", "-"}, "graph @g(%x: f64[2]) {\n  %y = frob %x\n  return %y\n}\n");
  EXPECT_EQ(bad.exitCode, 1) << bad.describe();
  EXPECT_THAT(bad.err, StartsWith("<stdin>:2:8: error: "));
}

TEST(GraphcOpt, FactsShowWhyTheSolveWasLowered) {
  ToolResult r = runQuiet({"opt", "--facts", kEnkf});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  // The Cholesky factors C_yy + R; that node must carry `spd`.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(" = cholesky (%[0-9a-z_]+) ")));
  std::string sum = definition(r.out, m[1]);
  EXPECT_THAT(sum, HasSubstr(" = add ")) << r.out;
  EXPECT_THAT(sum, testing::ContainsRegex("// .*\\bspd\\b")) << r.out;
  // The facts are comments: the text still parses, to the same graph as without them.
  EXPECT_EQ(reparsed(r.out), runQuiet({"opt", kEnkf}).out);
}

/// With --facts, each graph follows the counters of the passes that changed it:
/// W1b's covariances were centered, then its solve went through the inner system.
TEST(GraphcOpt, FactsShowWhatEachPassChanged) {
  ToolResult r = runQuiet({"opt", "--facts", sourcePath("examples/enkf_orig.gir")});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_THAT(r.out, StartsWith("// passes on @enkf_orig:\n// center: centered 2\n"));
  EXPECT_THAT(r.out, HasSubstr("\n// lower-linalg: syrk 1, inner-system 1\ngraph @enkf_orig("));
  EXPECT_THAT(r.out, Not(HasSubstr("matmul-chains:"))) << "passes that changed nothing";
  EXPECT_EQ(reparsed(r.out), runQuiet({"opt", sourcePath("examples/enkf_orig.gir")}).out);
}

TEST(GraphcOpt, VerifyEachIsAccepted) {
  ToolResult r = runQuiet({"opt", "--verify-each", kEnkf});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_EQ(r.out, runQuiet({"opt", kEnkf}).out);
  EXPECT_EQ(runQuiet({"dump", "--verify-each", "--after=all", kEnkf}).exitCode, 0);
}

TEST(GraphcOpt, EveryGraphOfAModule) {
  const std::string two = "graph @a(%x: f64[2]) {\n  %y = neg %x\n  %z = neg %y\n  return %z\n}\n"
                          "graph @b(%x: f64[2]) {\n  return %x\n}\n";
  ToolResult r = runQuiet({"opt", "-"}, two);
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_THAT(r.out, HasSubstr("graph @a("));
  EXPECT_THAT(r.out, HasSubstr("\n\ngraph @b("));
  EXPECT_THAT(r.out, Not(HasSubstr("neg"))) << "double negation folds away";
}

TEST(GraphcOpt, LogSwitchPrintsTheCountersOnStderr) {
  ToolResult quiet = runQuiet({"opt", kEnkf});
  EXPECT_EQ(quiet.err, "");
  ScopedEnv log("GRAPHC_LOG", "passes");
  ToolResult r = runGraphc({"opt", kEnkf});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_EQ(r.out, quiet.out) << "logging goes to stderr only";
  std::vector<std::string> lines = linesStartingWith(r.err, "[graphc] @enkf: ");
  std::vector<const graphc::passes::Pass*> pipeline = graphc::passes::defaultPipeline();
  ASSERT_EQ(lines.size(), pipeline.size()) << r.err;
  for (size_t i = 0; i < lines.size(); ++i)
    EXPECT_THAT(lines[i], StartsWith("[graphc] @enkf: " + pipeline[i]->name.str() + ": "));
  EXPECT_THAT(r.err, testing::ContainsRegex("lower-linalg: [a-z -]+ [1-9]"))
      << "lower-linalg counts what it lowered";
}

TEST(GraphcDump, AfterAllPrintsABlockPerPassInOrder) {
  ToolResult r = runQuiet({"dump", "--after=all", kEnkf});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  std::vector<std::string> headers = linesStartingWith(r.out, "// -----");
  std::vector<const graphc::passes::Pass*> pipeline = graphc::passes::defaultPipeline();
  ASSERT_EQ(headers.size(), pipeline.size() + 2) << r.out;
  EXPECT_EQ(headers[0], "// ----- input -----");
  EXPECT_EQ(headers.back(), "// ----- lowered -----");
  EXPECT_THAT(r.out.substr(r.out.find(headers.back())), HasSubstr("\nprogram @enkf("));
  for (size_t i = 0; i < pipeline.size(); ++i) {
    EXPECT_THAT(headers[i + 1], StartsWith(afterHeader(pipeline[i]->name)));
    EXPECT_THAT(headers[i + 1], testing::EndsWith(" -----"));
  }
  EXPECT_EQ(linesStartingWith(r.out, "graph @enkf(").size(), headers.size() - 1);
  EXPECT_THAT(r.out, StartsWith("// ----- input -----\ngraph @enkf("));
  // The solve is there before lower-linalg and gone after it.
  size_t lowered = r.out.find(afterHeader("lower-linalg"));
  ASSERT_NE(lowered, std::string::npos);
  EXPECT_THAT(r.out.substr(0, lowered), HasSubstr(" = solve "));
  EXPECT_THAT(r.out.substr(lowered), Not(HasSubstr(" = solve ")));
  EXPECT_THAT(r.out.substr(lowered), HasSubstr("{fallback, upper}"));
}

TEST(GraphcDump, AfterOnePassPrintsOnlyItsBlock) {
  ToolResult r = runQuiet({"dump", "--after=lower-linalg", kEnkf});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  std::vector<std::string> headers = linesStartingWith(r.out, "// -----");
  ASSERT_EQ(headers.size(), 1u) << r.out;
  EXPECT_THAT(headers[0], StartsWith(afterHeader("lower-linalg")));
  EXPECT_THAT(headers[0], Not(HasSubstr("no change")));
  EXPECT_THAT(r.out, StartsWith(headers[0] + "\ngraph @enkf("));
  // A single block parses, and is what opt prints after the same passes.
  EXPECT_EQ(reparsed(r.out), runQuiet({"opt", "--passes=canonicalize,lower-linalg", kEnkf}).out);
}

TEST(GraphcDump, AfterAPassThatRunsTwicePrintsBoth) {
  ToolResult r =
      runQuiet({"dump", "--after=canonicalize", "--passes=canonicalize,canonicalize", kEnkf});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  std::vector<std::string> headers = linesStartingWith(r.out, "// -----");
  ASSERT_EQ(headers.size(), 2u) << r.out;
  EXPECT_EQ(headers[1], afterHeader("canonicalize") + "no change -----") << "a fixed point";
}

TEST(GraphcDump, HelpDescribesAfter) {
  ToolResult r = runQuiet({"dump", "--help"});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_THAT(r.out, HasSubstr("--after=PASS"));
  expectListsPasses(r.out);
}

TEST(GraphcDump, LoweredPrintsTheProgramAndItsMemoryPlan) {
  ToolResult r = runQuiet({"dump", "--lowered", kEnkf});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_THAT(r.out, StartsWith("program @enkf("));
  EXPECT_THAT(r.out, HasSubstr(": syrk {transpose} (")) << "the inner system's Gram matrix";
  EXPECT_THAT(r.out, HasSubstr(": cholesky {fallback, upper} ("));
  EXPECT_THAT(r.out, HasSubstr(": fused["));
  EXPECT_THAT(r.out, Not(HasSubstr(" donated")));
  EXPECT_EQ(linesStartingWith(r.out, "  memory: peak ").size(), 1u) << r.out;

  // Donating y lets the step centering it write Yc over it.
  ToolResult donated = runQuiet({"dump", "--lowered", "--donate=y", kEnkf});
  ASSERT_EQ(donated.exitCode, 0) << donated.describe();
  EXPECT_THAT(donated.out, HasSubstr("%y: f64[6,6] donated"));
  EXPECT_THAT(donated.out, HasSubstr("in place of %y)"));
}

TEST(GraphcDump, LoweredForTheGpuFusesSmallCholeskySolves) {
  // W5's shape: solve(X X'/n + 0.1 I, b) for 50 matrices of 16 x 16.
  std::string w5 = R"(
graph @w5(%x: f64[50,16,32], %b: f64[50,16,1]) {
  %g = matmul %x, %x {transpose_b}
  %k = full {value=32.0} : f64[50,16,16]
  %c = div %g, %k
  %eye = eye : f64[50,16,16]
  %a = add %c, %eye
  %z = solve %a, %b
  return %z
})";
  ToolResult cpu = runQuiet({"dump", "--lowered", "-"}, w5);
  ASSERT_EQ(cpu.exitCode, 0) << cpu.describe();
  EXPECT_THAT(cpu.out, HasSubstr(": cholesky {fallback} ("));
  EXPECT_THAT(cpu.out, Not(HasSubstr("cholesky_solve")));
  ToolResult gpu = runQuiet({"dump", "--lowered", "--target=cuda", "-"}, w5);
  if (gpu.err.find("this build has no CUDA backend") != std::string::npos)
    GTEST_SKIP() << gpu.err;
  ASSERT_EQ(gpu.exitCode, 0) << gpu.describe();
  EXPECT_THAT(gpu.out, HasSubstr("step 0: cholesky_solve[syrk, full, div, eye, add, cholesky, "
                                 "triangular_solve, triangular_solve] {A = 0.03125 * X X' + 1 * "
                                 "I} (%x, %b) -> %z"));
  EXPECT_THAT(gpu.out, Not(HasSubstr("step 1:")));
  ToolResult alone = runQuiet({"dump", "--target=cuda", "-"}, w5);
  EXPECT_EQ(alone.exitCode, 2) << alone.describe();
  EXPECT_THAT(alone.err, HasSubstr("--target goes with --lowered"));
}

TEST(GraphcDump, LoweredRunsOnlyTheNamedPasses) {
  ToolResult r = runQuiet({"dump", "--lowered", "--passes=canonicalize", kEnkf});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_THAT(r.out, HasSubstr(": solve (")) << "without lower-linalg the solve stays LU";
  EXPECT_THAT(r.out, Not(HasSubstr("cholesky")));
}

TEST(GraphcDump, LoweredFlagMisuseIsAUsageError) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"dump", "--donate=xi", kEnkf},
        {"dump", "--lowered", "--after=all", kEnkf},
        {"dump", "--lowered", "--format=dot", kEnkf}}) {
    ToolResult r = runQuiet(args);
    EXPECT_EQ(r.exitCode, 2) << r.describe();
    EXPECT_THAT(r.err, HasSubstr("--"));
  }
}

TEST(GraphcDump, CudaPrintsTheSourceOfEachKernelStep) {
  const std::string layernorm = R"(graph @ln(%x: f32[8,16]) {
  %m = mean %x {axes=[1], keepdims}
  %mb = broadcast_to %m {shape=[8,16]}
  %xc = sub %x, %mb
  %sq = square %xc
  %v = mean %sq {axes=[1], keepdims}
  %vb = broadcast_to %v {shape=[8,16]}
  %y = div %xc, %vb
  return %y
}
)";
  ToolResult r = runQuiet({"dump", "--cuda", "-"}, layernorm);
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  std::vector<std::string> headers = linesStartingWith(r.out, "// ----- @ln step ");
  ASSERT_EQ(headers.size(), 1u) << r.out; // the mean and the variance: one kernel
  EXPECT_THAT(headers[0], HasSubstr("fused[mean, broadcast_to, sub, var"));
  EXPECT_THAT(r.out, HasSubstr("extern \"C\" __global__ void __launch_bounds__(BS) ln_step0("));
  // The same input prints the same source.
  EXPECT_EQ(runQuiet({"dump", "--cuda", "-"}, layernorm).out, r.out);

  ToolResult enkf = runQuiet({"dump", "--cuda", kEnkf});
  ASSERT_EQ(enkf.exitCode, 0) << enkf.describe();
  EXPECT_FALSE(linesStartingWith(enkf.out, "// ----- @enkf step ").empty());

  ToolResult misuse = runQuiet({"dump", "--cuda", "--lowered", kEnkf});
  EXPECT_EQ(misuse.exitCode, 2) << misuse.describe();
  EXPECT_THAT(misuse.err, HasSubstr("--cuda"));

  // --llvm: the cpu backend's LLVM IR of the same kernel, its functions per stage.
  ToolResult ir = runQuiet({"dump", "--llvm", "-"}, layernorm);
  ASSERT_EQ(ir.exitCode, 0) << ir.describe();
  ASSERT_EQ(linesStartingWith(ir.out, "; ----- @ln step ").size(), 1u) << ir.out;
  // The mean and the variance are one stage: the sums, the means, the squared
  // deviations, then the results; then the domain outputs.
  for (const char* f : {"@ln_step0_acc1(", "@ln_step0_means1(", "@ln_step0_dev1(",
                        "@ln_step0_finish1(", "@ln_step0_outputs("})
    EXPECT_THAT(ir.out, HasSubstr(std::string("define void ") + f));
  EXPECT_EQ(runQuiet({"dump", "--llvm", "-"}, layernorm).out, ir.out);
  EXPECT_EQ(runQuiet({"dump", "--llvm", "--cuda", kEnkf}).exitCode, 2);
}

TEST(GraphcDump, FusionPrintsEachNodesGroupAndWhyEdgesAreNotFused) {
  const std::string chain = R"(graph @g(%x: f64[16,16], %w: f64[16,16]) {
  %e = exp %x
  %t = tanh %e
  %p = matmul %t, %w
  %q = neg %p
  %s = sum %q {axes=[1]}
  return %s
}
)";
  ToolResult r = runQuiet({"dump", "--fusion", "--passes=none", "-"}, chain);
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  // The group each node's comment names, or -1 for a library call.
  auto groupOf = [&](const std::string& name) {
    std::string line = definition(r.out, name);
    std::smatch m;
    if (std::regex_search(line, m, std::regex("// group ([0-9]+)")))
      return std::stoi(m[1]);
    EXPECT_THAT(line, HasSubstr("// library")) << name << " in\n" << r.out;
    return -1;
  };
  EXPECT_EQ(groupOf("%e"), groupOf("%t"));
  EXPECT_EQ(groupOf("%p"), -1);
  EXPECT_EQ(groupOf("%q"), groupOf("%s"));
  EXPECT_NE(groupOf("%e"), groupOf("%q")) << "the matmul separates the two chains";
  EXPECT_THAT(definition(r.out, "%p"), HasSubstr("not fused with %t: matmul is a library call"));
  EXPECT_THAT(definition(r.out, "%q"), HasSubstr("not fused with %p: matmul is a library call"));
  EXPECT_THAT(definition(r.out, "%t"), Not(HasSubstr("not fused")));
  // The comments leave a graph that parses back to itself.
  EXPECT_EQ(reparsed(r.out), reparsed(chain));
  // The default pipeline runs first without --passes.
  ToolResult enkf = runQuiet({"dump", "--fusion", kEnkf});
  ASSERT_EQ(enkf.exitCode, 0) << enkf.describe();
  EXPECT_THAT(enkf.out, HasSubstr("cholesky"));
  for (const char* other : {"--lowered", "--cuda", "--after=all", "--format=dot"}) {
    ToolResult misuse = runQuiet({"dump", "--fusion", other, kEnkf});
    EXPECT_EQ(misuse.exitCode, 2) << other << ": " << misuse.describe();
    EXPECT_THAT(misuse.err, HasSubstr("--fusion")) << other;
  }
}

TEST(GraphcBatch, DumpPrintsTheBatchedGraph) {
  ToolResult r = runQuiet({"dump", "--batch", "3", kEnkf});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_THAT(r.out,
              StartsWith("graph @enkf(%xi: f64[3,6,6], %y: f64[3,6,6], %obs: f64[3,6,1]) {"));
  EXPECT_THAT(r.out, HasSubstr(" = solve ")) << "dump runs no passes";
  EXPECT_EQ(reparsed(r.out), r.out);
  // The batched text, dumped again without --batch, is the same graph.
  EXPECT_EQ(runQuiet({"dump", "-"}, r.out).out, r.out);
}

TEST(GraphcBatch, OptLowersTheBatchOfSolvesToOneCholesky) {
  ToolResult r = runQuiet({"opt", "--batch=4", kEnkf});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_THAT(r.out, testing::ContainsRegex(
                         " = cholesky %[0-9a-z_]+ \\{fallback, upper\\} : f64\\[4,6,6\\]"));
  EXPECT_THAT(r.out, Not(HasSubstr(" = solve ")));
  ToolResult lowered = runQuiet({"dump", "--lowered", "--batch", "4", kEnkf});
  ASSERT_EQ(lowered.exitCode, 0) << lowered.describe();
  EXPECT_THAT(lowered.out, HasSubstr("cholesky"));
}

TEST(GraphcBatch, BadBatchSizeIsAUsageError) {
  for (const char* bad : {"0", "-2", "x"}) {
    ToolResult r = runQuiet({"opt", std::string("--batch=") + bad, kEnkf});
    EXPECT_EQ(r.exitCode, 2) << bad << ": " << r.describe();
    EXPECT_THAT(r.err, HasSubstr(std::string("--batch '") + bad + "' is not a positive number"));
  }
  EXPECT_THAT(runQuiet({"dump", "--help"}).out, HasSubstr("--batch=N"));
}

TEST(GraphcOpt, DeriveVjpRoundTripsAndRuns) {
  ToolResult r = runQuiet({"opt", "--derive=vjp", "--wrt=xi,y", "--passes=none", kEnkf});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_THAT(r.out, StartsWith("graph @enkf_vjp(%xi: f64[6,6], %y: f64[6,6], %obs: f64[6,1], "
                                "%ct0: f64[6,6]) {"));
  EXPECT_EQ(reparsed(r.out), r.out);
  ToolResult run = runQuiet({"run", "-", "--random-inputs"}, r.out);
  ASSERT_EQ(run.exitCode, 0) << run.describe();
  // outputs: the update, then the cotangents of xi and y
  EXPECT_THAT(run.out, HasSubstr("out2: f64[6,6]"));
  // The derivative of the SPD solve reuses the primal's factorization after the passes.
  ToolResult opt = runQuiet({"opt", "--derive=grad", "-"},
                            "graph @g(%y: f64[5,5], %b: f64[5,2]) {\n"
                            "  %s = syrk %y\n  %i = eye : f64[5,5]\n  %a = add %s, %i\n"
                            "  %x = solve %a, %b\n  %m = mul %x, %x\n"
                            "  %l = sum %m {axes=[0,1]}\n  return %l\n}\n");
  ASSERT_EQ(opt.exitCode, 0) << opt.describe();
  EXPECT_EQ(linesStartingWith(opt.out, "  %").size() > 0, true);
  std::regex cholesky(" = cholesky ");
  EXPECT_EQ(std::distance(std::sregex_iterator(opt.out.begin(), opt.out.end(), cholesky),
                          std::sregex_iterator()),
            1)
      << opt.out;
}

TEST(GraphcOpt, DeriveErrorsNameTheInput) {
  ToolResult mode = runQuiet({"opt", "--derive=hessian", kEnkf});
  EXPECT_EQ(mode.exitCode, 2) << mode.describe();
  EXPECT_THAT(mode.err, HasSubstr("--derive 'hessian' is not jvp, vjp or grad"));
  ToolResult wrt = runQuiet({"opt", "--derive=jvp", "--wrt=zeta", kEnkf});
  EXPECT_EQ(wrt.exitCode, 1) << wrt.describe();
  EXPECT_THAT(wrt.err, HasSubstr("no parameter %zeta (parameters: %xi, %y, %obs)"));
  ToolResult integer = runQuiet({"opt", "--derive=jvp", "--wrt=k", "-"},
                                "graph @g(%x: f64[2],\n  %k: i64[2]) {\n  return %k\n}\n");
  EXPECT_EQ(integer.exitCode, 1) << integer.describe();
  EXPECT_THAT(integer.err, StartsWith("<stdin>:2:3: error: cannot differentiate @g with respect "
                                      "to %k (i64[2])"));
  ToolResult notScalar = runQuiet({"opt", "--derive=grad", kEnkf});
  EXPECT_EQ(notScalar.exitCode, 1) << notScalar.describe();
  EXPECT_THAT(notScalar.err, HasSubstr("output 0 is f64[6,6], not a floating-point scalar"));
}

TEST(GraphcShard, OptPrintsARanksProgramAndDumpItsAllReduceSteps) {
  // Ridge regression with its rows split: X'X and X'y are sums over the ranks.
  const std::string ridge = "graph @ridge(%x: f64[40,3], %y: f64[40,1]) {\n"
                            "  %g = syrk %x {transpose}\n  %xy = matmul %x, %y {transpose_a}\n"
                            "  %i = eye : f64[3,3]\n  %s = add %g, %i\n"
                            "  %w = solve %s, %xy\n  return %w\n}\n";
  ToolResult r = runQuiet({"opt", "--ranks=3", "--split=0,0", "--rank=2", "-"}, ridge);
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  // 40 rows over 3 ranks: 14, 13 and 13.
  EXPECT_THAT(r.out, StartsWith("graph @ridge(%x: f64[13,3], %y: f64[13,1]) {"));
  EXPECT_EQ(linesStartingWith(r.out, "  %").size() > 0, true);
  std::regex allReduce(" = all_reduce %[0-9a-z_]+ \\{reduction=\"sum\"\\} : f64\\[3,");
  EXPECT_EQ(std::distance(std::sregex_iterator(r.out.begin(), r.out.end(), allReduce),
                          std::sregex_iterator()),
            2)
      << r.out;
  EXPECT_EQ(reparsed(r.out), r.out);
  // One rank's program runs alone: its all_reduce over one rank is the identity.
  ToolResult run = runQuiet({"run", "-", "--random-inputs"}, r.out);
  EXPECT_EQ(run.exitCode, 0) << run.describe();
  ToolResult lowered = runQuiet({"dump", "--lowered", "--ranks=3", "--split=0,0", "-"}, ridge);
  ASSERT_EQ(lowered.exitCode, 0) << lowered.describe();
  EXPECT_THAT(lowered.out, HasSubstr(": all_reduce {reduction=\"sum\"} ("));
}

TEST(GraphcShard, BadRanksAndSplitsAreErrors) {
  ToolResult noRanks = runQuiet({"opt", "--split=0,0,0", kEnkf});
  EXPECT_EQ(noRanks.exitCode, 2) << noRanks.describe();
  EXPECT_THAT(noRanks.err, HasSubstr("--split and --rank need --ranks"));
  ToolResult rank = runQuiet({"opt", "--ranks=2", "--rank=2", "--split=0,0,0", kEnkf});
  EXPECT_EQ(rank.exitCode, 2) << rank.describe();
  EXPECT_THAT(rank.err, HasSubstr("--rank 2 of --ranks 2"));
  ToolResult count = runQuiet({"opt", "--ranks=2", "--split=0", kEnkf});
  EXPECT_EQ(count.exitCode, 1) << count.describe();
  EXPECT_THAT(count.err, HasSubstr("@enkf: 1 split axes given for 3 parameters"));
  // X X' with X's rows split needs every rank's rows.
  ToolResult outer = runQuiet({"opt", "--ranks=2", "--split=0", "-"},
                              "graph @g(%x: f64[8,3]) {\n  %s = syrk %x\n  return %s\n}\n");
  EXPECT_EQ(outer.exitCode, 1) << outer.describe();
  EXPECT_THAT(outer.err, HasSubstr("<stdin>:2:8: error: cannot shard syrk: its operand is split "
                                   "along the kept axis 0"));
}
