//===- tests/runtime/HostPoolTest.cpp - Large host buffers kept for reuse -===//
//
// A released large buffer serves the next request of its size class (and no
// other), what is kept never passes the cap, small buffers are not kept, huge
// ones are aligned for huge pages, large Arrays go through the pool, and threads
// that allocate, fill and release buffers at once each see only their own data.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/HostPool.h"

#include "runtime/core/Array.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace graphc {
namespace {

constexpr size_t kBig = size_t{3} << 20; // 3 MB: kept

TEST(HostPool, AReleasedBufferServesTheNextRequestOfItsSize) {
  HostPool pool;
  void* first = nullptr;
  {
    std::shared_ptr<void> a = pool.allocate(kBig);
    ASSERT_TRUE(a);
    first = a.get();
    EXPECT_EQ(pool.cachedBytes(), 0u);
  }
  EXPECT_GE(pool.cachedBytes(), kBig);
  std::shared_ptr<void> again = pool.allocate(kBig - 100); // the same 64 KB class
  EXPECT_EQ(again.get(), first);
  EXPECT_EQ(pool.cachedBytes(), 0u);
  std::shared_ptr<void> other = pool.allocate(2 * kBig); // another class: new memory
  EXPECT_NE(other.get(), first);
}

TEST(HostPool, SmallBuffersAreNotKept) {
  HostPool pool;
  pool.allocate(HostPool::kMinBytes - 1).reset();
  EXPECT_EQ(pool.cachedBytes(), 0u);
  pool.allocate(HostPool::kMinBytes).reset();
  EXPECT_EQ(pool.cachedBytes(), HostPool::kMinBytes);
  pool.trim();
  EXPECT_EQ(pool.cachedBytes(), 0u);
}

TEST(HostPool, WhatIsKeptStaysUnderTheCap) {
  HostPool pool;
  size_t size = size_t{64} << 20;
  std::vector<std::shared_ptr<void>> held;
  for (size_t kept = 0; kept <= HostPool::kMaxCachedBytes; kept += size)
    held.push_back(pool.allocate(size)); // one more than the cap holds
  held.clear();
  EXPECT_LE(pool.cachedBytes(), HostPool::kMaxCachedBytes);
  EXPECT_GE(pool.cachedBytes(), HostPool::kMaxCachedBytes - size);
  pool.trim();
}

TEST(HostPool, LargeArraysReuseTheirMemory) {
  HostPool::global().trim();
  void* first = nullptr;
  {
    Array a = Array::empty(ir::DType::F64, {1024, 1024}); // 8 MB
    first = a.rawData();
  }
  Array b = Array::zeros(ir::DType::F64, {1024, 1024});
  EXPECT_EQ(b.rawData(), first);
  std::vector<double> values = b.toVector<double>();
  for (double v : values)
    ASSERT_EQ(v, 0.0) << "zeros() clears reused memory";
}

TEST(HostPool, HugeBuffersAreAlignedForHugePagesAndHoldTheirData) {
  HostPool pool;
  for (size_t bytes : {HostPool::kHugeBytes - 1, HostPool::kHugeBytes, size_t{9} << 20 | 12345}) {
    std::shared_ptr<void> a = pool.allocate(bytes);
    ASSERT_TRUE(a);
    auto at = reinterpret_cast<uintptr_t>(a.get());
    if (bytes >= HostPool::kHugeBytes) {
      EXPECT_EQ(at % HostPool::kHugeAlignment, 0u) << bytes << " bytes";
    }
    auto* p = static_cast<unsigned char*>(a.get());
    for (size_t i = 0; i < bytes; ++i)
      p[i] = static_cast<unsigned char>(i * 7 + bytes);
    size_t bad = 0;
    for (size_t i = 0; i < bytes; ++i)
      bad += p[i] != static_cast<unsigned char>(i * 7 + bytes);
    EXPECT_EQ(bad, 0u) << bytes << " bytes";
  }
  EXPECT_GE(pool.cachedBytes(), HostPool::kHugeBytes);
  std::shared_ptr<void> again = pool.allocate(HostPool::kHugeBytes); // reused, still aligned
  EXPECT_EQ(reinterpret_cast<uintptr_t>(again.get()) % HostPool::kHugeAlignment, 0u);
  again.reset();
  pool.trim(); // frees aligned and plain blocks each as they were made
  EXPECT_EQ(pool.cachedBytes(), 0u);
}

TEST(HostPool, ThreadsSeeOnlyTheirOwnData) {
  HostPool pool;
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round) {
        size_t bytes = kBig + static_cast<size_t>(round % 3) * (size_t{64} << 10);
        std::shared_ptr<void> b = pool.allocate(bytes);
        auto* p = static_cast<unsigned char*>(b.get());
        std::memset(p, t, bytes);
        std::this_thread::yield();
        for (size_t i = 0; i < bytes; i += 4096)
          if (p[i] != t)
            ++bad;
      }
    });
  for (std::thread& th : threads)
    th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_LE(pool.cachedBytes(), HostPool::kMaxCachedBytes);
  pool.trim();
}

} // namespace
} // namespace graphc
