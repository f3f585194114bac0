//===- tests/gpu/OutOfMemoryTest.cpp - The device out of memory mid-run ---===//
//
// The device runs out of memory: for the larger of two shapes of one graph, in the
// middle of a prepared run (after its inputs were uploaded, between its outputs)
// whose lane replays a CUDA graph, in a batch of deferred runs (a lane made for a
// run cannot get its memory), and while the first run of a lane is captured with
// no memory left at all. Each failure is a cuda::DeviceOutOfMemory; afterwards the
// same executable runs again once memory is back, replaying the graph it had, and
// matches the cpu backend; and the device pool holds exactly what it held before
// (DevicePool::statistics), so the failure leaked nothing.
//
// Memory is taken away by a DeviceHog: cudaMalloc blocks until only a given number
// of bytes is left free (after the pool gave its cache back to the device).
//
//===----------------------------------------------------------------------===//
#include "GpuTestUtil.h"

#include "ir/Parser.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
#include "runtime/cuda/Check.h"
#include "runtime/cuda/CudaBackend.h"
#include "runtime/cuda/Pool.h"
#include "support/Numeric.h"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace graphc {
namespace {

using cuda::DevicePool;

/// Device memory taken with cudaMalloc until less than `leaveBytes` + 1 MB is
/// free; given back when the hog goes (or on release()).
class DeviceHog {
public:
  explicit DeviceHog(size_t leaveBytes) {
    DevicePool::forDevice(0).trim(0); // the pool's cache back to the device first
    for (size_t chunk = size_t{8} << 30; chunk >= (size_t{1} << 20); chunk /= 2)
      while (freeBytes() >= leaveBytes + chunk) {
        void* p = nullptr;
        if (cudaMalloc(&p, chunk) != cudaSuccess) {
          cudaGetLastError();
          break;
        }
        blocks_.push_back(p);
      }
  }
  DeviceHog(const DeviceHog&) = delete;
  DeviceHog& operator=(const DeviceHog&) = delete;
  ~DeviceHog() { release(); }

  void release() {
    for (void* p : blocks_)
      cudaFree(p);
    blocks_.clear();
  }
  static size_t freeBytes() {
    size_t free = 0, total = 0;
    GRAPHC_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return free;
  }

private:
  std::vector<void*> blocks_;
};

uint64_t poolUsed() {
  return DevicePool::forDevice(0).statistics().usedBytes;
}

using testing::deviceOutputs;
using testing::onDevice;

void expectSame(const std::vector<Array>& got, const std::vector<Array>& want,
                const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_LE(testing::relativeDifference(cuda::toHost(got[i]), want[i]), 1e-12)
        << what << ", output " << i;
}

/// Runs `f`, which must fail with DeviceOutOfMemory; returns its message.
template <typename F> std::string expectOutOfMemory(F&& f) {
  try {
    f();
  } catch (const cuda::DeviceOutOfMemory& e) {
    return e.message();
  } catch (const Error& e) {
    ADD_FAILURE() << "expected a DeviceOutOfMemory, got: " << e.what();
    return e.message();
  }
  ADD_FAILURE() << "expected a DeviceOutOfMemory";
  return "";
}

/// An outer product, its exp and its row sums: %p and %e are n x m (f64).
std::string wideGraph(int64_t n, int64_t m) {
  return fmt::format(R"(
graph @wide(%x: f64[{0},1], %y: f64[1,{1}]) {{
  %p = matmul %x, %y
  %e = exp %p
  %s = sum %e {{axes=[1]}}
  return %s, %e
}})",
                     n, m);
}

TEST(OutOfMemory, TheLargerOfTwoShapesFailsAndLeavesThePoolAsItWas) {
  GRAPHC_REQUIRE_GPU();
  uint64_t before = poolUsed();
  // 400000 x 400000 f64 intermediates: 1.28 TB each.
  auto huge = ir::parseGraph(wideGraph(400000, 400000));
  std::vector<Array> hugeInputs = testing::randomInputs(*huge, 1);
  std::string message =
      expectOutOfMemory([&] { compile(*huge, getBackend("cuda"))->run(hugeInputs); });
  EXPECT_NE(message.find("GPU out of memory: cannot allocate 1280000000000 bytes"),
            std::string::npos)
      << message;
  hugeInputs.clear();
  EXPECT_EQ(poolUsed(), before);
  auto small = ir::parseGraph(wideGraph(300, 200));
  std::vector<Array> host = testing::randomInputs(*small, 1);
  expectSame(compile(*small, getBackend("cuda"))->run(host),
             getBackend("cpu").compile(*small)->run(host), "the smaller shape");
}

