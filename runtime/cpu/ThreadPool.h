//===- runtime/cpu/ThreadPool.h - The cpu backend's threads -----*- C++ -*-===//
//
// Internal to the cpu backend. A ThreadPool is a fixed set of worker threads,
// started once, that run the parts of fork-join loops beside the calling thread:
// parallelFor() splits [0, units) into contiguous parts, the caller and the idle
// workers take parts until none is left, and the call returns when every part is
// done, rethrowing the error of the first part (by index) that threw. Because the
// caller takes parts itself, a loop always finishes even when every worker is busy:
// loops may nest (a part may run a loop of its own) and may be started from
// several threads at once without deadlock. Idle workers sleep; they do not spin.
//
// The backend shares one pool, ThreadPool::global(), of sharedThreadCount()
// threads: GRAPHC_NUM_THREADS when set, otherwise the hardware threads this
// process may run on. GRAPHC_NUM_THREADS also bounds OpenBLAS's threads (see
// global()). llvm::ThreadPool (LLVM 14) does not fit: its wait() waits for every
// task of the pool, not one loop's, it may not be called from a worker (nested
// loops would deadlock), and the caller does not take part in the work.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/STLFunctionalExtras.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace graphc::cpu {

/// Worker threads for fork-join loops (see the file comment).
class ThreadPool {
public:
  /// A pool whose loops run on `threads` threads: the caller and `threads - 1`
  /// workers, started here.
  explicit ThreadPool(unsigned threads);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  /// Stops and joins the workers (no loop may be running).
  ~ThreadPool();

  /// The pool of the cpu backend, created at the first call with
  /// sharedThreadCount() threads. When GRAPHC_NUM_THREADS is set, the same call
  /// bounds OpenBLAS to at most that many threads (openblas_set_num_threads), so
  /// that library calls and fused kernels each use at most the cores asked for.
  static ThreadPool& global();

  /// The threads a loop can run on, the caller included.
  unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1; }

  /// Calls f(begin, end) for the `parts` contiguous parts of [0, units), part p
  /// being [units * p / parts, units * (p + 1) / parts), on the caller and the
  /// idle workers; returns when all are done. If parts threw, rethrows the error
  /// of the lowest-numbered one (after every part has finished).
  void parallelFor(int64_t units, int64_t parts,
                   llvm::function_ref<void(int64_t begin, int64_t end)> f);

private:
  struct Loop;
  /// Runs parts of `loop` until none is left to take.
  void runParts(Loop& loop);
  void work();

  std::mutex mutex_;
  std::condition_variable work_; ///< a loop was queued, or the pool stops
  std::condition_variable done_; ///< a loop's last part finished
  std::deque<Loop*> loops_;      ///< loops with parts left to take, oldest first
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

/// While one is alive, OpenBLAS runs every call on its calling thread alone: held
/// by a batch of library calls split over the pool, whose threads are then the
/// parallelism (OpenBLAS's own threads would fight them for the cores). The count
/// OpenBLAS had comes back when the last one goes. The setting is OpenBLAS's, for
/// the whole process: a library call started elsewhere meanwhile also runs on one
/// thread (slower, never wrong).
class SingleThreadedBlas {
public:
  SingleThreadedBlas();
  ~SingleThreadedBlas();
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;
};

/// The thread count of the shared pool: GRAPHC_NUM_THREADS (a positive integer;
/// anything else is an error naming the variable and its value), otherwise the
/// hardware threads of this process's CPU affinity mask.
unsigned sharedThreadCount();

} // namespace graphc::cpu
