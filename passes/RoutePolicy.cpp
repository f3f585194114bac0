//===- passes/RoutePolicy.cpp - Where the GPU routes a step, by shape -----===//
#include "passes/RoutePolicy.h"

#include "support/Error.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <iterator>
#include <string_view>
#include <utility>

namespace graphc::passes {

namespace {

// Every threshold of RoutePolicy by name, in the order of the struct (the
// static_assert below fails when a threshold is added without its name).
#define GRAPHC_THRESHOLD(name)                                                                     \
  { #name, &RoutePolicy::name }
constexpr std::pair<std::string_view, int64_t RoutePolicy::*> kThresholds[] = {
    GRAPHC_THRESHOLD(reduceThreadTarget),      GRAPHC_THRESHOLD(reduceMinSplitWalk),
    GRAPHC_THRESHOLD(reduceMinPartWalk),       GRAPHC_THRESHOLD(reduceBlockTarget),
    GRAPHC_THRESHOLD(reduceMinSplitLength),    GRAPHC_THRESHOLD(reduceMinChunk),
    GRAPHC_THRESHOLD(solveWarpUnits),          GRAPHC_THRESHOLD(solveBlockUnits),
    GRAPHC_THRESHOLD(solveMinChunkCols),       GRAPHC_THRESHOLD(qrClusterMaxRows),
    GRAPHC_THRESHOLD(qrClusterColumnsPerCta),  GRAPHC_THRESHOLD(qrClusterMaxCtas),
    GRAPHC_THRESHOLD(qrClusterPanelColumns),   GRAPHC_THRESHOLD(qrClusterSingleMaxRows),
    GRAPHC_THRESHOLD(qrClusterTallRows),       GRAPHC_THRESHOLD(qrClusterMinBatchTall),
    GRAPHC_THRESHOLD(qrClusterStreamMinRows),  GRAPHC_THRESHOLD(qrBatchedTinyMaxN),
    GRAPHC_THRESHOLD(smallCholeskyMaxN),       GRAPHC_THRESHOLD(smallSolveMaxN),
    GRAPHC_THRESHOLD(smallSolveMaxCols),       GRAPHC_THRESHOLD(smallGramMaxN),
    GRAPHC_THRESHOLD(tallGramMinRows),         GRAPHC_THRESHOLD(gemmSyrkMaxN),
    GRAPHC_THRESHOLD(batchedFactorMaxN),       GRAPHC_THRESHOLD(blockedSolveMinN),
    GRAPHC_THRESHOLD(blockedSolveManyColumns), GRAPHC_THRESHOLD(panelSolveMaxN),
    GRAPHC_THRESHOLD(singleInDoubleMinN),      GRAPHC_THRESHOLD(deferredMaxLanes),
    GRAPHC_THRESHOLD(deferredLanesBytes),
};
#undef GRAPHC_THRESHOLD
static_assert(sizeof(RoutePolicy) == std::size(kThresholds) * sizeof(int64_t),
              "every threshold of RoutePolicy needs its name in kThresholds");

} // namespace

const RoutePolicy& RoutePolicy::gpu() {
  static const RoutePolicy policy = [] {
    const char* spec = std::getenv("GRAPHC_ROUTES");
    return spec ? RoutePolicy().overridden(spec) : RoutePolicy();
  }();
  return policy;
}

RoutePolicy RoutePolicy::overridden(const std::string& spec) const {
  RoutePolicy p = *this;
  std::string_view rest = spec;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.empty()) // "a=1,,b=2" and a trailing comma
      continue;
    const size_t eq = item.find('=');
    const std::string_view name = item.substr(0, eq);
    auto known = std::find_if(std::begin(kThresholds), std::end(kThresholds),
                              [&](const auto& t) { return t.first == name; });
    if (known == std::end(kThresholds))
      throw Error(fmt::format("GRAPHC_ROUTES: no threshold named '{}' in '{}' (the names are "
                              "RoutePolicy's, passes/RoutePolicy.h)",
                              name, spec));
    const std::string_view text = eq == std::string_view::npos ? "" : item.substr(eq + 1);
    int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0)
      throw Error(fmt::format("GRAPHC_ROUTES: '{}' needs a non-negative integer value, as in "
                              "{}=1024",
                              item, name));
    p.*known->second = value;
    if (logRoutes())
      fmt::print(stderr, "[graphc] route: GRAPHC_ROUTES sets {} = {}\n", name, value);
  }
  return p;
}

ReductionSplit chooseReductionSplit(const RoutePolicy& p, int64_t outputs, int64_t extent,
                                    bool contiguous) {
  if (outputs <= 0 || extent <= 1)
    return {0, "nothing to split"};
  int64_t target;
  if (!contiguous) {
    if (outputs >= p.reduceThreadTarget)
      return {0, fmt::format("{} segments fill the GPU a thread each", outputs)};
    if (extent < p.reduceMinSplitWalk)
      return {0, fmt::format("a walk of {} points is short", extent)};
    target =
        std::min((2 * p.reduceThreadTarget + outputs - 1) / outputs, extent / p.reduceMinPartWalk);
  } else {
    if (outputs >= p.reduceBlockTarget)
      return {0, fmt::format("{} segments fill the GPU a block each", outputs)};
    if (extent < p.reduceMinSplitLength)
      return {0, fmt::format("segments of {} points are short", extent)};
    target = std::min((2 * p.reduceBlockTarget + outputs - 1) / outputs, extent / p.reduceMinChunk);
  }
  // The largest divisor of the extent up to the target, if it is not far under it.
  for (int64_t d = target; d >= std::max<int64_t>(2, target / 4); --d)
    if (extent % d == 0)
      return {d, fmt::format("{} {} of {} points: {} chunks", outputs,
                             contiguous ? "rows" : "columns", extent, d)};
  return {0, fmt::format("no divisor of {} near {}", extent, target)};
}

