//===- tests/tools/RunTool.h - Run the graphc binary from a test -*- C++ -*-===//
//
// runGraphc() runs the `graphc` binary built alongside the tests (runProgram() any
// other) with the given arguments and standard input, and returns its exit status
// and output. A run that takes longer than a time limit is killed (SIGALRM), so a
// hang fails the test instead of stalling ctest.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace graphc::testing {

/// What a run of the binary produced.
struct ToolResult {
  int exitCode = -1; ///< the exit status, or -1 when killed by a signal
  int signal = 0;    ///< the terminating signal, 0 when it exited
  std::string out;   ///< standard output
  std::string err;   ///< standard error

  /// "exit 1, stderr: ..." for assertion messages.
  std::string describe() const;
};

/// Runs `graphc args...` with `input` on standard input; with `stackBytes`, under
/// that stack limit (RLIMIT_STACK, which sets its threads' stacks too).
ToolResult runGraphc(const std::vector<std::string>& args, const std::string& input = "",
                     unsigned timeoutSeconds = 30, size_t stackBytes = 0);

/// Runs the program at `path` as runGraphc() runs graphc.
ToolResult runProgram(const std::string& path, const std::vector<std::string>& args,
                      const std::string& input = "", unsigned timeoutSeconds = 30,
                      size_t stackBytes = 0);

/// The `sum=` checksums of the output lines that `graphc run` printed in `out`.
std::vector<double> outputSums(const std::string& out);

/// The whole contents of the file at `path` ("" when it cannot be read).
std::string readFile(const std::string& path);

/// The repository root (GRAPHC_SOURCE_DIR) joined with `relative`.
std::string sourcePath(const std::string& relative);

} // namespace graphc::testing
