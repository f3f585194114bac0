//===- runtime/core/Collective.cpp - How the ranks of a sharded run meet --===//
//
// The host communicator is a barrier over a mutex: each rank leaves a pointer to
// its value, the last to arrive combines them in rank order into one result per
// rank (a rank's result is its own: a later kernel may write over it in place)
// and opens the next round. A round's results are taken before any rank can
// arrive at the next one, since that round waits for every rank too.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Collective.h"

#include "support/Error.h"

#include <fmt/format.h>

#include <cmath>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace graphc {

Reduction reductionOf(const ir::Attrs& attrs) {
  const std::string& r = attrs.getStr("reduction");
  return r == "max" ? Reduction::Max : r == "min" ? Reduction::Min : Reduction::Sum;
}

Communicator::~Communicator() = default;

namespace {

/// a = a op b, elementwise over n points; NaN wins a max or min.
template <typename T> void combine(T* a, const T* b, int64_t n, Reduction r) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(a[i]) || std::isnan(b[i])) {
        a[i] = r == Reduction::Sum ? a[i] + b[i] : std::nan("");
        continue;
      }
    switch (r) {
    case Reduction::Sum:
      a[i] = static_cast<T>(a[i] + b[i]);
      break;
    case Reduction::Max:
      a[i] = std::max(a[i], b[i]);
      break;
    case Reduction::Min:
      a[i] = std::min(a[i], b[i]);
      break;
    }
  }
}

} // namespace

void reduceInto(const Array& into, const Array& x, Reduction reduction) {
  if (into.type() != x.type() || !into.isContiguous() || !x.isContiguous())
    throw Error(
        fmt::format("internal error: all_reduce of {} into {}", x.type().str(), into.type().str()));
  visitDType(into.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>)
      combine(into.data<T>(), x.data<T>(), into.numel(), reduction);
  });
}

namespace {

class HostCommunicator final : public Communicator {
public:
  explicit HostCommunicator(int ranks) : values_(ranks), results_(ranks) {}

  int size() const override { return static_cast<int>(values_.size()); }
  bool inProcess() const override { return true; }

  Array allReduce(int rank, const Array& x, Reduction reduction) override {
    if (rank < 0 || rank >= size())
      throw Error(fmt::format("internal error: all_reduce on rank {} of {}", rank, size()));
    if (x.device() != Device::Host)
      throw Error("all_reduce: the host communicator takes host arrays only");
    Array mine = x.contiguous();
    std::unique_lock<std::mutex> lock(mutex_);
    throwIfAborted();
    values_[rank] = &mine;
    uint64_t round = round_;
    if (++arrived_ == size()) {
      combineRound(reduction);
      arrived_ = 0;
      ++round_;
      wake_.notify_all();
    } else {
      wake_.wait(lock, [&] { return round_ != round || aborted_ >= 0; });
      if (round_ == round)
        throwIfAborted();
    }
    return std::move(results_[rank]);
  }

  void abort(int rank) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_ < 0)
      aborted_ = rank;
    wake_.notify_all();
  }

  void reset() override {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = -1;
    arrived_ = 0;
  }

private:
  void throwIfAborted() const {
    if (aborted_ >= 0)
      throw AbortedError(fmt::format("all_reduce: rank {} of {} failed", aborted_, size()));
  }

  /// Every rank's result from values_, in rank order. Called with the lock held.
  void combineRound(Reduction reduction) {
    const Array& first = *values_[0];
    for (size_t r = 1; r < values_.size(); ++r)
      if (values_[r]->type() != first.type()) {
        aborted_ = static_cast<int>(r); // the ranks waiting for this round throw too
        wake_.notify_all();
        throw Error(fmt::format("internal error: all_reduce of {} on rank 0 and {} on rank {}",
                                first.type().str(), values_[r]->type().str(), r));
      }
    Array sum = first.clone();
    for (size_t r = 1; r < values_.size(); ++r)
      reduceInto(sum, *values_[r], reduction);
    results_[0] = sum;
    for (size_t r = 1; r < results_.size(); ++r)
      results_[r] = sum.clone();
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<const Array*> values_; ///< this round's, by rank
  std::vector<Array> results_;       ///< the last round's, by rank
  int arrived_ = 0;
  uint64_t round_ = 0;
  int aborted_ = -1; ///< the first rank that failed, or -1
};

} // namespace

std::shared_ptr<Communicator> hostCommunicator(int ranks) {
  if (ranks < 1)
    throw Error(fmt::format("a group of ranks needs at least one, got {}", ranks));
  return std::make_shared<HostCommunicator>(ranks);
}

Array allReduce(const RankOf* rank, const Array& x, Reduction reduction) {
  if (!rank || !rank->comm)
    return x;
  return rank->comm->allReduce(rank->rank, x, reduction);
}

} // namespace graphc
