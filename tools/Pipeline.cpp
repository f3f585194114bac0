//===- tools/Pipeline.cpp - Pass pipelines of opt and dump ----------------===//
#include "tools/Pipeline.h"

#include "ir/Printer.h"
#include "passes/Batch.h"
#include "passes/Derivative.h"
#include "passes/Shard.h"
#include "passes/Structure.h"
#include "support/Error.h"

#include <algorithm>
#include <fmt/format.h>

namespace graphc::tools {

std::vector<const passes::Pass*> parsePassList(llvm::StringRef spec) {
  try {
    return passes::parsePipeline(spec);
  } catch (const Error& e) {
    throw UsageError(e.message()); // a bad pass name, like any bad option value
  }
}

std::string pipelineSpelling(llvm::ArrayRef<const passes::Pass*> pipeline) {
  std::vector<std::string> names;
  for (const passes::Pass* p : pipeline)
    names.push_back(p->name.str());
  return fmt::format("{}", fmt::join(names, ","));
}

void PipelineFlags::declare(ArgParser& parser) {
  parser.option("passes", "A,B,...",
                fmt::format("the passes to run, in order (default: {})",
                            pipelineSpelling(passes::defaultPipeline())),
                &passes_);
  parser.flag("verify-each",
              fmt::format("verify the graph after every pass ({} by default in this build)",
                          verifyEach_ ? "on" : "off"),
              &verifyEach_);
  parser.flag("facts", "print each node's proven structure as a comment (// spd)", &facts_);
  parser.option("derive", "MODE",
                "replace each graph by its derivative graph first: jvp (tangents in, "
                "tangents out), vjp (cotangents in, cotangents out) or grad (of the first, "
                "scalar output)",
                &derive_);
  parser.option("wrt", "A,B,...",
                "with --derive: the parameters to differentiate (default: every "
                "floating-point one)",
                &wrt_);
  parser.option("batch", "N",
                "batch each graph N ways first: every parameter and output gets a leading "
                "axis of size N",
                &batch_);
  shard_.declare(parser, ShardFlags::Use::Print);
}

std::unique_ptr<ir::Graph> PipelineFlags::sharded(const ir::Graph& g) const {
  if (!shard_.given())
    return nullptr;
  return std::move(passes::shardGraph(g, shard_.axes(), shard_.ranks(), shard_.rank()).graph);
}

/// The modes of --derive.
constexpr std::pair<const char*, passes::DerivativeMode> kDeriveModes[] = {
    {"jvp", passes::DerivativeMode::Jvp},
    {"vjp", passes::DerivativeMode::Vjp},
    {"grad", passes::DerivativeMode::Grad},
};

ir::Module PipelineFlags::transformed(ir::Module module) const {
  if (derive_.empty() && !wrt_.empty())
    throw UsageError("--wrt needs --derive");
  if (!derive_.empty()) {
    const auto* mode =
        llvm::find_if(kDeriveModes, [&](const auto& m) { return derive_ == m.first; });
    if (mode == std::end(kDeriveModes))
      throw UsageError(fmt::format("--derive '{}' is not jvp, vjp or grad", derive_));
    llvm::SmallVector<llvm::StringRef, 4> parts;
    llvm::StringRef(wrt_).split(parts, ',', -1, /*KeepEmpty=*/false);
    std::vector<std::string> names(parts.begin(), parts.end());
    for (auto& g : module.graphs) {
      // Without --wrt: every floating-point parameter.
      std::vector<unsigned> wrt = passes::paramIndices(*g, names);
      if (names.empty())
        llvm::erase_if(wrt, [&](unsigned i) { return !ir::isFloat(g->params()[i]->type().dtype); });
      g = passes::derivative(*g, mode->second, wrt);
    }
  }
  return batchedModule(std::move(module), batch_);
}

ir::Module batchedModule(ir::Module module, llvm::StringRef batchText) {
  if (batchText.empty())
    return module;
  int64_t n = 0;
  if (batchText.getAsInteger(10, n) || n < 1)
    throw UsageError(fmt::format("--batch '{}' is not a positive number", batchText.str()));
  for (auto& g : module.graphs)
    g = passes::batchGraph(*g, n);
  return module;
}

std::vector<const passes::Pass*> PipelineFlags::pipeline() const {
  return passes_.empty() ? passes::defaultPipeline() : parsePassList(passes_);
}

ir::Module PipelineFlags::run(const ir::Module& module, const BeforeGraph& beforeGraph,
                              const decltype(passes::PipelineOptions::afterPass)& afterPass) const {
  std::vector<const passes::Pass*> passes = pipeline();
  passes::PipelineOptions options;
  options.verifyEach = verifyEach_;
  options.afterPass = afterPass;
  ir::Module out;
  for (const auto& g : module.graphs) {
    if (beforeGraph)
      beforeGraph(*g);
    out.graphs.push_back(passes::runPipeline(*g, passes, options));
    if (std::unique_ptr<ir::Graph> rank = sharded(*out.graphs.back()))
      out.graphs.back() = std::move(rank);
  }
  return out;
}

std::string describePasses() {
  size_t width = 0;
  for (const passes::Pass& p : passes::registeredPasses())
    width = std::max(width, p.name.size());
  std::vector<std::string> lines;
  for (const passes::Pass& p : passes::registeredPasses())
    lines.push_back(fmt::format("  {:<{}}  {}", p.name.str(), width, p.summary.str()));
  return fmt::format("{}", fmt::join(lines, "\n"));
}

std::string printGraphText(const ir::Graph& g, bool facts) {
  return facts ? passes::printWithStructure(g) : ir::printGraph(g);
}

std::string printModuleText(const ir::Module& m, bool facts) {
  std::string out;
  for (const auto& g : m.graphs)
    out += (out.empty() ? "" : "\n") + printGraphText(*g, facts);
  return out;
}

} // namespace graphc::tools
