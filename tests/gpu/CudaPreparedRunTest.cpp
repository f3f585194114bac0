//===- tests/gpu/CudaPreparedRunTest.cpp - Runs into device arrays, deferred ===//
//
// The cuda backend's prepared runs against the cpu backend on random inputs:
// every kind of step captured in a CUDA graph; runs into the caller's device
// arrays with new buffers every run (the captured graph is pointed at them) and
// the same with graphs off; graphs where library calls read parameters and write
// outputs (staged and copied, or read in place when too large to copy every
// run); K deferred runs with one wait, on several lanes, in order where they
// depend on each other; failures reported by finish() with their
// run (solver info words and kernel error words, beyond the check ring's size;
// a batch's first failing item, summarized on the device);
// and concurrent run() calls from several threads (8 of them against the same
// inputs run one after another).
//
//===----------------------------------------------------------------------===//
#include "GpuTestUtil.h"

#include "bench/Workloads.h"
#include "ir/Parser.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
#include "runtime/cuda/Check.h"
#include "runtime/cuda/CudaBackend.h"
#include "runtime/cuda/FusedKernel.h"
#include "runtime/cuda/PreparedProgram.h"
#include "support/Numeric.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

namespace graphc {
namespace {

/// Library calls read the parameters %x and %w and write outputs %c and %g;
/// fused kernels write %t and %s; %w is returned as it is and %t twice.
constexpr const char* kMixed = R"(
graph @mixed(%x: f64[64,32], %w: f64[32,16], %b: f64[16]) {
  %c = matmul %x, %w
  %bb = broadcast_to %b {shape=[64,16]}
  %z = add %c, %bb
  %t = tanh %z
  %g = matmul %t, %w {transpose_b}
  %s = sum %g {axes=[1]}
  return %t, %s, %c, %g, %w, %t
})";

/// A Cholesky whose info words fail the run for a matrix that is not SPD.
constexpr const char* kCholesky = R"(
graph @chol(%a: f64[4,4]) {
  %l = cholesky %a
  %m = mul %l, %l
  return %m
})";

using testing::deviceOutputs;
using testing::onDevice;

void expectOutputs(const std::vector<Array>& got, const std::vector<Array>& want,
                   const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_LE(testing::relativeDifference(cuda::toHost(got[i]), want[i]), 1e-12)
        << what << ", output " << i;
}

using testing::GraphsSetting;

TEST(CudaPreparedRun, RunsIntoNewDeviceBuffersEveryRun) {
  GRAPHC_REQUIRE_GPU();
  auto g = ir::parseGraph(kMixed);
  auto cpu = getBackend("cpu").compile(*g);
  for (bool graphs : {true, false}) {
    GraphsSetting setting(graphs);
    auto exe = getBackend("cuda").compile(*g);
    for (uint64_t run = 0; run < 4; ++run) {
      std::vector<Array> host = testing::randomInputs(*g, 10 + run);
      std::vector<Array> outs = deviceOutputs(*exe);
      exe->run(onDevice(host), outs);
      expectOutputs(outs, cpu->run(host),
                    fmt::format("graphs {}, run {}", graphs ? "on" : "off", run));
    }
  }
}

