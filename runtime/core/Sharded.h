//===- runtime/core/Sharded.h - A graph run as several ranks ----*- C++ -*-===//
//
// The executable compile() makes with CompileOptions::ranks: one program per rank
// (passes/Shard.h), each compiled by the backend's compileRank() and meeting the
// others through one Communicator. A run hands each rank its share of the split
// inputs (a view: rows [offset, offset + extent) of the split axis, passes::Share)
// and the replicated ones whole, runs the ranks at once (rank 0 on the calling
// thread, the others on threads of their own), and returns one logical array per
// output: a split output's shares put together along its axis, a replicated one
// from rank 0 (every rank holds the same bits).
//
// A failing rank aborts the others' all-reduces (they throw AbortedError); the run
// throws the error of the lowest rank that failed of its own, with the rank named
// ("rank 1 of 4: ..."), a FallbackError staying one so that compile()'s fallback
// redoes the run unsharded with LU.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/core/Backend.h"
#include "runtime/core/Collective.h"

#include <memory>
#include <vector>

namespace graphc {

/// Rank `rank`'s share of `a` along `axis` over `ranks` ranks (a view: rows
/// passes::Share::of(...) of that axis), or `a` itself for passes::kReplicated.
Array shareOf(const Array& a, int axis, int ranks, int rank);

/// A graph run as several ranks, each on its share of the inputs.
class ShardedExecutable final : public Executable {
public:
  /// `sig` is the whole graph's; `paramAxes` and `outputAxes` say which axis of each
  /// parameter and output is split (passes::kReplicated: none); `ranks` holds one
  /// executable per rank of `comm`, in rank order.
  ShardedExecutable(Signature sig, std::vector<int> paramAxes, std::vector<int> outputAxes,
                    std::shared_ptr<Communicator> comm,
                    std::vector<std::unique_ptr<Executable>> ranks);

  llvm::StringRef backendName() const override { return ranks_.front()->backendName(); }
  /// How many ranks run the graph.
  int ranks() const { return static_cast<int>(ranks_.size()); }

protected:
  std::vector<Array> execute(llvm::ArrayRef<Array> inputs) override;

private:
  /// Rank `rank`'s inputs: views of its shares and the replicated inputs whole.
  std::vector<Array> inputsOf(llvm::ArrayRef<Array> inputs, int rank) const;
  /// Output `o` put together from every rank's results.
  Array gather(const std::vector<std::vector<Array>>& results, size_t o) const;

  std::vector<int> paramAxes_, outputAxes_;
  std::shared_ptr<Communicator> comm_;
  std::vector<std::unique_ptr<Executable>> ranks_;
};

} // namespace graphc
