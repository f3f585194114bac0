//===- runtime/cuda/kernels/ClusterQr.cu - Householder QR in one cluster of blocks -===//
//
// The kernel of runtime/cuda/ClusterQr.h, one template per element type and
// rows-per-lane count R (a warp's lane holds rows lane, lane + 32, ... of a column:
// m <= 32 R). Cluster barriers, ranks and the mapping of a shared address to
// another block's are inline PTX (barrier.cluster, %cluster_ctarank, mapa), so the
// source needs no CUDA headers.
//
//===----------------------------------------------------------------------===//
#include "Common.cuh"

constexpr int kGroup = 2;     // columns a warp updates at once
constexpr int kThreads = 256; // per block

// The blocks an SM the registers are bounded for: 64 a thread up to 64 rows,
// 128 up to 128 (the kernels of batches of small matrices share SMs).
template <int R> constexpr int kMinBlocksPerSm = R <= 2 ? 4 : R == 4 ? 2 : 1;

#if __CUDA_ARCH__ >= 900
__device__ unsigned clusterRank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ unsigned clusterSize() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
}
// Arrive has release and wait acquire semantics at cluster scope: the shared
// memory a thread wrote before it arrived is visible to every thread of the
// cluster after its wait.
__device__ void clusterArrive() {
  asm volatile("barrier.cluster.arrive;" ::: "memory");
}
// For threads that publish nothing.
__device__ void clusterArriveRelaxed() {
  asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
}
__device__ void clusterWait() {
  asm volatile("barrier.cluster.wait;" ::: "memory");
}
// The address of *p in the shared memory of block `rank` of the cluster.
template <typename T> __device__ const T* inBlock(const T* p, unsigned rank) {
  unsigned long long out;
  asm volatile("mapa.u64 %0, %1, %2;" : "=l"(out) : "l"(p), "r"(rank));
  return reinterpret_cast<const T*>(out);
}
template <typename T> __device__ T* inBlock(T* p, unsigned rank) {
  return const_cast<T*>(inBlock(static_cast<const T*>(p), rank));
}

// Streamed panels: each block counts in `ready` (its shared memory) the
// reflectors published so far. The block that makes reflector j raises every
// block's count to j + 1 once the reflector is in its shared memory (a fence at
// cluster scope, by a warp that has seen the block's own count of reflectors
// made reach j + 1 with acquire semantics); a reader waits until its count
// passes the reflector it needs, with acquire semantics, and then reads the
// reflector from the maker's shared memory. Reflectors never change once made,
// so nothing waits for the readers but the kernel's end.
__device__ unsigned loadAcquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.cluster.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ void publish(unsigned* ready, unsigned rank, unsigned count) {
  asm volatile("fence.acq_rel.cluster;\n\tst.relaxed.cluster.u32 [%0], %1;"
               :
               : "l"(inBlock(ready, rank)), "r"(count)
               : "memory");
}
// Called by whole warps.
__device__ void awaitReflectors(const unsigned* ready, unsigned count) {
  while (loadAcquire(ready) < count) {
  }
  __syncwarp();
}

