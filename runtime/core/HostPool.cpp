//===- runtime/core/HostPool.cpp - Large host buffers kept for reuse ------===//
#include "runtime/core/HostPool.h"

#include <cstdint>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace graphc {
namespace {

/// The size class of a request: whole 64 KB units, so that arrays of one shape
/// always meet their own buffers again.
size_t sizeClass(size_t bytes) {
  constexpr size_t kUnit = size_t{64} << 10;
  return (bytes + kUnit - 1) / kUnit * kUnit;
}

constexpr size_t kHugeBytes = HostPool::kHugeBytes;
constexpr std::align_val_t kHugeAlign{HostPool::kHugeAlignment};

/// A block for size class `size`; null when the memory cannot be had.
void* newBlock(size_t size) {
  if (size < kHugeBytes)
    return ::operator new(size, std::nothrow);
  void* p = ::operator new(size, kHugeAlign, std::nothrow);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (p) // advice only: where refused, 4 KB pages serve
    madvise(p, size, MADV_HUGEPAGE);
#endif
  return p;
}

/// Frees a block newBlock(size) gave.
void deleteBlock(void* p, size_t size) {
  if (size < kHugeBytes)
    ::operator delete(p);
  else
    ::operator delete(p, kHugeAlign);
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
    p = newBlock(size);
  if (!p) { // what is kept may be what is missing
    trim();
    p = newBlock(size);
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
  deleteBlock(p, size);
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
      deleteBlock(p, size);
}

} // namespace graphc
