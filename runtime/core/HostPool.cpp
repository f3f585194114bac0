//===- runtime/core/HostPool.cpp - Large host buffers kept for reuse ------===//
#include "runtime/core/HostPool.h"

#include <cstdint>
#include <new>

namespace graphc {
namespace {

/// The size class of a request: whole 64 KB units, so that arrays of one shape
/// always meet their own buffers again.
size_t sizeClass(size_t bytes) {
  constexpr size_t kUnit = size_t{64} << 10;
  return (bytes + kUnit - 1) / kUnit * kUnit;
}

} // namespace

HostPool& HostPool::global() {
  static HostPool* pool = new HostPool();
  return *pool;
}

std::shared_ptr<void> HostPool::allocate(size_t bytes) {
  if (bytes < kMinBytes || bytes > SIZE_MAX / 2) { // the latter fails: no size class for it
    void* p = ::operator new(bytes, std::nothrow);
    return p ? std::shared_ptr<void>(p, [](void* q) { ::operator delete(q); }) : nullptr;
  }
  size_t size = sizeClass(bytes);
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      p = it->second.back();
      it->second.pop_back();
      cached_ -= size;
    }
  }
  if (!p)
    p = ::operator new(size, std::nothrow);
  if (!p) { // what is kept may be what is missing
    trim();
    p = ::operator new(size, std::nothrow);
  }
  if (!p)
    return nullptr;
  return std::shared_ptr<void>(p, [this, size](void* q) { release(q, size); });
}

void HostPool::release(void* p, size_t size) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cached_ + size <= kMaxCachedBytes) {
      free_[size].push_back(p);
      cached_ += size;
      return;
    }
  }
  ::operator delete(p);
}

size_t HostPool::cachedBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cached_;
}

void HostPool::trim() {
  std::map<size_t, std::vector<void*>> kept;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    kept.swap(free_);
    cached_ = 0;
  }
  for (auto& [size, buffers] : kept)
    for (void* p : buffers)
      ::operator delete(p);
}

} // namespace graphc
