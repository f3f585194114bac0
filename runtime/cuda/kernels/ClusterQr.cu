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
constexpr int kThreads = 256; // per block (the rows a block copies: at most 2 kThreads)

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

// Where the columns live: runs of W columns (32 bytes) dealt out to the 2^cl
// blocks in turn; a block's columns are numbered locally in order. Shifts and
// masks only: integer division is slow on the critical path of a step.
template <int W> struct Columns {
  int cl, rank; // log2 of the cluster size, this block's rank
  static constexpr int wl = W == 4 ? 2 : 3;
  __device__ int owner(int c) const { return (c >> wl) & ((1 << cl) - 1); }
  __device__ int local(int c) const { return (c >> (wl + cl) << wl) | (c & (W - 1)); }
  __device__ int global(int l) const { return ((l >> wl << cl | rank) << wl) | (l & (W - 1)); }
  // How many of the first n columns this block holds.
  __device__ int count(int n) const {
    int full = n >> (wl + cl), rest = n - (full << (wl + cl)) - (rank << wl);
    return (full << wl) + min(max(rest, 0), W);
  }
};

template <typename T> __device__ T warpSum(T s) {
  for (int o = 16; o > 0; o >>= 1)
    s += __shfl_xor_sync(0xffffffffu, s, o);
  return s;
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
    T y = col[min(i, m - 1)];
    x[t] = i > j && i < m ? y : T(0);
    ss += x[t] * x[t];
  }
  ss = warpSum(ss);
  T alpha = col[j], xnorm = sqrt(ss);
  if (ss < Range<T>::tiny || ss > Range<T>::huge) { // NaN goes on as NaN
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
  }
  if (xnorm == T(0))
    return T(0);
  T beta = -copysign(hypot(alpha, xnorm), alpha), scale = T(1) / (alpha - beta);
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

// This lane's rows of the reflector copied into `v` (its block's buffer: zeros
// above row j, 1 at j).
template <typename T, int R>
__device__ void loadReflector(T (&v)[R], const T* buffer, int m, int lane) {
#pragma unroll
  for (int t = 0; t < R; ++t) {
    int i = lane + 32 * t;
    T y = buffer[min(i, m - 1)];
    v[t] = i < m ? y : T(0);
  }
}

// Reflector j, from the block that holds column j, as this thread's part of
// `buffer` (thread t: rows t and t + kThreads): rows below j as stored, 1 at j,
// 0 above. Every block reads each reflector once, into its own shared memory:
// when every warp of the cluster read it from the one block that holds it,
// that block's shared memory port was the bottleneck of the step.
template <typename T> struct ReflectorPart {
  T x[2];
  __device__ void load(const T* as, int ld, int m, int j, int owner, int localColumn) {
    const T* col = inBlock(as, owner) + localColumn * ld;
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      int i = threadIdx.x + u * kThreads;
      T y = col[min(i, m - 1)];
      x[u] = i > j && i < m ? y : T(i == j);
    }
  }
  __device__ void store(T* buffer, int m) const {
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      int i = threadIdx.x + u * kThreads;
      if (i < m)
        buffer[i] = x[u];
    }
  }
};