// Within a block, the warp that makes a reflector raises the block's count of
// reflectors made (`made`, release at block scope, which costs far less than at
// cluster scope) and the block's other warps wait for it; a warp of the block
// relays each count to the cluster (publish).
__device__ unsigned loadAcquireBlock(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.cta.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ void storeReleaseBlock(unsigned* p, unsigned v) {
  asm volatile("st.release.cta.u32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
}
// Called by whole warps.
__device__ void awaitMade(const unsigned* made, unsigned count) {
  while (loadAcquireBlock(made) < count) {
  }
  __syncwarp();
}

// Where the columns live: panels of 2^pl columns (at least 32 bytes, so that
// the loads and stores of a row fill whole sectors) dealt out to the 2^cl
// blocks in turn; a block's columns are numbered locally in order. Shifts and
// masks only: integer division is slow on the critical path of a step.
struct Columns {
  int cl, pl, rank; // log2 of the cluster size and of the panel width, this block's rank
  __device__ int owner(int c) const { return (c >> pl) & ((1 << cl) - 1); }
  __device__ int local(int c) const { return (c >> (pl + cl) << pl) | (c & ((1 << pl) - 1)); }
  __device__ int global(int l) const {
    return ((l >> pl << cl | rank) << pl) | (l & ((1 << pl) - 1));
  }
  // How many of the first n columns this block holds.
  __device__ int count(int n) const {
    int full = n >> (pl + cl), rest = n - (full << (pl + cl)) - (rank << pl);
    return (full << pl) + min(max(rest, 0), 1 << pl);
  }
};

template <typename T> __device__ T warpSum(T s) {
  for (int o = 16; o > 0; o >>= 1)
    s += __shfl_xor_sync(0xffffffffu, s, o);
  return s;
}
// warpSum of the values s[from], ..., s[G - 1] at once, so that their shuffles
// overlap.
template <typename T, int G> __device__ void warpSums(T (&s)[G], int from = 0) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
#pragma unroll
    for (int g = 0; g < G; ++g)
      if (g >= from)
        s[g] += __shfl_xor_sync(0xffffffffu, s[g], o);
}
template <typename T> __device__ T warpMax(T s) {
  for (int o = 16; o > 0; o >>= 1)
    s = fmax(s, __shfl_xor_sync(0xffffffffu, s, o));
  return s;
}

// Sums of squares outside [tiny, huge] are recomputed scaled (dnrm2's concern).
template <typename T> struct Range;
template <> struct Range<float> { static constexpr float tiny = 1e-30f, huge = 1e30f; };
template <> struct Range<double> { static constexpr double tiny = 1e-290, huge = 1e290; };

// Makes reflector j of a column held in registers (this lane's rows lane + 32 t)
// as dlarfg does: R(j, j) at row j, v below it (v(j) = 1 implied), the rows above
// j as they were. Returns tau (0: H = I, the column as it was) and sets `v` to
// this lane's rows of the reflector (1 at row j, zeros above it and from row m
// on). Called by one whole warp.
template <typename T, int R>
__device__ T makeReflector(T (&col)[R], T (&v)[R], int m, int j, int lane) {
  T x[R], ss = 0, alpha = 0;
#pragma unroll
  for (int t = 0; t < R; ++t) {
    int i = lane + 32 * t;
    x[t] = i > j && i < m ? col[t] : T(0);
    ss += x[t] * x[t];
    alpha = i == j ? col[t] : alpha; // a select by row: an index by j would be local memory
  }
  ss = warpSum(ss);
  alpha = __shfl_sync(0xffffffffu, alpha, j & 31);
  const bool scaled = ss < Range<T>::tiny || ss > Range<T>::huge; // NaN goes on as NaN
  T xnorm = 0;
  if (scaled) {
    T big = 0;
#pragma unroll
    for (int t = 0; t < R; ++t)
      big = fmax(big, fabs(x[t]));
    big = warpMax(big);
    ss = 0;
    if (big > T(0))
#pragma unroll
      for (int t = 0; t < R; ++t)
        ss += (x[t] / big) * (x[t] / big);
    xnorm = big * sqrt(warpSum(ss));
    if (xnorm == T(0))
      return T(0);
  }
  // sqrt(alpha^2 + ss) where neither term can overflow or lose its digits:
  // hypot's scaling is slow on the step's critical path.
  const T norm = !scaled && alpha * alpha <= Range<T>::huge
                     ? sqrt(alpha * alpha + ss)
                     : hypot(alpha, scaled ? xnorm : sqrt(ss));
  T beta = -copysign(norm, alpha), scale = T(1) / (alpha - beta);
#pragma unroll
  for (int t = 0; t < R; ++t) {
    int i = lane + 32 * t;
    if (i > j && i < m)
      col[t] = x[t] * scale;
    if (i == j)
      col[t] = beta;
    v[t] = i > j && i < m ? col[t] : T(i == j);
  }
  return (beta - alpha) / beta;
}

// This lane's rows of reflector j, made in place in column `col` of this
// block: 1 at row j, zeros above it and from row m on.
template <typename T, int R>
__device__ void columnReflector(T (&v)[R], const T* col, int m, int j, int lane) {
#pragma unroll
  for (int t = 0; t < R; ++t) {
    int i = lane + 32 * t;
    T y = col[min(i, m)];
    v[t] = i > j && i < m ? y : T(i == j);
  }
}

// Applies H = I - tau v v' (v zero above row j) to the columns x[g], g in
// [from, G), held in registers (rows lane + 32 t; zero from row m on), their
// warp sums at once. Rows above j keep their values, so that a NaN or -0.0
// there stays as LAPACK leaves it.
template <typename T, int R, int G>
__device__ void applyReflector(T (&x)[G][R], int from, const T (&v)[R], T tau, int m, int j,
                               int lane) {
  T s[G];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    s[g] = 0;
#pragma unroll
    for (int t = 0; t < R; ++t) {
      int i = lane + 32 * t;
      s[g] += v[t] * (g >= from && i >= j && i < m ? x[g][t] : T(0));
    }
  }
  warpSums(s, from);
#pragma unroll
  for (int g = 0; g < G; ++g) {
    T f = tau * s[g];
#pragma unroll
    for (int t = 0; t < R; ++t) {
      int i = lane + 32 * t;
      if (g >= from && i >= j && i < m)
        x[g][t] = x[g][t] - f * v[t];
    }
  }
}

