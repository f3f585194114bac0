//===- runtime/cuda/kernels/SpdSolve.cu - Fused small SPD solves ----------===//
//
// The kernels behind SmallBatched::choleskySolve(): A X = B for a batch of small
// SPD matrices A in one launch, A read once (or formed from its Gram factor X
// inside the kernel), X written once, and A, L and the intermediate solutions
// never stored. warpCholeskySolve takes n <= 32, a matrix per warp (or per 4, 8
// or 16 lanes); blockCholeskySolve takes n <= 128, a matrix per block of 256
// threads. The host mirrors their shared-memory layouts in SmallBatched.cpp.
// Part of SmallBatched's module.
//
//===----------------------------------------------------------------------===//
#include "Common.cuh"
#include "Dmma.cuh"
#include "Slots.cuh"

// The shared memory of one matrix of warpCholeskySolve<T, N, Chunk>, in T: A and
// later L (N rows of stride N + 1), two columns that broadcast a step's column of
// the factorization, and a chunk of X (Chunk rows of stride N + 16 / sizeof(T), so
// that every row starts 16-byte aligned).
template <typename T, int N> struct WarpLayout {
  static constexpr int ld = N + 1, columns = N * ld, chunk = columns + 2 * N,
                       chunkLd = N + 16 / sizeof(T);
  __device__ static constexpr int size(int chunkRows) { return chunk + chunkRows * chunkLd; }
};

// X X' (or X'X: form 2) of the n x depth matrix at src into m (rows of stride
// N + 1), scaled and shifted, as warpCholeskySolve forms A: X is staged through
// buf Chunk columns at a time, transposed (column q of the chunk in row q of buf,
// zero past n and depth), each lane fetching its Chunk elements of the next chunk
// while the group multiplies this one. f64 at N = 32 multiplies on the tensor
// cores, the lower 8 x 8 tiles only, and mirrors them; otherwise each lane
// accumulates a TR x TC tile with FMAs.
template <typename T, int N, int Chunk>
__device__ void shiftedGram(T* m, T* buf, const T* src, int n, int depth, int form, T scale,
                            T shift, bool present, int lane) {
  constexpr int cld = WarpLayout<T, N>::chunkLd, ld = WarpLayout<T, N>::ld;
  constexpr bool tensor = sizeof(T) == 8 && N == 32;
  constexpr int TC = tensor ? 2 : N >= 32 ? 8 : N >= 8 ? 4 : 2, TR = tensor ? 1 : N / TC;
  constexpr int tiles = tensor ? 10 : TR; // tensor: the lower 8 x 8 tiles (bi >= bj)
  T v[Chunk];
  auto fetch = [&](int c0) {
#pragma unroll
    for (int u = 0; u < Chunk; ++u) {
      // Consecutive lanes read consecutive addresses: along a row of X, or along
      // a row of X' (a column of the chunk) in form 2.
      const int t = lane + u * N, i = form == 2 ? t % N : t / Chunk,
                q = form == 2 ? t / N : t % Chunk;
      const bool in = present && i < n && c0 + q < depth;
      v[u] = in ? (form == 2 ? src[(i64)(c0 + q) * n + i] : src[(i64)i * depth + c0 + q]) : T(0);
    }
  };
  const int ti = lane / (N / TC) * TR, tj = lane % (N / TC) * TC;
  T acc[tiles][TC] = {};
  fetch(0);
  for (int c0 = 0; c0 < depth; c0 += Chunk) {
#pragma unroll
    for (int u = 0; u < Chunk; ++u) {
      const int t = lane + u * N, i = form == 2 ? t % N : t / Chunk,
                q = form == 2 ? t / N : t % Chunk;
      buf[q * cld + i] = v[u];
    }
    __syncwarp();
    if (c0 + Chunk < depth)
      fetch(c0 + Chunk);
    if constexpr (tensor) {
#pragma unroll
      for (int q = 0; q < Chunk; q += 4) {
        T f[4]; // X(8 b + lane / 4, q + lane % 4): A's fragment for row block b, B's for column
                // block b
#pragma unroll
        for (int b = 0; b < 4; ++b)
          f[b] = buf[(q + lane % 4) * cld + 8 * b + lane / 4];
#pragma unroll
        for (int bi = 0, t = 0; bi < 4; ++bi)
#pragma unroll
          for (int bj = 0; bj <= bi; ++bj, ++t)
            dmma(acc[t][0], acc[t][1], f[bi], f[bj]);
      }
    } else {
#pragma unroll 4
      for (int q = 0; q < Chunk; ++q) {
        T u[TR], w[TC];
#pragma unroll
        for (int a = 0; a < TR; ++a)
          u[a] = buf[q * cld + ti + a];
#pragma unroll
        for (int b = 0; b < TC; ++b)
          w[b] = buf[q * cld + tj + b];
#pragma unroll
        for (int a = 0; a < TR; ++a)
#pragma unroll
          for (int b = 0; b < TC; ++b)
            acc[a][b] += u[a] * w[b];
      }
    }
    __syncwarp();
  }
  auto put = [&](int i, int j, T g, bool mirror) {
    m[i * ld + j] = scale * g + (i == j ? shift : T(0));
    if (mirror)
      m[j * ld + i] = m[i * ld + j];
  };
  if constexpr (tensor) {
#pragma unroll
    for (int bi = 0, t = 0; bi < 4; ++bi)
#pragma unroll
      for (int bj = 0; bj <= bi; ++bj, ++t)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          put(8 * bi + lane / 4, 8 * bj + 2 * (lane % 4) + h, acc[t][h], bi != bj);
  } else {
#pragma unroll
    for (int a = 0; a < TR; ++a)
#pragma unroll
      for (int b = 0; b < TC; ++b)
        put(ti + a, tj + b, acc[a][b], false);
  }
}