/// A run whose lane replays a captured graph runs out of memory after its inputs
/// were uploaded, between its two outputs (the second is 256 MB, and 128 MB are
/// left). Once memory is back, the same graph is replayed (nothing captured
/// again, no capture failed) and the results are right.
TEST(OutOfMemory, InAPreparedRunThatReplaysAGraph) {
  GRAPHC_REQUIRE_GPU();
  auto g = ir::parseGraph(wideGraph(2048, 16384));
  auto exe = getBackend("cuda").compile(*g);
  std::vector<Array> host = testing::randomInputs(*g, 2);
  std::vector<Array> want = getBackend("cpu").compile(*g)->run(host);
  expectSame(exe->run(host), want, "the first run (captured)");
  uint64_t before = poolUsed();
  cuda::CaptureCounts captured = cuda::captureCounts();
  {
    DeviceHog hog(size_t{128} << 20);
    std::string message = expectOutOfMemory([&] { exe->run(host); });
    EXPECT_NE(message.find("cannot allocate 268435456 bytes"), std::string::npos) << message;
  }
  EXPECT_EQ(poolUsed(), before) << "the failed run's uploads and first output went back";
  for (int run = 0; run < 2; ++run)
    expectSame(exe->run(host), want, fmt::format("run {} after memory came back", run));
  EXPECT_EQ(poolUsed(), before);
  cuda::CaptureCounts after = cuda::captureCounts();
  EXPECT_EQ(after.captured, captured.captured);
  EXPECT_EQ(after.failed, captured.failed);
}

constexpr const char* kSolves = R"(
graph @solves(%a: f64[40,40], %x: f64[40,6]) {
  %y = solve %a, %x
  %s = sin %y
  return %s
})";

/// Deferred solves go round several lanes, each made when a run first needs it:
/// with 8 MB left, the lane of the second run cannot be made (its cuBLAS
/// workspace alone is 32 MB), and enqueue() says so. The first run still finishes
/// right, the half-made lane gave everything back, and once memory is back a batch
/// of 24 runs on 16 lanes matches the cpu backend; the executable, once gone, gave
/// back everything it took.
TEST(OutOfMemory, InABatchOfDeferredRuns) {
  GRAPHC_REQUIRE_GPU();
  auto g = ir::parseGraph(kSolves);
  auto cpu = getBackend("cpu").compile(*g);
  std::vector<std::vector<Array>> host, device, outs;
  for (uint64_t k = 0; k < 24; ++k) {
    host.push_back(testing::randomInputs(*g, 40 + k));
    std::vector<double> a = host.back()[0].toVector<double>();
    for (int i = 0; i < 40; ++i)
      a[i * 40 + i] += 40; // well conditioned
    host.back()[0] = Array::fromVector<double>(a, {40, 40});
    device.push_back(onDevice(host.back()));
    outs.push_back({cuda::emptyOnDevice(DType::F64, {40, 6})});
  }
  uint64_t beforeCompile = poolUsed();
  {
    auto exe = getBackend("cuda").compile(*g);
    exe->enqueue(device[0], outs[0]);
    uint64_t before = poolUsed();
    {
      DeviceHog hog(size_t{8} << 20);
      std::string message = expectOutOfMemory([&] { exe->enqueue(device[1], outs[1]); });
      EXPECT_FALSE(message.empty());
      exe->finish();
    }
    expectSame(outs[0], cpu->run(host[0]), "the run enqueued before");
    EXPECT_EQ(poolUsed(), before) << "the lane that could not be made gave its memory back";
    for (size_t k = 0; k < host.size(); ++k)
      exe->enqueue(device[k], outs[k]);
    exe->finish();
    for (size_t k = 0; k < host.size(); ++k)
      expectSame(outs[k], cpu->run(host[k]), fmt::format("run {} after memory came back", k));
  }
  EXPECT_EQ(poolUsed(), beforeCompile);
}

/// The first run of a lane is captured with no device memory left (the run itself
/// allocates nothing: its arrays are the caller's). Capturing or instantiating
/// may fail for want of memory, and the run then goes step by step or fails (its
/// error is printed); either way, once memory is back the lane captures its graph
/// (exactly one capture by the end: running out of memory does not turn the
/// lane's graphs off) and the results are right.
TEST(OutOfMemory, WhileTheFirstRunIsCaptured) {
  GRAPHC_REQUIRE_GPU();
  testing::GraphsSetting on(true); // also when the suite runs with graphs off
  auto g = ir::parseGraph(R"(
graph @layer(%x: f64[96,24], %w: f64[24,40], %v: f64[40]) {
  %h = matmul %x, %w
  %vb = broadcast_to %v {shape=[96,40]}
  %a = mul %h, %vb
  %t = tanh %a
  %q = matmul %t, %t {transpose_a}
  %s = sum %q {axes=[0]}
  return %t, %q, %s
})");
  auto exe = getBackend("cuda").compile(*g);
  std::vector<Array> host = testing::randomInputs(*g, 3);
  std::vector<Array> device = onDevice(host), outs = deviceOutputs(*exe);
  uint64_t before = poolUsed();
  cuda::CaptureCounts start = cuda::captureCounts();
  {
    DeviceHog hog(0);
    try {
      exe->run(device, outs);
    } catch (const Error& e) { // DeviceOutOfMemory, or a launch that found no memory
      std::printf("the run with no memory left failed: %s\n", e.what());
    }
  }
  for (int run = 0; run < 3; ++run) {
    exe->run(device, outs);
    expectSame(outs, getBackend("cpu").compile(*g)->run(host),
               fmt::format("run {} after memory came back", run));
  }
  cuda::CaptureCounts end = cuda::captureCounts();
  EXPECT_EQ(end.captured, start.captured + 1);
  std::printf("captures that failed for want of memory: %llu\n",
              static_cast<unsigned long long>(end.failed - start.failed));
  EXPECT_EQ(poolUsed(), before);
}

} // namespace
} // namespace graphc