// Reflectors j0 .. j0 + count - 1, made by block `owner` in its local columns
// from lj0 on, copied into this block's `buffer` (reflector r at r m: 1 at row
// j0 + r, zeros above) and their taus into `taus`. Every block reads each panel
// once, in one burst of loads, from the owner's shared memory (distributed
// shared memory) into its own. True when every value this thread copied is
// finite.
template <typename T>
__device__ bool copyPanel(T* buffer, T* taus, const T* as, const T* tauMine, int ld, int m, int j0,
                          int count, unsigned owner, int lj0) {
  constexpr int U = 4; // loads in flight per thread
  const T* src = inBlock(as, owner) + lj0 * ld;
  const int total = count * m;
  bool finite = true;
  for (int base = threadIdx.x; base < total; base += U * kThreads) {
    T x[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      int e = min(base + u * kThreads, total - 1), r = e / m, i = e - r * m;
      T y = src[r * ld + i];
      x[u] = i > j0 + r ? y : T(i == j0 + r);
      finite = finite && isfinite(x[u]);
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (base + u * kThreads < total)
        buffer[base + u * kThreads] = x[u];
  }
  if (threadIdx.x < count) {
    T tau = *inBlock(tauMine + lj0 + threadIdx.x, owner);
    taus[threadIdx.x] = tau;
    finite = finite && isfinite(tau);
  }
  return finite;
}

// Where applyPanel finds reflector j0 + r: its tau, and this lane's rows of it
// (1 at row j0 + r, zeros above and from row m on). A panel copied into this
// block's shared memory:
template <typename T, int R> struct CopiedPanel {
  const T* buffer; // reflector r at r m
  const T* taus;
  int m, lane;
  __device__ T tau(int r) const { return taus[r]; }
  __device__ void rows(int r, T (&v)[R]) const {
#pragma unroll
    for (int t = 0; t < R; ++t)
      v[t] = lane + 32 * t < m ? buffer[r * m + min(lane + 32 * t, m - 1)] : T(0);
  }
};
// A panel still being made, read in its maker's shared memory as each
// reflector is published.
template <typename T, int R> struct StreamedPanel {
  const T* cols;         // the maker's column of reflector j0, stride ld
  const T* taus;         // the maker's tau of reflector j0
  const unsigned* ready; // this block's count of published reflectors
  int ld, m, j0, lane;
  __device__ T tau(int r) const {
    awaitReflectors(ready, j0 + r + 1);
    return taus[r];
  }
  __device__ void rows(int r, T (&v)[R]) const {
    const int j = j0 + r;
#pragma unroll
    for (int t = 0; t < R; ++t) {
      int i = lane + 32 * t;
      T y = cols[r * ld + min(i, m)];
      v[t] = i > j && i < m ? y : T(i == j);
    }
  }
};

// Applies the `count` reflectors of a panel (reflector r is j0 + r) in order,
// or from the last down with `reverse`, to this warp's columns base + l[g] ld
// with live[g], whose global indices are c[g]: G columns held in registers
// meanwhile. Reflector j changes a column's rows from j on, and only columns
// from j on (as dlarf and dorg2r apply it), so that a NaN or -0.0 elsewhere
// stays as LAPACK leaves it. Without `Exact` every product and update is made
// unmasked, which gives the same bits where the reflectors and the columns are
// finite and no column holds -0.0 (Q's columns as they are formed): v is 0
// above row j and past m, and a column c < j is 0 from row j on.
template <typename T, int R, int G, bool Exact, typename Panel>
__device__ void applyPanel(T* base, int ld, const int (&l)[G], const int (&c)[G],
                           const bool (&live)[G], const Panel& panel, int j0, int count,
                           bool reverse, int m, int lane) {
  T x[G][R];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    const T* col = base + (live[g] ? l[g] : 0) * ld;
#pragma unroll
    for (int t = 0; t < R; ++t) {
      int i = lane + 32 * t;
      T y = col[live[g] ? min(i, m) : m];
      x[g][t] = i < m ? y : T(0);
    }
  }
  for (int s = 0; s < count; ++s) {
    const int r = reverse ? count - 1 - s : s, j = j0 + r;
    const T tau = panel.tau(r);
    if (tau == T(0))
      continue;
    T v[R], d[G];
    panel.rows(r, v);
#pragma unroll
    for (int g = 0; g < G; ++g) {
      d[g] = 0;
#pragma unroll
      for (int t = 0; t < R; ++t)
        d[g] += v[t] * (!Exact || lane + 32 * t >= j ? x[g][t] : T(0));
    }
    warpSums(d);
#pragma unroll
    for (int g = 0; g < G; ++g) {
      T f = tau * d[g];
#pragma unroll
      for (int t = 0; t < R; ++t)
        if (!Exact || (lane + 32 * t >= j && c[g] >= j))
          x[g][t] -= f * v[t];
    }
  }
#pragma unroll
  for (int g = 0; g < G; ++g)
#pragma unroll
    for (int t = 0; t < R; ++t)
      if (live[g] && lane + 32 * t < m)
        base[l[g] * ld + lane + 32 * t] = x[g][t];
}

