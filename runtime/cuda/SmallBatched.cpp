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
// then update the trailing lower triangle, thread (row, part) of the group
// updating every groups-th element of its row. `upper` factors A's upper
// triangle (read as the lower triangle of A') and writes U = L'. The group has
// n * groups threads.
template <typename T>
__global__ void smallCholesky(i64 batch, int n, const T* a, T* out, int* info, int upper) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int ld = n + 1, tid = threadIdx.x, nt = blockDim.x;
  const int groups = nt / n, row = tid % n, part = tid / n;
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
    const T d = s[j * ld + j];
    if (!failed && !(d > T(0)))
      failed = j + 1;
    const bool live = item && !failed;
    const T r = sqrt(d);
    if (live && part == 0 && row > j)
      s[row * ld + j] /= r;
    __syncthreads();
    if (live && row > j) {
      const T lij = s[row * ld + j];
      for (int k = j + 1 + part; k <= row; k += groups)
        s[row * ld + k] -= lij * s[k * ld + j];
    }
    if (live && tid == 0)
      s[j * ld + j] = r;
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

// op(A) X = B by substitution on the triangle M = op(A), read from global memory
// (each element once; M's columns are A's rows when transposed): forward when M is
// lower, backward when it is upper, with X in shared memory. Step j eliminates
// x_j = X(j,:) / M(j,j) from the rows still to solve; the rows are divided by
// their diagonal at the end. Each item's shared slot starts with an int: the
// first zero on the diagonal.
template <typename T>
__global__ void smallTriangularSolve(i64 batch, int n, int cols, const T* a, const T* rhs, T* x,
                                     int* info, int lower, int transpose, int unit) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x, nt = blockDim.x;
  unsigned char* slot = smem + threadIdx.y * (16 + n * cols * sizeof(T));
  int* firstZero = reinterpret_cast<int*>(slot);
  T* sx = reinterpret_cast<T*>(slot + 16);
  const i64 b = blockIdx.x * (i64)blockDim.y + threadIdx.y;
  const bool item = b < batch, forward = lower != transpose;
  const T* m = a + (item ? b : 0) * n * n;
  const i64 xbase = (item ? b : 0) * n * cols;
#define M(i, j) (transpose ? m[(j) * n + (i)] : m[(i) * n + (j)])
  if (tid == 0)
    *firstZero = n + 1;
  if (item)
    for (int t = tid; t < n * cols; t += nt)
      sx[t] = rhs[xbase + t];
  for (int step = 0; step < n; ++step) {
    __syncthreads();
    const int j = forward ? step : n - 1 - step;
    const int first = forward ? j + 1 : 0, rows = forward ? n - 1 - j : j;
    if (!item)
      continue;
    const T djj = unit ? T(1) : M(j, j);
    for (int t = tid; t < rows * cols; t += nt) {
      int i = first + t / cols, c = t % cols;
      T xj = unit ? sx[j * cols + c] : sx[j * cols + c] / djj;
      sx[i * cols + c] -= M(i, j) * xj;
    }
  }
  __syncthreads();
  if (item)
    for (int t = tid; t < n * cols; t += nt) {
      int i = t / cols;
      T d = unit ? T(1) : M(i, i);
      if (d == T(0))
        atomicMin(firstZero, i + 1);
      x[xbase + t] = unit ? sx[t] : sx[t] / d;
    }
#undef M
  __syncthreads();
  if (item && tid == 0 && !unit)
    info[b] = *firstZero > n ? 0 : *firstZero;
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

/// Shared bytes of one matrix, or of one item's right-hand sides, in the kernels.
size_t choleskyBytes(int64_t n, size_t elementSize) {
  return n * (n + 1) * elementSize;
}
size_t solveBytes(int64_t n, int64_t cols, size_t elementSize) {
  return 16 + n * cols * elementSize;
}

/// Threads per matrix of smallCholesky by default: 1, 2 or 4 per row, the fastest
/// on an H200 at n = 4, 16 / 32, 48 / 64, 96, 128 (docs/benchmarks.md, W5).
int64_t choleskyThreads(int64_t n) {
  return n * (n <= 16 ? 1 : n <= 48 ? 2 : 4);
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
  // n threads per matrix, or a multiple of n: the rows of the trailing update.
  int64_t threads = threadsPerMatrix ? threadsPerMatrix : choleskyThreads(n);
  int dim = static_cast<int>(n), up = upper;
  launch(fmt::format("smallCholesky<{}>", typeName<T>()), batch,
         static_cast<int>(n * std::max<int64_t>(1, threads / n)), choleskyBytes(n, sizeof(T)),
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
         threadsPerMatrix ? threadsPerMatrix : static_cast<int>(std::min<int64_t>(n * cols, 256)),
         solveBytes(n, cols, sizeof(T)), stream,
         {&batch, &dim, &c, &a, &b, &x, &info, &lower, &transpose, &unit});
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
