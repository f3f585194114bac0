//===- runtime/cuda/Check.h - Status checks for CUDA libraries --*- C++ -*-===//
//
// Every call into cudart, NVRTC, cuBLAS or cuSOLVER is wrapped in one of the
// GRAPHC_CHECK_* macros. A failing status becomes a graphc::Error whose message
// names the call (its source text) and the library's error name and string:
//
//   cudaMalloc(&p, bytes) failed: cudaErrorMemoryAllocation (out of memory)
//
// Running out of device memory is a DeviceOutOfMemory (an Error): the state it
// leaves is not sticky, so a caller may free memory and try again.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolver_common.h>
#include <nvrtc.h>

#include "support/Error.h"

namespace graphc::cuda {

/// The device had not the memory a call asked for (cudaErrorMemoryAllocation,
/// CUBLAS_STATUS_ALLOC_FAILED, CUSOLVER_STATUS_ALLOC_FAILED, or DevicePool::allocate
/// after trimming its cache). Later calls may succeed.
class DeviceOutOfMemory : public Error {
public:
  using Error::Error;
};

/// Throws graphc::Error naming `call` when `status` is not cudaSuccess (a
/// DeviceOutOfMemory for cudaErrorMemoryAllocation). Clears the runtime's
/// last-error state first, so a failed call does not poison later ones.
void check(cudaError_t status, const char* call);
/// Throws graphc::Error naming `call` when `status` is not NVRTC_SUCCESS.
void check(nvrtcResult status, const char* call);
/// Throws graphc::Error naming `call` when `status` is not CUBLAS_STATUS_SUCCESS.
void check(cublasStatus_t status, const char* call);
/// Throws graphc::Error naming `call` when `status` is not CUSOLVER_STATUS_SUCCESS.
void check(cusolverStatus_t status, const char* call);

/// The enumerator name of a cuSOLVER status, e.g. "CUSOLVER_STATUS_INVALID_VALUE"
/// (cuSOLVER has no error-string function of its own).
const char* cusolverStatusName(cusolverStatus_t status);

} // namespace graphc::cuda

/// Evaluates a cudart, NVRTC, cuBLAS or cuSOLVER call and throws graphc::Error,
/// naming the call, when it fails.
#define GRAPHC_CUDA_CHECK(call) ::graphc::cuda::check((call), #call)