// A X = B for SPD A of n <= N rows, one matrix per N consecutive lanes of a warp
// (N = 4, 8, 16 or 32; 128 / N matrices a block): no block-wide barrier. A is the
// matrix `a` (form 0; only its lower triangle is read) or scale X X' + shift I
// (form 1, X n x k at `a`) or scale X'X + shift I (form 2, X k x n), formed in
// shared memory by shiftedGram: never in global memory. Lane i then holds row i
// of A in registers and factors it right-looking, step j broadcasting column j
// through shared memory; L goes to shared memory as it is final, and the two
// triangular solves read it there. Lanes past n are rows of the identity: L is
// diag(L, I), and their x is 0.
template <typename T, int N, int Chunk>
__global__ void __launch_bounds__(128)
    warpCholeskySolve(i64 batch, int n, int cols, int k, int form, T scale, T shift, int chunk,
                      const T* a, const T* rhs, T* x, int* info) {
  typedef WarpLayout<T, N> Layout;
  constexpr int ld = Layout::ld;
  extern __shared__ __align__(16) unsigned char smem[];
  const int lane = threadIdx.x % N;
  // Unit u solves columns [c0, c1) of matrix u / chunks (factoring it again).
  const int chunks = (cols + chunk - 1) / chunk;
  const i64 unit = blockIdx.x * (i64)(blockDim.x / N) + threadIdx.x / N;
  const i64 item = unit / chunks;
  const int c0 = (int)(unit % chunks) * chunk, c1 = min(cols, c0 + chunk);
  const bool present = item < batch;
  T* m = reinterpret_cast<T*>(smem) + (threadIdx.x / N) * Layout::size(Chunk); // A, then L
  T* colBuf = m + Layout::columns; // a step's column, two in turn
  if (form == 0) {
    const T* src = a + (present ? item : 0) * (i64)n * n;
    if (present)
      stage<T>(
          n * n, Slot{lane, N, item, present}, [&](int t) { return src[t]; },
          [&](int t, T v) { m[t / n * ld + t % n] = v; });
  } else {
    const int depth = k;
    shiftedGram<T, N, Chunk>(m, m + Layout::chunk, a + (present ? item : 0) * (i64)n * depth, n,
                             depth, form, scale, shift, present, lane);
  }
  __syncwarp();
  T r[N];
#pragma unroll
  for (int j = 0; j < N; ++j)
    r[j] = lane >= n || j >= n || !present ? (j == lane ? T(1) : T(0)) : m[lane * ld + j];

  // Step j broadcasts column j, turns it into L(:, j) and takes
  // L(i,j) L(m,j) = A(i,j) A(m,j) / A(j,j) from the rows below.
  int failed = 0;
  T dinv = T(1); // 1 / L(lane, lane)
#pragma unroll
  for (int j = 0; j < N; ++j) {
    T* column = colBuf + (j % 2) * N;
    column[lane] = r[j];
    __syncwarp();
    const T d = column[j];
    if (!failed && !(d > T(0)))
      failed = j + 1;
    const T inv = rsqrt(d), root = d * inv, w = r[j] * inv * inv;
#pragma unroll
    for (int c = j + 1; c < N; ++c)
      if (lane >= c)
        r[c] -= w * column[c];
    // L(lane, j) is final: into m (over A's row, read no more), out of registers.
    m[lane * ld + j] = lane > j ? r[j] * inv : lane == j ? root : T(0);
    if (lane == j)
      dinv = inv;
  }
  __syncwarp();

  // L from shared memory, volatile: read at each use, not kept in registers
  // across the columns of B (which would cost occupancy).
  const volatile T* l = m;
  const i64 base = (present ? item : 0) * (i64)n * cols;
  for (int c = c0; c < c1; ++c) {
    T y = present && lane < n ? rhs[base + (i64)lane * cols + c] : T(0);
    // L y = b: y_j final, then taken out of the rows below.
#pragma unroll
    for (int j = 0; j < N; ++j) {
      if (lane == j)
        y *= dinv;
      const T yj = __shfl_sync(0xffffffffu, y, j, N);
      if (lane > j)
        y -= l[lane * ld + j] * yj;
    }
    // L' x = y: x_j final, then taken out of the rows above, L'(i,j) = L(j,i).
#pragma unroll
    for (int j = N - 1; j >= 0; --j) {
      if (lane == j)
        y *= dinv;
      const T xj = __shfl_sync(0xffffffffu, y, j, N);
      if (lane < j)
        y -= l[j * ld + lane] * xj;
    }
    if (present && lane < n)
      x[base + (i64)lane * cols + c] = y;
  }
  if (present && lane == 0)
    info[item] = failed;
}

