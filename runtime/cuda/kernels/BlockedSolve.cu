//===- runtime/cuda/kernels/BlockedSolve.cu - Kernels of large triangular solves -===//
//
// The kernel inverting the diagonal blocks of a large triangle and the one solving
// for a single vector (runtime/cuda/BlockedSolve.h), launched by
// SmallBatched::invertTriangles() and SmallBatched::solveVector(), and the panel
// solve of medium triangles, SmallBatched::panelSolve(). Part of SmallBatched's
// module.
//
//===----------------------------------------------------------------------===//
#include "Common.cuh"
#include "Dmma.cuh"

// Shared layout of invertTriangles and panelSolve: Y (the rows of the 32 columns
// being formed, row i at Y + YS i) and P (32 rows of the panel of L, row i at P +
// pld i, pld = 4 mod 16). Strides of 4 mod 16 doubles keep the f64 tensor-core
// fragment loads free of bank conflicts.
constexpr int YS = 36;

// Y(r0 + i, c) = S(i, c) - sum_k P(i, k) Y(c0 + k, c) over k < K - 32, i, c < 32:
// the right-hand side of a chunk's solve, where S is the identity's part (r0 + i ==
// c0 + c) with `identity`, else Y(r0 + i, c) as it is. f32: thread (warp w, lane c)
// forms rows w + 8u of column c with FMAs.
__device__ void formChunk(float* Y, const float* P, int pld, int c0, int r0, int K, bool identity) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float acc[4];
#pragma unroll
  for (int u = 0; u < 4; ++u)
    acc[u] = identity ? float(r0 + warp + 8 * u == c0 + lane) : Y[(r0 + warp + 8 * u) * YS + lane];
#pragma unroll 8
  for (int k = 0; k < K - 32; ++k) {
    const float y = Y[(c0 + k) * YS + lane];
#pragma unroll
    for (int u = 0; u < 4; ++u)
      acc[u] -= P[(warp + 8 * u) * pld + k] * y;
  }
#pragma unroll
  for (int u = 0; u < 4; ++u)
    Y[(r0 + warp + 8 * u) * YS + lane] = acc[u];
}
// f64 on the tensor cores (dmma): warp w forms rows 8 (w % 4).. and
// columns 16 (w / 4).., two 8 x 8 tiles, lane l holding row l / 4, columns 2 (l % 4)
// + {0, 1} of each.
__device__ void formChunk(double* Y, const double* P, int pld, int c0, int r0, int K,
                          bool identity) {
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  const int row = 8 * (w % 4) + l / 4, col = 16 * (w / 4) + 2 * (l % 4);
  double d[2][2];
#pragma unroll
  for (int t = 0; t < 2; ++t)
#pragma unroll
    for (int e = 0; e < 2; ++e)
      d[t][e] = identity ? double(r0 + row == c0 + col + 8 * t + e)
                         : Y[(r0 + row) * YS + col + 8 * t + e];
  const double* a = P + row * pld + l % 4;
  const double* b = Y + (c0 + l % 4) * YS + 16 * (w / 4) + l / 4;
#pragma unroll 4
  for (int k = 0; k < K - 32; k += 4) {
    const double av = a[k], b0 = -b[k * YS], b1 = -b[k * YS + 8];
    dmma(d[0][0], d[0][1], av, b0);
    dmma(d[1][0], d[1][1], av, b1);
  }
#pragma unroll
  for (int t = 0; t < 2; ++t)
#pragma unroll
    for (int e = 0; e < 2; ++e)
      Y[(r0 + row) * YS + col + 8 * t + e] = d[t][e];
}

// Solves L(r0.., r0..) Y(r0.., .) = Y(r0.., .) for the chunk's 32 rows of Y's 32
// columns, the diagonal block of L at P's columns K - 32..: a warp per four
// columns (independent, which hides the shuffles' latency), a lane per row.
template <typename T>
__device__ void substitute(T* Y, const T* P, int pld, int r0, int K, int unit) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  T v[4];
#pragma unroll
  for (int u = 0; u < 4; ++u)
    v[u] = Y[(r0 + lane) * YS + warp + 8 * u];
  const T* row = P + lane * pld + K - 32;
  const T rinv = unit ? T(1) : T(1) / row[lane];
