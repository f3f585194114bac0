//===- tools/Output.h - Where a command prints its result -----*- C++ -*-===//
//
// A command that prints a graph or a program writes it to an Output: standard
// output, or the file of `-o FILE` / `--output=FILE`. The file is checked when the
// Output is made, before anything is compiled: its directory must exist and be
// writable. The result goes to a temporary file beside it that replaces FILE only
// when the command succeeds (commit()), so a failing command leaves FILE as it was,
// and FILE may be the command's own input.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tools/ArgParser.h"

#include <cstdio>
#include <string>

namespace graphc::tools {

/// Standard output, or a file replaced when the command succeeds.
class Output {
public:
  /// Standard output for an empty `path` or "-"; otherwise a temporary file beside
  /// `path`. Throws graphc::Error naming `flag` and `path` when it cannot be made.
  Output(const std::string& path, const std::string& flag = "--output");
  /// Removes the temporary file unless commit() was called.
  ~Output();
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  /// Where to print.
  std::FILE* stream() const { return stream_; }
  /// Flushes, and moves the temporary file to the path. Throws graphc::Error when
  /// writing failed.
  void commit();

private:
  std::string path_, temp_, flag_;
  std::FILE* stream_ = stdout;
};

/// Declares `-o FILE` / `--output=FILE` on `parser`, into `*path`.
void declareOutput(ArgParser& parser, std::string* path);

} // namespace graphc::tools