// The shared memory of blockCholeskySolve<T, N, Chunk>, in T: the columns of the
// factorization, packed (column j holds rows j..N-1 of the j-th Schur
// complement's first column, (j, j) at column(j)), then the reciprocal pivots.
// While A is formed, the same memory holds X's chunks (Chunk rows of stride N + 1,
// or fragments), and on the tensor cores A's lower 8 x 8 tiles, row-major, tile
// (I, J) at tile(I, J). The host sizes it (SmallBatched.cpp, blockSharedElements).
template <typename T, int N> struct BlockLayout {
  static constexpr bool tensor = sizeof(T) == 8 && N == 128;
  static constexpr int pivots = N * (N + 1) / 2, chunkLd = N + 1;
  __device__ static int column(int j) { return j * N - j * (j - 1) / 2; }
  __device__ static int tile(int I, int J) { return (I * (I + 1) / 2 + J) * 64; }
};

// Stages X (n x depth at src, or depth x n in form 2) through buf, Chunk of its
// columns at a time, element (i, q) of a chunk at buf[place(i, q)] (zero past n
// and depth), and calls multiply() on each chunk while every thread fetches its
// part of the next. Consecutive threads read consecutive addresses: along a row of
// X, or of X' in form 2.
template <typename T, int N, int Chunk, typename Place, typename Multiply>
__device__ __forceinline__ void forEachChunk(T* buf, const T* src, int n, int depth, int form,
                                             int tid, Place place, Multiply multiply) {
  constexpr int per = N * Chunk / 256;
  T v[per];
  auto row = [&](int u) {
    const int t = tid + u * 256;
    return form == 2 ? t % N : t / Chunk;
  };
  auto col = [&](int u) {
    const int t = tid + u * 256;
    return form == 2 ? t / N : t % Chunk;
  };
  auto fetch = [&](int c0) {
#pragma unroll
    for (int u = 0; u < per; ++u) {
      const int i = row(u), q = c0 + col(u);
      v[u] =
          i < n && q < depth ? (form == 2 ? src[(i64)q * n + i] : src[(i64)i * depth + q]) : T(0);
    }
  };
  fetch(0);
  for (int c0 = 0; c0 < depth; c0 += Chunk) {
    __syncthreads(); // the last chunk is read
#pragma unroll
    for (int u = 0; u < per; ++u)
      buf[place(row(u), col(u))] = v[u];
    __syncthreads();
    if (c0 + Chunk < depth)
      fetch(c0 + Chunk);
    multiply();
  }
  __syncthreads(); // buf is free
}

// acc += X X' (or X'X: form 2) for the elements (tr + 16 bi, tc + 16 bj), bi >=
// bj, of thread tid = 16 tr + tc, with FMAs over chunks staged transposed in buf.
template <typename T, int N, int Chunk>
__device__ __forceinline__ void blockGram(T (&acc)[N / 16][N / 16], T* buf, const T* src, int n,
                                          int depth, int form, int tid) {
  constexpr int R = N / 16, ld = BlockLayout<T, N>::chunkLd;
  const int tr = tid / 16, tc = tid % 16;
  forEachChunk<T, N, Chunk>(
      buf, src, n, depth, form, tid, [&](int i, int q) { return q * ld + i; },
      [&] {
#pragma unroll 4
        for (int q = 0; q < Chunk; ++q) {
          T u[R], w[R];
#pragma unroll
          for (int bi = 0; bi < R; ++bi) {
            u[bi] = buf[q * ld + tr + 16 * bi];
            w[bi] = buf[q * ld + tc + 16 * bi];
          }
#pragma unroll
          for (int bi = 0; bi < R; ++bi)
#pragma unroll
            for (int bj = 0; bj <= bi; ++bj)
              acc[bi][bj] += u[bi] * w[bj];
        }
      });
}

