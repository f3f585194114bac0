//===- tools/ShardFlags.h - The sharding flags of opt, dump and run -*- C++ -*-===//
//
// --ranks N, --split A,B,... and --rank R: the program rank R of N runs with the
// parameters split along those axes (docs/sharding.md). `graphc opt` and `dump`
// print that program; `graphc run` runs the N ranks, in this process or, with
// --connect ADDR, as rank R of N processes. The accessors check the flags and throw
// UsageError for one given without what it needs, or a bad number.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tools/ArgParser.h"

#include <string>
#include <vector>

namespace graphc::tools {

/// The sharding flags of a command.
class ShardFlags {
public:
  /// What the flags are for: printing one rank's program, or running the ranks
  /// (which adds --connect).
  enum class Use { Print, Run };

  /// Declares the flags of `use` on `parser`.
  void declare(ArgParser& parser, Use use);

  /// True when --ranks was given. Throws UsageError when another of the flags was
  /// given without it.
  bool given() const;
  /// --ranks: at least 1.
  int ranks() const;
  /// --split: one axis per parameter, -1 for a parameter every rank holds whole;
  /// empty when not given.
  std::vector<int> axes() const;
  /// --rank (default 0), below ranks(). For `run`, --rank needs --connect.
  int rank() const;
  /// --connect, or "".
  const std::string& connect() const { return connect_; }

private:
  Use use_ = Use::Print;
  std::string ranks_, split_, rank_, connect_;
};

} // namespace graphc::tools
