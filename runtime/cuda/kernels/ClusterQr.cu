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
// block's count to j + 1 once the reflector is in its shared memory (a fence
// after the block barrier that follows it, as a grid barrier publishes a
// block's writes); a reader waits until its count passes the reflector it
// needs, with acquire semantics, and then reads the reflector from the maker's
// shared memory. Reflectors never change once made, so nothing waits for the
// readers but the kernel's end.
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
// warpSum of G values at once, so that their shuffles overlap.
template <typename T, int G> __device__ void warpSums(T (&s)[G]) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
#pragma unroll
    for (int g = 0; g < G; ++g)
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

// Makes the reflector of column `col` at step j as dlarfg does, in place: R(j, j)
// at row j, v below it (v(j) = 1 implied). Returns tau (0: H = I, the column as
// it was). Called by one whole warp.
template <typename T, int R> __device__ T makeReflector(T* col, int m, int j, int lane) {
  T x[R], ss = 0;
#pragma unroll
  for (int t = 0; t < R; ++t) {
    int i = lane + 32 * t;
    T y = col[min(i, m)];
    x[t] = i > j && i < m ? y : T(0);
    ss += x[t] * x[t];
  }
  ss = warpSum(ss);
  const T alpha = col[j];
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
  __syncwarp(); // every lane has read alpha before lane 0 overwrites it
#pragma unroll
  for (int t = 0; t < R; ++t) {
    int i = lane + 32 * t;
    if (i > j && i < m)
      col[i] = x[t] * scale;
  }
  if (lane == 0)
    col[j] = beta;
  return (beta - alpha) / beta;
}

