//===- runtime/cpu/ThreadPool.cpp - The cpu backend's threads -------------===//
//
// A loop lives on its caller's stack. It is queued while parts are left to take;
// a worker that takes it counts itself in `active` (under the pool's mutex) and
// out again when it finds no part left, and the caller waits for every part to be
// done and every worker to have let go before the loop goes.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/ThreadPool.h"

#include "support/Error.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <sched.h>

namespace graphc::cpu {

struct ThreadPool::Loop {
  Loop(llvm::function_ref<void(int64_t, int64_t)> f, int64_t units, int64_t parts)
      : f(f), units(units), parts(parts), errors(parts) {}

  llvm::function_ref<void(int64_t, int64_t)> f;
  int64_t units, parts;
  std::atomic<int64_t> next{0}; ///< the next part to take
  int64_t finished = 0;         ///< parts done (under the pool's mutex)
  int active = 0;               ///< workers holding the loop (under the mutex)
  std::vector<std::exception_ptr> errors;
};

ThreadPool::ThreadPool(unsigned threads) {
  for (unsigned t = 1; t < threads; ++t)
    workers_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  for (std::thread& t : workers_)
    t.join();
}

ThreadPool& ThreadPool::global() {
  static ThreadPool* pool = [] {
    unsigned n = sharedThreadCount();
    if (std::getenv("GRAPHC_NUM_THREADS"))
      openblas_set_num_threads(static_cast<int>(
          std::min<unsigned>(n, static_cast<unsigned>(std::max(1, openblas_get_num_threads())))));
    // Never destroyed: a run from another static object's destructor may still use it.
    return new ThreadPool(n);
  }();
  return *pool;
}

namespace {
std::mutex blasMutex;
int blasHolders = 0, blasThreads = 1; ///< under blasMutex
} // namespace

SingleThreadedBlas::SingleThreadedBlas() {
  std::lock_guard<std::mutex> lock(blasMutex);
  if (blasHolders++ == 0) {
    blasThreads = openblas_get_num_threads();
    if (blasThreads > 1)
      openblas_set_num_threads(1);
  }
}

SingleThreadedBlas::~SingleThreadedBlas() {
  std::lock_guard<std::mutex> lock(blasMutex);
  if (--blasHolders == 0 && blasThreads > 1)
    openblas_set_num_threads(blasThreads);
}

void ThreadPool::parallelFor(int64_t units, int64_t parts,
                             llvm::function_ref<void(int64_t, int64_t)> f) {
  parts = std::min(parts, units);
  if (parts <= 1 || workers_.empty()) {
    for (int64_t p = 0; p < parts; ++p) // in order: the first error is part 0's
      f(units * p / parts, units * (p + 1) / parts);
    return;
  }
  Loop loop(f, units, parts);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    loops_.push_back(&loop);
  }
  work_.notify_all();
  runParts(loop);
  {
    std::unique_lock<std::mutex> lock(mutex_);
    auto queued = std::find(loops_.begin(), loops_.end(), &loop);
    if (queued != loops_.end())
      loops_.erase(queued);
    done_.wait(lock, [&] { return loop.finished == loop.parts && loop.active == 0; });
  }
  for (const std::exception_ptr& e : loop.errors)
    if (e)
      std::rethrow_exception(e);
}

void ThreadPool::runParts(Loop& loop) {
  int64_t done = 0;
  for (int64_t p; (p = loop.next.fetch_add(1)) < loop.parts; ++done) {
    try {
      loop.f(loop.units * p / loop.parts, loop.units * (p + 1) / loop.parts);
    } catch (...) {
      loop.errors[p] = std::current_exception();
    }
  }
  if (done == 0)
    return;
  bool last;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    loop.finished += done;
    last = loop.finished == loop.parts;
  }
  if (last)
    done_.notify_all();
}

void ThreadPool::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_.wait(lock, [&] { return stopping_ || !loops_.empty(); });
    if (stopping_)
      return;
    Loop* loop = loops_.front();
    if (loop->next.load() >= loop->parts) { // every part taken: no more help needed
      loops_.pop_front();
      continue;
    }
    ++loop->active;
    lock.unlock();
    runParts(*loop);
    lock.lock();
    if (--loop->active == 0 && loop->finished == loop->parts)
      done_.notify_all();
  }
}

unsigned sharedThreadCount() {
  if (const char* env = std::getenv("GRAPHC_NUM_THREADS")) {
    unsigned n = 0;
    const char* end = env + std::strlen(env);
    auto [ptr, ec] = std::from_chars(env, end, n);
    if (ec != std::errc() || ptr != end || n == 0 || n > 4096)
      throw Error(
          fmt::format("GRAPHC_NUM_THREADS={}: expected a thread count from 1 to 4096", env));
    return n;
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
  return std::max(1u, std::thread::hardware_concurrency());
}

} // namespace graphc::cpu
