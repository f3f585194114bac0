//===- runtime/core/WorkQueue.cpp - Tasks run in order on a thread --------===//
#include "runtime/core/WorkQueue.h"

namespace graphc {

WorkQueue::~WorkQueue() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return tasks_.empty() && !running_; });
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void WorkQueue::push(size_t tag, std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.emplace_back(tag, std::move(task));
    if (!thread_.joinable())
      thread_ = std::thread([this] { loop(); });
  }
  changed_.notify_all();
}

std::optional<WorkQueue::Failure> WorkQueue::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return tasks_.empty() && !running_; });
  return std::exchange(failure_, std::nullopt);
}

void WorkQueue::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
    if (tasks_.empty()) // stopping, and nothing left
      return;
    auto [tag, task] = std::move(tasks_.front());
    tasks_.pop_front();
    running_ = true;
    lock.unlock();
    std::exception_ptr error;
    try {
      task();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    running_ = false;
    if (error && !failure_)
      failure_ = Failure{tag, error};
    changed_.notify_all();
  }
}

} // namespace graphc