int64_t chooseSolveColumnChunks(const RoutePolicy& p, int64_t batch, int64_t cols,
                                bool warpKernel) {
  if (batch <= 0 || cols <= p.solveMinChunkCols)
    return 1;
  int64_t units = warpKernel ? p.solveWarpUnits : p.solveBlockUnits;
  int64_t wanted = (units + batch - 1) / batch;
  int64_t most = (cols + p.solveMinChunkCols - 1) / p.solveMinChunkCols;
  return std::max<int64_t>(1, std::min(wanted, most));
}

int64_t qrClusterSharedBytes(int64_t m, int64_t n, int64_t ctas, int64_t panel, size_t elementSize,
                             bool qByRows) {
  int64_t k = std::min(m, n), ld = m + 1;
  auto slots = [&](int64_t cols) { return (cols + panel * ctas - 1) / (panel * ctas) * panel; };
  int64_t rowsQ = qByRows ? (m + ctas - 1) / ctas : 0;
  int64_t work = std::max(2 * panel * m + rowsQ * ld, slots(k) * ld + panel * m);
  return 16 + (slots(n) * ld + slots(n) + 2 * panel + work) * static_cast<int64_t>(elementSize);
}

bool qrClusterStreamed(const RoutePolicy& p, int64_t batch, int64_t m, int64_t ctas,
                       int64_t multiprocessors) {
  return ctas > 1 && m > p.qrClusterStreamMinRows && batch * ctas <= multiprocessors;
}

bool qrClusterQByRows(const RoutePolicy& p, int64_t batch, int64_t m, int64_t n, int64_t ctas,
                      int64_t panel, size_t elementSize, size_t maxSharedBytes,
                      int64_t multiprocessors) {
  return qrClusterStreamed(p, batch, m, ctas, multiprocessors) &&
         qrClusterSharedBytes(m, n, ctas, panel, elementSize, true) <=
             static_cast<int64_t>(maxSharedBytes);
}

QrCluster chooseQrCluster(const RoutePolicy& p, int64_t m, int64_t n, size_t elementSize,
                          size_t maxSharedBytes, int64_t widest) {
  if (m <= 0 || n <= 0 || m > p.qrClusterMaxRows || (elementSize != 4 && elementSize != 8))
    return {};
  const int64_t narrowest = 32 / static_cast<int64_t>(elementSize); // a row's 32-byte sector
  if (widest <= 0)
    widest = p.qrClusterPanelColumns;
  int64_t ctas = 1;
  while (ctas < p.qrClusterMaxCtas && ctas * p.qrClusterColumnsPerCta < n)
    ctas *= 2;
  for (; ctas <= p.qrClusterMaxCtas; ctas *= 2) {
    int64_t perCta = (n + ctas - 1) / ctas, panel = narrowest;
    while (panel < perCta && panel < widest)
      panel *= 2;
    for (; panel >= narrowest; panel /= 2)
      if (qrClusterSharedBytes(m, n, ctas, panel, elementSize) <=
          static_cast<int64_t>(maxSharedBytes))
        return {static_cast<int>(ctas), static_cast<int>(panel)};
  }
  return {};
}

bool preferClusterQr(const RoutePolicy& p, int64_t batch, int64_t m, int64_t n, bool sharing) {
  if (batch <= 1 && !sharing)
    return m <= p.qrClusterSingleMaxRows;
  if (m > p.qrClusterTallRows && batch < p.qrClusterMinBatchTall)
    return false;
  return std::max(m, n) > p.qrBatchedTinyMaxN;
}

SyrkRoute chooseSyrkRoute(const RoutePolicy& p, int64_t batch, int64_t n, int64_t k, bool transpose,
                          int64_t tallGramMaxN) {
  if (transpose && batch <= 65535 && k >= p.tallGramMinRows && n <= tallGramMaxN)
    return SyrkRoute::TallGram;
  if (!transpose && batch > 1 && n <= p.smallGramMaxN)
    return SyrkRoute::SmallGram;
  return n <= p.gemmSyrkMaxN ? SyrkRoute::Gemm : SyrkRoute::Syrk;
}

bool preferBlockedSolve(const RoutePolicy& p, int64_t n, int64_t columns) {
  return n >= p.blockedSolveMinN ? columns >= 2 : columns >= p.blockedSolveManyColumns;
}

bool preferPanelSolve(const RoutePolicy& p, int64_t n) {
  return n <= p.panelSolveMaxN;
}

size_t chooseDeferredLanes(const RoutePolicy& p, int64_t laneBytes) {
  int64_t fit = p.deferredLanesBytes / std::max<int64_t>(laneBytes, 1);
  return static_cast<size_t>(std::clamp<int64_t>(fit, 1, p.deferredMaxLanes));
}

bool logRoutes() {
  static const bool on = [] {
    const char* log = std::getenv("GRAPHC_LOG");
    return log && (std::strstr(log, "routes") || std::strstr(log, "all"));
  }();
  return on;
}

} // namespace graphc::passes