// Applies a panel to this block's local columns [from, to) of `base`, kGroup
// columns a warp at a time.
template <typename T, int R, bool Exact = true, typename Panel>
__device__ void applyToColumns(T* base, int ld, const Columns& cols, int from, int to,
                               const Panel& panel, int j0, int count, bool reverse, int m, int lane,
                               int warp) {
  constexpr int warps = kThreads / 32;
  for (int l0 = from + warp; l0 < to; l0 += kGroup * warps) {
    int l[kGroup], c[kGroup];
    bool live[kGroup];
#pragma unroll
    for (int g = 0; g < kGroup; ++g) {
      l[g] = l0 + g * warps;
      live[g] = l[g] < to;
      c[g] = live[g] ? cols.global(l[g]) : 0;
    }
    applyPanel<T, R, kGroup, Exact>(base, ld, l, c, live, panel, j0, count, reverse, m, lane);
  }
}

// The columns a warp factors at once in registers (factorColumns): as many as
// fit beside the rest of the kernel with at most a few bytes of spilled
// registers (nvcc --resource-usage for sm_90): f64 4 at R = 8, else 2; f32 8 at
// R = 8, 2 at R = 4, else 4.
template <typename T, int R> __device__ constexpr int warpPanel() {
  if (sizeof(T) == 8)
    return R == 8 ? 4 : 2;
  return R == 8 ? 8 : R == 4 ? 2 : 4;
}

