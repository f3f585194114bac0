//===- runtime/cuda/SmallBatched.cpp - Many small Cholesky factors and solves ===//
//
// Both kernels work on a group of blockDim.x threads per matrix over an n x n
// shared copy with row stride n + 1 (odd, against bank conflicts). Every group of a
// block runs the same n steps, so a failing or absent item still reaches each
// __syncthreads(); it only stops changing its data.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/SmallBatched.h"

#include "runtime/cuda/Check.h"
#include "runtime/cuda/KernelCache.h"
#include "support/Error.h"

#include <algorithm>
#include <fmt/format.h>

namespace graphc::cuda {

namespace {

const char* kSmallBatchedSource = R"(
typedef long long i64;

// Right-looking Cholesky, one column per step: scale column j by sqrt(A(j,j)),
// then update the trailing lower triangle. `upper` factors A's upper triangle
// (read as the lower triangle of A') and writes U = L'.
template <typename T>
__global__ void smallCholesky(i64 batch, int n, const T* a, T* out, int* info, int upper) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int ld = n + 1, tid = threadIdx.x, nt = blockDim.x;
  T* s = reinterpret_cast<T*>(smem) + threadIdx.y * n * ld;
  const i64 b = blockIdx.x * (i64)blockDim.y + threadIdx.y;
  const bool item = b < batch;
  const i64 base = (item ? b : 0) * n * n;
  if (item)
    for (int t = tid; t < n * n; t += nt) {
      int i = t / n, k = t % n;
      if (upper ? k >= i : k <= i)
        s[upper ? k * ld + i : i * ld + k] = a[base + t];
    }
  int failed = 0; // the same in every thread of the group: all read the same pivot
  for (int j = 0; j < n; ++j) {
    __syncthreads();
    T d = s[j * ld + j];
    if (!failed && !(d > T(0)))
      failed = j + 1;
    const bool live = item && !failed;
    const T r = sqrt(d);
    if (live)
      for (int i = j + 1 + tid; i < n; i += nt)
        s[i * ld + j] /= r;
    __syncthreads();
    if (live) {
      if (tid == 0)
        s[j * ld + j] = r;
      const int m = n - j - 1;
      for (int t = tid; t < m * m; t += nt) {
        int i = j + 1 + t / m, k = j + 1 + t % m;
        if (k <= i)
          s[i * ld + k] -= s[i * ld + j] * s[k * ld + j];
      }
    }
  }
  __syncthreads();
  if (!item)
    return;
  for (int t = tid; t < n * n; t += nt) {
    int i = t / n, k = t % n;
    out[base + t] = upper ? (k >= i ? s[k * ld + i] : T(0)) : (k <= i ? s[i * ld + k] : T(0));
  }
  if (tid == 0)
    info[b] = failed;
}

// op(A) X = B by substitution on the triangle M = op(A), held row-major in shared
// memory: forward when M is lower, backward when it is upper. Step j eliminates
// x_j = B(j,:) / M(j,j) from the rows still to solve; the rows are divided by
// their diagonal at the end.
template <typename T>
__global__ void smallTriangularSolve(i64 batch, int n, int cols, const T* a, const T* rhs, T* x,
                                     int* info, int lower, int transpose, int unit) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int ld = n + 1, tid = threadIdx.x, nt = blockDim.x;
  T* s = reinterpret_cast<T*>(smem) + threadIdx.y * (n * ld + n * cols);
  T* sx = s + n * ld;
  const i64 b = blockIdx.x * (i64)blockDim.y + threadIdx.y;
  const bool item = b < batch, forward = lower != transpose;
  const i64 base = (item ? b : 0) * n * n, xbase = (item ? b : 0) * n * cols;
  if (item) {
    for (int t = tid; t < n * n; t += nt) {
      int i = t / n, k = t % n;
      if (lower ? k <= i : k >= i)
        s[transpose ? k * ld + i : i * ld + k] = a[base + t];
    }
    for (int t = tid; t < n * cols; t += nt)
      sx[t] = rhs[xbase + t];
  }
  __syncthreads();
  if (item && tid == 0 && !unit) {
    int zero = 0;
    for (int i = n - 1; i >= 0; --i)
      zero = s[i * ld + i] == T(0) ? i + 1 : zero;
    info[b] = zero;
  }
  for (int step = 0; step < n; ++step) {
    const int j = forward ? step : n - 1 - step;
    const int first = forward ? j + 1 : 0, rows = forward ? n - 1 - j : j;
    const T djj = unit ? T(1) : s[j * ld + j];
    if (item)
      for (int t = tid; t < rows * cols; t += nt) {
        int i = first + t / cols, c = t % cols;
        T xj = unit ? sx[j * cols + c] : sx[j * cols + c] / djj;
        sx[i * cols + c] -= s[i * ld + j] * xj;
      }
    __syncthreads();
  }
  if (item)
    for (int t = tid; t < n * cols; t += nt) {
      int i = t / cols;
      x[xbase + t] = unit ? sx[t] : sx[t] / s[i * ld + i];
    }
}
)";

const char* kKernels[] = {"smallCholesky", "smallTriangularSolve"};

template <typename T> const char* typeName();
template <> const char* typeName<float>() {
  return "float";
}
template <> const char* typeName<double>() {
  return "double";
}

