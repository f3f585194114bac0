//===- runtime/cuda/kernels/TinyLu.cu - Solves of tiny general matrices ---===//
//
// tinyLuSolve<T, N> (SmallBatched::luSolve()) solves A x = b for one right-hand
// side column per thread: the thread loads its item's N x N matrix A (row-major)
// into registers, factors it as getrf does (partial pivoting on the first largest
// |a(i,k)|, no scaling by a zero pivot), applies the same steps to its column of B
// and substitutes back. The threads of one item's columns each repeat the
// factorization: at N <= 8 it costs less than sharing it would. Pivot rows are
// swapped by predicated selects, so that the arrays stay in registers. Column 0's
// thread writes the item's info word: getrf's, 0 or 1 + the first step with a zero
// pivot. A null B is the identity (cols = N): X is then A^-1. Part of
// SmallBatched's module.
//
//===----------------------------------------------------------------------===//
#include "Common.cuh"

template <typename T, int N>
__global__ void tinyLuSolve(i64 batch, i64 cols, const T* __restrict__ a, const T* __restrict__ b,
                            T* __restrict__ x, int* __restrict__ info) {
  i64 t = blockIdx.x * (i64)blockDim.x + threadIdx.x;
  if (t >= batch * cols)
    return;
  i64 item = t / cols, c = t - item * cols;
  const T* ai = a + item * N * N;
  T m[N][N], v[N];
#pragma unroll
  for (int i = 0; i < N; ++i) {
#pragma unroll
    for (int j = 0; j < N; ++j)
      m[i][j] = __ldg(ai + i * N + j);
    v[i] = b ? __ldg(b + (item * N + i) * cols + c) : T(i == c);
  }
  int zeroPivot = 0;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    int p = k;
    T largest = fabs(m[k][k]);
#pragma unroll
    for (int i = k + 1; i < N; ++i)
      if (fabs(m[i][k]) > largest) {
        largest = fabs(m[i][k]);
        p = i;
      }
#pragma unroll
    for (int i = k + 1; i < N; ++i)
      if (i == p) {
#pragma unroll
        for (int j = 0; j < N; ++j) {
          T s = m[k][j];
          m[k][j] = m[i][j];
          m[i][j] = s;
        }
        T s = v[k];
        v[k] = v[i];
        v[i] = s;
      }
    if (m[k][k] != T(0)) {
#pragma unroll
      for (int i = k + 1; i < N; ++i)
        m[i][k] /= m[k][k];
    } else if (!zeroPivot) {
      zeroPivot = k + 1;
    }
#pragma unroll
    for (int i = k + 1; i < N; ++i) {
#pragma unroll
      for (int j = k + 1; j < N; ++j)
        m[i][j] -= m[i][k] * m[k][j];
      v[i] -= m[i][k] * v[k];
    }
  }
#pragma unroll
  for (int k = N - 1; k >= 0; --k) {
#pragma unroll
    for (int j = k + 1; j < N; ++j)
      v[k] -= m[k][j] * v[j];
    v[k] /= m[k][k];
  }
#pragma unroll
  for (int i = 0; i < N; ++i)
    x[(item * N + i) * cols + c] = v[i];
  if (c == 0)
    info[item] = zeroPivot;
}
