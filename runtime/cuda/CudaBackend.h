//===- runtime/cuda/CudaBackend.h - The CUDA backend ------------*- C++ -*-===//
//
// The "cuda" backend runs lowered programs on an NVIDIA GPU: NVRTC-compiled fused
// kernels beside cuBLAS/cuSOLVER calls, over buffers from a stream-ordered pool
// (runtime/cuda/CudaBackend.cpp). getBackend("cuda") gives it in builds that have
// it (runtime/Backends.h); getBackend("auto") picks it when a device is present.
//
// Device arrays come from toDevice() and emptyOnDevice(), or wrap the caller's
// device memory without a copy: Array::wrapRaw(dtype, ptr, shape, {}, Device::Cuda).
// A run can be ordered on the caller's stream: exe.enqueue(ins, outs, stream).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/core/Backend.h"

#include <memory>

namespace graphc::cuda {

/// A new CUDA backend, or null when no CUDA device (or driver) is present. The
/// first one makes the build's prebuilt modules the process's table.
std::unique_ptr<Backend> createCudaBackend();

/// A dense copy of host array `a` in device memory (from the device pool, owned by
/// the result). Synchronous.
Array toDevice(const Array& a);
/// A new dense device array with uninitialized elements (from the device pool,
/// owned by the result): an output for Executable::run(inputs, outputs).
Array emptyOnDevice(DType dtype, llvm::ArrayRef<int64_t> shape);
/// A host copy of device array `a`. Synchronous.
Array toHost(const Array& a);

/// How many runs were captured as CUDA graphs since the process started, and how
/// many captures failed (those runs, and later ones on the same lane, go step by
/// step: correct, but paying every launch). Tests check that programs capture.
struct CaptureCounts {
  uint64_t captured = 0, failed = 0;
};
CaptureCounts captureCounts();

} // namespace graphc::cuda
