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
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/core/Backend.h"

#include <memory>
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
};

/// A compiled graph with its fallback.
class OptimizedExecutable final : public Executable {
public:
  OptimizedExecutable(const ir::Graph& original, std::unique_ptr<Executable> primary,
                      Backend& backend);

  llvm::StringRef backendName() const override { return primary_->backendName(); }
  Device device() const override { return primary_->device(); }
  Array toDevice(const Array& a) const override { return primary_->toDevice(a); }
  Array toHost(const Array& a) const override { return primary_->toHost(a); }
  Array newOutput(size_t i) const override { return primary_->newOutput(i); }
  /// How many runs fell back to the unlowered program.
  int fallbacks() const { return fallbacks_; }

protected:
  std::vector<Array> execute(llvm::ArrayRef<Array> inputs) override;
  void executeInto(llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs) override;
  /// Queues the run on the primary program and keeps its arrays: a deferred run
  /// that falls back is redone, with every run after it, when finishing.
  void enqueueRun(size_t run, llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs,
                  void* stream) override;
  std::optional<RunFailure> finishRuns() override;

private:
  /// Reports on stderr that the primary program failed with `e`; counts it.
  void noteFallback(const FallbackError& e);
  /// The fallback program, compiled on first use.
  Executable& fallback();

  struct Queued {
    std::vector<Array> inputs, outputs;
  };

  Backend& backend_;
  std::unique_ptr<Executable> primary_;
  std::unique_ptr<ir::Graph> unlowered_; ///< the graph the fallback compiles from
  std::unique_ptr<Executable> fallback_; ///< compiled on first use
  int fallbacks_ = 0;
  std::vector<Queued> queued_; ///< the arrays of the runs enqueued since the last finish
};

/// Optimizes `g` (batched first when `options.batch` > 0) and compiles it on
/// `backend`. Throws graphc::Error for an unknown pass, a bad batch size or
/// batchedParams, or a graph the backend cannot run.
std::unique_ptr<OptimizedExecutable> compile(const ir::Graph& g, Backend& backend,
                                             const CompileOptions& options = {});

} // namespace graphc
