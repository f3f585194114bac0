//===- tools/ShardFlags.cpp - The sharding flags of opt, dump and run -----===//
#include "tools/ShardFlags.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <fmt/format.h>

namespace graphc::tools {
namespace {

/// `text` as a number of at least `least`; `what` names the flag in the error.
int number(llvm::StringRef text, const char* what, int least) {
  int n = 0;
  if (text.trim().getAsInteger(10, n) || n < least)
    throw UsageError(
        fmt::format("{} '{}' is not a number of at least {}", what, text.str(), least));
  return n;
}

} // namespace

void ShardFlags::declare(ArgParser& parser, Use use) {
  use_ = use;
  parser.option("ranks", "N",
                use == Use::Print
                    ? "after the passes, show the program one rank of N runs, with the "
                      "parameters split as --split says (docs/sharding.md)"
                    : "run the graph as N ranks, each on its share of the parameters --split "
                      "splits (threads of this process, or processes with --connect)",
                &ranks_);
  parser.option("split", "A,B,...",
                use == Use::Print
                    ? "with --ranks: per parameter, the axis split over the ranks, or -1 for "
                      "one every rank holds whole"
                    : "with --ranks: per parameter, the axis split over the ranks, or -1 for "
                      "one every rank holds whole (default with --batch: the batch axis)",
                &split_);
  parser.option("rank", "R",
                use == Use::Print ? "with --ranks: the rank whose program to show (default 0)"
                                  : "with --connect: this process's rank (default 0)",
                &rank_);
  if (use == Use::Run)
    parser.option("connect", "ADDR",
                  "with --ranks: run as one rank of N processes meeting at HOST:PORT or "
                  "unix:PATH (rank 0 listens there)",
                  &connect_);
}

bool ShardFlags::given() const {
  if (ranks_.empty() && (!split_.empty() || !rank_.empty() || !connect_.empty()))
    throw UsageError(use_ == Use::Print ? "--split and --rank need --ranks"
                                        : "--split, --rank and --connect need --ranks");
  return !ranks_.empty();
}

int ShardFlags::ranks() const {
  return number(ranks_, "--ranks", 1);
}

std::vector<int> ShardFlags::axes() const {
  llvm::SmallVector<llvm::StringRef, 8> parts;
  llvm::StringRef(split_).split(parts, ',', -1, /*KeepEmpty=*/false);
  std::vector<int> axes;
  for (llvm::StringRef p : parts)
    axes.push_back(number(p, "--split", -1));
  return axes;
}

int ShardFlags::rank() const {
  if (use_ == Use::Run && !rank_.empty() && connect_.empty())
    throw UsageError("--rank needs --connect: without it every rank runs in this process");
  int r = rank_.empty() ? 0 : number(rank_, "--rank", 0), n = ranks();
  if (r >= n)
    throw UsageError(fmt::format("--rank {} of --ranks {}", r, n));
  return r;
}

} // namespace graphc::tools