// The lower 8 x 8 tiles of X X' (or X'X: form 2) on the f64 tensor cores, into s
// at BlockLayout's tile() (N = 128). A chunk is staged in fragment order, so that a
// warp loads a fragment in one conflict-free access: the fragment of row block b
// at k-step p (X(8 b + l / 4, 4 p + l % 4) in lane l) at s[(p NB + b) 32 + l].
// Warp w multiplies the tiles of row blocks w and NB - 1 - w: NB + 1 tiles each.
template <int N, int Chunk>
__device__ __forceinline__ void tensorGram(double* s, const double* src, int n, int depth, int form,
                                           int tid) {
  constexpr int NB = N / 8;
  static_assert(NB == 2 * 8, "two row blocks a warp");
  const int warp = tid / 32, lane = tid % 32, b1 = warp, b2 = NB - 1 - warp;
  double acc[NB + 1][2] = {};
  // Tile t of the warp: row block b1 for t <= warp, else b2; its column block.
  auto block = [&](int t) { return t <= warp ? t : t - warp - 1; };
  forEachChunk<double, N, Chunk>(
      s, src, n, depth, form, tid,
      [&](int i, int q) { return ((q / 4) * NB + i / 8) * 32 + (i % 8) * 4 + q % 4; },
      [&] {
#pragma unroll
        for (int p = 0; p < Chunk / 4; ++p) {
          const double* f = s + p * NB * 32 + lane;
          const double f1 = f[b1 * 32], f2 = f[b2 * 32];
#pragma unroll
          for (int t = 0; t <= NB; ++t)
            dmma(acc[t][0], acc[t][1], t <= warp ? f1 : f2, f[block(t) * 32]);
        }
      });
#pragma unroll
  for (int t = 0; t <= NB; ++t)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      s[BlockLayout<double, N>::tile(t <= warp ? b1 : b2, block(t)) + lane / 4 * 8 +
        2 * (lane % 4) + h] = acc[t][h];
  __syncthreads();
}

