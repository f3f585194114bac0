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

namespace graphc {

/// How compile() optimizes.
struct CompileOptions {
  /// The passes to run, "a,b,c"; empty runs the default pipeline, "none" runs none.
  std::string passes;
};

/// A compiled graph with its fallback.
class OptimizedExecutable final : public Executable {
public:
  OptimizedExecutable(const ir::Graph& original, std::unique_ptr<Executable> primary,
                      Backend& backend);

  llvm::StringRef backendName() const override { return primary_->backendName(); }
  /// How many runs fell back to the unlowered program.
  int fallbacks() const { return fallbacks_; }

protected:
  std::vector<Array> execute(llvm::ArrayRef<Array> inputs) override;

private:
  Backend& backend_;
  std::unique_ptr<Executable> primary_;
  std::unique_ptr<ir::Graph> unlowered_; ///< the graph the fallback compiles from
  std::unique_ptr<Executable> fallback_; ///< compiled on first use
  int fallbacks_ = 0;
};

/// Optimizes `g` and compiles it on `backend`. Throws graphc::Error for an unknown
/// pass or a graph the backend cannot run.
std::unique_ptr<OptimizedExecutable> compile(const ir::Graph& g, Backend& backend,
                                             const CompileOptions& options = {});

} // namespace graphc