/// Runs are captured as CUDA graphs: a fused kernel alone, kernels with library
/// calls, data movement, and a solve of small matrices formed in its kernel. A
/// failed capture would leave the results right and every launch paid, so only
/// the counts show it.
TEST(CudaPreparedRun, ProgramsAreCapturedAsGraphs) {
  GRAPHC_REQUIRE_GPU();
  GraphsSetting on(true);
  const char* moves = R"(
graph @moves(%x: f64[6,10]) {
  %t = transpose %x {perm=[1,0]}
  %e = exp %t
  %l = tril %e
  return %l
})";
  std::vector<std::string> texts = {kMixed, bench::chainGraph(1024, "f32"), moves,
                                    bench::batchedSpdGraph(64, 32, "f64"),
                                    bench::batchedSpdGraph(8, 100, "f64")};
  for (const std::string& text : texts) {
    auto g = ir::parseGraph(text);
    SCOPED_TRACE(g->name());
    auto exe = getBackend("cuda").compile(*g);
    std::vector<Array> host = testing::randomInputs(*g, 30), outs = deviceOutputs(*exe);
    cuda::CaptureCounts before = cuda::captureCounts();
    exe->run(onDevice(host), outs);
    cuda::CaptureCounts after = cuda::captureCounts();
    EXPECT_EQ(after.captured, before.captured + 1);
    EXPECT_EQ(after.failed, before.failed);
    std::vector<Array> want = getBackend("cpu").compile(*g)->run(host);
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_LE(testing::relativeDifference(cuda::toHost(outs[i]), want[i]),
                g->params().front()->type().dtype == DType::F32 ? 1e-6 : 1e-12)
          << "output " << i;
  }
}

/// GRAPHC_PROFILE=steps times every step of each run; the table goes to standard
/// error when the executable goes, and the results stay right.
TEST(CudaPreparedRun, ProfiledRunsTimeEveryStep) {
  GRAPHC_REQUIRE_GPU();
  auto g = ir::parseGraph(kMixed);
  std::vector<Array> host = testing::randomInputs(*g, 40);
  std::vector<Array> want = getBackend("cpu").compile(*g)->run(host);
  setenv("GRAPHC_PROFILE", "steps", 1);
  ::testing::internal::CaptureStderr();
  {
    auto exe = getBackend("cuda").compile(*g);
    for (int run = 0; run < 3; ++run) {
      std::vector<Array> outs = deviceOutputs(*exe);
      exe->run(onDevice(host), outs);
      expectOutputs(outs, want, fmt::format("profiled run {}", run));
    }
  }
  std::string table = ::testing::internal::GetCapturedStderr();
  unsetenv("GRAPHC_PROFILE");
  EXPECT_EQ(table.rfind("profile of @mixed: 3 run(s), median ms per step\n", 0), 0u) << table;
  EXPECT_NE(table.find("  step   0 "), std::string::npos) << table;
  EXPECT_NE(table.find("%  matmul\n"), std::string::npos) << table;
  EXPECT_NE(table.find("%  fused["), std::string::npos) << table;
  size_t total = table.find("  sum ");
  ASSERT_NE(total, std::string::npos) << table;
  EXPECT_GT(std::stod(table.substr(total + 6)), 0.0) << table;
}

/// Library calls read small parameters from staging buffers in a captured graph,
/// and parameters past 16 MB in place, uncaptured; both give the cpu's results
/// with new buffers every run.
TEST(CudaPreparedRun, LargeParametersAreReadInPlace) {
  GRAPHC_REQUIRE_GPU();
  const char* text = R"(
graph @mm(%x: f64[{0},{0}], %w: f64[{0},8]) {{
  %c = matmul %x, %w
  %t = tanh %c
  return %t
}})";
  for (int64_t n : {64, 1500}) {
    SCOPED_TRACE(fmt::format("n = {}", n));
    auto g = ir::parseGraph(fmt::format(fmt::runtime(text), n));
    cuda::PreparedProgram prepared(*g);
    bool large = n * n * 8 > (16 << 20);
    EXPECT_EQ(prepared.capturable(), !large);
    EXPECT_EQ(prepared.staged().size(), large ? 0u : 2u);
    auto cpu = getBackend("cpu").compile(*g);
    auto exe = getBackend("cuda").compile(*g);
    for (uint64_t run = 0; run < 3; ++run) {
      std::vector<Array> host = testing::randomInputs(*g, 20 + run);
      std::vector<Array> outs = deviceOutputs(*exe);
      exe->run(onDevice(host), outs);
      expectOutputs(outs, cpu->run(host), fmt::format("run {}", run));
    }
  }
}

