//===- tools/Commands.h - The subcommands of `graphc` -----------*- C++ -*-===//
//
// `graphc` is a table of subcommands (tools/graphc.cpp). Each one lives in its own
// file, tools/<Name>Command.cpp, and is an entry point that gets the words after
// its name, writes its results to stdout and returns the exit status. Errors are
// thrown: graphc::Error (exit 1) or tools::UsageError (exit 2).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"

#include <string>

namespace graphc::tools {

/// Exit statuses shared by every subcommand.
enum ExitStatus : int { kExitOk = 0, kExitError = 1, kExitUsage = 2 };

/// One row of the subcommand table.
struct Command {
  const char* name;
  const char* summary; ///< one line for `graphc --help`
  int (*run)(llvm::ArrayRef<std::string> args);
};

/// The subcommands, in --help order.
llvm::ArrayRef<Command> commands();

/// `graphc dump`: parse, verify and print a module, or print it between passes
/// (tools/DumpCommand.cpp).
int runDump(llvm::ArrayRef<std::string> args);
/// `graphc opt`: run a pass pipeline and print the result (tools/OptCommand.cpp).
int runOpt(llvm::ArrayRef<std::string> args);
/// `graphc run`: run a graph with .npy or random inputs (tools/RunCommand.cpp).
int runRun(llvm::ArrayRef<std::string> args);

} // namespace graphc::tools
