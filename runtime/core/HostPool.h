//===- runtime/core/HostPool.h - Large host buffers kept for reuse -*- C++ -*-===//
//
// Array::empty takes its memory here. Small buffers come from operator new as
// before. A buffer of kMinBytes or more that its last Array releases is kept, up
// to kMaxCachedBytes in all, for the next request of the same size class: glibc
// maps blocks over 32 MB afresh on every allocation, so a program that makes a
// 64 MB array on every run would otherwise fault in (and zero) 16384 new pages
// each time. Buffers of kHugeBytes or more are asked for huge pages. Reused
// memory holds old contents, as new memory may: Array::empty
// promises none.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace graphc {

/// Large host buffers kept for reuse (see the file comment). Thread-safe.
class HostPool {
public:
  /// Buffers at least this large are kept when released.
  static constexpr size_t kMinBytes = size_t{1} << 20;
  /// Buffers at least this large are aligned to kHugeAlignment and asked for
  /// transparent huge pages (madvise), as NumPy asks for its arrays of 4 MB or
  /// more: where the kernel gives huge pages only on request
  /// (/sys/kernel/mm/transparent_hugepage/enabled = madvise), a sum over 128 MB
  /// of 4 KB pages ran at half the speed (8.3 against 4.4 ms on one thread,
  /// 2026-12-02): a TLB miss every 4 KB.
  static constexpr size_t kHugeBytes = size_t{4} << 20;
  static constexpr size_t kHugeAlignment = size_t{2} << 20;
  /// At most this much memory is kept in all.
  static constexpr size_t kMaxCachedBytes = size_t{1} << 30;

  HostPool() = default;
  HostPool(const HostPool&) = delete;
  HostPool& operator=(const HostPool&) = delete;
  /// Frees the kept buffers; no buffer it gave out may still be held.
  ~HostPool() { trim(); }

  /// The process's pool, never destroyed (arrays may outlive static objects).
  static HostPool& global();

  /// At least `bytes` bytes, released to the pool when the last copy of the
  /// pointer goes; null when the memory cannot be had.
  std::shared_ptr<void> allocate(size_t bytes);

  /// Bytes kept for reuse now.
  size_t cachedBytes() const;
  /// Frees every kept buffer.
  void trim();

private:
  void release(void* p, size_t size);

  mutable std::mutex mutex_;
  std::map<size_t, std::vector<void*>> free_; ///< kept buffers by size class
  size_t cached_ = 0;
};

} // namespace graphc