/// The backend-neutral uploads, downloads and outputs give device arrays on cuda.
TEST(CudaPreparedRun, ArraysInTheBackendsMemory) {
  GRAPHC_REQUIRE_GPU();
  auto g = ir::parseGraph(kMixed);
  auto exe = compile(*g, getBackend("cuda"));
  std::vector<Array> host = testing::randomInputs(*g, 4), in, outs;
  for (const Array& a : host)
    in.push_back(exe->toDevice(a));
  for (size_t i = 0; i < exe->signature().outputTypes.size(); ++i)
    outs.push_back(exe->newOutput(i));
  ASSERT_EQ(in[0].device(), Device::Cuda);
  ASSERT_EQ(outs[0].device(), Device::Cuda);
  exe->run(in, outs);
  std::vector<Array> want = getBackend("cpu").compile(*g)->run(host);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_LE(testing::relativeDifference(exe->toHost(outs[i]), want[i]), 1e-12) << i;
}

TEST(CudaPreparedRun, DeferredRunsWaitOnce) {
  GRAPHC_REQUIRE_GPU();
  auto g = ir::parseGraph(kMixed);
  auto cpu = getBackend("cpu").compile(*g);
  auto exe = compile(*g, getBackend("cuda"));
  std::vector<std::vector<Array>> host, outs;
  for (uint64_t k = 0; k < 40; ++k) {
    host.push_back(testing::randomInputs(*g, 100 + k));
    outs.push_back(deviceOutputs(*exe));
    exe->enqueue(onDevice(host.back()), outs.back());
  }
  exe->finish();
  for (size_t k = 0; k < host.size(); ++k)
    expectOutputs(outs[k], cpu->run(host[k]), fmt::format("run {}", k));
}

/// Deferred runs of a one-kernel program share launches: 600 runs (more than one
/// launch's table), every fifth reading the previous run's output, which makes it
/// wait for the runs before it; all match the CPU.
TEST(CudaPreparedRun, DeferredRunsOfOneKernelShareLaunches) {
  GRAPHC_REQUIRE_GPU();
  auto g = ir::parseGraph(R"(
graph @chain(%x: f32[1000], %w: f32[1000]) {
  %a = mul %x, %w
  %t = tanh %a
  %s = add %t, %x
  return %s
})");
  auto exe = getBackend("cuda").compile(*g);
  auto cpu = getBackend("cpu").compile(*g);
  Array w = Array::randomNormal(ir::DType::F32, {1000}, 1);
  Array wd = cuda::toDevice(w);
  std::vector<Array> hostIn, outs;
  for (int k = 0; k < 600; ++k) {
    bool chained = k % 5 == 4;
    hostIn.push_back(chained ? Array() : Array::randomNormal(ir::DType::F32, {1000}, 10 + k));
    outs.push_back(cuda::emptyOnDevice(ir::DType::F32, {1000}));
    exe->enqueue({chained ? outs[k - 1] : cuda::toDevice(hostIn[k]), wd}, {outs[k]});
  }
  exe->finish();
  Array previous;
  for (int k = 0; k < 600; ++k) {
    Array in = hostIn[k].valid() ? hostIn[k] : previous;
    Array want = cpu->run({in, w})[0];
    previous = cuda::toHost(outs[k]);
    EXPECT_LE(testing::relativeDifference(previous, want), 1e-6) << "run " << k;
  }
}

