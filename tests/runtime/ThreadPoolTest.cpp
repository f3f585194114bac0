//===- tests/runtime/ThreadPoolTest.cpp - The cpu backend's thread pool ---===//
//
// ThreadPool: parts are the documented contiguous ranges, each run once; loops use
// the workers as well as the caller; the error of the lowest part that threw is
// rethrown after every part ran; nested loops and loops from several threads at
// once finish. GRAPHC_NUM_THREADS sets the count (bad values are errors naming it)
// and bounds OpenBLAS. The cpu backend runs its fused kernels on the pool: large
// kernels of deferred runs (on the executable's own thread) next to synchronous
// runs give the reference results, and no thread is created per run (every thread
// seen while runs go on is still alive afterwards).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/ThreadPool.h"

#include "ir/Parser.h"
#include "runtime/Backends.h"
#include "runtime/core/Backend.h"
#include "support/Error.h"
#include "tests/runtime/TestUtil.h"

#include <gtest/gtest.h>

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <dirent.h>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

namespace graphc::testing {
namespace {

using cpu::ThreadPool;

/// The ids of this process's threads, from /proc/self/task.
std::set<long> liveThreads() {
  std::set<long> ids;
  DIR* dir = opendir("/proc/self/task");
  if (!dir)
    return ids;
  while (dirent* e = readdir(dir))
    if (e->d_name[0] != '.')
      ids.insert(std::atol(e->d_name));
  closedir(dir);
  return ids;
}

long threadId() {
  return static_cast<long>(syscall(SYS_gettid));
}

TEST(ThreadPool, PartsAreTheDocumentedContiguousRanges) {
  ThreadPool pool(4);
  for (auto [units, parts] : {std::pair<int64_t, int64_t>{1000, 7}, {5, 4}, {3, 8}, {1, 1}}) {
    std::mutex m;
    std::vector<std::pair<int64_t, int64_t>> seen;
    std::vector<int> hits(units, 0);
    pool.parallelFor(units, parts, [&](int64_t begin, int64_t end) {
      std::lock_guard<std::mutex> lock(m);
      seen.emplace_back(begin, end);
      for (int64_t u = begin; u < end; ++u)
        ++hits[u];
    });
    int64_t used = std::min(parts, units);
    std::sort(seen.begin(), seen.end());
    ASSERT_EQ(static_cast<int64_t>(seen.size()), used) << units << " units, " << parts << " parts";
    for (int64_t p = 0; p < used; ++p)
      EXPECT_EQ(seen[p], std::make_pair(units * p / used, units * (p + 1) / used));
    for (int64_t u = 0; u < units; ++u)
      EXPECT_EQ(hits[u], 1) << "unit " << u;
  }
  int calls = 0;
  pool.parallelFor(0, 4, [&](int64_t, int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ThreadPool, WorkersTakePartsBesideTheCaller) {
  ThreadPool pool(3);
  EXPECT_EQ(pool.threads(), 3u);
  std::mutex m;
  std::set<long> ran;
  std::atomic<int> arrived{0};
  pool.parallelFor(3, 3, [&](int64_t, int64_t) {
    {
      std::lock_guard<std::mutex> lock(m);
      ran.insert(threadId());
    }
    // Every part waits (bounded) until all three are running: only three threads can do it.
    ++arrived;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (arrived < 3 && std::chrono::steady_clock::now() < until)
      std::this_thread::yield();
  });
  EXPECT_EQ(arrived, 3);
  EXPECT_EQ(ran.size(), 3u);
  EXPECT_TRUE(ran.count(threadId())) << "the caller takes parts too";
  std::set<long> live = liveThreads();
  for (long id : ran)
    EXPECT_TRUE(live.count(id)) << "thread " << id << " is gone: not a persistent worker";
}

TEST(ThreadPool, RethrowsTheFirstPartsErrorAfterAllParts) {
  ThreadPool pool(2);
  std::atomic<int> ran{0};
  try {
    pool.parallelFor(100, 10, [&](int64_t begin, int64_t) {
      ++ran;
      if (begin == 70)
        throw std::runtime_error("part 7");
      if (begin == 20)
        throw Error("part 2");
    });
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "part 2");
  }
  EXPECT_EQ(ran, 10);
  // A loop on one thread (no workers) reports part 0's error too.
  ThreadPool alone(1);
  EXPECT_THROW(alone.parallelFor(4, 4, [](int64_t b, int64_t) { throw Error(std::to_string(b)); }),
               Error);
}

TEST(ThreadPool, NestedAndConcurrentLoopsFinish) {
  ThreadPool pool(2);
  auto nestedSum = [&] {
    std::atomic<int64_t> sum{0};
    pool.parallelFor(8, 8, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        pool.parallelFor(100, 4, [&](int64_t ib, int64_t ie) {
          for (int64_t j = ib; j < ie; ++j)
            sum += i * 100 + j;
        });
    });
    return sum.load();
  };
  EXPECT_EQ(nestedSum(), 799 * 800 / 2);
  std::vector<std::thread> callers;
  std::atomic<int> right{0};
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      for (int k = 0; k < 20; ++k)
        right += nestedSum() == 799 * 800 / 2;
    });
  for (std::thread& t : callers)
    t.join();
  EXPECT_EQ(right, 80);
}

