//===- runtime/cuda/SmallBatched.cpp - Many small Cholesky factors and solves ===//
//
// Every kernel works on a group of blockDim.x threads per matrix, blockDim.y
// matrices per block. The Cholesky kernels keep an n x n shared copy with row
// stride n + 1 (odd, against bank conflicts). Every group of a block runs the same
// steps, so a failing or absent item still reaches each __syncthreads(); it only
// stops changing its data.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/SmallBatched.h"

#include "runtime/cuda/Check.h"
#include "runtime/cuda/KernelCache.h"
#include "support/Error.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <fmt/format.h>
#include <type_traits>

namespace graphc::cuda {

namespace {

const char* kSmallBatchedSource = R"(
typedef long long i64;

// The calling thread's place: thread `tid` of the `nt` threads of batch item `b`
// (blockDim.y items a block, one per threadIdx.y); `present` is false for the
// padding items of the last block, which still reach every __syncthreads().
struct Slot {
  int tid, nt;
  i64 b;
  bool present;
};

__device__ Slot thisSlot(i64 batch) {
  Slot g;
  g.tid = threadIdx.x;
  g.nt = blockDim.x;
  g.b = blockIdx.x * (i64)blockDim.y + threadIdx.y;
  g.present = g.b < batch;
  return g;
}

// Calls store(t, load(t)) for t = tid, tid + nt, ... < count, four loads ahead of
// their stores, so that a thread has four global loads in flight rather than
// waiting out each one's latency in turn.
template <typename T, typename Load, typename Store>
__device__ void stage(int count, const Slot& g, Load load, Store store) {
  for (int t0 = g.tid; t0 < count; t0 += 4 * g.nt) {
    T v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (t0 + u * g.nt < count)
        v[u] = load(t0 + u * g.nt);
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (t0 + u * g.nt < count)
        store(t0 + u * g.nt, v[u]);
  }
}

// Copies the lower triangle of the row-major n x n matrix `a` into s (row stride
// n + 1), or with `upper` its upper triangle transposed (the lower triangle of A').
template <typename T>
__device__ void loadLower(T* s, int n, const T* a, int upper, const Slot& g) {
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
// of its row. The `cols` right-hand sides in y (row stride cols) ride along as
// extra columns of the rows, so they end as L^-1 Y: the forward substitution
// costs no steps of its own. Returns the first leading minor that is not
// positive definite, or 0: the same in every thread of the group, which all read
// the same pivots, and whose data stops changing at a failure.
template <typename T>
__device__ int factorLower(T* s, int n, T* y, int cols, const Slot& g) {
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
    if (live && row == j)
      for (int c = part; c < cols; c += groups)
        y[j * cols + c] /= r;
    __syncthreads();
    if (live && row > j) {
      const T lij = s[row * ld + j];
      for (int k = j + 1 + part; k <= row; k += groups)
        s[row * ld + k] -= lij * s[k * ld + j];
      for (int c = part; c < cols; c += groups)
        y[row * cols + c] -= lij * y[j * cols + c];
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
  const int failed = factorLower(s, n, (T*)nullptr, 0, g);
  if (!g.present)
    return;
  for (int t = g.tid; t < n * n; t += g.nt) {
    int i = t / n, k = t % n;
    out[base + t] = upper ? (k >= i ? s[k * ld + i] : T(0)) : (k <= i ? s[i * ld + k] : T(0));
  }
  if (g.tid == 0)
    info[g.b] = failed;
}

// A X = B for SPD A through A = L L', all in shared memory: the factor with the
// forward substitution riding along (factorLower), then L' X = Y backward, step
// j eliminating x_j = Y(j,:) / L(j,j) from the rows i < j (L'(i,j) = L(j,i), read
// along row j of s: no bank conflicts); the rows are divided by their diagonal on
// the way out. Only X and info are written.
template <typename T>
__global__ void smallCholeskySolve(i64 batch, int n, int cols, const T* a, const T* rhs, T* x,
                                   int* info) {
  extern __shared__ __align__(16) unsigned char smem[];
  const Slot g = thisSlot(batch);
  const int ld = n + 1, row = g.tid % n, part = g.tid / n, groups = g.nt / n;
  T* s = reinterpret_cast<T*>(smem) + threadIdx.y * (n * ld + n * cols);
  T* y = s + n * ld;
  const i64 item = g.present ? g.b : 0;
  loadLower(s, n, a + item * n * n, 0, g);
  if (g.present)
    stage<T>(
        n * cols, g, [&](int t) { return rhs[item * n * cols + t]; },
        [&](int t, T v) { y[t] = v; });
  const int failed = factorLower(s, n, y, cols, g);
  const bool live = g.present && !failed;
  for (int j = n - 1; j > 0; --j) {
    if (live && row < j) {
      const T lji = s[j * ld + row] / s[j * ld + j];
      for (int c = part; c < cols; c += groups)
        y[row * cols + c] -= lji * y[j * cols + c];
    }
    __syncthreads();
  }
  if (!g.present)
    return;
  for (int t = g.tid; t < n * cols; t += g.nt)
    x[item * n * cols + t] = y[t] / s[(t / cols) * ld + t / cols];
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

// The shared memory of one matrix of warpCholeskySolve<T, N, Chunk>, in T: A and
// later L (N rows of stride N + 1), two columns that broadcast a step's column of
// the factorization, and a chunk of X (Chunk rows of stride N + 16 / sizeof(T), so
// that every row starts 16-byte aligned).
template <typename T, int N> struct WarpLayout {
  static constexpr int ld = N + 1, columns = N * ld, chunk = columns + 2 * N,
                       chunkLd = N + 16 / sizeof(T);
  __device__ static constexpr int size(int chunkRows) { return chunk + chunkRows * chunkLd; }
};

// D += A B for the 8 x 8 tile D of a warp on the f64 tensor cores: lane l holds
// A(l / 4, l % 4), B(l % 4, l / 4) and D(l / 4, 2 (l % 4) + {0, 1}).
__device__ void dmma(double& d0, double& d1, double a, double b) {
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
               : "+d"(d0), "+d"(d1)
               : "d"(a), "d"(b));
}

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
        T f[4]; // X(8 b + lane / 4, q + lane % 4): A's fragment for row block b, B's for column block b
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
    warpCholeskySolve(i64 batch, int n, int cols, int k, int form, T scale, T shift, const T* a,
                      const T* rhs, T* x, int* info) {
  typedef WarpLayout<T, N> Layout;
  constexpr int ld = Layout::ld;
  extern __shared__ __align__(16) unsigned char smem[];
  const int lane = threadIdx.x % N;
  const i64 item = blockIdx.x * (i64)(blockDim.x / N) + threadIdx.x / N;
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
  for (int c = 0; c < cols; ++c) {
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
)";

/// Columns of X that smallGram stages in shared memory at a time.
constexpr int64_t kGramChunk = 32;
/// Rows of X that smallGram takes: one 4 x 4 tile of S a thread, 1024 threads.
constexpr int64_t kGramMaxRows = 128;

/// Columns of A or X that warpCholeskySolve stages in shared memory at a time.
constexpr int64_t kWarpChunk = 16;
/// The rows of A that warpCholeskySolve instances take: lanes a matrix.
const int kWarpRows[] = {4, 8, 16, 32};
constexpr int64_t kWarpThreads = 128; ///< warpCholeskySolve's block

/// The name expression of a kernel template for element type `type` (and, for
/// warpCholeskySolve, `rows` lanes a matrix).
std::string kernelName(llvm::StringRef kernel, llvm::StringRef type, int rows = 0) {
  if (kernel == "smallGram")
    return fmt::format("smallGram<{}, {}>", type.str(), kGramChunk);
  if (kernel == "warpCholeskySolve")
    return fmt::format("warpCholeskySolve<{}, {}, {}>", type.str(), rows, kWarpChunk);
  return fmt::format("{}<{}>", kernel.str(), type.str());
}

const char* kKernels[] = {"smallCholesky", "smallTriangularSolve", "smallCholeskySolve",
                          "smallGram"};

/// The lanes a matrix of the warpCholeskySolve for n x n matrices, or 0 when n is
/// too large for it.
int warpRows(int64_t n) {
  for (int rows : kWarpRows)
    if (n <= rows)
      return rows;
  return 0;
}

/// Shared elements of one matrix of warpCholeskySolve (its WarpLayout::size).
int64_t warpSharedElements(int rows, size_t elementSize) {
  return rows * (rows + 1) + 2 * rows + kWarpChunk * (rows + 16 / elementSize);
}

/// The value of a kernel parameter as CapturedRun and launch() take it: its bytes
/// at the start of a pointer-sized slot.
template <typename V> void* slot(V v) {
  static_assert(sizeof(V) <= sizeof(void*) && std::is_trivially_copyable_v<V>);
  void* s = nullptr;
  std::memcpy(&s, &v, sizeof(V));
  return s;
}

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
size_t choleskySolveBytes(int64_t n, int64_t cols, size_t elementSize) {
  return choleskyBytes(n, elementSize) + n * cols * elementSize;
}
/// Threads of one gram item: one a 4 x 4 tile of S.
int64_t gramThreads(int64_t rows) {
  int64_t tiles = (rows + 3) / 4;
  return tiles * tiles;
}
size_t gramBytes(int64_t rows, size_t elementSize) {
  return (rows + 3) / 4 * 4 * (kGramChunk + 1) * elementSize;
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
  ModuleSource source = moduleSource();
  module_ = KernelCache::global().getModule(source);
  for (const std::string& expression : source.nameExpressions) {
    Kernel k = module_->kernel(expression);
    GRAPHC_CUDA_CHECK(cudaKernelSetAttributeForDevice(
        k.handle(), cudaFuncAttributeMaxDynamicSharedMemorySize, optin, device));
    kernels_[expression] = k;
  }
}

ModuleSource SmallBatched::moduleSource() {
  ModuleSource source{kSmallBatchedSource, "graphc_small_batched.cu", {}};
  for (const char* type : {"float", "double"}) {
    for (const char* name : kKernels)
      source.nameExpressions.push_back(kernelName(name, type));
    for (int rows : kWarpRows)
      source.nameExpressions.push_back(kernelName("warpCholeskySolve", type, rows));
  }
  return source;
}

bool SmallBatched::fitsCholesky(int64_t n, size_t elementSize) const {
  return n > 0 && choleskyBytes(n, elementSize) <= maxSharedBytes_;
}

bool SmallBatched::fitsTriangularSolve(int64_t n, int64_t cols, size_t elementSize) const {
  return n > 0 && cols > 0 && solveBytes(n, cols, elementSize) <= maxSharedBytes_;
}

bool SmallBatched::fitsCholeskySolve(const SpdMatrices& a, int64_t cols, size_t elementSize) const {
  if (a.n <= 0 || cols <= 0 || cols > INT_MAX || a.k > INT_MAX)
    return false;
  if (warpRows(a.n))
    return true;
  return a.form == SpdMatrices::Matrix &&
         choleskySolveBytes(a.n, cols, elementSize) <= maxSharedBytes_;
}

bool SmallBatched::fitsGram(int64_t rows, size_t elementSize) const {
  return rows > 0 && rows <= kGramMaxRows && gramBytes(rows, elementSize) <= maxSharedBytes_;
}

Kernel SmallBatched::kernel(const std::string& expression) const {
  auto it = kernels_.find(expression);
  if (it == kernels_.end())
    throw Error(fmt::format("internal error: no small batched kernel {}", expression));
  return it->second;
}

void KernelLaunch::enqueue(cudaStream_t stream) const {
  if (config.grid.x == 0)
    return;
  llvm::SmallVector<void*, 12> values(args.begin(), args.end()), addresses;
  for (void*& v : values)
    addresses.push_back(&v);
  LaunchConfig c = config;
  c.stream = stream;
  kernel.launch(c, addresses);
}

/// Groups of `threadsPerMatrix`, as many per block as keep it at 256 threads and
/// a quarter of the shared memory.
KernelLaunch SmallBatched::groupsLaunch(const std::string& expression, int64_t batch,
                                        int threadsPerMatrix, size_t bytesPerMatrix,
                                        llvm::ArrayRef<void*> args) const {
  int64_t perBlock = std::max<int64_t>(
      1, std::min<int64_t>({256 / threadsPerMatrix, std::max<int64_t>(batch, 1),
                            static_cast<int64_t>(maxSharedBytes_ / 4 / bytesPerMatrix)}));
  KernelLaunch l{kernel(expression), {}, {args.begin(), args.end()}};
  l.config.block = dim3(threadsPerMatrix, static_cast<unsigned>(perBlock));
  l.config.grid = dim3(static_cast<unsigned>((batch + perBlock - 1) / perBlock));
  l.config.sharedBytes = perBlock * bytesPerMatrix;
  return l;
}

template <typename T>
void SmallBatched::cholesky(int64_t batch, int64_t n, const T* a, T* l, bool upper, int* info,
                            cudaStream_t stream, int threadsPerMatrix) const {
  if (!fitsCholesky(n, sizeof(T)))
    throw Error(fmt::format("internal error: small batched cholesky of n = {}", n));
  // n threads per matrix, or a multiple of n: the rows of the trailing update.
  int64_t threads = threadsPerMatrix ? threadsPerMatrix : choleskyThreads(n);
  int dim = static_cast<int>(n), up = upper;
  groupsLaunch(kernelName("smallCholesky", typeName<T>()), batch,
               static_cast<int>(n * std::max<int64_t>(1, threads / n)), choleskyBytes(n, sizeof(T)),
               {slot(batch), slot(dim), slot(a), slot(l), slot(info), slot(up)})
      .enqueue(stream);
}

template <typename T>
void SmallBatched::triangularSolve(int64_t batch, int64_t n, int64_t cols, const T* a, const T* b,
                                   T* x, TriangleFlags flags, int* info, cudaStream_t stream,
                                   int threadsPerMatrix) const {
  if (!fitsTriangularSolve(n, cols, sizeof(T)))
    throw Error(fmt::format("internal error: small batched triangular solve of n = {}", n));
  int dim = static_cast<int>(n), c = static_cast<int>(cols);
  int lower = flags.lower, transpose = flags.transpose, unit = flags.unit;
  groupsLaunch(kernelName("smallTriangularSolve", typeName<T>()), batch,
               threadsPerMatrix ? threadsPerMatrix
                                : static_cast<int>(std::min<int64_t>(n * cols, 256)),
               solveBytes(n, cols, sizeof(T)),
               {slot(batch), slot(dim), slot(c), slot(a), slot(b), slot(x), slot(info), slot(lower),
                slot(transpose), slot(unit)})
      .enqueue(stream);
}

KernelLaunch SmallBatched::choleskySolveLaunch(int64_t batch, const SpdMatrices& form, int64_t cols,
                                               size_t elementSize, const void* a, const void* b,
                                               void* x, int* info) const {
  if (!fitsCholeskySolve(form, cols, elementSize))
    throw Error(fmt::format("internal error: small batched cholesky solve of n = {}, {} columns",
                            form.n, cols));
  const char* type = elementSize == sizeof(float) ? "float" : "double";
  if (int rows = warpRows(form.n)) {
    KernelLaunch l{kernel(kernelName("warpCholeskySolve", type, rows)), {}, {}};
    int64_t perBlock = kWarpThreads / rows;
    l.config.block = dim3(kWarpThreads);
    l.config.grid = dim3(static_cast<unsigned>((batch + perBlock - 1) / perBlock));
    l.config.sharedBytes = perBlock * warpSharedElements(rows, elementSize) * elementSize;
    auto real = [&](double v) {
      return elementSize == sizeof(float) ? slot(static_cast<float>(v)) : slot(v);
    };
    l.args = {slot(batch),
              slot(static_cast<int>(form.n)),
              slot(static_cast<int>(cols)),
              slot(static_cast<int>(form.k)),
              slot(static_cast<int>(form.form)),
              real(form.scale),
              real(form.shift),
              slot(a),
              slot(b),
              slot(x),
              slot(info)};
    return l;
  }
  return groupsLaunch(kernelName("smallCholeskySolve", type), batch,
                      static_cast<int>(choleskyThreads(form.n)),
                      choleskySolveBytes(form.n, cols, elementSize),
                      {slot(batch), slot(static_cast<int>(form.n)), slot(static_cast<int>(cols)),
                       slot(a), slot(b), slot(x), slot(info)});
}

template <typename T>
void SmallBatched::gram(int64_t batch, int64_t rows, int64_t k, const T* x, T* s,
                        cudaStream_t stream) const {
  if (!fitsGram(rows, sizeof(T)) || k > INT_MAX)
    throw Error(fmt::format("internal error: small batched gram of {} x {}", rows, k));
  int r = static_cast<int>(rows), depth = static_cast<int>(k);
  groupsLaunch(kernelName("smallGram", typeName<T>()), batch, static_cast<int>(gramThreads(rows)),
               gramBytes(rows, sizeof(T)), {slot(batch), slot(r), slot(depth), slot(x), slot(s)})
      .enqueue(stream);
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
template void SmallBatched::gram<float>(int64_t, int64_t, int64_t, const float*, float*,
                                        cudaStream_t) const;
template void SmallBatched::gram<double>(int64_t, int64_t, int64_t, const double*, double*,
                                         cudaStream_t) const;

} // namespace graphc::cuda
