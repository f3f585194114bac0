//===- runtime/core/Compile.cpp - From a graph to an optimized executable -===//
#include "runtime/core/Compile.h"

#include "passes/Batch.h"
#include "passes/PassManager.h"
#include "passes/Shard.h"
#include "passes/Unbatch.h"
#include "runtime/core/ItemFailures.h"
#include "runtime/core/Sharded.h"

#include <fmt/format.h>

#include <algorithm>

namespace graphc {
namespace {

std::unique_ptr<ir::Graph> optimize(const ir::Graph& g, const std::string& spec) {
  if (spec == "none")
    return passes::runPipeline(g, {});
  return passes::runPipeline(g, spec.empty() ? passes::defaultPipeline()
                                             : passes::parsePipeline(spec));
}

/// Item `i` of `a` along its first axis (a view).
Array itemOf(const Array& a, int64_t i) {
  return a.view(a.shape().drop_front(), a.strides().drop_front(), i * a.strides().front());
}

/// "1, 5, 9" (the first 16, then "and N more").
std::string itemList(llvm::ArrayRef<int64_t> items) {
  constexpr size_t kShown = 16;
  std::string text;
  for (size_t i = 0; i < std::min(items.size(), kShown); ++i)
    text += fmt::format("{}{}", i ? ", " : "", items[i]);
  if (items.size() > kShown)
    text += fmt::format(" and {} more", items.size() - kShown);
  return text;
}

/// The axis each parameter of `input` (the graph the passes see) is split along.
std::vector<int> splitAxesOf(const ir::Graph& input, const CompileOptions& options) {
  if (!options.splitAxes.empty()) {
    if (options.splitAxes.size() != input.params().size())
      throw Error(fmt::format("@{}: {} split axes given for {} parameters", input.name(),
                              options.splitAxes.size(), input.params().size()));
    return options.splitAxes;
  }
  if (options.batch == 0)
    throw Error(fmt::format("@{}: {} ranks given without split axes or a batch", input.name(),
                            options.ranks));
  std::vector<int> axes;
  for (size_t i = 0; i < input.params().size(); ++i) {
    bool batched = options.batchedParams.empty() || options.batchedParams[i];
    axes.push_back(batched ? 0 : passes::kReplicated);
  }
  return axes;
}

/// Rank `rank.rank`'s program of `optimized` (the optimized graph of `input`) over
/// options.ranks ranks, compiled on `backend`.
RankProgram shardAndCompile(const ir::Graph& input, const ir::Graph& optimized, Backend& backend,
                            const CompileOptions& options, const RankOf& rank) {
  std::vector<int> axes = splitAxesOf(input, options);
  passes::ShardedGraph s = passes::shardGraph(optimized, axes, options.ranks, rank.rank);
  return {backend.compileRank(*s.graph, rank), std::move(axes), std::move(s.outputAxes)};
}

/// The optimized graph `optimized` of `input` as options.ranks ranks on `backend`.
std::unique_ptr<Executable> compileSharded(const ir::Graph& input, const ir::Graph& optimized,
                                           Backend& backend, const CompileOptions& options) {
  std::shared_ptr<Communicator> comm = backend.communicator(options.ranks);
  std::vector<std::unique_ptr<Executable>> ranks;
  RankProgram p;
  for (int r = 0; r < options.ranks; ++r) {
    p = shardAndCompile(input, optimized, backend, options, RankOf{comm, r});
    ranks.push_back(std::move(p.exe));
  }
  return std::make_unique<ShardedExecutable>(Signature::of(input), std::move(p.paramAxes),
                                             std::move(p.outputAxes), std::move(comm),
                                             std::move(ranks));
}

/// `g` batched as `options` says, or null.
std::unique_ptr<ir::Graph> batchedGraph(const ir::Graph& g, const CompileOptions& options) {
  if (options.batch == 0 && !options.batchedParams.empty())
    throw Error(fmt::format("@{}: batchedParams given without a batch size", g.name()));
  if (options.ranks < 0)
    throw Error(fmt::format("@{}: {} ranks", g.name(), options.ranks));
  if (options.ranks == 0 && !options.splitAxes.empty())
    throw Error(fmt::format("@{}: split axes given without ranks", g.name()));
  if (options.batch == 0)
    return nullptr;
  // ArrayRef cannot view a std::vector<bool>.
  llvm::SmallVector<bool, 8> flags(options.batchedParams.begin(), options.batchedParams.end());
  return passes::batchGraph(g, options.batch, flags);
}

/// A Cholesky that solve lowering chose, which falls back to LU when it fails.
bool isChosenCholesky(const ir::Node& n) {
  return n.op() == ir::Op::Cholesky && n.attrs().flag("fallback");
}

} // namespace

bool ItemFallback::applies(const ir::Graph& optimized) const {
  if (!item || batch < 1)
    return false;
  std::vector<bool> onBatch(optimized.nodes().size(), false); // depends on a batched parameter
  bool any = false;
  for (const ir::Node* n : optimized.nodes()) {
    if (n->op() == ir::Op::Parameter) {
      size_t index = static_cast<size_t>(n->attrs().getInt("index"));
      onBatch[n->id()] = batched.empty() || (index < batched.size() && batched[index]);
      continue;
    }
    for (ir::Value v : n->operands())
      onBatch[n->id()] = onBatch[n->id()] || onBatch[v.node->id()];
    if (!isChosenCholesky(*n))
      continue;
    llvm::ArrayRef<int64_t> shape = n->operand(0).type().shape;
    if (shape.size() < 3 || shape.front() != batch || !onBatch[n->id()])
      return false;
    any = true;
  }
  return any;
}

OptimizedExecutable::OptimizedExecutable(const ir::Graph& original,
                                         std::unique_ptr<Executable> primary, Backend& backend,
                                         const ItemFallback& items)
    : Executable(Signature::of(original)), backend_(backend), primary_(std::move(primary)),
      unlowered_(optimize(original, "canonicalize")) {
  if (!items.item)
    return;
  batch_ = items.batch;
  batched_ = items.batched;
  batched_.resize(signature().paramTypes.size(), items.batched.empty());
  unloweredItem_ = optimize(*items.item, "canonicalize");
}

const std::vector<int64_t>* OptimizedExecutable::itemsOf(const FallbackError& e) const {
  auto* items = dynamic_cast<const ItemFallbackError*>(&e);
  if (!unloweredItem_ || !items || items->items().empty() || items->extent() != batch_)
    return nullptr;
  return &items->items();
}

void OptimizedExecutable::noteFallback(const FallbackError& e) {
  std::string where = e.loc().valid() ? e.loc().str() + ": " : "";
  if (const std::vector<int64_t>* items = itemsOf(e)) {
    fmt::print(stderr, "{}warning: {}; @{} falls back to LU for batch item{} {} of this run\n",
               where, e.message(), signature().graphName, items->size() == 1 ? "" : "s",
               itemList(*items));
    itemFallbacks_ += static_cast<int64_t>(items->size());
  } else {
    fmt::print(stderr, "{}warning: {}; @{} falls back to LU for this run\n", where, e.message(),
               signature().graphName);
  }
  ++fallbacks_;
}

Executable& OptimizedExecutable::fallback() {
  std::lock_guard<std::mutex> lock(compileMutex_);
  if (!fallback_)
    fallback_ = backend_.compile(*unlowered_);
  return *fallback_;
}

Executable& OptimizedExecutable::itemFallback() {
  std::lock_guard<std::mutex> lock(compileMutex_);
  if (!itemFallback_)
    itemFallback_ = backend_.compile(*unloweredItem_);
  return *itemFallback_;
}

void OptimizedExecutable::redoItems(llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs,
                                    llvm::ArrayRef<int64_t> items) {
  Executable& exe = itemFallback();
  for (int64_t i : items) {
    std::vector<Array> in, out;
    for (size_t p = 0; p < inputs.size(); ++p)
      in.push_back(batched_[p] ? itemOf(inputs[p], i) : inputs[p]);
    for (const Array& o : outputs)
      out.push_back(itemOf(o, i));
    try {
      exe.run(in, out);
    } catch (const Error& e) {
      throw Error(fmt::format("batch item {} of {}: {}", i, batch_, e.message()), e.loc());
    }
  }
}

std::vector<Array> OptimizedExecutable::execute(llvm::ArrayRef<Array> inputs) {
  if (unloweredItem_) {
    // Into outputs of its own, which keep the items that did not fail. Host inputs
    // of a device backend are uploaded and the results come back to the host, as
    // the backends' own run() does.
    bool onHost = device() == Device::Host;
    bool hostResults = !onHost && (inputs.empty() || inputs.front().device() == Device::Host);
    std::vector<Array> in, outs;
    for (const Array& a : inputs)
      in.push_back(onHost || a.device() != Device::Host ? a : toDevice(a));
    for (size_t i = 0; i < signature().outputTypes.size(); ++i)
      outs.push_back(newOutput(i));
    executeInto(in, outs);
    if (hostResults)
      for (Array& o : outs)
        o = toHost(o);
    return outs;
  }
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
    if (const std::vector<int64_t>* items = itemsOf(e))
      return redoItems(inputs, outputs, *items);
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
  std::vector<int64_t> items; // the failed items, when only they are redone
  bool again = false;         // the failed items are lost: run it alone to learn them
  try {
    std::rethrow_exception(failure->error);
  } catch (const ItemFallbackError& e) {
    again = e.itemsLost() && unloweredItem_;
    if (!again)
      noteFallback(e);
    if (const std::vector<int64_t>* failed = itemsOf(e))
      items = *failed;
  } catch (const FallbackError& e) {
    noteFallback(e);
  } catch (const Error&) {
    return failure;
  }
  // The failed run (alone, its failed items, or all of it) and every run after it
  // (which may read its outputs) again, in order, each falling back on its own.
  size_t run = failure->run;
  try {
    if (again)
      executeInto(queued[run].inputs, queued[run].outputs);
    else if (!items.empty())
      redoItems(queued[run].inputs, queued[run].outputs, items);
    else
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
  std::unique_ptr<ir::Graph> batched = batchedGraph(g, options);
  const ir::Graph& input = batched ? *batched : g;
  std::unique_ptr<ir::Graph> optimized = optimize(input, options.passes);
  if (options.ranks > 0) // a failing chosen Cholesky redoes the whole run, unsharded
    return std::make_unique<OptimizedExecutable>(
        input, compileSharded(input, *optimized, backend, options), backend);
  ItemFallback items{&g, options.batch, options.batchedParams};
  // A graph batched by hand whose items come apart is seen as batched, where a
  // chosen Cholesky may fail.
  std::optional<passes::Unbatched> byHand;
  if (!batched && llvm::any_of(optimized->nodes(), [](auto* n) { return isChosenCholesky(*n); }))
    byHand = passes::unbatchGraph(g);
  if (byHand)
    items = {byHand->item.get(), byHand->batch, byHand->batched};
  if (!items.applies(*optimized))
    items = {};
  return std::make_unique<OptimizedExecutable>(input, backend.compile(*optimized), backend, items);
}

RankProgram compileRank(const ir::Graph& g, Backend& backend, const CompileOptions& options,
                        const RankOf& rank) {
  if (options.ranks < 1 || !rank.comm || rank.comm->size() != options.ranks)
    throw Error(fmt::format("@{}: rank {} of {} ranks, over a communicator of {}", g.name(),
                            rank.rank, options.ranks, rank.comm ? rank.comm->size() : 0));
  std::unique_ptr<ir::Graph> batched = batchedGraph(g, options);
  const ir::Graph& input = batched ? *batched : g;
  return shardAndCompile(input, *optimize(input, options.passes), backend, options, rank);
}

} // namespace graphc
