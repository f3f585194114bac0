//===- runtime/core/WorkQueue.h - Tasks run in order on a thread -*- C++ -*-===//
//
// A WorkQueue runs tasks one after another, in the order they were pushed, on a
// thread of its own (started by the first push). push() returns at once; wait()
// returns when every task pushed so far has run, with the first error a task threw
// since the last wait() and the tag it was pushed with. The destructor waits for
// the queued tasks, so an object that owns a queue should declare it last (its
// tasks may use the object's other members). This is how the cpu backend's
// enqueue() returns before the run is done.
//
//   WorkQueue q;
//   q.push(0, [&] { step(); });
//   if (auto failure = q.wait()) std::rethrow_exception(failure->error);
//
//===----------------------------------------------------------------------===//
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace graphc {

/// Runs tasks in order on one background thread (see the file comment).
class WorkQueue {
public:
  /// A task's error and the tag it was pushed with.
  struct Failure {
    size_t tag;
    std::exception_ptr error;
  };

  WorkQueue() = default;
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;
  /// Waits for the queued tasks, then stops the thread.
  ~WorkQueue();

  /// Queues `task`; an exception it throws is kept (the first one) with `tag`.
  void push(size_t tag, std::function<void()> task);
  /// Waits until every queued task has run; returns the first failure since the
  /// last wait(), if any.
  std::optional<Failure> wait();

private:
  void loop();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::pair<size_t, std::function<void()>>> tasks_;
  bool running_ = false; ///< the thread is running a task it took off tasks_
  bool stopping_ = false;
  std::optional<Failure> failure_;
  std::thread thread_;
};

} // namespace graphc