/// Shared bytes of one matrix (and its right-hand sides) in the kernels.
size_t choleskyBytes(int64_t n, size_t elementSize) {
  return n * (n + 1) * elementSize;
}
size_t solveBytes(int64_t n, int64_t cols, size_t elementSize) {
  return (n * (n + 1) + n * cols) * elementSize;
}

/// `work` spread over groups of 32 to 256 threads.
int threadsFor(int64_t work) {
  return static_cast<int>(std::clamp<int64_t>((work + 31) / 32 * 32, 32, 256));
}

} // namespace

SmallBatched::SmallBatched() {
  int device = 0, optin = 0;
  GRAPHC_CUDA_CHECK(cudaGetDevice(&device));
  GRAPHC_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  maxSharedBytes_ = static_cast<size_t>(optin);
  ModuleSource source{kSmallBatchedSource, "graphc_small_batched.cu", {}};
  for (const char* name : kKernels)
    for (const char* type : {"float", "double"})
      source.nameExpressions.push_back(fmt::format("{}<{}>", name, type));
  module_ = KernelCache::global().getModule(source);
  for (const std::string& expression : source.nameExpressions) {
    Kernel k = module_->kernel(expression);
    GRAPHC_CUDA_CHECK(cudaKernelSetAttributeForDevice(
        k.handle(), cudaFuncAttributeMaxDynamicSharedMemorySize, optin, device));
    kernels_[expression] = k;
  }
}

bool SmallBatched::fitsCholesky(int64_t n, size_t elementSize) const {
  return n > 0 && choleskyBytes(n, elementSize) <= maxSharedBytes_;
}

bool SmallBatched::fitsTriangularSolve(int64_t n, int64_t cols, size_t elementSize) const {
  return n > 0 && cols > 0 && solveBytes(n, cols, elementSize) <= maxSharedBytes_;
}

Kernel SmallBatched::kernel(const std::string& expression) const {
  auto it = kernels_.find(expression);
  if (it == kernels_.end())
    throw Error(fmt::format("internal error: no small batched kernel {}", expression));
  return it->second;
}

/// Groups of `threadsPerMatrix`, as many per block as keep it at 256 threads and
/// a quarter of the shared memory.
void SmallBatched::launch(const std::string& expression, int64_t batch, int threadsPerMatrix,
                          size_t bytesPerMatrix, cudaStream_t stream,
                          std::initializer_list<void*> args) const {
  if (batch == 0)
    return;
  int64_t perBlock = std::max<int64_t>(
      1, std::min<int64_t>({256 / threadsPerMatrix, batch,
                            static_cast<int64_t>(maxSharedBytes_ / 4 / bytesPerMatrix)}));
  LaunchConfig c;
  c.block = dim3(threadsPerMatrix, static_cast<unsigned>(perBlock));
  c.grid = dim3(static_cast<unsigned>((batch + perBlock - 1) / perBlock));
  c.sharedBytes = perBlock * bytesPerMatrix;
  c.stream = stream;
  kernel(expression).launch(c, args);
}

template <typename T>
void SmallBatched::cholesky(int64_t batch, int64_t n, const T* a, T* l, bool upper, int* info,
                            cudaStream_t stream, int threadsPerMatrix) const {
  if (!fitsCholesky(n, sizeof(T)))
    throw Error(fmt::format("internal error: small batched cholesky of n = {}", n));
  int dim = static_cast<int>(n), up = upper;
  launch(fmt::format("smallCholesky<{}>", typeName<T>()), batch,
         threadsPerMatrix ? threadsPerMatrix : threadsFor(n * n / 8), choleskyBytes(n, sizeof(T)),
         stream, {&batch, &dim, &a, &l, &info, &up});
}

template <typename T>
void SmallBatched::triangularSolve(int64_t batch, int64_t n, int64_t cols, const T* a, const T* b,
                                   T* x, TriangleFlags flags, int* info, cudaStream_t stream,
                                   int threadsPerMatrix) const {
  if (!fitsTriangularSolve(n, cols, sizeof(T)))
    throw Error(fmt::format("internal error: small batched triangular solve of n = {}", n));
  int dim = static_cast<int>(n), c = static_cast<int>(cols);
  int lower = flags.lower, transpose = flags.transpose, unit = flags.unit;
  launch(fmt::format("smallTriangularSolve<{}>", typeName<T>()), batch,
         threadsPerMatrix ? threadsPerMatrix : threadsFor(n * cols), solveBytes(n, cols, sizeof(T)),
         stream, {&batch, &dim, &c, &a, &b, &x, &info, &lower, &transpose, &unit});
}

template void SmallBatched::cholesky<float>(int64_t, int64_t, const float*, float*, bool, int*,
                                            cudaStream_t, int) const;
template void SmallBatched::cholesky<double>(int64_t, int64_t, const double*, double*, bool, int*,
                                             cudaStream_t, int) const;
template void SmallBatched::triangularSolve<float>(int64_t, int64_t, int64_t, const float*,
                                                   const float*, float*, TriangleFlags, int*,
                                                   cudaStream_t, int) const;
template void SmallBatched::triangularSolve<double>(int64_t, int64_t, int64_t, const double*,
                                                    const double*, double*, TriangleFlags, int*,
                                                    cudaStream_t, int) const;

} // namespace graphc::cuda
