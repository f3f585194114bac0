//===- runtime/core/ItemFailures.h - Failures of some batch items -*- C++ -*-===//
//
// A batched step that fails on some items only says which: its message lists them
// (describeItemFailures, the same text on every backend), and a chosen Cholesky's
// failure carries them (ItemFallbackError), so that compile()'s executable redoes
// only those items with LU when the graph's items are apart (runtime/core/Compile.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/Error.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace graphc {

/// A FallbackError of a run that went on to its end although a chosen step failed
/// on some batch items: every other item's results are right. items() are the
/// failed items' indices along the failing step's leading batch axis, of length
/// extent(); without items, the whole run is to be redone, or, where itemsLost(),
/// run again alone to learn them.
class ItemFallbackError : public FallbackError {
public:
  /// The whole run: no items.
  ItemFallbackError(std::string message, SourceLoc loc)
      : FallbackError(std::move(message), std::move(loc)) {}
  /// A failure whose items a later run wrote over (a deferred run on the GPU):
  /// the run alone names them again.
  static ItemFallbackError lost(std::string message, SourceLoc loc) {
    ItemFallbackError e(std::move(message), std::move(loc));
    e.lost_ = true;
    return e;
  }
  /// A failure of the items `flatItems` (counted from 0 over every batch axis) of a
  /// step batched `batchShape`: items() are their indices along its first axis.
  ItemFallbackError(std::string message, SourceLoc loc, const std::vector<int64_t>& flatItems,
                    const std::vector<int64_t>& batchShape);

  /// The failed items along the leading batch axis, sorted, each once.
  const std::vector<int64_t>& items() const { return items_; }
  /// The length of the leading batch axis items() index (0 without items).
  int64_t extent() const { return extent_; }
  /// Whether the failed items are unknown because they were overwritten.
  bool itemsLost() const { return lost_; }
  /// This failure for the whole run.
  FallbackError wholeRun() const { return FallbackError(message(), loc()); }
  /// Two failures of one run as one: their items together when both name items
  /// along axes of one length, else the whole run (items lost if either's are); the
  /// messages joined by "; ".
  static ItemFallbackError merged(const ItemFallbackError& a, const ItemFallbackError& b);

private:
  std::vector<int64_t> items_;
  int64_t extent_ = 0;
  bool lost_ = false;
};

/// The message of a batched step that failed on some items: "`what` (batch item
/// 2, `detail`)" for one, "`what` in 3 of 64 batch items: 2 (`detail`), 5 (...),
/// ..." for several (the first 8, then "and N more"). `failures` are (item,
/// detail) pairs in item order; `batch` is the step's batch size.
std::string describeItemFailures(const std::string& what, int64_t batch,
                                 const std::vector<std::pair<int64_t, std::string>>& failures);

} // namespace graphc
