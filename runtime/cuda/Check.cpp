//===- runtime/cuda/Check.cpp - Status checks for CUDA libraries ----------===//
#include "runtime/cuda/Check.h"

#include "support/Error.h"

#include <fmt/format.h>

namespace graphc::cuda {
namespace {

[[noreturn]] void fail(const char* call, const std::string& what) {
  throw Error(fmt::format("{} failed: {}", call, what));
}

} // namespace

void check(cudaError_t status, const char* call) {
  if (status == cudaSuccess)
    return;
  cudaGetLastError(); // reset the non-sticky error state
  if (status == cudaErrorMemoryAllocation)
    throw DeviceOutOfMemory(fmt::format("{} failed: {} ({})", call, cudaGetErrorName(status),
                                        cudaGetErrorString(status)));
  fail(call, fmt::format("{} ({})", cudaGetErrorName(status), cudaGetErrorString(status)));
}

void check(nvrtcResult status, const char* call) {
  if (status != NVRTC_SUCCESS)
    fail(call, nvrtcGetErrorString(status));
}

void check(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_ALLOC_FAILED)
    throw DeviceOutOfMemory(fmt::format("{} failed: {} ({})", call, cublasGetStatusName(status),
                                        cublasGetStatusString(status)));
  if (status != CUBLAS_STATUS_SUCCESS)
    fail(call, fmt::format("{} ({})", cublasGetStatusName(status), cublasGetStatusString(status)));
}

void check(cusolverStatus_t status, const char* call) {
  if (status == CUSOLVER_STATUS_ALLOC_FAILED)
    throw DeviceOutOfMemory(fmt::format("{} failed: {}", call, cusolverStatusName(status)));
  if (status != CUSOLVER_STATUS_SUCCESS)
    fail(call, cusolverStatusName(status));
}

const char* cusolverStatusName(cusolverStatus_t status) {
  switch (status) {
#define CASE(x)                                                                                    \
  case x:                                                                                          \
    return #x;
    CASE(CUSOLVER_STATUS_SUCCESS)
    CASE(CUSOLVER_STATUS_NOT_INITIALIZED)
    CASE(CUSOLVER_STATUS_ALLOC_FAILED)
    CASE(CUSOLVER_STATUS_INVALID_VALUE)
    CASE(CUSOLVER_STATUS_ARCH_MISMATCH)
    CASE(CUSOLVER_STATUS_MAPPING_ERROR)
    CASE(CUSOLVER_STATUS_EXECUTION_FAILED)
    CASE(CUSOLVER_STATUS_INTERNAL_ERROR)
    CASE(CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED)
    CASE(CUSOLVER_STATUS_NOT_SUPPORTED)
    CASE(CUSOLVER_STATUS_ZERO_PIVOT)
    CASE(CUSOLVER_STATUS_INVALID_LICENSE)
    CASE(CUSOLVER_STATUS_INVALID_WORKSPACE)
#undef CASE
  default:
    return "CUSOLVER_STATUS_<unknown>";
  }
}

} // namespace graphc::cuda
