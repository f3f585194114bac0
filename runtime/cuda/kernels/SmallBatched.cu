//===- runtime/cuda/kernels/SmallBatched.cu - Small Cholesky factors and solves -===//
//
// The first file of SmallBatched's module (runtime/cuda/SmallBatched.h): batched
// Cholesky factors, triangular solves and Gram matrices of small matrices, a group
// of blockDim.x threads per matrix and blockDim.y matrices per block. The Cholesky
// kernels keep an n x n shared copy with row stride n + 1 (odd, against bank
// conflicts). Every group of a block runs the same steps, so a failing or absent
// item still reaches each __syncthreads(); it only stops changing its data.
//
//===----------------------------------------------------------------------===//
#include "Common.cuh"
#include "Slots.cuh"

// Copies the lower triangle of the row-major n x n matrix `a` into s (row stride
// n + 1), or with `upper` its upper triangle transposed (the lower triangle of A').
template <typename T> __device__ void loadLower(T* s, int n, const T* a, int upper, const Slot& g) {
  const int ld = n + 1;
  if (g.present)
    stage<T>(
        n * n, g, [&](int t) { return a[t]; },
        [&](int t, T v) {
          int i = t / n, k = t % n;
          if (upper ? k >= i : k <= i)
            s[upper ? k * ld + i : i * ld + k] = v;
        });
}

// Right-looking Cholesky of the lower triangle of s, one column per step: scale
// column j by sqrt(A(j,j)), then update the trailing lower triangle, thread
// (row, part) of the group (n * groups threads) updating every groups-th element
// of its row. Returns the first leading minor that is not positive definite, or
// 0: the same in every thread of the group, which all read the same pivots, and
// whose data stops changing at a failure.
template <typename T> __device__ int factorLower(T* s, int n, const Slot& g) {
  const int ld = n + 1, row = g.tid % n, part = g.tid / n, groups = g.nt / n;
  int failed = 0;
  for (int j = 0; j < n; ++j) {
    __syncthreads();
    const T d = s[j * ld + j];
    if (!failed && !(d > T(0)))
      failed = j + 1;
    const bool live = g.present && !failed;
    const T r = sqrt(d);
    if (live && part == 0 && row > j)
      s[row * ld + j] /= r;
    __syncthreads();
    if (live && row > j) {
      const T lij = s[row * ld + j];
      for (int k = j + 1 + part; k <= row; k += groups)
        s[row * ld + k] -= lij * s[k * ld + j];
    }
    if (live && g.tid == 0)
      s[j * ld + j] = r;
  }
  __syncthreads();
  return failed;
}

template <typename T>
__global__ void smallCholesky(i64 batch, int n, const T* a, T* out, int* info, int upper) {
  extern __shared__ __align__(16) unsigned char smem[];
  const Slot g = thisSlot(batch);
  const int ld = n + 1;
  T* s = reinterpret_cast<T*>(smem) + threadIdx.y * n * ld;
  const i64 base = (g.present ? g.b : 0) * n * n;
  loadLower(s, n, a + base, upper, g);
  const int failed = factorLower(s, n, g);
  if (!g.present)
    return;
  for (int t = g.tid; t < n * n; t += g.nt) {
    int i = t / n, k = t % n;
    out[base + t] = upper ? (k >= i ? s[k * ld + i] : T(0)) : (k <= i ? s[i * ld + k] : T(0));
  }
  if (g.tid == 0)
    info[g.b] = failed;
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
#define M(i, j) (transpose ? m[(j)*n + (i)] : m[(i)*n + (j)])
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

// S = X X' for the row-major rows x k matrices X. The item's tr * tr threads
// (tr = ceil(rows / 4)) each accumulate 16 entries S(ti + a tr, tj + b tr),
// a, b < 4, in registers, over chunks of Chunk columns of X staged in shared
// memory (4 tr rows of stride Chunk + 1, zero past rows and k, so the inner loop
// has no bounds). Consecutive threads take consecutive columns tj: the rows ti
// are broadcast, the stores coalesced. At most 32 x 32 threads an item.
template <typename T, int Chunk>
__global__ void __launch_bounds__(1024) smallGram(i64 batch, int rows, int k, const T* x, T* s) {
  extern __shared__ __align__(16) unsigned char smem[];
  const Slot g = thisSlot(batch);
  const int tr = (rows + 3) / 4, ld = Chunk + 1, ti = g.tid / tr, tj = g.tid % tr;
  T* xs = reinterpret_cast<T*>(smem) + threadIdx.y * 4 * tr * ld;
  const T* xb = x + (g.present ? g.b : 0) * rows * k;
  T acc[4][4] = {};
  for (int p0 = 0; p0 < k; p0 += Chunk) {
    __syncthreads();
    stage<T>(
        4 * tr * Chunk, g,
        [&](int t) {
          int i = t / Chunk, q = t % Chunk;
          return g.present && i < rows && p0 + q < k ? xb[(i64)i * k + p0 + q] : T(0);
        },
        [&](int t, T v) { xs[(t / Chunk) * ld + t % Chunk] = v; });
    __syncthreads();
#pragma unroll 4
    for (int q = 0; q < Chunk; ++q) {
      T u[4], v[4];
#pragma unroll
      for (int a = 0; a < 4; ++a) {
        u[a] = xs[(ti + a * tr) * ld + q];
        v[a] = xs[(tj + a * tr) * ld + q];
      }
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < 4; ++b)
          acc[a][b] += u[a] * v[b];
    }
  }
  if (!g.present)
    return;
  T* sb = s + g.b * rows * rows;
#pragma unroll
  for (int a = 0; a < 4; ++a)
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      int i = ti + a * tr, j = tj + b * tr;
      if (i < rows && j < rows)
        sb[i * rows + j] = acc[a][b];
    }
}
