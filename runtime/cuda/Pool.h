//===- runtime/cuda/Pool.h - Stream-ordered device memory -------*- C++ -*-===//
//
// DevicePool hands out device memory in stream order (cudaMallocFromPoolAsync /
// cudaFreeAsync) from a CUDA memory pool of its own, whose release threshold is
// "never": freed memory stays cached in the pool, so a prepared graph that runs
// again reuses it without calling into the driver. Running out of memory is a
// DeviceOutOfMemory (a graphc::Error) that says how much was asked for and how
// much is free; the pool (and the CUDA runtime) keep working afterwards.
// statistics() says how much the pool has handed out, e.g. to check that a failed
// run gave everything back.
//
//   DevicePool& pool = DevicePool::forDevice(0);
//   DeviceBuffer tmp(pool, bytes, stream);  // released on `stream` when destroyed
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace graphc::cuda {

/// Makes device `ordinal` current for the lifetime of the guard, then restores the
/// device that was current before.
class ScopedDevice {
public:
  explicit ScopedDevice(int ordinal);
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  ~ScopedDevice();

private:
  int previous_ = 0;
};

/// What a DevicePool holds.
struct PoolStatistics {
  uint64_t usedBytes = 0;     ///< handed out by allocate() and not released
  uint64_t reservedBytes = 0; ///< taken from the device: used, or cached for reuse
  uint64_t peakUsedBytes = 0; ///< the most usedBytes has been
};

/// A stream-ordered allocator over one device's own cudaMemPool_t.
class DevicePool {
public:
  /// Creates a pool on device `ordinal` that keeps freed memory cached. Throws
  /// graphc::Error when there is no such device.
  explicit DevicePool(int ordinal);
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;
  ~DevicePool();

  /// The process-wide pool of device `ordinal`, made on first use and never
  /// destroyed (its memory goes back at process exit).
  static DevicePool& forDevice(int ordinal = 0);

  /// `bytes` of device memory, usable by work on `stream` from this point of the
  /// stream on; nullptr for 0 bytes. When the device is out of memory the pool's
  /// cache is trimmed and the allocation retried once; if that fails too, throws
  /// DeviceOutOfMemory "GPU out of memory: cannot allocate N bytes (F bytes free of
  /// T)".
  void* allocate(size_t bytes, cudaStream_t stream);
  /// Gives `p` (from allocate, or nullptr) back once the work queued on `stream`
  /// so far is done. The memory stays cached in the pool.
  void release(void* p, cudaStream_t stream);
  /// Returns cached memory beyond `keepBytes` to the device (after the frees queued
  /// so far have completed).
  void trim(size_t keepBytes = 0);
  /// The pool's statistics once the device has done the work queued so far (so
  /// that the releases queued so far are counted): waits for the whole device.
  PoolStatistics statistics() const;

  /// The device ordinal.
  int device() const { return device_; }
  /// The underlying CUDA memory pool.
  cudaMemPool_t handle() const { return pool_; }

private:
  int device_;
  cudaMemPool_t pool_ = nullptr;
};

/// Enqueues a copy of `bytes` bytes on `stream` (nothing for 0 bytes). Throws
/// graphc::Error when the copy cannot be enqueued.
void copyAsync(void* dst, const void* src, int64_t bytes, cudaMemcpyKind kind, cudaStream_t stream);

/// An owning, move-only handle to memory from a DevicePool, released in stream
/// order on the stream it was allocated for.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  /// Allocates `bytes` from `pool` for `stream`. Throws like DevicePool::allocate.
  DeviceBuffer(DevicePool& pool, size_t bytes, cudaStream_t stream);
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  /// Releases the memory (stream-ordered) and leaves the buffer empty.
  void reset() noexcept;
  /// Gives up ownership without releasing: returns the memory, which the caller now
  /// gives back with pool()->release(), and leaves the buffer empty.
  void* detach() noexcept;

  void* data() const { return data_; }
  /// data() as a T*.
  template <typename T> T* as() const { return static_cast<T*>(data_); }
  size_t bytes() const { return bytes_; }
  cudaStream_t stream() const { return stream_; }
  DevicePool* pool() const { return pool_; }
  explicit operator bool() const { return data_ != nullptr; }

private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  DevicePool* pool_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

} // namespace graphc::cuda
