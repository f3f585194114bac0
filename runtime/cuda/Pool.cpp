//===- runtime/cuda/Pool.cpp - Stream-ordered device memory ---------------===//
#include "runtime/cuda/Pool.h"

#include "runtime/cuda/Check.h"
#include "support/Error.h"

#include <cstdint>
#include <fmt/format.h>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace graphc::cuda {

ScopedDevice::ScopedDevice(int ordinal) {
  GRAPHC_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != ordinal)
    GRAPHC_CUDA_CHECK(cudaSetDevice(ordinal));
}

ScopedDevice::~ScopedDevice() {
  int current = previous_;
  if (cudaGetDevice(&current) == cudaSuccess && current != previous_)
    cudaSetDevice(previous_); // nowhere to report a failure from a destructor
}

DevicePool::DevicePool(int ordinal) : device_(ordinal) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = ordinal;
  GRAPHC_CUDA_CHECK(cudaMemPoolCreate(&pool_, &props));
  uint64_t keepEverything = UINT64_MAX;
  GRAPHC_CUDA_CHECK(
      cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keepEverything));
}

DevicePool::~DevicePool() {
  cudaMemPoolDestroy(pool_); // errors at teardown have nowhere to go
}

DevicePool& DevicePool::forDevice(int ordinal) {
  static std::mutex mutex;
  static auto* pools = new std::vector<std::unique_ptr<DevicePool>>(); // never destroyed
  std::lock_guard<std::mutex> lock(mutex);
  if (ordinal < 0)
    throw Error(fmt::format("DevicePool::forDevice: bad device ordinal {}", ordinal));
  if (pools->size() <= static_cast<size_t>(ordinal))
    pools->resize(ordinal + 1);
  std::unique_ptr<DevicePool>& pool = (*pools)[ordinal];
  if (!pool)
    pool = std::make_unique<DevicePool>(ordinal);
  return *pool;
}

void* DevicePool::allocate(size_t bytes, cudaStream_t stream) {
  if (bytes == 0)
    return nullptr;
  void* p = nullptr;
  cudaError_t status = cudaMallocFromPoolAsync(&p, bytes, pool_, stream);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError(); // out of memory is not sticky: clear it and try once more
    GRAPHC_CUDA_CHECK(cudaStreamSynchronize(stream));
    GRAPHC_CUDA_CHECK(cudaMemPoolTrimTo(pool_, 0));
    status = cudaMallocFromPoolAsync(&p, bytes, pool_, stream);
  }
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    size_t freeBytes = 0, totalBytes = 0;
    {
      ScopedDevice on(device_);
      GRAPHC_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    }
    throw DeviceOutOfMemory(
        fmt::format("GPU out of memory: cannot allocate {} bytes ({} bytes free of {})", bytes,
                    freeBytes, totalBytes));
  }
  check(status, "cudaMallocFromPoolAsync(&p, bytes, pool_, stream)");
  return p;
}

void DevicePool::release(void* p, cudaStream_t stream) {
  if (p)
    GRAPHC_CUDA_CHECK(cudaFreeAsync(p, stream));
}

void DevicePool::trim(size_t keepBytes) {
  ScopedDevice on(device_);
  GRAPHC_CUDA_CHECK(cudaDeviceSynchronize());
  GRAPHC_CUDA_CHECK(cudaMemPoolTrimTo(pool_, keepBytes));
}

PoolStatistics DevicePool::statistics() const {
  ScopedDevice on(device_);
  GRAPHC_CUDA_CHECK(cudaDeviceSynchronize());
  PoolStatistics s;
  GRAPHC_CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemCurrent, &s.usedBytes));
  GRAPHC_CUDA_CHECK(
      cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &s.reservedBytes));
  GRAPHC_CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemHigh, &s.peakUsedBytes));
  return s;
}

DeviceBuffer::DeviceBuffer(DevicePool& pool, size_t bytes, cudaStream_t stream)
    : data_(pool.allocate(bytes, stream)), bytes_(bytes), pool_(&pool), stream_(stream) {}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)),
      pool_(other.pool_), stream_(other.stream_) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    pool_ = other.pool_;
    stream_ = other.stream_;
  }
  return *this;
}

void* DeviceBuffer::detach() noexcept {
  void* p = data_;
  data_ = nullptr;
  bytes_ = 0;
  return p;
}

void DeviceBuffer::reset() noexcept {
  try {
    if (data_)
      pool_->release(data_, stream_);
  } catch (const Error&) {
    // Called from destructors, which cannot throw; the memory is lost to the pool.
  }
  data_ = nullptr;
  bytes_ = 0;
}

void copyAsync(void* dst, const void* src, int64_t bytes, cudaMemcpyKind kind,
               cudaStream_t stream) {
  if (bytes > 0)
    GRAPHC_CUDA_CHECK(cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), kind, stream));
}

} // namespace graphc::cuda
