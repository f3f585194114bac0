//===- tools/DumpCommand.cpp - `graphc dump` -------------------------------===//
//
// Parses and verifies a .gir module and prints it again, in the text format (the
// canonical form: every type spelled out, one node per line) or as Graphviz DOT.
// With --after=PASS it runs the pass pipeline instead and prints each graph after
// every run of PASS (or after every pass, and the input first, with --after=all),
// each block under a comment line naming the pass and what it changed, so the
// output still parses.
//
//===----------------------------------------------------------------------===//
#include "tools/ArgParser.h"
#include "tools/Commands.h"
#include "tools/Input.h"
#include "tools/Pipeline.h"

#include "ir/Dot.h"

#include <fmt/format.h>

namespace graphc::tools {
namespace {

/// Throws UsageError unless `after` is "all" or a pass of `pipeline`.
void checkAfter(llvm::StringRef after, llvm::ArrayRef<const passes::Pass*> pipeline) {
  if (after == "all")
    return;
  const passes::Pass* pass = passes::findPass(after);
  if (!pass)
    parsePassList(after); // throws the unknown-pass error, listing the known passes
  if (!pass || !llvm::is_contained(pipeline, pass))
    throw UsageError(fmt::format("--after={}: the pipeline ({}) does not run it", after.str(),
                                 pipelineSpelling(pipeline)));
}

/// `graphc dump --after=PASS|all`, once the flags are checked.
void dumpAfter(const ir::Module& module, const PipelineFlags& flags, llvm::StringRef after) {
  bool all = after == "all", first = true;
  // `// ----- title -----` and the graph, after a blank line unless it is the first block.
  auto printBlock = [&](const std::string& title, const ir::Graph& g) {
    fmt::print("{}// ----- {} -----\n{}", first ? "" : "\n", title,
               printGraphText(g, flags.facts()));
    first = false;
  };
  flags.run(
      module,
      [&](const ir::Graph& g) {
        if (all)
          printBlock("input", g);
      },
      [&](const passes::Pass& pass, const ir::Graph& g, const passes::PassStats& stats) {
        if (all || pass.name == after)
          printBlock(fmt::format("after {}: {}", pass.name.str(), stats.str()), g);
      });
}

} // namespace

int runDump(llvm::ArrayRef<std::string> args) {
  std::string format = "text", after;
  PipelineFlags flags;
  ArgParser parser("graphc dump", "FILE",
                   "Parses and verifies the graphs in FILE ('-' reads standard input) and\n"
                   "prints them to standard output. With --after it runs the passes and\n"
                   "prints the graphs between them, each under a `// ----- after PASS: what\n"
                   "changed -----` line.\n\n"
                   "passes:\n" +
                       describePasses());
  parser.option("format", "FMT", "output format: text (the .gir format, default) or dot", &format,
                {"text", "dot"});
  parser.option("after", "PASS",
                "print the graphs after each run of PASS, or after every pass "
                "('all'; the input first)",
                &after);
  flags.declare(parser);

  std::optional<std::string> file = parser.parseOneFile(args);
  if (!file) {
    fmt::print("{}", parser.help());
    return kExitOk;
  }
  if (format == "dot" && (!after.empty() || flags.facts()))
    throw UsageError("--after and --facts print text, not --format=dot");
  if (after.empty() && flags.passesGiven())
    throw UsageError("--passes needs --after (or use 'graphc opt')");
  if (!after.empty())
    checkAfter(after, flags.pipeline()); // before reading the input

  ir::Module module = loadModule(*file);
  if (!after.empty())
    dumpAfter(module, flags, after);
  else
    fmt::print("{}",
               format == "dot" ? ir::printDot(module) : printModuleText(module, flags.facts()));
  return kExitOk;
}

} // namespace graphc::tools
