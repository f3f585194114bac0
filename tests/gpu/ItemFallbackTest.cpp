//===- tests/gpu/ItemFallbackTest.cpp - Per-item LU fallback on the GPU ----===//
//
// tests/passes/ItemFallbackTest.cpp on the cuda backend: a graph batched by
// compile() whose chosen Cholesky fails on some items only (potrf's per-item info,
// from the CholeskySolve kernel at n <= 96 and from cuSOLVER above) redoes those
// items alone with LU, with host and device arrays, into outputs and deferred;
// every item's A x = b holds to rounding (loops in f64 on the host), the counters
// name exactly the failed items, and the other items keep the Cholesky's results.
// Past 1024 items the failed items' info words are fetched from the device, and a
// deferred run whose words a later run wrote over runs again alone to fetch them.
//
//===----------------------------------------------------------------------===//
#include "GpuTestUtil.h"

#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
#include "runtime/cuda/CudaBackend.h"
#include "support/Numeric.h"
#include "support/SpdBatch.h"

#include <fmt/format.h>

namespace graphc {
namespace {

using testing::assumedSpdSolve;
using testing::backwardError;
using testing::partlyIndefiniteBatch;

constexpr int64_t kCols = 2;

/// Each of the `batch` items of the host array `x` solves its system to rounding.
void expectSolved(const std::vector<Array>& in, const Array& x, int64_t batch,
                  const std::string& what) {
  for (int64_t k = 0; k < batch; ++k)
    EXPECT_LE(backwardError(in[0], x, in[1], k), 1e-14) << what << ", item " << k;
}

Array itemOf(const Array& a, int64_t k) {
  return a.view(a.shape().drop_front(), a.strides().drop_front(), k * a.strides().front());
}

TEST(CudaItemFallback, OnlyTheIndefiniteItemsAreRedoneWithLu) {
  GRAPHC_REQUIRE_GPU();
  const int64_t batch = 8;
  const std::vector<int64_t> indefinite = {1, 4, 6};
  for (int64_t n : {5, 40, 120}) { // the CholeskySolve kernel, then cuSOLVER
    std::string what = fmt::format("n = {}", n);
    std::unique_ptr<ir::Graph> g = assumedSpdSolve(n, kCols);
    auto exe = compile(*g, getBackend("cuda"), {.batch = batch});
    std::vector<Array> in = partlyIndefiniteBatch(batch, n, kCols, indefinite, 7);
    ::testing::internal::CaptureStderr();
    std::vector<Array> got = exe->run(in); // host arrays
    std::string log = ::testing::internal::GetCapturedStderr();
    ASSERT_EQ(got[0].device(), Device::Host);
    expectSolved(in, got[0], batch, what);
    EXPECT_EQ(exe->fallbacks(), 1) << what;
    EXPECT_EQ(exe->itemFallbacks(), 3) << what;
    EXPECT_NE(log.find("falls back to LU for batch items 1, 4, 6 of this run"), std::string::npos)
        << log;
    // Device arrays: run() and into outputs.
    std::vector<Array> device = {cuda::toDevice(in[0]), cuda::toDevice(in[1])};
    ::testing::internal::CaptureStderr();
    Array fromDevice = exe->run(device)[0];
    ASSERT_EQ(fromDevice.device(), Device::Cuda);
    expectSolved(in, cuda::toHost(fromDevice), batch, what + ", device arrays");
    Array out = exe->newOutput(0);
    exe->run(device, {out});
    expectSolved(in, cuda::toHost(out), batch, what + ", into outputs");
    // Deferred: an SPD batch, then the partly indefinite one.
    std::vector<Array> spd = partlyIndefiniteBatch(batch, n, kCols, {}, 7);
    std::vector<Array> spdDevice = {cuda::toDevice(spd[0]), cuda::toDevice(spd[1])};
    Array first = exe->newOutput(0), second = exe->newOutput(0);
    exe->enqueue(spdDevice, {first});
    exe->enqueue(device, {second});
    exe->finish();
    ::testing::internal::GetCapturedStderr();
    expectSolved(in, cuda::toHost(second), batch, what + ", deferred");
    EXPECT_EQ(exe->fallbacks(), 4) << what;
    EXPECT_EQ(exe->itemFallbacks(), 12) << what;
    // The SPD items' results are the ones an all-SPD batch gives.
    Array clean = cuda::toHost(first);
    expectSolved(spd, clean, batch, what + ", all SPD");
    for (int64_t k : {0, 2, 3, 5, 7})
      EXPECT_EQ(testing::relativeDifference(itemOf(got[0], k), itemOf(clean, k)), 0.0)
          << what << ", item " << k;
  }
}

/// Past 1024 items a run copies back a summary of the info words: a failure fetches
/// the items' words from the device, which holds those of the lane's last run.
TEST(CudaItemFallback, LargeBatchesFetchTheFailedItemsFromTheDevice) {
  GRAPHC_REQUIRE_GPU();
  const int64_t batch = 1100, n = 4;
  std::unique_ptr<ir::Graph> g = assumedSpdSolve(n, kCols);
  auto exe = compile(*g, getBackend("cuda"), {.batch = batch});
  std::vector<Array> in = partlyIndefiniteBatch(batch, n, kCols, {3, 1099}, 5);
  ::testing::internal::CaptureStderr();
  std::vector<Array> got = exe->run(in);
  std::string log = ::testing::internal::GetCapturedStderr();
  expectSolved(in, got[0], batch, "batch 1100");
  EXPECT_EQ(exe->fallbacks(), 1);
  EXPECT_EQ(exe->itemFallbacks(), 2);
  EXPECT_NE(log.find("falls back to LU for batch items 3, 1099 of this run"), std::string::npos)
      << log;
  // Deferred: an SPD batch, then the partly indefinite one (the lane's last run).
  std::vector<Array> device = {cuda::toDevice(in[0]), cuda::toDevice(in[1])};
  std::vector<Array> spd = partlyIndefiniteBatch(batch, n, kCols, {}, 5);
  std::vector<Array> spdDevice = {cuda::toDevice(spd[0]), cuda::toDevice(spd[1])};
  Array first = exe->newOutput(0), second = exe->newOutput(0);
  ::testing::internal::CaptureStderr();
  exe->enqueue(spdDevice, {first});
  exe->enqueue(device, {second});
  exe->finish();
  ::testing::internal::GetCapturedStderr();
  expectSolved(spd, cuda::toHost(first), batch, "deferred, all SPD");
  expectSolved(in, cuda::toHost(second), batch, "deferred");
  EXPECT_EQ(exe->fallbacks(), 2);
  EXPECT_EQ(exe->itemFallbacks(), 4);
  // The other way round the failed run's words are gone (the lane's later run wrote
  // over them): the run goes again alone, which names its items, and they alone are
  // redone.
  ::testing::internal::CaptureStderr();
  exe->enqueue(device, {first});
  exe->enqueue(spdDevice, {second});
  exe->finish();
  ::testing::internal::GetCapturedStderr();
  expectSolved(in, cuda::toHost(first), batch, "deferred, failing first");
  expectSolved(spd, cuda::toHost(second), batch, "deferred, all SPD second");
  EXPECT_EQ(exe->fallbacks(), 3);
  EXPECT_EQ(exe->itemFallbacks(), 6);
}

} // namespace
} // namespace graphc