// Applies H = I - tau v v' (v zero above row j) to the columns at base + l[g] ld
// with live[g], G at a time so that their warp sums overlap.
template <typename T, int R, int G>
__device__ void applyReflector(T* base, int ld, const int (&l)[G], const bool (&live)[G],
                               const T (&v)[R], T tau, int m, int j, int lane) {
  // Loads unconditional (clamped to a column and row that exist) and selects:
  // a load under a branch costs the step its latency, element by element.
  T x[G][R], s[G];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    const T* col = base + (live[g] ? l[g] : 0) * ld;
    s[g] = 0;
#pragma unroll
    for (int t = 0; t < R; ++t) {
      int i = lane + 32 * t;
      x[g][t] = col[min(i, m - 1)];
      s[g] += v[t] * (i >= j && i < m ? x[g][t] : T(0));
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
#pragma unroll
    for (int g = 0; g < G; ++g)
      s[g] += __shfl_xor_sync(0xffffffffu, s[g], o);
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
#endif

// One cluster per matrix (blockIdx.x / cluster size). Shared memory: A's columns
// of this block (stride m + 1), Q's, the taus of this block's reflectors, all
// taus (for forming Q) and two reflector buffers (one being read, one filled).
template <typename T, int R>
__global__ void __launch_bounds__(kThreads)
    clusterQr(int m, int n, const T* __restrict__ a, T* __restrict__ q, T* __restrict__ r) {
#if __CUDA_ARCH__ >= 900
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr int W = 32 / sizeof(T), warps = kThreads / 32;
  const int ctas = clusterSize(), k = min(m, n), ld = m + 1;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const Columns<W> cols{__ffs(ctas) - 1, int(clusterRank())};
  const int mine = cols.count(n), mineQ = cols.count(k);
  const int slots = (n + W * ctas - 1) / (W * ctas) * W;
  const int slotsQ = (k + W * ctas - 1) / (W * ctas) * W;
  T* as = reinterpret_cast<T*>(smem);
  T* qs = as + slots * ld;
  T* tauMine = qs + slotsQ * ld;
  T* tauAll = tauMine + slots;
  T* buffers = tauAll + k; // 2 x m
  const i64 item = blockIdx.x / ctas;
  a += item * m * n;
  r += item * k * n;

  // Rows a warp at a time, so that a row's loads and stores coalesce.
  for (int i = warp; i < m; i += warps)
    for (int l = lane; l < mine; l += 32)
      as[l * ld + i] = a[i * (i64)n + cols.global(l)];
  __syncthreads();
  auto holds = [&](int c) { return cols.owner(c) == cols.rank && cols.local(c) % warps == warp; };
  if (k > 0 && holds(0)) {
    T tau = makeReflector<T, R>(as + cols.local(0) * ld, m, 0, lane);
    if (lane == 0)
      tauMine[cols.local(0)] = tau;
  }
  clusterArrive();
  for (int j = 0; j < k; ++j) {
    clusterWait(); // reflector j is published
    const int from = cols.owner(j), lj = cols.local(j);
    T* buffer = buffers + (j & 1) * m; // last read in step j - 2, before this block's sync in j - 1
    ReflectorPart<T> part;
    part.load(as, ld, m, j, from, lj);
    part.store(buffer, m);
    if (threadIdx.x == 0)
      tauAll[j] = *inBlock(tauMine + lj, from);
    __syncthreads();
    T v[R];
    loadReflector(v, buffer, m, lane);
    const T tau = tauAll[j];
    const int next = j + 1;
    const bool first = next < k && holds(next);
    if (first) {
      int l[1] = {cols.local(next)};
      bool live[1] = {true};
      if (tau != T(0))
        applyReflector<T, R, 1>(as, ld, l, live, v, tau, m, j, lane);
      T t = makeReflector<T, R>(as + l[0] * ld, m, next, lane);
      if (lane == 0)
        tauMine[l[0]] = t;
    }
    if (first)
      clusterArrive(); // reflector j + 1 is published
    else
      clusterArriveRelaxed();
    if (tau == T(0))
      continue;
    for (int l0 = warp; l0 < mine; l0 += kGroup * warps) {
      int l[kGroup];
      bool live[kGroup];
#pragma unroll
      for (int g = 0; g < kGroup; ++g) {
        l[g] = l0 + g * warps;
        int c = l[g] < mine ? cols.global(l[g]) : -1;
        live[g] = c > j && !(first && c == next);
      }
      applyReflector<T, R, kGroup>(as, ld, l, live, v, tau, m, j, lane);
    }
  }
  clusterWait();
  __syncthreads();
  for (int i = warp; i < k; i += warps)
    for (int l = lane; l < mine; l += 32) {
      int c = cols.global(l);
      r[i * (i64)n + c] = i <= c ? as[l * ld + i] : T(0);
    }
  if (q) {
    q += item * m * k;
    for (int l = warp; l < mineQ; l += warps)
      for (int i = lane; i < m; i += 32)
        qs[l * ld + i] = T(i == cols.global(l));
    __syncthreads();
    // Q's column c is H(0) ... H(c) e_c: the reflectors from the last one down,
    // each on the columns it changes; the next one's copy overlaps this one's use.
    ReflectorPart<T> part;
    if (k > 0) {
      part.load(as, ld, m, k - 1, cols.owner(k - 1), cols.local(k - 1));
      part.store(buffers + ((k - 1) & 1) * m, m);
    }
    __syncthreads();
    for (int j = k - 1; j >= 0; --j) {
      if (j > 0)
        part.load(as, ld, m, j - 1, cols.owner(j - 1), cols.local(j - 1));
      const T tau = tauAll[j];
      if (tau != T(0)) {
        T v[R];
        loadReflector(v, buffers + (j & 1) * m, m, lane);
        for (int l0 = warp; l0 < mineQ; l0 += kGroup * warps) {
          int l[kGroup];
          bool live[kGroup];
#pragma unroll
          for (int g = 0; g < kGroup; ++g) {
            l[g] = l0 + g * warps;
            live[g] = l[g] < mineQ && cols.global(l[g]) >= j;
          }
          applyReflector<T, R, kGroup>(qs, ld, l, live, v, tau, m, j, lane);
        }
      }
      if (j > 0)
        part.store(buffers + ((j - 1) & 1) * m, m); // last read in step j + 1
      __syncthreads();
    }
    for (int i = warp; i < m; i += warps)
      for (int l = lane; l < mineQ; l += 32)
        q[i * (i64)k + cols.global(l)] = qs[l * ld + i];
  }
  // No block leaves while another may still read its reflectors.
  clusterArrive();
  clusterWait();
#endif
}
