//===- tools/graphc.cpp - The `graphc` command ----------------------------===//
//
// `graphc <command> [options] [args]`: looks the command up in the table below and
// runs it; `graphc --version` prints the version and the backends of the build.
// This file owns the exit statuses: 0 success, 1 an error in the input or while
// running (printed as `file:line:col: error: ...` where the position is known), 2 a
// usage error.
//
//===----------------------------------------------------------------------===//
#include "tools/ArgParser.h"
#include "tools/Commands.h"

#include "runtime/Backends.h"
#include "support/Error.h"

#include <cstdio>
#include <exception>
#include <fmt/format.h>
#include <vector>

namespace graphc::tools {

llvm::ArrayRef<Command> commands() {
  static const Command table[] = {
      {"dump", "parse, verify and print a .gir file (text or Graphviz), or between passes",
       runDump},
      {"opt", "run passes on a .gir file and print the result", runOpt},
      {"run", "run a graph on a backend with .npy or random inputs", runRun},
  };
  return table;
}

namespace {

/// `graphc --version`: "graphc 0.1.0", then each backend and whether it runs here.
std::string version() {
  std::string out = fmt::format("graphc {}\nbackends:\n", GRAPHC_VERSION);
  for (const BackendInfo& b : knownBackends())
    out += fmt::format("  {:<12} {}{}\n", b.name, b.summary,
                       b.unavailable.empty() ? "" : "; cannot run here: " + b.unavailable);
  return out;
}

std::string usage() {
  std::string out = "usage: graphc <command> [options] [args]\n\n"
                    "graphc compiles and runs graphs of dense array math (.gir files).\n\n"
                    "commands:\n";
  for (const Command& c : commands())
    out += fmt::format("  {:<8}  {}\n", c.name, c.summary);
  return out + "\nRun 'graphc <command> --help' for the options of a command, 'graphc --version'\n"
               "for the version and the backends of this build.\n";
}

const Command* findCommand(llvm::StringRef name) {
  for (const Command& c : commands())
    if (name == c.name)
      return &c;
  return nullptr;
}

int usageError(llvm::StringRef command, llvm::StringRef message) {
  fmt::print(stderr, "{}: error: {}\nRun '{} --help' for usage.\n", command.str(), message.str(),
             command.str());
  return kExitUsage;
}

int run(const std::vector<std::string>& args) {
  if (args.empty())
    return fmt::print(stderr, "{}", usage()), kExitUsage;
  if (args[0] == "-h" || args[0] == "--help" || args[0] == "help")
    return fmt::print("{}", usage()), kExitOk;
  if (args[0] == "--version")
    return fmt::print("{}", version()), kExitOk;
  const Command* command = findCommand(args[0]);
  if (!command)
    return usageError("graphc", fmt::format("unknown command '{}'", args[0]));
  std::string name = fmt::format("graphc {}", command->name);
  try {
    return command->run(llvm::ArrayRef(args).drop_front());
  } catch (const UsageError& e) {
    return usageError(name, e.what());
  } catch (const Error& e) {
    // Located errors already read "file:line:col: error: ..."; others get the command.
    fmt::print(stderr, "{}{}\n", e.loc().valid() ? "" : name + ": ", e.what());
    return kExitError;
  }
}

} // namespace
} // namespace graphc::tools

int main(int argc, char** argv) {
  try {
    return graphc::tools::run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    fmt::print(stderr, "graphc: internal error: {}\n", e.what());
  } catch (...) {
    fmt::print(stderr, "graphc: internal error\n");
  }
  return graphc::tools::kExitError;
}
