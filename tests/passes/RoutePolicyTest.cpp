//===- tests/passes/RoutePolicyTest.cpp - The GPU's shape thresholds -------===//
//
// The route choices of passes/RoutePolicy.h that are not covered by the passes
// that use them: the cluster QR kernel's size and shared memory, against a plain
// count of the columns each block holds.
//
//===----------------------------------------------------------------------===//
#include "passes/RoutePolicy.h"

#include <gtest/gtest.h>

namespace graphc::passes {
namespace {

constexpr size_t kH200Shared = 232448; // opt-in shared bytes per block

/// The bytes a block needs, counted column by column: runs of 32 bytes of columns
/// dealt out to the blocks in turn, the busiest block's count rounded up to a run.
int64_t countedBytes(int64_t m, int64_t n, int64_t ctas, int64_t size) {
  int64_t width = 32 / size, k = std::min(m, n);
  auto slots = [&](int64_t cols) {
    int64_t most = 0;
    for (int64_t b = 0; b < ctas; ++b) {
      int64_t held = 0;
      for (int64_t c = 0; c < cols; ++c)
        held += c / width % ctas == b;
      most = std::max(most, held);
    }
    return (most + width - 1) / width * width;
  };
  return ((slots(n) + slots(k)) * (m + 1) + slots(n) + k + 2 * m) * size;
}

TEST(RoutePolicy, QrClusterSharedBytesCountsTheColumns) {
  for (int64_t size : {4, 8})
    for (int64_t ctas : {1, 2, 4, 8})
      for (auto [m, n] : {std::pair<int64_t, int64_t>{1, 1},
                          {5, 3},
                          {3, 5},
                          {33, 17},
                          {256, 256},
                          {257, 100},
                          {64, 512}})
        EXPECT_EQ(qrClusterSharedBytes(m, n, ctas, size), countedBytes(m, n, ctas, size))
            << m << " x " << n << ", " << ctas << " blocks, " << size << "-byte elements";
}

TEST(RoutePolicy, QrClusterSizeByColumnsThenSharedMemory) {
  const RoutePolicy& p = RoutePolicy::gpu();
  EXPECT_EQ(chooseQrClusterSize(p, 32, 32, 8, kH200Shared), 1);
  EXPECT_EQ(chooseQrClusterSize(p, 64, 64, 8, kH200Shared), 2);
  EXPECT_EQ(chooseQrClusterSize(p, 128, 128, 8, kH200Shared), 4);
  EXPECT_EQ(chooseQrClusterSize(p, 256, 256, 8, kH200Shared), 8);
  EXPECT_EQ(chooseQrClusterSize(p, 64, 2048, 8, kH200Shared), 8);
  EXPECT_EQ(chooseQrClusterSize(p, 64, 4096, 8, kH200Shared), 0);
  // 512 x 128: four blocks' shared memory holds it in f32, not in f64.
  EXPECT_EQ(chooseQrClusterSize(p, 512, 128, 4, kH200Shared), 4);
  EXPECT_EQ(chooseQrClusterSize(p, 512, 128, 8, kH200Shared), 8);
  // Too large for eight blocks, too many rows, nothing to factor, not a float.
  EXPECT_EQ(chooseQrClusterSize(p, 512, 256, 8, kH200Shared), 0);
  EXPECT_EQ(chooseQrClusterSize(p, 513, 8, 8, kH200Shared), 0);
  EXPECT_EQ(chooseQrClusterSize(p, 0, 8, 8, kH200Shared), 0);
  EXPECT_EQ(chooseQrClusterSize(p, 8, 8, 2, kH200Shared), 0);
  // Every choice fits.
  for (int64_t m = 1; m <= 512; m += 37)
    for (int64_t n = 1; n <= 600; n += 41) {
      if (int ctas = chooseQrClusterSize(p, m, n, 8, kH200Shared)) {
        EXPECT_LE(qrClusterSharedBytes(m, n, ctas, 8), int64_t(kH200Shared)) << m << " x " << n;
      }
    }
}

TEST(RoutePolicy, QrClusterForFewStepsOrBatchesOfAllButTinyMatrices) {
  const RoutePolicy& p = RoutePolicy::gpu();
  EXPECT_TRUE(preferClusterQr(p, 1, 128, 128));
  EXPECT_TRUE(preferClusterQr(p, 1, 64, 512)); // 64 steps
  EXPECT_FALSE(preferClusterQr(p, 1, 256, 256));
  EXPECT_TRUE(preferClusterQr(p, 1, 256, 256, /*sharing=*/true));
  EXPECT_FALSE(preferClusterQr(p, 1, 300, 300, /*sharing=*/true));
  EXPECT_FALSE(preferClusterQr(p, 4096, 8, 8, /*sharing=*/true));
  EXPECT_FALSE(preferClusterQr(p, 1, 512, 128));
  EXPECT_FALSE(preferClusterQr(p, 1, 256, 128));
  EXPECT_TRUE(preferClusterQr(p, 1, 128, 256));
  EXPECT_TRUE(preferClusterQr(p, 2, 256, 256));
  EXPECT_FALSE(preferClusterQr(p, 2, 300, 300));
  EXPECT_TRUE(preferClusterQr(p, 3, 300, 300));
  EXPECT_TRUE(preferClusterQr(p, 512, 32, 32));
  EXPECT_TRUE(preferClusterQr(p, 512, 8, 17));
  EXPECT_FALSE(preferClusterQr(p, 4096, 8, 8));
  EXPECT_FALSE(preferClusterQr(p, 100000, 16, 16));
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

} // namespace
} // namespace graphc::passes