/// Deferred runs of a program with library calls go round several lanes; runs
/// that depend on each other through their arrays keep their order: run k reads run
/// k - 1's output (unless k % 3 == 0) and writes one of 4 buffers in turn, so it
/// also overwrites what runs k - 3 (read) and k - 4 (wrote) used. All match the CPU
/// applying the runs one after another.
TEST(CudaPreparedRun, DeferredRunsOnSeveralLanesKeepTheirOrder) {
  GRAPHC_REQUIRE_GPU();
  auto g = ir::parseGraph(R"(
graph @step(%a: f64[48,48], %x: f64[48,8]) {
  %y = solve %a, %x
  %z = tanh %y
  return %z
})");
  auto exe = getBackend("cuda").compile(*g);
  auto cpu = getBackend("cpu").compile(*g);
  std::vector<double> av = Array::randomNormal(ir::DType::F64, {48, 48}, 3).toVector<double>();
  for (int i = 0; i < 48; ++i)
    av[i * 48 + i] += 48;
  Array a = Array::fromVector<double>(av, {48, 48}), ad = cuda::toDevice(a);
  std::vector<Array> buffers;
  for (int i = 0; i < 4; ++i)
    buffers.push_back(cuda::emptyOnDevice(ir::DType::F64, {48, 8}));
  std::vector<Array> want, inputs; // the inputs live until finish()
  Array previous, previousDevice;
  for (int k = 0; k < 64; ++k) {
    bool fresh = k % 3 == 0;
    Array x = fresh ? Array::randomNormal(ir::DType::F64, {48, 8}, 20 + k) : previous;
    previous = cpu->run({a, x})[0];
    want.push_back(previous);
    inputs.push_back(fresh ? cuda::toDevice(x) : previousDevice);
    exe->enqueue({ad, inputs.back()}, {buffers[k % 4]});
    previousDevice = buffers[k % 4];
  }
  exe->finish();
  for (int k = 60; k < 64; ++k)
    EXPECT_LE(testing::relativeDifference(cuda::toHost(buffers[k % 4]), want[k]), 1e-12)
        << "run " << k;
}

/// Runs ordered on the caller's stream: the input is written there just before
/// (no wait), the output read there just after; one run with library calls, one
/// that is a single kernel.
TEST(CudaPreparedRun, RunsOrderedOnTheCallersStream) {
  GRAPHC_REQUIRE_GPU();
  cudaStream_t stream;
  GRAPHC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (const char* text : {kMixed, R"(
graph @one(%x: f64[64,32], %w: f64[32,16], %b: f64[16]) {
  %e = exp %x
  return %e
})"}) {
    auto g = ir::parseGraph(text);
    auto exe = getBackend("cuda").compile(*g);
    std::vector<Array> host = testing::randomInputs(*g, 5), device = onDevice(host);
    std::vector<Array> outs = deviceOutputs(*exe);
    // Overwrite x on the caller's stream, then run on it without waiting.
    Array x = testing::randomInputs(*g, 6)[0];
    GRAPHC_CUDA_CHECK(cudaMemcpyAsync(device[0].rawData(), x.rawData(), x.type().bytes(),
                                      cudaMemcpyHostToDevice, stream));
    host[0] = x;
    exe->enqueue(device, outs, stream);
    Array got = Array::empty(outs[0].dtype(), outs[0].shape());
    GRAPHC_CUDA_CHECK(cudaMemcpyAsync(got.rawData(), outs[0].rawData(), got.type().bytes(),
                                      cudaMemcpyDeviceToHost, stream));
    GRAPHC_CUDA_CHECK(cudaStreamSynchronize(stream));
    EXPECT_LE(testing::relativeDifference(got, getBackend("cpu").compile(*g)->run(host)[0]), 1e-12)
        << "@" << g->name();
    exe->finish();
  }
  cudaStreamDestroy(stream);
}

/// 300 runs, more than the check ring holds: the failure of run 280 is still
/// found, and named, after the ring was drained on the way.
TEST(CudaPreparedRun, FinishNamesTheFailedRunBeyondTheRing) {
  GRAPHC_REQUIRE_GPU();
  auto g = ir::parseGraph(kCholesky);
  auto exe = getBackend("cuda").compile(*g);
  Array spd = cuda::toDevice(
      Array::fromVector<double>({4, 1, 0, 0, 1, 3, 1, 0, 0, 1, 2, 0, 0, 0, 0, 1}, {4, 4}));
  Array bad = cuda::toDevice(
      Array::fromVector<double>({1, 2, 0, 0, 2, 1, 0, 0, 0, 0, 3, 0, 0, 0, 0, 1}, {4, 4}));
  std::vector<Array> outs;
  for (int k = 0; k < 300; ++k) {
    outs.push_back(cuda::emptyOnDevice(ir::DType::F64, {4, 4}));
    exe->enqueue({k == 280 || k == 290 ? bad : spd}, {outs.back()});
  }
  try {
    exe->finish();
    FAIL() << "expected the failure of run 280";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "@chol: run 280 of 300 enqueued: cholesky (%l): matrix is not "
                           "positive definite (batch item 0, leading minor 2)");
  }
  Array want = getBackend("cpu").compile(*g)->run({cuda::toHost(spd)})[0];
  EXPECT_LE(testing::relativeDifference(cuda::toHost(outs[299]), want), 1e-12);
  exe->enqueue({spd}, {outs[0]});
  EXPECT_NO_THROW(exe->finish());
}