// This lane's rows of reflector j, made in place in column `col` of this
// block: 1 at row j, zeros above it.
template <typename T, int R>
__device__ void columnReflector(T (&v)[R], const T* col, int m, int j, int lane) {
#pragma unroll
  for (int t = 0; t < R; ++t) {
    int i = lane + 32 * t;
    T y = col[min(i, m)];
    v[t] = i > j && i < m ? y : T(i == j);
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

// Applies H = I - tau v v' (v zero above row j) to the columns at base + l[g] ld
// with live[g], G at a time so that their warp sums overlap.
template <typename T, int R, int G>
__device__ void applyReflector(T* base, int ld, const int (&l)[G], const bool (&live)[G],
                               const T (&v)[R], T tau, int m, int j, int lane) {
  // Loads unconditional and selects: a load under a branch costs the step its
  // latency, element by element. Rows past m, and every row of a column that is
  // not live, are read from the padding row m, which nothing writes.
  T x[G][R], s[G];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    const T* col = base + (live[g] ? l[g] : 0) * ld;
    s[g] = 0;
#pragma unroll
    for (int t = 0; t < R; ++t) {
      int i = lane + 32 * t;
      x[g][t] = col[live[g] ? min(i, m) : m];
      s[g] += v[t] * (i >= j && i < m ? x[g][t] : T(0));
    }
  }
  warpSums(s);
#pragma unroll
  for (int g = 0; g < G; ++g) {
    T f = tau * s[g];
#pragma unroll
    for (int t = 0; t < R; ++t) {
      int i = lane + 32 * t;
      if (live[g] && i >= j && i < m)
        base[l[g] * ld + i] = x[g][t] - f * v[t];
    }
  }
}
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

// Factors the panel of columns j0 .. on, which this block holds from local
// column lp on: all reflectors before j0 are applied to it. Step j makes
// reflector j in the warp that holds column j (the panel's column i is warp
// i % warps's) and applies it to the panel's later columns; the warp that holds
// column j + 1 updates it first and makes the next reflector at once (its other
// columns, on short columns, in the next step), so a step's critical path is one
// column update, one reflector and one block barrier. With `ready`, each
// reflector is published to the `ctas` blocks of the cluster in the step
// after it is made, by the warp that made it.
template <typename T, int R>
__device__ void factorPanel(T* as, T* tauMine, int ld, int m, int n, int k, int j0, int lp,
                            int panel, int lane, int warp, unsigned* ready = nullptr,
                            int ctas = 0) {
  constexpr int warps = kThreads / 32;
  const int end = min(j0 + panel, k), width = min(panel, n - j0);
  if (warp == 0) {
    T tau = makeReflector<T, R>(as + lp * ld, m, j0, lane);
    if (lane == 0)
      tauMine[lp] = tau;
  }
  __syncthreads();
  // Applies reflector j (tau, v) to this warp's panel columns after j but `skip`.
  auto applyToMine = [&](int j, T tau, const T(&v)[R], int skip) {
    if (tau == T(0))
      return;
    for (int i0 = warp; i0 < width; i0 += kGroup * warps) {
      int l[kGroup];
      bool live[kGroup];
#pragma unroll
      for (int g = 0; g < kGroup; ++g) {
        int i = i0 + g * warps;
        l[g] = lp + i;
        live[g] = i < width && j0 + i > j && j0 + i != skip;
      }
      applyReflector<T, R, kGroup>(as, ld, l, live, v, tau, m, j, lane);
    }
  };
  // On columns of up to 128 rows, the warp that makes reflector j + 1 applies
  // reflector j to its other columns in step j + 1, off that step's critical path
  // (another warp makes j + 2). On longer ones the two updates of that step take
  // longer than a reflector: f64 on an H200, deferred against not, 128 x 128 0.25
  // / 0.28 ms, 100 x 128 x 128 0.58 / 0.64, 256 x 256 0.86 / 0.81.
  constexpr bool kDefer = R <= 4;
  int deferred = -1;
  for (int j = j0; j < end; ++j) {
    const int lj = lp + (j - j0), next = j + 1;
    if (ready && (j - j0) % warps == warp && lane < ctas)
      publish(ready, lane, next);
    const T tau = tauMine[lj];
    T v[R];
    columnReflector(v, as + lj * ld, m, j, lane);
    if (deferred >= 0) { // reflector j - 1, which column j already has
      T w[R];
      const int lprev = lp + (deferred - j0);
      columnReflector(w, as + lprev * ld, m, deferred, lane);
      applyToMine(deferred, tauMine[lprev], w, j);
      deferred = -1;
    }
    const bool first = next < end && (next - j0) % warps == warp;
    if (first) {
      // Without kDefer, the warp's other columns beside column j + 1: their warp
      // sums overlap, and the block barrier waits for them anyway.
      int l[1] = {lp + (next - j0)};
      bool live[1] = {true};
      if (!kDefer)
        applyToMine(j, tau, v, -1);
      else if (tau != T(0))
        applyReflector<T, R, 1>(as, ld, l, live, v, tau, m, j, lane);
      __syncwarp(); // the column's rows, written lane by lane, are read by every lane
      T t = makeReflector<T, R>(as + l[0] * ld, m, next, lane);
      if (lane == 0)
        tauMine[l[0]] = t;
      if (kDefer)
        deferred = j;
    } else {
      applyToMine(j, tau, v, -1);
    }
    __syncthreads();
  }
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
  int m, n, k, ld, panel, panelLog2, panels, mine, rowsQ;
  Columns cols;
  int lane, warp;
  __device__ T* buffer(int p) const { return work + (p & 1) * panel * m; }
  __device__ T* panelTaus(int p) const { return taus + (p & 1) * panel; }
};

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
    factorPanel<T, R>(b.as, b.tauMine, b.ld, b.m, b.n, b.k, 0, 0, b.panel, b.lane, b.warp);
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
      factorPanel<T, R>(b.as, b.tauMine, b.ld, b.m, b.n, b.k, next, lp, b.panel, b.lane, b.warp);
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
template <typename T, int R> __device__ bool factorStreamed(const Block<T>& b, unsigned* ready) {
  const Columns& cols = b.cols;
  const int ctas = 1 << cols.cl;
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
    factorPanel<T, R>(b.as, b.tauMine, b.ld, b.m, b.n, b.k, 0, 0, b.panel, b.lane, b.warp, ready,
                      ctas);
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
      factorPanel<T, R>(b.as, b.tauMine, b.ld, b.m, b.n, b.k, next, lp, b.panel, b.lane, b.warp,
                        ready, ctas);
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

// The blocks an SM the registers are bounded for: 64 a thread up to 64 rows,
// 128 up to 128 (the kernels of batches of small matrices share SMs).
template <int R> constexpr int kMinBlocksPerSm = R <= 2 ? 4 : R == 4 ? 2 : 1;

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
  unsigned& ready = *reinterpret_cast<unsigned*>(smem); // 16 bytes ahead of A's columns
  Block<T> b;
  b.as = reinterpret_cast<T*>(smem + 16);
  b.tauMine = b.as + slots * ld;
  b.taus = b.tauMine + slots; // 2 x panel
  b.work = b.taus + 2 * panel;
  b.m = m, b.n = n, b.k = k, b.ld = ld, b.panel = panel, b.panelLog2 = panelLog2;
  b.panels = (k + panel - 1) >> panelLog2, b.mine = mine, b.cols = cols;
  b.lane = lane, b.warp = warp;
  const int rowsQ = (m + ctas - 1) / ctas, row0 = cols.rank * rowsQ;
  b.qRows = kStreams<R> && q && qByRows ? b.work + 2 * panel * m : nullptr;
  b.rowsQ = max(0, min(rowsQ, m - row0));
  const i64 item = blockIdx.x / ctas;
  a += item * m * n;
  r += item * k * n;
  const bool streams = kStreams<R> && streamed && ctas > 1;
  if (threadIdx.x == 0)
    ready = 0;
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
    finite = factorStreamed<T, R>(b, &ready);
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
