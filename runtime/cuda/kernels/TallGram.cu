//===- runtime/cuda/kernels/TallGram.cu - X'X of tall, narrow matrices ----===//
//
// C = X'X (SmallBatched::tallGram()) for row-major X of many rows and at most 32
// columns, where cuBLAS's syrk and gemm leave most of the GPU idle.
// tallGram<T, N> (n <= N columns, N = 8, 16 or 32; blocks of 256 threads): block
// (b, item) sums the products of the rows [b chunk, (b + 1) chunk) of its item's X.
// The rows are staged in (dynamic) shared memory 1024 / N at a time (coalesced: they
// are contiguous), the columns past n zero. A group of (N / 4)^2 threads holds the
// whole N x N sum, a 4 x 4 tile a thread in f64 registers, and takes every
// groups-th row of the stage: eight shared loads feed sixteen FMAs. At the end the
// groups' sums are added in shared memory, in order, and the block's partial is
// written. tallGramSum<T, N> adds an item's partials into C, a warp an entry: lane
// l adds the partials l, l + 32, ... and the lanes combine in a butterfly. Both
// triangles are written: C(i,j) and C(j,i) add the same products in the same
// order, so C is exactly symmetric. Results do not depend on timing: every sum has
// a fixed order. Part of SmallBatched's module.
//
//===----------------------------------------------------------------------===//
#include "Common.cuh"

template <typename T, int N>
__global__ void __launch_bounds__(256)
    tallGram(i64 rows, int n, i64 chunk, const T* __restrict__ x, double* __restrict__ partials) {
  constexpr int R = 1024 / N, side = N / 4, groupSize = side * side, groups = 256 / groupSize;
  extern __shared__ double shared[]; // tallGramSharedBytes: the groups' sums, then the tile
  double(*sum)[N * N] = reinterpret_cast<double(*)[N * N]>(shared);
  T(*tile)[N] = reinterpret_cast<T(*)[N]>(shared + groups * N * N);
  const int t = threadIdx.x, g = t / groupSize, ti = t % groupSize / side, tj = t % side;
  const T* xi = x + (i64)blockIdx.y * rows * n;
  for (int e = t; e < R * N; e += 256)
    tile[e / N][e % N] = T(0);
  double acc[4][4] = {};
  const i64 begin = blockIdx.x * chunk, end = min(rows, begin + chunk);
  for (i64 r0 = begin; r0 < end; r0 += R) {
    const int count = (int)min((i64)R, end - r0);
    __syncthreads();
    for (int e = t; e < count * n; e += 256)
      tile[e / n][e % n] = xi[r0 * n + e];
    __syncthreads();
    for (int r = g; r < count; r += groups) {
      double a[4], b[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        a[u] = tile[r][4 * ti + u];
        b[u] = tile[r][4 * tj + u];
      }
#pragma unroll
      for (int u = 0; u < 4; ++u)
#pragma unroll
        for (int v = 0; v < 4; ++v)
          acc[u][v] += a[u] * b[v];
    }
  }
#pragma unroll
  for (int u = 0; u < 4; ++u)
#pragma unroll
    for (int v = 0; v < 4; ++v)
      sum[g][(4 * ti + u) * N + 4 * tj + v] = acc[u][v];
  __syncthreads();
  double* out = partials + ((i64)blockIdx.y * gridDim.x + blockIdx.x) * N * N;
  for (int e = t; e < N * N; e += 256) {
    double s = 0;
    for (int k = 0; k < groups; ++k)
      s += sum[k][e];
    out[e] = s;
  }
}

template <typename T, int N>
__global__ void tallGramSum(i64 batch, int n, int blocks, const double* __restrict__ partials,
                            T* __restrict__ c) {
  const int lane = threadIdx.x % 32;
  for (i64 t = (blockIdx.x * (i64)blockDim.x + threadIdx.x) / 32; t < batch * n * n;
       t += (i64)gridDim.x * blockDim.x / 32) {
    const i64 item = t / (n * n);
    const int i = (int)(t % (n * n)) / n, j = (int)(t % n);
    const double* p = partials + item * blocks * N * N + i * N + j;
    double s = 0;
    for (int b = lane; b < blocks; b += 32)
      s += p[(i64)b * N * N];
#pragma unroll
    for (int m = 16; m > 0; m /= 2)
      s += __shfl_xor_sync(0xffffffffu, s, m);
    if (lane == 0)
      c[t] = (T)s;
  }
}
