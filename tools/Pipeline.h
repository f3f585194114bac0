//===- tools/Pipeline.h - Pass pipelines of opt and dump ------*- C++ -*-===//
//
// `graphc opt` and `graphc dump --after=PASS` both run a pass pipeline over every
// graph of a module. PipelineFlags declares their shared flags (--passes,
// --verify-each, --facts, --derive, --wrt, --batch, and --ranks, --split, --rank, which
// shard the result), turns them into passes::PipelineOptions and runs the passes;
// printGraphText prints a graph with or without its proven structure.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/PassManager.h"
#include "tools/ArgParser.h"
#include "tools/ShardFlags.h"

#include <functional>
#include <string>
#include <vector>

namespace graphc::tools {

/// The pipeline flags shared by `graphc opt` and `graphc dump`.
class PipelineFlags {
public:
  /// Called with each input graph before its passes run.
  using BeforeGraph = std::function<void(const ir::Graph&)>;

  /// Declares --passes, --verify-each, --facts, --derive, --wrt, --batch, --ranks,
  /// --split and --rank on `parser`.
  void declare(ArgParser& parser);

  /// The graphs of `module` as --derive and --batch ask: first the derivative graph
  /// (passes/Derivative.h) with respect to the --wrt parameters, then batched
  /// (passes/Batch.h: every parameter and output gets a leading batch axis); `module`
  /// itself without them. Throws UsageError for a bad mode or batch size.
  ir::Module transformed(ir::Module module) const;

  /// True when --passes was given.
  bool passesGiven() const { return !passes_.empty(); }
  /// True when --facts was given.
  bool facts() const { return facts_; }
  /// The passes to run: those of --passes, or the default pipeline. Throws
  /// UsageError naming an unknown pass and listing the registered ones.
  std::vector<const passes::Pass*> pipeline() const;

  /// Runs the pipeline on every graph of `module` and returns the results, each the
  /// program of rank --rank when --ranks is given. Calls `beforeGraph` with each
  /// input graph, then `afterPass` after each pass.
  ir::Module run(const ir::Module& module, const BeforeGraph& beforeGraph = {},
                 const decltype(passes::PipelineOptions::afterPass)& afterPass = {}) const;

private:
  /// `g` as --ranks, --split and --rank shard it, or null without --ranks. Throws
  /// UsageError for a bad flag.
  std::unique_ptr<ir::Graph> sharded(const ir::Graph& g) const;

  std::string passes_;
  bool verifyEach_ = passes::PipelineOptions::kDebugBuild;
  bool facts_ = false;
  std::string derive_;
  std::string wrt_;
  std::string batch_;
  ShardFlags shard_;
};

/// The graphs of `module` batched `batchText` ways (passes/Batch.h), or `module`
/// itself for an empty `batchText`: what --batch N does. Throws UsageError when
/// the batch size is not a positive number.
ir::Module batchedModule(ir::Module module, llvm::StringRef batchText);

/// The passes named in `spec` ("a,b,c"). Throws UsageError naming an unknown pass
/// and listing the registered ones.
std::vector<const passes::Pass*> parsePassList(llvm::StringRef spec);

/// "canonicalize,lower-linalg,canonicalize": the names of `pipeline`.
std::string pipelineSpelling(llvm::ArrayRef<const passes::Pass*> pipeline);

/// "  canonicalize  fold constants, ..." — one line per registered pass, for --help.
std::string describePasses();

/// The text of `g`, with each node's proven structure as a trailing comment when
/// `facts` is set (`// spd`).
std::string printGraphText(const ir::Graph& g, bool facts);
/// The text of every graph of `m`, separated by blank lines (see printGraphText).
std::string printModuleText(const ir::Module& m, bool facts);

} // namespace graphc::tools
