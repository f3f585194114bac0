//===- tests/passes/RoutePolicyTest.cpp - The GPU's shape thresholds -------===//
//
// The route choices of passes/RoutePolicy.h that are not covered by the passes
// that use them: the cluster QR kernel's size and shared memory, against a plain
// count of the columns each block holds; thresholds set by name (GRAPHC_ROUTES).
//
//===----------------------------------------------------------------------===//
#include "passes/RoutePolicy.h"

#include "support/Error.h"

#include <gtest/gtest.h>

#include <cstring>

namespace graphc::passes {
namespace {

constexpr size_t kH200Shared = 232448; // opt-in shared bytes per block

/// The bytes a block needs, counted column by column: panels of `panel` columns
/// dealt out to the blocks in turn, the busiest block's count rounded up to a
/// panel; 16 bytes for the count of streamed reflectors, its columns of A and
/// their taus, two panels' taus, and the larger of two panels (with `qByRows`,
/// and the busiest block's rows of Q, m long) and its columns of Q with one panel.
int64_t countedBytes(int64_t m, int64_t n, int64_t ctas, int64_t panel, int64_t size,
                     bool qByRows) {
  int64_t k = std::min(m, n);
  auto slots = [&](int64_t cols) {
    int64_t most = 0;
    for (int64_t b = 0; b < ctas; ++b) {
      int64_t held = 0;
      for (int64_t c = 0; c < cols; ++c)
        held += c / panel % ctas == b;
      most = std::max(most, held);
    }
    return (most + panel - 1) / panel * panel;
  };
  int64_t rowsQ = 0; // the rows of Q a block accumulates: as evenly as blocks go
  while (qByRows && rowsQ * ctas < m)
    ++rowsQ;
  int64_t a = slots(n) * (m + 1), q = slots(k) * (m + 1), buffer = panel * m;
  return 16 +
         (a + slots(n) + 2 * panel + std::max(2 * buffer + rowsQ * (m + 1), q + buffer)) * size;
}

TEST(RoutePolicy, QrClusterSharedBytesCountsTheColumns) {
  for (int64_t size : {4, 8})
    for (int64_t ctas : {1, 2, 4, 8})
      for (int64_t panel : {4, 8, 16, 32})
        for (auto [m, n] : {std::pair<int64_t, int64_t>{1, 1},
                            {5, 3},
                            {3, 5},
                            {33, 17},
                            {256, 256},
                            {257, 100},
                            {64, 512}})
          for (bool qByRows : {false, true})
            EXPECT_EQ(qrClusterSharedBytes(m, n, ctas, panel, size, qByRows),
                      countedBytes(m, n, ctas, panel, size, qByRows))
                << m << " x " << n << ", " << ctas << " blocks, panels of " << panel << ", " << size
                << "-byte elements" << (qByRows ? ", Q by rows" : "");
}

/// chooseQrCluster's choice as {blocks, panel width}.
std::pair<int, int> chosen(int64_t m, int64_t n, size_t size, int64_t widest = 0) {
  QrCluster c = chooseQrCluster(RoutePolicy::gpu(), m, n, size, kH200Shared, widest);
  return {c.ctas, c.panel};
}

TEST(RoutePolicy, QrClusterByColumnsThenSharedMemory) {
  using P = std::pair<int, int>;
  EXPECT_EQ(chosen(32, 32, 8), P(1, 16));
  EXPECT_EQ(chosen(64, 64, 8), P(2, 16));
  EXPECT_EQ(chosen(128, 128, 8), P(4, 16));
  EXPECT_EQ(chosen(256, 256, 8), P(8, 16));
  EXPECT_EQ(chosen(64, 2048, 8), P(8, 16));
  EXPECT_EQ(chosen(64, 4096, 8), P(0, 0));
  // Panels no wider than a block's columns need, and at least 32 bytes.
  EXPECT_EQ(chosen(5, 3, 8), P(1, 4));
  EXPECT_EQ(chosen(5, 3, 4), P(1, 8));
  EXPECT_EQ(chosen(100, 20, 8), P(1, 16));
  EXPECT_EQ(chosen(100, 20, 8, 32), P(1, 32));
  EXPECT_EQ(chosen(256, 256, 8, 8), P(8, 8));
  EXPECT_EQ(chosen(256, 256, 8, 32), P(8, 32));
  // 512 x 128: four blocks' shared memory holds it in f32, not in f64; in panels
  // of 32, four blocks hold the f32 one, eight the f64 one with panels of 16.
  EXPECT_EQ(chosen(512, 128, 4), P(4, 16));
  EXPECT_EQ(chosen(512, 128, 8), P(8, 16));
  EXPECT_EQ(chosen(512, 128, 4, 32), P(4, 32));
  EXPECT_EQ(chosen(512, 128, 8, 32), P(8, 16));
  // Too large for eight blocks, too many rows, nothing to factor, not a float.
  EXPECT_EQ(chosen(512, 256, 8), P(0, 0));
  EXPECT_EQ(chosen(513, 8, 8), P(0, 0));
  EXPECT_EQ(chosen(0, 8, 8), P(0, 0));
  EXPECT_EQ(chosen(8, 8, 2), P(0, 0));
  // Every choice fits.
  for (int64_t m = 1; m <= 512; m += 37)
    for (int64_t n = 1; n <= 600; n += 41)
      if (auto [ctas, panel] = chosen(m, n, 8); ctas) {
        EXPECT_LE(qrClusterSharedBytes(m, n, ctas, panel, 8), int64_t(kH200Shared))
            << m << " x " << n;
      }
}

TEST(RoutePolicy, QrClusterForFewStepsOrBatchesOfAllButTinyMatrices) {
  struct Case {
    int64_t batch, m, n;
    bool sharing, cluster;
  };
  // One matrix up to 256 rows; among deferred runs and in batches, from two
  // matrices, and from two of more than 256 rows.
  for (Case c : {Case{1, 128, 128, false, true},
                 {1, 64, 512, false, true},
                 {1, 224, 224, false, true},
                 {1, 256, 256, false, true},
                 {1, 257, 100, false, false},
                 {1, 512, 128, false, false},
                 {1, 256, 128, false, true},
                 {1, 128, 256, false, true},
                 {1, 256, 256, true, true},
                 {1, 300, 300, true, false},
                 {4096, 8, 8, true, false},
                 {2, 256, 256, false, true},
                 {2, 300, 300, false, true},
                 {512, 32, 32, false, true},
                 {512, 8, 17, false, true},
                 {4096, 8, 8, false, false},
                 {100000, 16, 16, false, false}})
    EXPECT_EQ(preferClusterQr(RoutePolicy::gpu(), c.batch, c.m, c.n, c.sharing), c.cluster)
        << c.batch << " x " << c.m << " x " << c.n << (c.sharing ? ", sharing" : "");
}

TEST(RoutePolicy, QrClusterStreamsMoreThan64RowsWithAMultiprocessorABlock) {
  const RoutePolicy& p = RoutePolicy::gpu();
  const int64_t sms = 132;
  EXPECT_TRUE(qrClusterStreamed(p, 1, 256, 8, sms));
  EXPECT_TRUE(qrClusterStreamed(p, 1, 65, 4, sms));
  EXPECT_TRUE(qrClusterStreamed(p, 16, 256, 8, sms));  // 128 blocks
  EXPECT_TRUE(qrClusterStreamed(p, 33, 128, 4, sms));  // 132 blocks
  EXPECT_FALSE(qrClusterStreamed(p, 17, 256, 8, sms)); // 136 blocks
  EXPECT_FALSE(qrClusterStreamed(p, 64, 128, 4, sms));
  EXPECT_FALSE(qrClusterStreamed(p, 1, 64, 2, sms));  // the kernels of up to 64 rows
  EXPECT_FALSE(qrClusterStreamed(p, 1, 100, 1, sms)); // one block: nothing to stream to
}

TEST(RoutePolicy, QrClusterAccumulatesQByRowsWhereStreamedAndTheyFit) {
  const RoutePolicy& p = RoutePolicy::gpu();
  const int64_t sms = 132;
  auto byRows = [&](int64_t batch, int64_t m, int64_t n, size_t size, int64_t widest = 0) {
    QrCluster c = chooseQrCluster(p, m, n, size, kH200Shared, widest);
    return qrClusterQByRows(p, batch, m, n, c.ctas, c.panel, size, kH200Shared, sms);
  };
  EXPECT_TRUE(byRows(1, 256, 256, 8));      // 197648 bytes
  EXPECT_TRUE(byRows(16, 256, 256, 8));     // 128 blocks
  EXPECT_FALSE(byRows(17, 256, 256, 8));    // not streamed
  EXPECT_FALSE(byRows(1, 256, 256, 8, 32)); // two panels of 32 columns leave no room
  EXPECT_TRUE(byRows(1, 256, 256, 4, 32));
  EXPECT_TRUE(byRows(1, 128, 128, 8));
  EXPECT_TRUE(byRows(1, 224, 224, 8));
  EXPECT_FALSE(byRows(1, 512, 128, 8)); // 128 rows of 512 a block
  EXPECT_FALSE(byRows(1, 256, 128, 8));
  EXPECT_FALSE(byRows(1, 64, 64, 8)); // the kernels of up to 64 rows
  // Exactly where streamed and the rows, counted column by column, fit.
  for (int64_t m = 65; m <= 512; m += 37)
    for (int64_t n = 1; n <= 600; n += 41)
      if (QrCluster c = chooseQrCluster(p, m, n, 8, kH200Shared); c.ctas) {
        bool fits = countedBytes(m, n, c.ctas, c.panel, 8, true) <= int64_t(kH200Shared);
        EXPECT_EQ(byRows(1, m, n, 8), qrClusterStreamed(p, 1, m, c.ctas, sms) && fits)
            << m << " x " << n;
      }
}

TEST(RoutePolicy, DeferredLanesByTheirMemory) {
  const RoutePolicy& p = RoutePolicy::gpu();
  EXPECT_EQ(chooseDeferredLanes(p, 0), 16u);
  EXPECT_EQ(chooseDeferredLanes(p, 1 << 20), 16u);
  EXPECT_EQ(chooseDeferredLanes(p, 40 << 20), 12u);
  EXPECT_EQ(chooseDeferredLanes(p, 128 << 20), 4u);
  EXPECT_EQ(chooseDeferredLanes(p, 400 << 20), 1u);
  EXPECT_EQ(chooseDeferredLanes(p, int64_t{8} << 30), 1u);
}

/// The sweep's X'X of 10^6 x 16 and W5's batched Gram matrices, around each
/// threshold: rows, columns, batch, orientation.
TEST(RoutePolicy, SyrkRoutesByShape) {
  const RoutePolicy& p = RoutePolicy::gpu();
  auto route = [&](int64_t batch, int64_t n, int64_t k, bool transpose) {
    return chooseSyrkRoute(p, batch, n, k, transpose, /*tallGramMaxN=*/32);
  };
  EXPECT_EQ(route(1, 16, 1000000, true), SyrkRoute::TallGram);
  EXPECT_EQ(route(7, 32, 4096, true), SyrkRoute::TallGram);
  EXPECT_EQ(route(1, 33, 1000000, true), SyrkRoute::Gemm);    // too wide
  EXPECT_EQ(route(1, 16, 4095, true), SyrkRoute::Gemm);       // too few rows
  EXPECT_EQ(route(65536, 16, 100000, true), SyrkRoute::Gemm); // a grid too high
  EXPECT_EQ(route(1, 16, 1000000, false), SyrkRoute::Gemm);   // X X' of one matrix
  EXPECT_EQ(route(4096, 16, 32, false), SyrkRoute::SmallGram);
  EXPECT_EQ(route(4096, 17, 32, false), SyrkRoute::Gemm);
  EXPECT_EQ(route(1, 256, 3000, false), SyrkRoute::Gemm);
  EXPECT_EQ(route(1, 3000, 3000, true), SyrkRoute::Syrk);
}

/// Large triangles by blocks from two right-hand sides on, smaller ones only with
/// thousands; one vector never (SmallBatched::solveVector takes it).
TEST(RoutePolicy, BlockedSolvesByTriangleAndColumns) {
  const RoutePolicy& p = RoutePolicy::gpu();
  EXPECT_TRUE(preferBlockedSolve(p, 3000, 3000));
  EXPECT_TRUE(preferBlockedSolve(p, 512, 2));
  EXPECT_FALSE(preferBlockedSolve(p, 512, 1));
  EXPECT_FALSE(preferBlockedSolve(p, 511, 16383));
  EXPECT_FALSE(preferBlockedSolve(p, 256, 4096));
  EXPECT_TRUE(preferBlockedSolve(p, 128, 16384));
  EXPECT_TRUE(preferBlockedSolve(p, 64, 100000));
}

/// Triangles up to panelSolveMaxN take the panel solve where no other kernel does:
/// none by default (it has not run on a GPU yet), up to 288 (the largest f64 fits)
/// with GRAPHC_ROUTES=panelSolveMaxN=288.
TEST(RoutePolicy, PanelSolvesBelowTheBlockedOnesWhenOn) {
  const RoutePolicy defaults;
  EXPECT_FALSE(preferPanelSolve(defaults, 1));
  EXPECT_FALSE(preferPanelSolve(defaults, 256));
  const RoutePolicy p = defaults.overridden("panelSolveMaxN=288");
  EXPECT_TRUE(preferPanelSolve(p, 1));
  EXPECT_TRUE(preferPanelSolve(p, 256));
  EXPECT_TRUE(preferPanelSolve(p, 288));
  EXPECT_FALSE(preferPanelSolve(p, 289));
}

/// GRAPHC_ROUTES's form: the named thresholds change, every other one keeps its
/// value, and the route follows.
TEST(RoutePolicy, OverridesSetTheNamedThresholdsOnly) {
  const RoutePolicy defaults;
  const RoutePolicy p =
      defaults.overridden("blockedSolveManyColumns=1,qrClusterMaxCtas=16,deferredLanesBytes=0");
  RoutePolicy expected;
  expected.blockedSolveManyColumns = 1;
  expected.qrClusterMaxCtas = 16;
  expected.deferredLanesBytes = 0;
  EXPECT_EQ(std::memcmp(&p, &expected, sizeof p), 0);
  EXPECT_FALSE(preferBlockedSolve(defaults, 256, 256));
  EXPECT_TRUE(preferBlockedSolve(p, 256, 256));
  // The last of two settings of one name holds; empty items and specs change nothing.
  EXPECT_EQ(defaults.overridden("smallSolveMaxN=4,,smallSolveMaxN=64,").smallSolveMaxN, 64);
  RoutePolicy same = defaults.overridden("");
  EXPECT_EQ(std::memcmp(&same, &defaults, sizeof same), 0);
}

TEST(RoutePolicy, OverridesRejectUnknownNamesAndBadValues) {
  const RoutePolicy defaults;
  auto message = [&](const std::string& spec) {
    try {
      (void)defaults.overridden(spec);
    } catch (const Error& e) {
      return e.message();
    }
    return std::string("no error");
  };
  EXPECT_NE(message("blockedSolveMinN=512,bogus=1").find("no threshold named 'bogus'"),
            std::string::npos);
  EXPECT_NE(message("blockedsolveminn=512").find("no threshold named 'blockedsolveminn'"),
            std::string::npos);
  EXPECT_NE(message("smallGramMaxN=1,=4").find("no threshold named ''"), std::string::npos);
  for (const char* bad : {"smallGramMaxN", "smallGramMaxN=", "smallGramMaxN=12a",
                          "smallGramMaxN=-3", "smallGramMaxN=99999999999999999999"})
    EXPECT_NE(message(bad).find("needs a non-negative integer value"), std::string::npos) << bad;
}

} // namespace
} // namespace graphc::passes
