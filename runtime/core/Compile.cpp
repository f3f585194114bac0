//===- runtime/core/Compile.cpp - From a graph to an optimized executable -===//
#include "runtime/core/Compile.h"

#include "passes/Batch.h"
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

void OptimizedExecutable::noteFallback(const FallbackError& e) {
  std::string where = e.loc().valid() ? e.loc().str() + ": " : "";
  fmt::print(stderr, "{}warning: {}; @{} falls back to LU for this run\n", where, e.message(),
             signature().graphName);
  ++fallbacks_;
}

Executable& OptimizedExecutable::fallback() {
  if (!fallback_)
    fallback_ = backend_.compile(*unlowered_);
  return *fallback_;
}

std::vector<Array> OptimizedExecutable::execute(llvm::ArrayRef<Array> inputs) {
  try {
    return primary_->run(inputs);
  } catch (const FallbackError& e) {
    noteFallback(e);
  }
  return fallback().run(inputs);
}

void OptimizedExecutable::executeInto(llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs) {
  try {
    primary_->executeInto(inputs, outputs);
    return;
  } catch (const FallbackError& e) {
    noteFallback(e);
  }
  fallback().executeInto(inputs, outputs);
}

void OptimizedExecutable::enqueueRun(size_t run, llvm::ArrayRef<Array> inputs,
                                     llvm::ArrayRef<Array> outputs, void* stream) {
  primary_->enqueueRun(run, inputs, outputs, stream);
  queued_.push_back({inputs.vec(), outputs.vec()});
}

std::optional<Executable::RunFailure> OptimizedExecutable::finishRuns() {
  std::vector<Queued> queued = std::exchange(queued_, {});
  std::optional<RunFailure> failure = primary_->finishRuns();
  if (!failure)
    return std::nullopt;
  try {
    std::rethrow_exception(failure->error);
  } catch (const FallbackError& e) {
    noteFallback(e);
  } catch (const Error&) {
    return failure;
  }
  // The failed run and every run after it (which may read its outputs) again, in
  // order, each falling back on its own.
  size_t run = failure->run;
  try {
    fallback().executeInto(queued[run].inputs, queued[run].outputs);
    for (++run; run < queued.size(); ++run)
      executeInto(queued[run].inputs, queued[run].outputs);
  } catch (const Error&) {
    return RunFailure{run, std::current_exception()};
  }
  return std::nullopt;
}

std::unique_ptr<OptimizedExecutable> compile(const ir::Graph& g, Backend& backend,
                                             const CompileOptions& options) {
  if (options.batch == 0 && !options.batchedParams.empty())
    throw Error(fmt::format("@{}: batchedParams given without a batch size", g.name()));
  std::unique_ptr<ir::Graph> batched;
  if (options.batch != 0) {
    // ArrayRef cannot view a std::vector<bool>.
    llvm::SmallVector<bool, 8> flags(options.batchedParams.begin(), options.batchedParams.end());
    batched = passes::batchGraph(g, options.batch, flags);
  }
  const ir::Graph& input = batched ? *batched : g;
  std::unique_ptr<ir::Graph> optimized = optimize(input, options.passes);
  return std::make_unique<OptimizedExecutable>(input, backend.compile(*optimized), backend);
}

} // namespace graphc
