//===- runtime/cuda/Device.cpp - Is there a GPU, and which one ------------===//
#include "runtime/cuda/Device.h"

#include "runtime/cuda/Check.h"

#include <fmt/format.h>

namespace graphc::cuda {

namespace {

/// Why the process cannot use a device, or "" when it can; asked once.
const std::string& unavailability() {
  static const std::string why = []() -> std::string {
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status == cudaSuccess)
      return count > 0 ? "" : "the NVIDIA driver reports no CUDA device";
    cudaGetLastError(); // no driver or no device: clear the error, answer no
    const char* what = status == cudaErrorNoDevice ? "no CUDA device"
                       : status == cudaErrorInsufficientDriver
                           ? "no NVIDIA driver, or one older than this CUDA runtime"
                           : "the CUDA runtime cannot start";
    return fmt::format("{} (cudaGetDeviceCount: {}: {})", what, cudaGetErrorName(status),
                       cudaGetErrorString(status));
  }();
  return why;
}

} // namespace

bool cudaAvailable() noexcept {
  try {
    return unavailability().empty();
  } catch (...) { // no memory for the reason's text: no device either
    return false;
  }
}

std::string cudaUnavailableReason() {
  return unavailability();
}

std::string DeviceInfo::str() const {
  constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
  return fmt::format("{} (sm_{}, {} SMs, {:.1f} GiB, {:.1f} GiB free)", name, computeCapability(),
                     multiprocessors, totalMemory / GiB, freeMemory / GiB);
}

DeviceInfo deviceInfo(int ordinal) {
  cudaDeviceProp prop{};
  GRAPHC_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  DeviceInfo info;
  info.ordinal = ordinal;
  info.name = prop.name;
  info.major = prop.major;
  info.minor = prop.minor;
  info.multiprocessors = prop.multiProcessorCount;
  info.totalMemory = prop.totalGlobalMem;

  int previous = 0;
  GRAPHC_CUDA_CHECK(cudaGetDevice(&previous));
  GRAPHC_CUDA_CHECK(cudaSetDevice(ordinal));
  size_t freeBytes = 0, totalBytes = 0;
  cudaError_t status = cudaMemGetInfo(&freeBytes, &totalBytes);
  GRAPHC_CUDA_CHECK(cudaSetDevice(previous));
  check(status, "cudaMemGetInfo(&freeBytes, &totalBytes)");
  info.freeMemory = freeBytes;
  return info;
}

} // namespace graphc::cuda