// Factors W of a panel's columns in registers, in one warp: the `width` columns at
// `cols` (stride ld), the first `count` of which make the panel's reflectors
// j0 + before ... The panel's `before` reflectors j0 .. made by other warps
// (columns from `panel` on, taus from `panelTaus` on) are applied to them as each
// is made. Each reflector is stored in its column as it is made and counted in
// `made` at once: a step's critical path is one reflector and one update of the
// later columns, their warp sums at once.
template <typename T, int R, int W>
__device__ void factorColumns(T* cols, T* taus, const T* panel, const T* panelTaus, int ld, int m,
                              int j0, int before, int width, int count, int lane, unsigned* made) {
  T x[W][R];
#pragma unroll
  for (int g = 0; g < W; ++g) {
    const T* col = cols + (g < width ? g : 0) * ld;
#pragma unroll
    for (int t = 0; t < R; ++t) {
      int i = lane + 32 * t;
      T y = col[g < width ? min(i, m) : m];
      x[g][t] = g < width && i < m ? y : T(0);
    }
  }
  for (int r = 0; r < before; ++r) {
    const int j = j0 + r;
    awaitMade(made, j + 1);
    const T tau = panelTaus[r];
    if (tau == T(0))
      continue;
    T v[R];
    columnReflector(v, panel + r * ld, m, j, lane);
    applyReflector(x, 0, v, tau, m, j, lane);
  }
#pragma unroll
  for (int s = 0; s < W; ++s) {
    if (s >= count)
      break;
    const int j = j0 + before + s;
    T v[R];
    const T tau = makeReflector(x[s], v, m, j, lane);
#pragma unroll
    for (int t = 0; t < R; ++t)
      if (lane + 32 * t < m)
        cols[s * ld + lane + 32 * t] = x[s][t];
    if (lane == 0)
      taus[s] = tau;
    __syncwarp(); // the reflector's rows, stored lane by lane, are counted
    if (lane == 0)
      storeReleaseBlock(made, j + 1);
    if (tau != T(0))
      applyReflector(x, s + 1, v, tau, m, j, lane);
  }
#pragma unroll
  for (int g = 0; g < W; ++g)
#pragma unroll
    for (int t = 0; t < R; ++t)
      if (g >= count && g < width && lane + 32 * t < m)
        cols[g * ld + lane + 32 * t] = x[g][t];
}

// The kernels of more than 64 rows stream R and accumulate Q's rows; those of up
// to 64 (64 registers a thread, passes::qrClusterStreamMinRows) do neither.
template <int R> constexpr bool kStreams = R >= 4;

// The state of one block of the kernel: A's columns of this block (stride m + 1;
// row m is padding that nothing writes, read in place of rows that do not
// exist), the taus of its reflectors, the taus of two panels, and a work area:
// while factoring, two panel buffers (panel p in p % 2) and, where Q is
// accumulated by rows, `rowsQ` rows of Q (stride m + 1) after them; while forming
// Q from the panels, Q's columns of this block and one panel buffer.
template <typename T> struct Block {
  T *as, *tauMine, *taus, *work, *qRows;
  unsigned* ready; // this block's count of the reflectors published to it (publish)
  unsigned* made;  // this block's count of the reflectors it made (awaitMade)
  int m, n, k, ld, panel, panelLog2, panels, mine, rowsQ;
  Columns cols;
  int lane, warp;
  __device__ T* buffer(int p) const { return work + (p & 1) * panel * m; }
  __device__ T* panelTaus(int p) const { return taus + (p & 1) * panel; }
};

// Factors the panel of columns j0 .. on, which this block holds from local
// column lp on: all reflectors before j0 are applied to it. Its columns are
// dealt out warpPanel() at a time to the warps (factorColumns), each taking the
// reflectors of the warps before as they are made. Where R is streamed, the last
// warp publishes them to the `ctas` blocks of the cluster as they are made.
template <typename T, int R>
__device__ void factorPanel(const Block<T>& b, int j0, int lp, int ctas) {
  constexpr int W = warpPanel<T, R>(), warps = kThreads / 32;
  const int end = min(j0 + b.panel, b.k), width = min(b.panel, b.n - j0);
  const int workers = ctas > 0 ? warps - 1 : warps;
  if (b.warp < workers) {
    for (int s0 = b.warp * W; s0 < width; s0 += workers * W) {
      const int before = max(0, min(s0, end - j0));
      factorColumns<T, R, W>(b.as + (lp + s0) * b.ld, b.tauMine + lp + s0, b.as + lp * b.ld,
                             b.tauMine + lp, b.ld, b.m, j0, before, min(W, width - s0),
                             max(0, min(W, end - j0 - s0)), b.lane, b.made);
    }
  } else {
    for (unsigned seen = j0; seen < unsigned(end);) {
      const unsigned now = loadAcquireBlock(b.made);
      if (now > seen && b.lane < ctas)
        publish(b.ready, b.lane, now);
      seen = max(seen, now);
    }
  }
  __syncthreads();
}

