//===- tools/OptCommand.cpp - `graphc opt` ---------------------------------===//
//
// Parses and verifies a .gir module, runs a pass pipeline over each of its graphs
// (the default pipeline unless --passes names one) and prints the result in the
// text format. --facts adds each node's proven structure as a trailing comment,
// which shows why a solve was lowered the way it was, and before each graph the
// counters of the passes that changed it (`// lower-linalg: syrk 1, cholesky 1`).
// --batch N batches each graph N ways along a new leading axis (passes/Batch.h)
// before the passes.
//
//===----------------------------------------------------------------------===//
#include "tools/ArgParser.h"
#include "tools/Commands.h"
#include "tools/Input.h"
#include "tools/Output.h"
#include "tools/Pipeline.h"

#include <fmt/format.h>

namespace graphc::tools {

int runOpt(llvm::ArrayRef<std::string> args) {
  PipelineFlags flags;
  ArgParser parser("graphc opt", "FILE",
                   "Parses and verifies the graphs in FILE ('-' reads standard input), runs\n"
                   "the passes on each and prints the result in the .gir format.\n"
                   "GRAPHC_LOG=passes prints what each pass changed on standard error.\n\n"
                   "passes:\n" +
                       describePasses());
  flags.declare(parser);
  std::string output;
  declareOutput(parser, &output);

  std::optional<std::string> file = parser.parseOneFile(args);
  if (!file) {
    fmt::print("{}", parser.help());
    return kExitOk;
  }
  flags.pipeline(); // reject a bad --passes before reading the input
  Output out(output);
  ir::Module input = flags.transformed(loadModule(*file));
  if (!flags.facts()) {
    fmt::print(out.stream(), "{}", printModuleText(flags.run(input), false));
    out.commit();
    return kExitOk;
  }
  // With --facts, each graph follows a comment naming what each pass changed in it.
  std::vector<std::string> changes;
  ir::Module result = flags.run(
      input, [&](const ir::Graph&) { changes.emplace_back(); },
      [&](const passes::Pass& p, const ir::Graph&, const passes::PassStats& stats) {
        if (stats.changed())
          changes.back() += fmt::format("\n// {}: {}", p.name.str(), stats.str());
      });
  for (size_t i = 0; i < result.graphs.size(); ++i)
    fmt::print(out.stream(), "{}// passes on @{}:{}\n{}", i ? "\n" : "", result.graphs[i]->name(),
               changes[i].empty() ? " no change" : changes[i],
               printGraphText(*result.graphs[i], true));
  out.commit();
  return kExitOk;
}

} // namespace graphc::tools
