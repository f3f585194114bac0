//===- tests/gpu/GpuTestUtil.h - Helpers for the GPU smoke tests -*- C++ -*-===//
//
// GRAPHC_REQUIRE_GPU() skips a test where no CUDA device is usable, and
// GRAPHC_REQUIRE_NCCL() one where NCCL cannot be loaded; DeviceArray
// is a minimal owning device allocation; randomVector makes reproducible data;
// onDevice and deviceOutputs make the device arrays of a run into outputs;
// GraphsSetting turns CUDA graphs on or off for a scope.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/core/Backend.h"
#include "runtime/cuda/Check.h"
#include "runtime/cuda/CudaBackend.h"
#include "runtime/cuda/Device.h"
#include "runtime/cuda/Nccl.h"
#include "support/Error.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <vector>

/// Skips the current test when there is no CUDA device.
#define GRAPHC_REQUIRE_GPU()                                                                       \
  do {                                                                                             \
    if (!::graphc::cuda::cudaAvailable())                                                          \
      GTEST_SKIP() << "no CUDA device (or driver) on this machine";                                \
  } while (0)

/// Skips the test where NCCL cannot be loaded (runtime/cuda/Nccl.h), saying why.
#define GRAPHC_REQUIRE_NCCL()                                                                      \
  do {                                                                                             \
    std::string why_ = ::graphc::cuda::ncclUnavailableReason();                                    \
    if (!why_.empty())                                                                             \
      GTEST_SKIP() << why_;                                                                        \
  } while (0)

namespace graphc::testing {

/// A device copy of a host vector of doubles.
class DeviceArray {
public:
  explicit DeviceArray(const std::vector<double>& host) : size_(host.size()) {
    GRAPHC_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), bytes()));
    GRAPHC_CUDA_CHECK(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(data_); }

  double* data() { return data_; }
  /// Copies the device contents back (synchronizes).
  std::vector<double> toHost() const {
    std::vector<double> host(size_);
    GRAPHC_CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

private:
  size_t bytes() const { return size_ * sizeof(double); }
  double* data_ = nullptr;
  size_t size_;
};

/// `n` uniform values in [-1, 1) from a fixed seed.
inline std::vector<double> randomVector(size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v)
    x = dist(rng);
  return v;
}

/// Sets GRAPHC_CUDA_GRAPHS for the lifetime of the guard (then unsets it).
class GraphsSetting {
public:
  explicit GraphsSetting(bool on) { setenv("GRAPHC_CUDA_GRAPHS", on ? "1" : "0", 1); }
  GraphsSetting(const GraphsSetting&) = delete;
  GraphsSetting& operator=(const GraphsSetting&) = delete;
  ~GraphsSetting() { unsetenv("GRAPHC_CUDA_GRAPHS"); }
};

/// Device copies of `host`.
inline std::vector<Array> onDevice(const std::vector<Array>& host) {
  std::vector<Array> device;
  for (const Array& a : host)
    device.push_back(cuda::toDevice(a));
  return device;
}

/// New device arrays for `exe`'s outputs.
inline std::vector<Array> deviceOutputs(const Executable& exe) {
  std::vector<Array> outs;
  for (const ir::TensorType& t : exe.signature().outputTypes)
    outs.push_back(cuda::emptyOnDevice(t.dtype, t.shape));
  return outs;
}

} // namespace graphc::testing