// Applies panel p, complete and copied into this block, to this block's rows of
// Q where it accumulates them (qRows): Q's row i is e_i' H(0) ... H(k - 1), so
// the panels reach it in the order they are made, and to applyPanel a row is a
// column (H is symmetric). Unmasked: only called while every panel is finite.
template <typename T, int R> __device__ void accumulateQ(const Block<T>& b, int p) {
  if (!kStreams<R> || !b.qRows)
    return;
  const int j0 = p << b.panelLog2;
  applyToColumns<T, R, false>(b.qRows, b.ld, b.cols, 0, b.rowsQ,
                              CopiedPanel<T, R>{b.buffer(p), b.panelTaus(p), b.m, b.lane}, j0,
                              min(b.panel, b.k - j0), false, b.m, b.lane, b.warp);
}

// R with one cluster barrier a panel. Panel p is published by its owner's
// release arrival of phase p; every block then applies it to its columns after
// the panel. The owner of panel p + 1 applies it to that panel first and factors
// it before it arrives, the rest of its columns after: a phase's critical path
// is one copy, one panel update and one panel factorization. True when every
// panel is finite.
template <typename T, int R> __device__ bool factorWithBarriers(const Block<T>& b) {
  const Columns& cols = b.cols;
  bool finite = true;
  if (cols.owner(0) == cols.rank) {
    factorPanel<T, R>(b, 0, 0, 0);
    clusterArrive();
  } else {
    clusterArriveRelaxed();
  }
  for (int p = 0; p < b.panels; ++p) {
    clusterWait(); // panel p is published
    const int j0 = p << b.panelLog2, count = min(b.panel, b.k - j0), next = j0 + b.panel;
    // buffer(p) was last read in phase p - 2, before this block's sync in phase p - 1.
    bool here = copyPanel(b.buffer(p), b.panelTaus(p), b.as, b.tauMine, b.ld, b.m, j0, count,
                          cols.owner(j0), cols.local(j0));
    finite = __syncthreads_and(here) && finite;
    CopiedPanel<T, R> copied{b.buffer(p), b.panelTaus(p), b.m, b.lane};
    const bool ahead = p + 1 < b.panels && cols.owner(next) == cols.rank;
    if (ahead) {
      const int lp = cols.local(next);
      applyToColumns<T, R>(b.as, b.ld, cols, lp, min(lp + b.panel, b.mine), copied, j0, count,
                           false, b.m, b.lane, b.warp);
      __syncthreads();
      factorPanel<T, R>(b, next, lp, 0);
    }
    if (p + 1 < b.panels) {
      if (ahead)
        clusterArrive(); // panel p + 1 is published
      else
        clusterArriveRelaxed();
    }
    applyToColumns<T, R>(b.as, b.ld, cols, cols.count(ahead ? next + b.panel : next), b.mine,
                         copied, j0, count, false, b.m, b.lane, b.warp);
    if (finite)
      accumulateQ<T, R>(b, p);
  }
  return finite;
}

