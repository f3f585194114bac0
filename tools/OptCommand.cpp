//===- tools/OptCommand.cpp - `graphc opt` ---------------------------------===//
//
// Parses and verifies a .gir module, runs a pass pipeline over each of its graphs
// (the default pipeline unless --passes names one) and prints the result in the
// text format. --facts adds each node's proven structure as a trailing comment,
// which shows why a solve was lowered the way it was. --batch N batches each graph
// N ways along a new leading axis (passes/Batch.h) before the passes.
//
//===----------------------------------------------------------------------===//
#include "tools/ArgParser.h"
#include "tools/Commands.h"
#include "tools/Input.h"
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

  std::optional<std::string> file = parser.parseOneFile(args);
  if (!file) {
    fmt::print("{}", parser.help());
    return kExitOk;
  }
  flags.pipeline(); // reject a bad --passes before reading the input
  fmt::print("{}", printModuleText(flags.run(flags.transformed(loadModule(*file))), flags.facts()));
  return kExitOk;
}

} // namespace graphc::tools
