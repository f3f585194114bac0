//===- runtime/core/Compile.cpp - From a graph to an optimized executable -===//
#include "runtime/core/Compile.h"

#include "passes/PassManager.h"

#include <fmt/format.h>

namespace graphc {
namespace {

std::unique_ptr<ir::Graph> optimize(const ir::Graph& g, const std::string& spec) {
  if (spec == "none")
    return passes::runPipeline(g, {});
  return passes::runPipeline(g, spec.empty() ? passes::defaultPipeline()
                                             : passes::parsePipeline(spec));
}

} // namespace

OptimizedExecutable::OptimizedExecutable(const ir::Graph& original,
                                         std::unique_ptr<Executable> primary, Backend& backend)
    : Executable(Signature::of(original)), backend_(backend), primary_(std::move(primary)),
      unlowered_(optimize(original, "canonicalize")) {}

std::vector<Array> OptimizedExecutable::execute(llvm::ArrayRef<Array> inputs) {
  try {
    return primary_->run(inputs);
  } catch (const FallbackError& e) {
    std::string where = e.loc().valid() ? e.loc().str() + ": " : "";
    fmt::print(stderr, "{}warning: {}; @{} falls back to LU for this run\n", where, e.message(),
               signature().graphName);
    ++fallbacks_;
  }
  if (!fallback_)
    fallback_ = backend_.compile(*unlowered_);
  return fallback_->run(inputs);
}

std::unique_ptr<OptimizedExecutable> compile(const ir::Graph& g, Backend& backend,
                                             const CompileOptions& options) {
  std::unique_ptr<ir::Graph> optimized = optimize(g, options.passes);
  return std::make_unique<OptimizedExecutable>(g, backend.compile(*optimized), backend);
}

} // namespace graphc