// R with streamed panels: panel p's reflectors are published one by one as they
// are made. The owner of panel p + 1 applies each to that panel as it arrives,
// with the panel's columns in registers, and factors it one column update after
// the last has arrived: a phase's critical path is one panel factorization and
// one reflector's trip between blocks. Every block applies the whole panel to
// its other columns once it is complete, the owner of panel p + 1 after
// factoring that, and the owner of panel p + 2 to that panel only: it applies
// panel p to the rest of its columns (and Q's rows) after it factors panel p + 2,
// so that it is ready for panel p + 1's reflectors as they come. True when every
// panel is finite.
template <typename T, int R> __device__ bool factorStreamed(const Block<T>& b) {
  const Columns& cols = b.cols;
  const int ctas = 1 << cols.cl;
  unsigned* ready = b.ready;
  // Applies copied panel q to this block's columns from local column `from` on
  // (to `to`), and to Q's rows with `rows` while every panel so far is finite.
  bool finite = true;
  auto applyCopied = [&](int q, int from, int to, bool rows) {
    const int j0 = q << b.panelLog2;
    applyToColumns<T, R>(b.as, b.ld, cols, from, to,
                         CopiedPanel<T, R>{b.buffer(q), b.panelTaus(q), b.m, b.lane}, j0,
                         min(b.panel, b.k - j0), false, b.m, b.lane, b.warp);
    if (rows && finite)
      accumulateQ<T, R>(b, q);
  };
  if (cols.owner(0) == cols.rank)
    factorPanel<T, R>(b, 0, 0, ctas);
  bool late = false; // panel p - 1 is still to be applied after panel p + 1
  for (int p = 0; p < b.panels; ++p) {
    const int j0 = p << b.panelLog2, count = min(b.panel, b.k - j0), next = j0 + b.panel;
    const int after = next + b.panel; // panel p + 2
    const bool ahead = p + 1 < b.panels && cols.owner(next) == cols.rank;
    if (ahead) {
      const unsigned owner = cols.owner(j0);
      const int lp = cols.local(next), lj0 = cols.local(j0);
      const T* made = inBlock(b.as, owner) + lj0 * b.ld;
      const T* taus = inBlock(b.tauMine, owner) + lj0;
      StreamedPanel<T, R> stream{made, taus, ready, b.ld, b.m, j0, b.lane};
      applyToColumns<T, R>(b.as, b.ld, cols, lp, min(lp + b.panel, b.mine), stream, j0, count,
                           false, b.m, b.lane, b.warp);
      __syncthreads();
      factorPanel<T, R>(b, next, lp, ctas);
    }
    if (late)
      applyCopied(p - 1, cols.count(after), b.mine, true);
    if (b.warp == 0)
      awaitReflectors(ready, j0 + count);
    __syncthreads(); // buffer(p) was last read in phase p - 1 at the latest, before this sync
    bool here = copyPanel(b.buffer(p), b.panelTaus(p), b.as, b.tauMine, b.ld, b.m, j0, count,
                          cols.owner(j0), cols.local(j0));
    finite = __syncthreads_and(here) && finite;
    late = p + 2 < b.panels && cols.owner(after) == cols.rank;
    const int from = cols.count(ahead ? after : next);
    applyCopied(p, from, late ? min(from + b.panel, b.mine) : b.mine, !late);
  }
  return finite;
}
#endif

