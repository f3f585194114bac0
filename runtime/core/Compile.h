//===- runtime/core/Compile.h - From a graph to an optimized executable -*- C++ -*-===//
//
// compile() is the one way user code turns a graph into something to run: it runs
// the pass pipeline (passes/PassManager.h), compiles the result on a backend, and
// keeps a fallback for the choices the compiler made on faith. When a step it chose
// fails at run time (a Cholesky of a matrix that is SPD in exact arithmetic but not
// numerically), the run is redone with the graph as it was before solve lowering
// (LU) and the switch is reported on stderr and counted. Each run tries the
// optimized program first. Results are never silently NaN.
//
// A graph batched by compile() (CompileOptions::batch) computes its items apart:
// when the chosen Cholesky fails on some items only, the backend finishes the
// others (ItemFallbackError, runtime/core/ItemFailures.h) and only the failed items are redone,
// each alone, with the unbatched graph before solve lowering (LU), written into their place in the
// outputs. So does a graph batched by hand whose items come apart along a leading axis
// (passes/Unbatch.h gives its item graph). That needs every chosen Cholesky to factor along
// the batch axis (ItemFallback::applies); otherwise the whole run is redone.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/core/Backend.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace graphc {

/// How compile() optimizes.
struct CompileOptions {
  /// The passes to run, "a,b,c"; empty runs the default pipeline, "none" runs none.
  std::string passes = {};
  /// When > 0, the graph is batched this many ways along a new leading axis
  /// (passes/Batch.h) before the passes run, so they see the whole batch; 0 compiles
  /// the graph as it is.
  int64_t batch = 0;
  /// With `batch`: per parameter, whether it gets the batch axis (unbatched ones are
  /// shared by every item); empty batches every parameter.
  std::vector<bool> batchedParams = {};
  /// When > 0, the optimized graph runs as this many ranks (passes/Shard.h,
  /// runtime/core/Sharded.h), each on its share of the parameters `splitAxes`
  /// splits: host threads on the cpu backend. 0 runs the graph as one program.
  int ranks = 0;
  /// With `ranks`: per parameter of the graph the passes see (batched when `batch` is
  /// set), the axis split over the ranks, or -1 for a parameter every rank gets whole.
  /// Empty with `batch`: the batched parameters are split along the batch axis.
  std::vector<int> splitAxes = {};
};

/// How the items of a batched graph are redone alone (see the file comment).
struct ItemFallback {
  /// The graph of one item, as given to compile().
  const ir::Graph* item = nullptr;
  /// The batch size and, per parameter, whether it has the batch axis.
  int64_t batch = 0;
  std::vector<bool> batched;

  /// True when every `cholesky {fallback}` of `optimized` (the batched graph after
  /// the passes) factors along the batch axis: its operand's first axis has length
  /// `batch` and it depends on a batched parameter.
  bool applies(const ir::Graph& optimized) const;
};

/// A compiled graph with its fallback.
class OptimizedExecutable final : public Executable {
public:
  /// `items`, when given (its `item` set), says how the items of a batched graph
  /// are redone alone; the whole run is redone otherwise.
  OptimizedExecutable(const ir::Graph& original, std::unique_ptr<Executable> primary,
                      Backend& backend, const ItemFallback& items = {});

  llvm::StringRef backendName() const override { return primary_->backendName(); }
  Device device() const override { return primary_->device(); }
  Array toDevice(const Array& a) const override { return primary_->toDevice(a); }
  Array toHost(const Array& a) const override { return primary_->toHost(a); }
  Array newOutput(size_t i) const override { return primary_->newOutput(i); }
  /// How many runs fell back to the unlowered program (whole or some items).
  int fallbacks() const { return fallbacks_; }
  /// How many batch items were redone alone (runs whose chosen Cholesky failed on
  /// some items only); those runs' other items kept the optimized results.
  int64_t itemFallbacks() const { return itemFallbacks_; }

protected:
  std::vector<Array> execute(llvm::ArrayRef<Array> inputs) override;
  void executeInto(llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs) override;
  /// Queues the run on the primary program and keeps its arrays: a deferred run
  /// that falls back is redone, with every run after it, when finishing.
  void enqueueRun(size_t run, llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs,
                  void* stream) override;
  std::optional<RunFailure> finishRuns() override;

private:
  /// The items the failure `e` of the primary program names when only they are
  /// redone (an ItemFallbackError along the batch axis), else null.
  const std::vector<int64_t>* itemsOf(const FallbackError& e) const;
  /// Reports on stderr that the primary program failed with `e`; counts it.
  void noteFallback(const FallbackError& e);
  /// The fallback program, compiled on first use.
  Executable& fallback();
  /// The program of one item before solve lowering, compiled on first use.
  Executable& itemFallback();
  /// Redoes items `items` of a run of the primary program into `outputs` alone:
  /// each item's inputs (the batched parameters' item, the shared ones whole)
  /// through itemFallback(), into that item of every output. A failure names the
  /// item.
  void redoItems(llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs,
                 llvm::ArrayRef<int64_t> items);

  struct Queued {
    std::vector<Array> inputs, outputs;
  };

  Backend& backend_;
  std::unique_ptr<Executable> primary_;
  std::unique_ptr<ir::Graph> unlowered_;     ///< the graph the fallback compiles from
  std::unique_ptr<Executable> fallback_;     ///< compiled on first use
  int64_t batch_ = 0;                        ///< with unloweredItem_: the batch size
  std::vector<bool> batched_;                ///< per parameter: has the batch axis
  std::unique_ptr<ir::Graph> unloweredItem_; ///< one item before solve lowering, or null
  std::unique_ptr<Executable> itemFallback_; ///< compiled on first use
  std::mutex compileMutex_;                  ///< guards the fallbacks' first compiles
  std::atomic<int> fallbacks_ = 0;
  std::atomic<int64_t> itemFallbacks_ = 0;
  std::vector<Queued> queued_; ///< the arrays of the runs enqueued since the last finish
};

/// One rank's program of a sharded run (compileRank).
struct RankProgram {
  std::unique_ptr<Executable> exe; ///< runs on the rank's shares, meeting the other ranks
  std::vector<int> paramAxes;      ///< per parameter: the axis split over the ranks, or -1
  std::vector<int> outputAxes;     ///< per output: the axis it is split along, or -1
};

/// `g` optimized as compile() optimizes it, then the program of rank `rank.rank` of
/// options.ranks (passes/Shard.h, split as options.splitAxes says) compiled with
/// backend.compileRank over `rank.comm`: for a process that runs one rank alone, one
/// process per rank on one host or several (a socketCommunicator, docs/sharding.md).
/// Its inputs are the rank's shares of the split parameters (passes::Share) and the
/// others whole; its outputs are the rank's shares and the replicated values. It has
/// no LU fallback: a chosen Cholesky that fails throws FallbackError on every rank
/// that factors it. Throws graphc::Error as compile() does, and when the
/// communicator does not have options.ranks ranks.
RankProgram compileRank(const ir::Graph& g, Backend& backend, const CompileOptions& options,
                        const RankOf& rank);

/// Optimizes `g` (batched first when `options.batch` > 0) and compiles it on
/// `backend`. Throws graphc::Error for an unknown pass, a bad batch size or
/// batchedParams, or a graph the backend cannot run.
std::unique_ptr<OptimizedExecutable> compile(const ir::Graph& g, Backend& backend,
                                             const CompileOptions& options = {});

} // namespace graphc
