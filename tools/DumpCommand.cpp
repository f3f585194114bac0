//===- tools/DumpCommand.cpp - `graphc dump` -------------------------------===//
//
// Parses and verifies a .gir module and prints it again, in the text format (the
// canonical form: every type spelled out, one node per line) or as Graphviz DOT.
//
//===----------------------------------------------------------------------===//
#include "tools/ArgParser.h"
#include "tools/Commands.h"
#include "tools/Input.h"

#include "ir/Dot.h"
#include "ir/Printer.h"

#include <fmt/format.h>

namespace graphc::tools {

int runDump(llvm::ArrayRef<std::string> args) {
  std::string format = "text";
  ArgParser parser("graphc dump", "FILE",
                   "Parses and verifies the graphs in FILE ('-' reads standard input) and\n"
                   "prints them to standard output.");
  parser.option("format", "FMT", "output format: text (the .gir format, default) or dot", &format,
                {"text", "dot"});

  auto positionals = parser.parse(args);
  if (!positionals) {
    fmt::print("{}", parser.help());
    return kExitOk;
  }
  if (positionals->size() != 1)
    throw UsageError(positionals->empty() ? "missing input FILE" : "expected exactly one FILE");

  ir::Module module = loadModule(positionals->front());
  fmt::print("{}", format == "dot" ? ir::printDot(module) : ir::printModule(module));
  return kExitOk;
}

} // namespace graphc::tools