// One cluster per matrix (blockIdx.x / cluster size), panels of 2^panelLog2
// columns; R streamed where `streamed` is set (and the kernel has streams: more
// than 64 rows, passes::qrClusterStreamed), else with a cluster barrier a panel.
// With `qByRows` (passes::qrClusterQByRows), each block accumulates a share of
// Q's rows as the panels are made, else Q is formed from the panels after R.
template <typename T, int R>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm<R>)
    clusterQr(int m, int n, int panelLog2, int streamed, int qByRows, const T* __restrict__ a,
              T* __restrict__ q, T* __restrict__ r) {
#if __CUDA_ARCH__ >= 900
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr int warps = kThreads / 32;
  const int ctas = clusterSize(), k = min(m, n), ld = m + 1, panel = 1 << panelLog2;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const Columns cols{__ffs(ctas) - 1, panelLog2, int(clusterRank())};
  const int mine = cols.count(n), mineQ = cols.count(k);
  const int slots = (n + panel * ctas - 1) / (panel * ctas) * panel;
  const int slotsQ = (k + panel * ctas - 1) / (panel * ctas) * panel;
  unsigned* counts = reinterpret_cast<unsigned*>(smem); // 16 bytes ahead of A's columns
  Block<T> b;
  b.as = reinterpret_cast<T*>(smem + 16);
  b.tauMine = b.as + slots * ld;
  b.taus = b.tauMine + slots; // 2 x panel
  b.work = b.taus + 2 * panel;
  b.m = m, b.n = n, b.k = k, b.ld = ld, b.panel = panel, b.panelLog2 = panelLog2;
  b.panels = (k + panel - 1) >> panelLog2, b.mine = mine, b.cols = cols;
  b.lane = lane, b.warp = warp, b.ready = counts, b.made = counts + 1;
  const int rowsQ = (m + ctas - 1) / ctas, row0 = cols.rank * rowsQ;
  b.qRows = kStreams<R> && q && qByRows ? b.work + 2 * panel * m : nullptr;
  b.rowsQ = max(0, min(rowsQ, m - row0));
  const i64 item = blockIdx.x / ctas;
  a += item * m * n;
  r += item * k * n;
  const bool streams = kStreams<R> && streamed && ctas > 1;
  if (threadIdx.x < 2)
    counts[threadIdx.x] = 0;
  if (streams)
    clusterArrive(); // every block's count is 0 before any is raised

  // Rows a warp at a time, so that a row's loads and stores coalesce.
  for (int i = warp; i < m; i += warps)
    for (int l = lane; l < mine; l += 32)
      b.as[l * ld + i] = a[i * (i64)n + cols.global(l)];
  if (b.qRows)
    for (int l = warp; l < b.rowsQ; l += warps)
      for (int c = lane; c < m; c += 32)
        b.qRows[l * ld + c] = T(c == row0 + l);
  __syncthreads();
  bool finite = true;
  if (streams) {
    clusterWait();
    finite = factorStreamed<T, R>(b);
  } else if (b.panels > 0) {
    finite = factorWithBarriers<T, R>(b);
  }
  __syncthreads();
  for (int i = warp; i < k; i += warps)
    for (int l = lane; l < mine; l += 32) {
      int c = cols.global(l);
      r[i * (i64)n + c] = i <= c ? b.as[l * ld + i] : T(0);
    }
  if (q && b.qRows && finite) {
    q += item * m * k;
    for (int l = warp; l < b.rowsQ; l += warps)
      for (int c = lane; c < k; c += 32)
        q[(row0 + l) * (i64)k + c] = b.qRows[l * ld + c];
  } else if (q) {
    q += item * m * k;
    // Q's column c is H(0) ... H(c) e_c: the panels from the last one down, each
    // on the columns it changes; unmasked (applyPanel) while every panel so far
    // is finite. (Also where a non-finite panel stopped the accumulation of Q's
    // rows: this gives LAPACK's NaNs.)
    T* qs = b.work;
    T* buffer = qs + slotsQ * ld;
    for (int l = warp; l < mineQ; l += warps)
      for (int i = lane; i < m; i += 32)
        qs[l * ld + i] = T(i == cols.global(l));
    bool exact = false;
    for (int p = b.panels - 1; p >= 0; --p) {
      const int j0 = p << panelLog2, count = min(panel, k - j0);
      if (cols.count(j0) == mineQ) // none of this block's columns of Q from j0 on
        continue;
      __syncthreads(); // the previous panel is applied
      bool finite = copyPanel(buffer, b.taus, b.as, b.tauMine, ld, m, j0, count, cols.owner(j0),
                              cols.local(j0));
      exact = !__syncthreads_and(finite) || exact;
      CopiedPanel<T, R> copied{buffer, b.taus, m, lane};
      if (exact)
        applyToColumns<T, R, true>(qs, ld, cols, cols.count(j0), mineQ, copied, j0, count, true, m,
                                   lane, warp);
      else
        applyToColumns<T, R, false>(qs, ld, cols, cols.count(j0), mineQ, copied, j0, count, true, m,
                                    lane, warp);
    }
    __syncthreads();
    for (int i = warp; i < m; i += warps)
      for (int l = lane; l < mineQ; l += 32)
        q[i * (i64)k + cols.global(l)] = qs[l * ld + i];
  }
  // No block leaves while another may still read its reflectors.
  clusterArrive();
  clusterWait();
#endif
}