#pragma unroll 8
  for (int k = 0; k < 32; ++k) {
    const T l = row[k];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      T yk = __shfl_sync(0xffffffff, v[u] * rinv, k);
      v[u] = lane == k ? yk : lane > k ? v[u] - l * yk : v[u];
    }
  }
#pragma unroll
  for (int u = 0; u < 4; ++u)
    Y[(r0 + lane) * YS + warp + 8 * u] = v[u];
}

// The inverses of the s x s diagonal blocks of the n x n column-major triangle t
// (leading dimension ld; block b starts at row and column b nb, s = min(nb, n - b
// nb)), each written column-major with leading dimension nb at inv + b nb nb, zeros
// in the other triangle. An upper triangle is inverted as the lower triangle U'
// (inv(U) = inv(U')'), read and written through swapped strides.
//
// Block (chunk, b) of 256 threads forms the 32 columns c0.. of block b's inverse Y
// by forward substitution on L Y = I, 32 rows r0.. at a time: it stages the
// panel L(r0.., c0..r0+31) in shared memory, forms S = I - L(r0.., c0..r0) Y(c0..r0, .)
// (formChunk), then solves L(r0.., r0..) Y(r0.., .) = S a warp per 4 columns, a
// lane per row. Y's rows above c0 are zero.
template <typename T>
__global__ void __launch_bounds__(256)
    invertTriangles(int n, int nb, const T* t, i64 ld, int upper, int unit, T* inv) {
  extern __shared__ unsigned char raw[];
  T* Y = reinterpret_cast<T*>(raw);
  T* P = Y + nb * YS; // L(r0 + i, c0 + k) at P[i * pld + k]
  const int pld = nb + 4, b = blockIdx.y, c0 = blockIdx.x * 32, tid = threadIdx.x;
  const int s = min(nb, n - b * nb);
  if (c0 >= s)
    return;
  const T* L = t + (i64)b * nb * (ld + 1);
  T* out = inv + (i64)b * nb * nb;
  const i64 si = upper ? ld : 1, sk = upper ? 1 : ld; // L(i, k) = L[i si + k sk]
  auto at = [&](int i, int c) { return upper ? c + (i64)i * nb : i + (i64)c * nb; };
  for (int e = tid; e < c0 * 32; e += 256) {
    int i = upper ? e / 32 : e % c0, c = c0 + (upper ? e % 32 : e / c0);
    if (c < s)
      out[at(i, c)] = T(0);
  }
  for (int r0 = c0; r0 < s; r0 += 32) {
    const int K = r0 - c0 + 32;
    // Coalesced along columns of L (rows of U); padding rows past s are identity rows.
    // Only the triangle is read: the entries above its diagonal are never used, and
    // in the last block they lie past the matrix's end.
    for (int e = tid; e < 32 * K; e += 256) {
      int i = upper ? e / K : e % 32, k = upper ? e % K : e / 32;
      const int row = r0 + i, col = c0 + k;
      P[i * pld + k] = row >= s ? T(row == col) : col <= row ? L[row * si + col * sk] : T(0);
    }
    __syncthreads();
    formChunk(Y, P, pld, c0, r0, K, true);
    __syncthreads();
    substitute(Y, P, pld, r0, K, unit);
    __syncthreads();
    for (int e = tid; e < 32 * 32; e += 256) {
      int i = r0 + (upper ? e / 32 : e % 32), c = upper ? e % 32 : e / 32;
      if (i < s && c0 + c < s)
        out[at(i, c0 + c)] = Y[i * YS + c];
    }
  }
}
// Copies one element into shared memory asynchronously (cp.async, compute
// capability 8.0 on); waitCopies() waits for all of the thread's.
template <typename T> __device__ void copyAsync(T* to, const T* from) {
  asm volatile(
      "cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"((unsigned)__cvta_generic_to_shared(to)),
      "l"(from), "n"(sizeof(T)));
}
__device__ void waitCopies() {
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

// Solves L Y = C for the n x n lower triangle L(i, k) = t[p(i) si + p(k) sk] and
// `rhs` columns C(i, c) = b[p(i) yi + c yc], writing Y(i, c) to x at the same
// places, where p(i) = i, or n - 1 - i with `reverse` (an upper triangle solved
// from its last row); items of a batch `tStride` and `yStride` apart. These
// strides express every side, triangle and transpose of a row-major solve
// (SmallBatched::panelSolve()).
//
// Block (chunk, item) of 256 threads holds the 32 columns c0.. of Y in shared
// memory (np = n rounded up to 32 rows; zeros past n and past rhs) and goes down
// L 32 rows r0.. at a time: it forms S = C(r0.., .) - L(r0.., 0..r0) Y(0..r0, .)
// (formChunk) and solves L(r0.., r0..) Y(r0.., .) = S (substitute), while the
// panel of the next 32 rows of L is copied into the other of two buffers with
// cp.async. Only L's triangle is read; padding rows past n are identity rows. A
// zero on the diagonal gives infinities or NaNs, as trsm does (the caller checks
// the diagonal).
template <typename T>
__global__ void __launch_bounds__(256)
    panelSolve(int n, int rhs, i64 batch, const T* t, i64 si, i64 sk, i64 tStride, int reverse,
               int unit, const T* b, T* x, i64 yi, i64 yc, i64 yStride) {
  extern __shared__ __align__(16) unsigned char raw[];
  const int np = (n + 31) / 32 * 32, pld = np + 4, tid = threadIdx.x, c0 = blockIdx.x * 32;
  const int cols = min(32, rhs - c0);
  T* Y = reinterpret_cast<T*>(raw);                               // Y(i, c) at Y[i * YS + c]
  auto panel = [&](int s) { return Y + np * YS + s * 32 * pld; }; // L(r0 + i, k) at [i pld + k]
  auto p = [&](int i) -> i64 { return reverse ? n - 1 - i : i; };
  // Row i of the panel at r0 up to column r0 + 31, coalesced along L's rows or
  // columns, whichever are contiguous.
  auto stage = [&](const T* L, T* P, int r0) {
    const int K = r0 + 32;
    for (int e = tid; e < 32 * K; e += 256) {
      const int i = sk == 1 ? e / K : e % 32, k = sk == 1 ? e % K : e / 32, row = r0 + i;
      if (k > row)
        continue; // above the diagonal: never read
      if (row < n)
        copyAsync(P + i * pld + k, L + p(row) * si + p(k) * sk);
      else
        P[i * pld + k] = T(row == k);
    }
  };
  for (i64 item = blockIdx.y; item < batch; item += gridDim.y) {
    const T* L = t + item * tStride;
    const i64 y0 = item * yStride + c0 * yc;
    stage(L, panel(0), 0);
    for (int e = tid; e < np * 32; e += 256) {
      const int i = yi == 1 ? e % np : e / 32, c = yi == 1 ? e / np : e % 32;
      Y[i * YS + c] = i < n && c < cols ? b[y0 + p(i) * yi + c * yc] : T(0);
    }
    for (int r0 = 0, s = 0; r0 < n; r0 += 32, s ^= 1) {
      waitCopies();
      // Panel s is in, Y's rows above r0 are final and panel 1 - s is read.
      __syncthreads();
      if (r0 + 32 < n)
        stage(L, panel(1 - s), r0 + 32);
      formChunk(Y, panel(s), pld, 0, r0, r0 + 32, false);
      __syncthreads();
      substitute(Y, panel(s), pld, r0, r0 + 32, unit);
    }
    __syncthreads();
    for (int e = tid; e < np * 32; e += 256) {
      const int i = yi == 1 ? e % np : e / 32, c = yi == 1 ? e / np : e % 32;
      if (i < n && c < cols)
        x[y0 + p(i) * yi + c * yc] = Y[i * YS + c];
    }
    __syncthreads(); // Y is read before the next item's C replaces it
  }
}

// One vector: op(A) y = b, A row-major n x n read transposed with `trans`. With
// `opLower` op(A) is lower triangular; otherwise the system is solved with its rows
// and columns reversed, which makes it lower. y holds b on entry. One block of 256
// threads per 64 rows, in order: block k inverts its diagonal tile while it waits,
// takes the finished blocks' parts of y as `done` counts them, and publishes its
// own. Blocks start in order, so every block waited for has started.
template <typename T>
__global__ void __launch_bounds__(256)
    solveVector(i64 n, const T* a, i64 aStride, int opLower, int trans, int unit, T* y, i64 yStride,
                int* done) {
  constexpr int B = 64; // rows per block; the launch passes the shared bytes below
  // The diagonal tile below m's diagonal, its diagonal in dg, and its inverse W
  // transposed on and above m's diagonal: W(i, c) at m[c][i].
  extern __shared__ __align__(16) unsigned char smem[];
  T(*m)[B + 1] = reinterpret_cast<T(*)[B + 1]>(smem);
  T* dg = reinterpret_cast<T*>(m + B);
  T(*part)[B] = reinterpret_cast<T(*)[B]>(dg + B);
  T* ys = dg + 5 * B;
  const int tid = threadIdx.x, r = tid % B, g = tid / B;
  a += blockIdx.y * aStride;
  y += blockIdx.y * yStride;
  done += blockIdx.y;
  const i64 r0 = (i64)blockIdx.x * B;
  const int rows = (int)min((i64)B, n - r0);
  auto p = [&](i64 i) { return opLower ? i : n - 1 - i; };
  auto at = [&](i64 i, i64 j) {
    i64 pi = p(i), pj = p(j);
    return trans ? a[pj * n + pi] : a[pi * n + pj];
  };
  for (int e = tid; e < B * B; e += 256) {
    int i = e / B, j = e % B;
    m[i][j] = i > j && i < rows ? at(r0 + i, r0 + j) : T(0);
  }
  if (tid < B)
    dg[tid] = tid >= rows || unit ? T(1) : at(r0 + tid, r0 + tid);
  const T b = tid < rows ? y[p(r0 + tid)] : T(0); // this block's b, read before any wait
  __syncthreads();
  if (tid < rows) { // column c of W: row i needs W(k, c) for c <= k < i
    const int c = tid;
    m[c][c] = T(1) / dg[c];
    for (int i = c + 1; i < rows; ++i) {
      T s = T(0);
      for (int k = c; k < i; ++k)
        s += m[i][k] * m[c][k];
      m[c][i] = -s / dg[i];
    }
  }
  T acc = T(0); // row r's sum over columns g*16.. of the finished blocks
  for (int jb = 0; jb < blockIdx.x; ++jb) {
    T l[16];
#pragma unroll
    for (int u = 0; u < 16; ++u)
      l[u] = r < rows ? at(r0 + r, (i64)jb * B + g * 16 + u) : T(0);
    if (tid == 0)
      while (*(volatile int*)done <= jb) {
      }
    __syncthreads();
    if (tid < B)
      ys[tid] = __ldcg(y + p((i64)jb * B + tid)); // past L1: written by another block
    __syncthreads();
#pragma unroll
    for (int u = 0; u < 16; ++u)
      acc += l[u] * ys[g * 16 + u];
  }
  part[g][r] = acc;
  __syncthreads();
  if (tid < B)
    ys[tid] = b - part[0][tid] - part[1][tid] - part[2][tid] - part[3][tid];
  __syncthreads();
  T v = T(0);
#pragma unroll
  for (int u = 0; u < 16; ++u) {
    int k = g * 16 + u;
    v += (k <= r ? m[k][r] : T(0)) * ys[k];
  }
  part[g][r] = v;
  __syncthreads();
  if (tid < rows)
    y[p(r0 + tid)] = part[0][tid] + part[1][tid] + part[2][tid] + part[3][tid];
  __threadfence();
  __syncthreads();
  if (tid == 0)
    atomicExch(done, blockIdx.x + 1);
}