/// Sets an environment variable for a scope.
class ScopedEnv {
public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name))
      old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(ThreadPool, ThreadCountFromTheEnvironment) {
  {
    ScopedEnv env("GRAPHC_NUM_THREADS", "3");
    EXPECT_EQ(cpu::sharedThreadCount(), 3u);
  }
  for (const char* bad : {"0", "-2", "two", "4x", ""}) {
    ScopedEnv env("GRAPHC_NUM_THREADS", bad);
    try {
      cpu::sharedThreadCount();
      ADD_FAILURE() << "no error for '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(e.message().find(std::string("GRAPHC_NUM_THREADS=") + bad + ":"), std::string::npos)
          << e.what();
    }
  }
  if (!std::getenv("GRAPHC_NUM_THREADS")) {
    EXPECT_GE(cpu::sharedThreadCount(), 1u);
    EXPECT_LE(cpu::sharedThreadCount(), std::max(1u, std::thread::hardware_concurrency()));
  }
  // The shared pool has the count it was created with and bounds OpenBLAS by it
  // when the variable is set (ctest runs each test in a process of its own).
  ThreadPool& global = ThreadPool::global();
  EXPECT_EQ(&global, &ThreadPool::global());
  if (std::getenv("GRAPHC_NUM_THREADS")) {
    EXPECT_LE(static_cast<unsigned>(openblas_get_num_threads()), global.threads());
  }
}

/// A fused kernel of 2^20 points (a reduction and an elementwise output): run on
/// the pool.
constexpr const char* kLarge = R"(
graph @large(%x: f64[1024,1024], %y: f64[1024,1024]) {
  %m = mul %x, %y
  %e = exp %m
  %s = sum %e {axes=[1]}
  %t = tanh %m
  return %s, %t
}
)";

/// The reference results of kLarge, by loops.
std::pair<std::vector<double>, std::vector<double>> largeReference(const Array& x, const Array& y) {
  std::vector<double> xs = doubles(x), ys = doubles(y), s(1024, 0.0), t(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    double m = xs[i] * ys[i];
    s[i / 1024] += std::exp(m);
    t[i] = std::tanh(m);
  }
  return {s, t};
}

TEST(ThreadPool, DeferredAndSynchronousRunsShareThePool) {
  auto g = ir::parseGraph(kLarge);
  auto exe = getBackend("cpu").compile(*g);
  Array x = randn(DType::F64, {1024, 1024}, 1), y = randn(DType::F64, {1024, 1024}, 2);
  auto [s, t] = largeReference(x, y);
  constexpr int kRuns = 6;
  std::vector<std::vector<Array>> outs;
  for (int k = 0; k < kRuns; ++k)
    outs.push_back({Array::zeros(DType::F64, {1024}), Array::zeros(DType::F64, {1024, 1024})});
  for (int k = 0; k < kRuns; ++k)
    exe->enqueue({x, y}, outs[k]); // on the executable's thread, which runs loops on the pool
  for (int k = 0; k < 3; ++k) {    // meanwhile, on this thread
    std::vector<Array> now = exe->run({x, y});
    expectClose(doubles(now[0]), s, 1e-9 * 1024, "synchronous sum");
    expectClose(doubles(now[1]), t, 1e-15, "synchronous tanh");
  }
  exe->finish();
  for (int k = 0; k < kRuns; ++k) {
    expectClose(doubles(outs[k][0]), s, 1e-9 * 1024, "deferred sum " + std::to_string(k));
    expectClose(doubles(outs[k][1]), t, 1e-15, "deferred tanh " + std::to_string(k));
  }
}

TEST(ThreadPool, NoThreadIsCreatedPerRun) {
  auto g = ir::parseGraph(kLarge);
  auto exe = getBackend("cpu").compile(*g);
  Array x = randn(DType::F64, {1024, 1024}, 3), y = randn(DType::F64, {1024, 1024}, 4);
  exe->run({x, y}); // the pool starts here
  std::set<long> before = liveThreads();
  // Runs go on on another thread while this one samples the live threads.
  std::atomic<bool> running{true};
  std::atomic<long> runnerId{0};
  std::thread runner([&] {
    runnerId = threadId();
    for (int k = 0; k < 20; ++k)
      exe->run({x, y});
    running = false;
  });
  std::set<long> seen;
  while (running) {
    std::set<long> now = liveThreads();
    seen.insert(now.begin(), now.end());
  }
  runner.join();
  // join() returns once the kernel has cleared the thread's id, which can be a
  // moment before its entry leaves /proc/self/task: wait for that (at most 5 s).
  std::set<long> after = liveThreads();
  for (int k = 0; k < 5000 && after.count(runnerId); ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    after = liveThreads();
  }
  EXPECT_EQ(after, before);
  // The runner is the one thread expected to come and go.
  std::string transient;
  for (long id : seen)
    if (!after.count(id) && id != runnerId)
      transient += " " + std::to_string(id);
  EXPECT_EQ(transient, "") << "threads started and ended during the runs";
}

} // namespace
} // namespace graphc::testing
