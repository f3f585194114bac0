//===- tests/runtime/WorkQueueTest.cpp - Tasks in order on a thread -------===//
//
// WorkQueue: push() returns while a task still runs, tasks run in push order on
// one thread that is not the caller's, wait() reports the first failure with its
// tag (once), and the destructor waits for queued tasks.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/WorkQueue.h"

#include "support/Error.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <vector>

namespace graphc {
namespace {

TEST(WorkQueue, PushReturnsWhileTheTaskRuns) {
  WorkQueue q;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> done{false};
  q.push(0, [&] {
    // Bounded: a push that ran the task itself returns after 5 s with done set.
    released.wait_for(std::chrono::seconds(5));
    done = true;
  });
  EXPECT_FALSE(done); // the task cannot finish before the release below
  release.set_value();
  EXPECT_FALSE(q.wait().has_value());
  EXPECT_TRUE(done);
}

TEST(WorkQueue, TasksRunInOrderOnAnotherThread) {
  WorkQueue q;
  std::vector<int> order;
  std::thread::id caller = std::this_thread::get_id(), worker;
  for (int i = 0; i < 100; ++i)
    q.push(i, [&, i] {
      order.push_back(i);
      worker = std::this_thread::get_id();
    });
  EXPECT_FALSE(q.wait().has_value());
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(order[i], i);
  EXPECT_NE(worker, caller);
}

TEST(WorkQueue, WaitReportsTheFirstFailureOnce) {
  WorkQueue q;
  int ran = 0;
  for (size_t i = 0; i < 6; ++i)
    q.push(i, [&, i] {
      ++ran;
      if (i == 2 || i == 4)
        throw Error("task " + std::to_string(i));
    });
  std::optional<WorkQueue::Failure> f = q.wait();
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->tag, 2u);
  EXPECT_THROW(std::rethrow_exception(f->error), Error);
  EXPECT_EQ(ran, 6); // the tasks after a failure still run
  EXPECT_FALSE(q.wait().has_value());
  EXPECT_FALSE(WorkQueue().wait().has_value()); // nothing pushed: no thread, no wait
}

TEST(WorkQueue, DestructorWaitsForQueuedTasks) {
  std::atomic<int> ran{0};
  {
    WorkQueue q;
    for (int i = 0; i < 50; ++i)
      q.push(i, [&] { ++ran; });
  }
  EXPECT_EQ(ran, 50);
}

} // namespace
} // namespace graphc