/// n x n identities with `shift` on the diagonal and 1/n everywhere else, but for
/// the items in `bad`, whose column 1 (cholesky: entry (1,1)) is zero.
Array batchOf(int64_t batch, int64_t n, double shift, const std::vector<int64_t>& bad) {
  std::vector<double> v(batch * n * n, 1.0 / n);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t d = 0; d < n; ++d)
      v[(b * n + d) * n + d] += shift;
    if (std::count(bad.begin(), bad.end(), b))
      for (int64_t i = 0; i < n; ++i)
        v[(b * n + i) * n + 1] = v[(b * n + 1) * n + i] = 0;
  }
  return Array::fromVector<double>(v, {batch, n, n});
}

/// A batch's info words stay on the device: a run copies back only the first
/// failing item and its word, whatever the batch size; captured or deferred runs
/// name that item, and a good run after a failed one succeeds.
TEST(CudaPreparedRun, BatchedFailuresNameTheFirstItem) {
  GRAPHC_REQUIRE_GPU();
  auto g = ir::parseGraph(R"(
graph @bad(%a: f64[5000,4,4], %s: f64[3000,8,8], %b: f64[5000,4,2]) {
  %x = solve %a, %b
  %l = cholesky %s
  return %x, %l
})");
  auto exe = getBackend("cuda").compile(*g);
  std::vector<double> b(5000 * 4 * 2);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = std::sin(0.1 * i);
  Array rhs = cuda::toDevice(Array::fromVector<double>(b, {5000, 4, 2}));
  Array a = cuda::toDevice(batchOf(5000, 4, 2.0, {})),
        s = cuda::toDevice(batchOf(3000, 8, 1.0, {}));
  Array badA = cuda::toDevice(batchOf(5000, 4, 2.0, {4999, 1234, 2000}));
  Array badS = cuda::toDevice(batchOf(3000, 8, 1.0, {2999, 17}));
  std::vector<Array> outs = deviceOutputs(*exe);
  for (int k = 0; k < 3; ++k) // the first run steps, the next ones replay a graph
    EXPECT_NO_THROW(exe->run({a, s, rhs}, outs));
  std::string solveFails = "solve (%x): matrix is singular (batch item 1234, U(2,2) = 0)";
  std::string cholFails =
      "cholesky (%l): matrix is not positive definite (batch item 17, leading minor 2)";
  for (int k = 0; k < 2; ++k) {
    try {
      exe->run({badA, s, rhs}, outs);
      ADD_FAILURE() << "expected " << solveFails;
    } catch (const Error& e) {
      EXPECT_EQ(e.message(), solveFails);
    }
    try {
      exe->run({a, badS, rhs}, outs);
      ADD_FAILURE() << "expected " << cholFails;
    } catch (const Error& e) {
      EXPECT_EQ(e.message(), cholFails);
    }
    EXPECT_NO_THROW(exe->run({a, s, rhs}, outs));
  }
  exe->enqueue({a, s, rhs}, outs);
  exe->enqueue({a, badS, rhs}, outs);
  try {
    exe->finish();
    ADD_FAILURE() << "expected the failure of run 1";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "@bad: run 1 of 2 enqueued: " + cholFails);
  }
  std::vector<Array> want =
      getBackend("cpu").compile(*g)->run({cuda::toHost(a), cuda::toHost(s), cuda::toHost(rhs)});
  expectOutputs(exe->run({a, s, rhs}), want, "good inputs after failures");
}