// A X = B for SPD A of n <= N rows (N = 64 or 128), one matrix and `chunk` of
// its right-hand sides per block of 256 threads. Thread 16 tr + tc holds A(tr + 16 bi,
// tc + 16 bj), bi >= bj, in registers: read from `a` (form 0), or formed as
// scale X X' + shift I (form 1) or scale X'X + shift I (form 2) by blockGram or
// tensorGram. It factors A = L D L' (L unit lower) right-looking: step j publishes
// column j of the Schur complement into shared memory, the one barrier of the
// step, and every thread takes A(i,j) A(m,j) / A(j,j) from its elements. Warp c
// then solves L D L' x = b for right-hand side c (and c + 8), a row per lane and
// step, reading L from the packed columns.
template <typename T, int N, int Chunk>
__global__ void __launch_bounds__(256, 2)
    blockCholeskySolve(i64 batch, int n, int cols, int k, int form, T scale, T shift, int chunk,
                       const T* a, const T* rhs, T* x, int* info) {
  typedef BlockLayout<T, N> Layout;
  constexpr int R = N / 16;
  extern __shared__ __align__(16) unsigned char smem[];
  T* s = reinterpret_cast<T*>(smem);
  const int tid = threadIdx.x, tr = tid / 16, tc = tid % 16;
  // Block u solves columns [c0, c1) of matrix u / chunks (factoring it again).
  const int chunks = (cols + chunk - 1) / chunk;
  const i64 item = blockIdx.x / chunks;
  const int c0 = (int)(blockIdx.x % chunks) * chunk, c1 = min(cols, c0 + chunk);
  T r[R][R] = {}; // r[bi][bj], bi >= bj
  if (form == 0) {
    const T* src = a + item * n * n;
#pragma unroll
    for (int bi = 0; bi < R; ++bi)
#pragma unroll
      for (int bj = 0; bj <= bi; ++bj) {
        const int i = tr + 16 * bi, m = tc + 16 * bj;
        if (i < n && m < n)
          r[bi][bj] = src[i * n + m];
      }
  } else {
    const T* x = a + item * n * k;
    if constexpr (Layout::tensor) {
      tensorGram<N, Chunk>(s, x, n, k, form, tid);
#pragma unroll
      for (int bi = 0; bi < R; ++bi)
#pragma unroll
        for (int bj = 0; bj <= bi; ++bj) {
          const int i = tr + 16 * bi, m = tc + 16 * bj;
          if (i >= m)
            r[bi][bj] = s[Layout::tile(i / 8, m / 8) + i % 8 * 8 + m % 8];
        }
      __syncthreads(); // s is the columns' now
    } else {
      blockGram<T, N, Chunk>(r, s, x, n, k, form, tid);
    }
#pragma unroll
    for (int bi = 0; bi < R; ++bi)
#pragma unroll
      for (int bj = 0; bj <= bi; ++bj) {
        const int i = tr + 16 * bi, m = tc + 16 * bj;
        r[bi][bj] = i < n && m < n ? scale * r[bi][bj] + (i == m ? shift : T(0)) : T(0);
      }
  }

  // Step j = 16 jb + jr: the tiles left of and above tile (jb, jb) are final.
  int failed = 0;
#pragma unroll
  for (int jb = 0; jb < R; ++jb) {
    for (int jr = 0; jr < 16 && !failed; ++jr) {
      const int j = 16 * jb + jr;
      if (j >= n)
        break;
      T* column = s + Layout::column(j) - j; // column[i] = A(i, j) of this step, i >= j
      if (tc == jr) {
#pragma unroll
        for (int bi = jb; bi < R; ++bi)
          if (tr + 16 * bi >= j)
            column[tr + 16 * bi] = r[bi][jb];
      }
      __syncthreads();
      const T d = column[j];
      if (!(d > T(0))) { // the same in every thread
        failed = j + 1;
        break;
      }
      const T inv = T(1) / d;
      if (tid == 0)
        s[Layout::pivots + j] = inv;
      T u[R];
#pragma unroll
      for (int bi = jb; bi < R; ++bi)
        u[bi] = tr + 16 * bi > j ? column[tr + 16 * bi] : T(0);
#pragma unroll
      for (int bj = jb; bj < R; ++bj) {
        const int m = tc + 16 * bj;
        const T w = m > j ? column[m] * inv : T(0);
#pragma unroll
        for (int bi = bj; bi < R; ++bi)
          r[bi][bj] -= u[bi] * w;
      }
    }
  }
  if (failed) {
    if (tid == 0)
      info[item] = failed;
    return;
  }
  __syncthreads();

  // L z = b, then L' x = D^-1 z, with L(i,j) = A(i,j) / d_j from column j: column
  // by column, the row of the step final, then taken out of the rows below (or
  // above).
  const int lane = tid % 32;
  const T* pivots = s + Layout::pivots;
  for (int c = c0 + tid / 32; c < c1; c += 8) {
    T z[N / 32];
#pragma unroll
    for (int m = 0; m < N / 32; ++m)
      z[m] = lane + 32 * m < n ? rhs[(item * n + lane + 32 * m) * cols + c] : T(0);
#pragma unroll
    for (int mb = 0; mb < N / 32; ++mb)
      for (int jj = 0; jj < 32 && 32 * mb + jj < n; ++jj) {
        const int j = 32 * mb + jj;
        const T t = __shfl_sync(0xffffffffu, z[mb], jj) * pivots[j];
        const T* column = s + Layout::column(j) - j;
#pragma unroll
        for (int m = mb; m < N / 32; ++m) {
          const int i = lane + 32 * m;
          if (i > j && i < n)
            z[m] -= column[i] * t;
        }
      }
#pragma unroll
    for (int mb = N / 32 - 1; mb >= 0; --mb)
      for (int jj = 31; jj >= 0; --jj) {
        const int j = 32 * mb + jj;
        if (j >= n)
          continue;
        if (lane == jj)
          z[mb] *= pivots[j];
        const T xj = __shfl_sync(0xffffffffu, z[mb], jj);
#pragma unroll
        for (int m = 0; m <= mb; ++m) {
          const int i = lane + 32 * m;
          if (i < j)
            z[m] -= s[Layout::column(i) + j - i] * xj;
        }
      }
#pragma unroll
    for (int m = 0; m < N / 32; ++m)
      if (lane + 32 * m < n)
        x[(item * n + lane + 32 * m) * cols + c] = z[m];
  }
  if (tid == 0)
    info[item] = 0;
}
