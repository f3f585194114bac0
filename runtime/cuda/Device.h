//===- runtime/cuda/Device.h - Is there a GPU, and which one ----*- C++ -*-===//
//
// cudaAvailable() answers "can this process use a CUDA device?" without ever
// throwing: on a machine without an NVIDIA driver (CI) it is simply false, and the
// CPU backend is used, and cudaUnavailableReason() says why. deviceInfo() describes one device for
// logs, NVRTC's target architecture and `graphc` output.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

namespace graphc::cuda {

/// True when the CUDA runtime finds a driver and at least one device. Never throws;
/// the answer is computed once per process.
bool cudaAvailable() noexcept;

/// Why this process cannot use a CUDA device ("no CUDA device (cudaGetDeviceCount:
/// cudaErrorNoDevice: ...)"); empty when cudaAvailable().
std::string cudaUnavailableReason();

/// What graphc needs to know about one device.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;         ///< e.g. "NVIDIA H200"
  int major = 0;            ///< compute capability, major part
  int minor = 0;            ///< compute capability, minor part
  int multiprocessors = 0;  ///< number of SMs
  uint64_t totalMemory = 0; ///< bytes of global memory
  uint64_t freeMemory = 0;  ///< bytes free when queried

  /// The compute capability as one number, e.g. 90 for 9.0.
  int computeCapability() const { return major * 10 + minor; }
  /// "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB, 139.2 GiB free)".
  std::string str() const;
};

/// Describes device `ordinal`. Throws graphc::Error when there is no such device.
DeviceInfo deviceInfo(int ordinal = 0);

} // namespace graphc::cuda