TEST(CudaPreparedRun, KernelErrorWordsOfDeferredRuns) {
  GRAPHC_REQUIRE_GPU();
  auto g = ir::parseGraph(R"(
graph @d(%a: i32[300], %b: i32[300]) {
  %q = div %a, %b
  return %q
})");
  auto exe = getBackend("cuda").compile(*g);
  std::vector<int32_t> ones(300, 1);
  std::vector<int32_t> zero = ones;
  zero[17] = 0;
  Array a = cuda::toDevice(Array::fromVector<int32_t>(std::vector<int32_t>(300, 6), {300}));
  Array good = cuda::toDevice(Array::fromVector<int32_t>(ones, {300}));
  Array bad = cuda::toDevice(Array::fromVector<int32_t>(zero, {300}));
  std::vector<Array> outs;
  for (int k = 0; k < 5; ++k) {
    outs.push_back(cuda::emptyOnDevice(ir::DType::I32, {300}));
    exe->enqueue({a, k == 3 ? bad : good}, {outs.back()});
  }
  try {
    exe->finish();
    FAIL() << "expected a division by zero";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "@d: run 3 of 5 enqueued: div (%q): integer division by zero");
  }
  EXPECT_EQ(cuda::toHost(outs[4]).toVector<int32_t>(), std::vector<int32_t>(300, 6));
}

TEST(CudaPreparedRun, ConcurrentRunsFromSeveralThreads) {
  GRAPHC_REQUIRE_GPU();
  auto g = ir::parseGraph(kMixed);
  auto exe = getBackend("cuda").compile(*g);
  auto cpu = getBackend("cpu").compile(*g);
  constexpr int kThreads = 4;
  std::vector<std::vector<Array>> host, device, outs;
  for (int t = 0; t < kThreads; ++t) {
    host.push_back(testing::randomInputs(*g, 300 + t));
    device.push_back(onDevice(host.back()));
    outs.push_back(deviceOutputs(*exe));
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 25; ++r)
        exe->run(device[t], outs[t]);
    });
  for (std::thread& t : threads)
    t.join();
  for (int t = 0; t < kThreads; ++t)
    expectOutputs(outs[t], cpu->run(host[t]), fmt::format("thread {}", t));
}

/// One executable run from 8 host threads at once, 20 times each, runs into the
/// caller's device arrays interleaved with runs of host arrays returning new ones
/// (each on a lane of its own, made as threads need them): every result is the
/// one the same inputs gave when run one after another, bit for bit (the same
/// kernels and library routes on every lane), and those match the cpu backend.
TEST(CudaPreparedRun, EightThreadsAgreeWithSequentialRuns) {
  GRAPHC_REQUIRE_GPU();
  auto g = ir::parseGraph(kMixed);
  auto exe = getBackend("cuda").compile(*g);
  auto cpu = getBackend("cpu").compile(*g);
  constexpr int kThreads = 8, kRuns = 20;
  std::vector<std::vector<Array>> host, device, outs, want;
  for (int t = 0; t < kThreads; ++t) {
    host.push_back(testing::randomInputs(*g, 700 + t));
    device.push_back(onDevice(host.back()));
    outs.push_back(deviceOutputs(*exe));
    want.push_back(exe->run(host.back())); // one after another
    expectOutputs(want.back(), cpu->run(host.back()), fmt::format("sequential run {}", t));
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        exe->run(device[t], outs[t]);
        std::vector<Array> fresh = exe->run(host[t]);
        for (size_t i = 0; i < want[t].size(); ++i)
          EXPECT_EQ(testing::relativeDifference(fresh[i], want[t][i]), 0.0)
              << "thread " << t << ", run " << r << ", output " << i;
      }
    });
  for (std::thread& t : threads)
    t.join();
  for (int t = 0; t < kThreads; ++t)
    for (size_t i = 0; i < want[t].size(); ++i)
      EXPECT_EQ(testing::relativeDifference(cuda::toHost(outs[t][i]), want[t][i]), 0.0)
          << "thread " << t << ", output " << i;
}

