//===- runtime/core/ItemFailures.cpp - Failures of some batch items -------===//
#include "runtime/core/ItemFailures.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace graphc {

ItemFallbackError::ItemFallbackError(std::string message, SourceLoc loc,
                                     const std::vector<int64_t>& flatItems,
                                     const std::vector<int64_t>& batchShape)
    : FallbackError(std::move(message), std::move(loc)) {
  if (batchShape.empty() || flatItems.empty())
    return;
  int64_t inner = 1; // items per index of the first axis
  for (size_t i = 1; i < batchShape.size(); ++i)
    inner *= batchShape[i];
  for (int64_t b : flatItems)
    items_.push_back(inner > 0 ? b / inner : 0);
  std::sort(items_.begin(), items_.end());
  items_.erase(std::unique(items_.begin(), items_.end()), items_.end());
  extent_ = batchShape.front();
}

ItemFallbackError ItemFallbackError::merged(const ItemFallbackError& a,
                                            const ItemFallbackError& b) {
  ItemFallbackError m(a.message() + "; " + b.message(), a.loc());
  m.lost_ = a.lost_ || b.lost_;
  if (m.lost_ || a.items_.empty() || b.items_.empty() || a.extent_ != b.extent_)
    return m;
  std::set_union(a.items_.begin(), a.items_.end(), b.items_.begin(), b.items_.end(),
                 std::back_inserter(m.items_));
  m.extent_ = a.extent_;
  return m;
}

std::string describeItemFailures(const std::string& what, int64_t batch,
                                 const std::vector<std::pair<int64_t, std::string>>& failures) {
  if (failures.size() == 1)
    return fmt::format("{} (batch item {}, {})", what, failures[0].first, failures[0].second);
  constexpr size_t kShown = 8;
  std::string list;
  for (size_t i = 0; i < std::min(failures.size(), kShown); ++i)
    list += fmt::format("{}{} ({})", i ? ", " : "", failures[i].first, failures[i].second);
  if (failures.size() > kShown)
    list += fmt::format(" and {} more", failures.size() - kShown);
  return fmt::format("{} in {} of {} batch items: {}", what, failures.size(), batch, list);
}

} // namespace graphc
