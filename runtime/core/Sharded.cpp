//===- runtime/core/Sharded.cpp - A graph run as several ranks ------------===//
#include "runtime/core/Sharded.h"

#include "passes/Shard.h"

#include <fmt/format.h>

#include <cstring>
#include <exception>
#include <thread>

namespace graphc {

using passes::kReplicated;
using passes::Share;

Array shareOf(const Array& a, int axis, int ranks, int rank) {
  if (axis == kReplicated)
    return a;
  Share share = Share::of(a.shape()[axis], ranks, rank);
  ir::Shape shape(a.shape().begin(), a.shape().end());
  shape[axis] = share.extent;
  return a.view(shape, a.strides(), share.offset * a.strides()[axis]);
}

ShardedExecutable::ShardedExecutable(Signature sig, std::vector<int> paramAxes,
                                     std::vector<int> outputAxes,
                                     std::shared_ptr<Communicator> comm,
                                     std::vector<std::unique_ptr<Executable>> ranks)
    : Executable(std::move(sig)), paramAxes_(std::move(paramAxes)),
      outputAxes_(std::move(outputAxes)), comm_(std::move(comm)), ranks_(std::move(ranks)) {
  if (ranks_.empty() || static_cast<int>(ranks_.size()) != comm_->size())
    throw Error(
        fmt::format("internal error: {} rank programs for {} ranks", ranks_.size(), comm_->size()));
}

std::vector<Array> ShardedExecutable::inputsOf(llvm::ArrayRef<Array> inputs, int rank) const {
  std::vector<Array> out;
  for (size_t i = 0; i < inputs.size(); ++i)
    out.push_back(shareOf(inputs[i], paramAxes_[i], ranks(), rank));
  return out;
}

Array ShardedExecutable::gather(const std::vector<std::vector<Array>>& results, size_t o) const {
  int axis = outputAxes_[o];
  if (axis == kReplicated)
    return results.front()[o];
  const ir::TensorType& type = signature().outputTypes[o];
  Array out = Array::empty(type.dtype, type.shape);
  // In C order a share is, for each index of the axes before `axis`, one run of
  // extent x (the elements after the axis) elements.
  int64_t outer = 1, inner = out.elementSize();
  for (int i = 0; i < axis; ++i)
    outer *= type.shape[i];
  for (size_t i = axis + 1; i < type.shape.size(); ++i)
    inner *= type.shape[i];
  const int64_t length = type.shape[axis];
  auto* to = static_cast<char*>(out.rawData());
  for (int r = 0; r < ranks(); ++r) {
    Array part = results[r][o].contiguous();
    Share share = Share::of(length, ranks(), r);
    const auto* from = static_cast<const char*>(part.rawData());
    for (int64_t b = 0; b < outer; ++b)
      if (share.extent > 0)
        std::memcpy(to + (b * length + share.offset) * inner, from + b * share.extent * inner,
                    share.extent * inner);
  }
  return out;
}

std::vector<Array> ShardedExecutable::execute(llvm::ArrayRef<Array> inputs) {
  comm_->reset();
  std::vector<std::vector<Array>> results(ranks());
  std::vector<std::exception_ptr> errors(ranks());
  std::vector<char> aborted(ranks(), 0); // failed only because another rank did (not a
                                         // vector<bool>: the ranks write their own)
  auto runRank = [&](int r) {
    try {
      results[r] = ranks_[r]->run(inputsOf(inputs, r));
    } catch (const AbortedError&) {
      errors[r] = std::current_exception();
      aborted[r] = 1;
    } catch (...) {
      errors[r] = std::current_exception();
      comm_->abort(r);
    }
  };
  std::vector<std::thread> threads;
  for (int r = 1; r < ranks(); ++r)
    threads.emplace_back(runRank, r);
  runRank(0);
  for (std::thread& t : threads)
    t.join();
  // The lowest rank that failed of its own: a replicated step fails on every rank
  // alike, and whichever came first, the report is the same.
  int failed = -1;
  for (int r = ranks() - 1; r >= 0; --r)
    if (errors[r] && (!aborted[r] || failed < 0))
      failed = r;
  if (failed >= 0) {
    auto named = [&](const Error& e) {
      return fmt::format("rank {} of {}: {}", failed, ranks(), e.message());
    };
    try {
      std::rethrow_exception(errors[failed]);
    } catch (const FallbackError& e) { // the whole run is redone unsharded
      throw FallbackError(named(e), e.loc());
    } catch (const Error& e) {
      throw Error(named(e), e.loc());
    }
  }
  std::vector<Array> outputs;
  for (size_t o = 0; o < outputAxes_.size(); ++o)
    outputs.push_back(gather(results, o));
  return outputs;
}

} // namespace graphc