TEST(CudaPreparedRun, HostArraysAreRejectedForRunsIntoOutputs) {
  GRAPHC_REQUIRE_GPU();
  auto g = ir::parseGraph(kCholesky);
  auto exe = getBackend("cuda").compile(*g);
  Array host = Array::zeros(ir::DType::F64, {4, 4});
  try {
    exe->run({host}, {cuda::emptyOnDevice(ir::DType::F64, {4, 4})});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "@chol: input 0 (%a) is in host memory; the cuda backend runs into "
                           "arrays in cuda memory");
  }
}

/// Where a synchronous run of a small kernel spends its time (a tuning aid, not a
/// check): the bare launch and wait against the prepared run. Run with
/// --gtest_also_run_disabled_tests.
TEST(CudaPreparedRun, DISABLED_SmallRunLatency) {
  GRAPHC_REQUIRE_GPU();
  auto g = ir::parseGraph(R"(
graph @chain(%x: f32[1024], %w: f32[1024]) {
  %a = mul %x, %w
  %t = tanh %a
  return %t
})");
  auto exe = getBackend("cuda").compile(*g);
  std::vector<Array> in = onDevice(testing::randomInputs(*g, 1)), outs = deviceOutputs(*exe);
  codegen::Kernel k = std::get<codegen::Kernel>(codegen::buildKernel(
      {g->outputs()[0].node->operand(0).node, g->outputs()[0].node}, {g->outputs()[0]}));
  cuda::CudaFusedKernel kernel(k);
  cudaStream_t stream;
  GRAPHC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  auto median = [](auto&& f) {
    std::vector<double> us;
    for (int i = 0; i < 2000; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      f();
      us.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
  };
  auto launch = [&] {
    kernel.launch({in[0].rawData(), in[1].rawData()}, {outs[0].rawData()}, nullptr, stream);
  };
  double launchOnly = median(launch);
  GRAPHC_CUDA_CHECK(cudaStreamSynchronize(stream));
  double launchSync = median([&] {
    launch();
    GRAPHC_CUDA_CHECK(cudaStreamSynchronize(stream));
  });
  double launchSpin = median([&] {
    launch();
    while (cudaStreamQuery(stream) == cudaErrorNotReady) {
    }
  });
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  GRAPHC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  launch();
  GRAPHC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  GRAPHC_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  double graphSync = median([&] {
    GRAPHC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    GRAPHC_CUDA_CHECK(cudaStreamSynchronize(stream));
  });
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  double run = median([&] { exe->run(in, outs); });
  double chainRun = [&] { // W3's chain at 1024, through the passes as bench_gpu runs it
    auto chain = ir::parseGraph(bench::chainGraph(1024, "f32"));
    auto optimized = compile(*chain, getBackend("cuda"));
    std::vector<Array> ins = onDevice(testing::randomInputs(*chain, 2));
    std::vector<Array> out = deviceOutputs(*optimized);
    return median([&] { optimized->run(ins, out); });
  }();
  double runNoGraph = [&] {
    GraphsSetting off(false);
    auto plain = getBackend("cuda").compile(*g);
    return median([&] { plain->run(in, outs); });
  }();
  double deferredOne = median([&] {
    exe->enqueue(in, outs);
    exe->finish();
  });
  fmt::print("launch {:.2f} us, launch+sync {:.2f}, launch+spin {:.2f}, graph+sync {:.2f}, "
             "run {:.2f}, run without graphs {:.2f}, enqueue+finish {:.2f}, W3 chain run {:.2f}\n",
             launchOnly, launchSync, launchSpin, graphSync, run, runNoGraph, deferredOne, chainRun);
  cudaStreamDestroy(stream);
}

} // namespace
} // namespace graphc
