//===- passes/PassManager.h - Passes, pipelines and their reports -*- C++ -*-===//
//
// A pass is a named function from a graph to a new graph that reports what it
// changed as counters. Every pass is registered in one table (PassManager.cpp),
// which also spells the default pipeline. runPipeline() runs a list of passes,
// verifies after each one when asked (always in debug builds), calls an observer
// after each (for `graphc dump --after=...`), and logs the counters to stderr when
// GRAPHC_LOG names `passes`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace graphc::passes {

/// Named counters a pass reports ("folded": 3).
class PassStats {
public:
  /// Adds `n` to counter `what`.
  void count(llvm::StringRef what, int64_t n = 1);
  /// True when any counter is non-zero: the pass changed the graph.
  bool changed() const;
  /// "folded 3, simplified 2", or "no change".
  std::string str() const;

private:
  std::vector<std::pair<std::string, int64_t>> counters_;
};

/// A registered pass.
struct Pass {
  llvm::StringRef name;
  llvm::StringRef summary;
  std::unique_ptr<ir::Graph> (*run)(const ir::Graph&, PassStats&);
};

/// Every registered pass.
llvm::ArrayRef<Pass> registeredPasses();
/// The pass called `name`, or nullptr.
const Pass* findPass(llvm::StringRef name);
/// The passes graphc runs by default, in order.
std::vector<const Pass*> defaultPipeline();
/// Parses "a,b,c" ("none": no passes); throws graphc::Error naming an unknown pass and listing the
/// known.
std::vector<const Pass*> parsePipeline(llvm::StringRef spec);

/// How runPipeline behaves.
struct PipelineOptions {
  /// Run the verifier after each pass (on by default in debug builds).
  bool verifyEach = kDebugBuild;
  /// Called after each pass with the pass, its result and its counters.
  std::function<void(const Pass&, const ir::Graph&, const PassStats&)> afterPass;

#ifdef NDEBUG
  static constexpr bool kDebugBuild = false;
#else
  static constexpr bool kDebugBuild = true;
#endif
};

/// Runs `passes` in order on `g` and returns the final graph. Throws graphc::Error if a
/// verification fails, naming the pass that broke the graph.
std::unique_ptr<ir::Graph> runPipeline(const ir::Graph& g, llvm::ArrayRef<const Pass*> passes,
                                       const PipelineOptions& options = {});

} // namespace graphc::passes
