//===- runtime/cpu/SmallLinalg.cpp - Factorizations of tiny matrices ------===//
//
// Each kernel is written once over `template <typename T, int N>`, where N is the
// matrix order known at compile time (1..8: the loops unroll) or 0 for an order
// known at run time only; dispatch() picks the instance. The loops follow the
// unblocked LAPACK routines named in SmallLinalg.h, in row-major storage. The file
// is compiled with -O3 and -ffp-contract=off (runtime/cpu/CMakeLists.txt): the loops
// over a row need the vectorizer's full cost model, and the products, compiled for
// AVX-512 and AVX2 beside the baseline, must round the same in every version.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/SmallLinalg.h"

#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

namespace graphc::cpu::small {
namespace {

/// f(std::integral_constant<int, N>{}) with N = n for n <= 8, N = 0 otherwise.
template <typename F> decltype(auto) dispatch(int n, F&& f) {
  switch (n) {
  case 1:
    return f(std::integral_constant<int, 1>{});
  case 2:
    return f(std::integral_constant<int, 2>{});
  case 3:
    return f(std::integral_constant<int, 3>{});
  case 4:
    return f(std::integral_constant<int, 4>{});
  case 5:
    return f(std::integral_constant<int, 5>{});
  case 6:
    return f(std::integral_constant<int, 6>{});
  case 7:
    return f(std::integral_constant<int, 7>{});
  case 8:
    return f(std::integral_constant<int, 8>{});
  default:
    return f(std::integral_constant<int, 0>{});
  }
}

/// dgetf2: for each column, the first largest |a(i,k)| on or below the diagonal
/// is the pivot; a nonzero pivot's row is swapped up and the column below it
/// scaled by its reciprocal (divided, for a subnormal pivot); then the trailing
/// matrix is updated.
template <typename T, int N> int getrfN(int order, T* a, int* ipiv) {
  const int n = N ? N : order;
  int info = 0;
  for (int k = 0; k < n; ++k) {
    int p = k;
    T best = std::abs(a[k * n + k]);
    for (int i = k + 1; i < n; ++i)
      if (std::abs(a[i * n + k]) > best) {
        best = std::abs(a[i * n + k]);
        p = i;
      }
    ipiv[k] = p + 1;
    T pivot = a[p * n + k];
    if (pivot != T(0)) {
      if (p != k)
        for (int j = 0; j < n; ++j)
          std::swap(a[k * n + j], a[p * n + j]);
      if (std::abs(pivot) >= std::numeric_limits<T>::min()) {
        T r = T(1) / pivot;
        for (int i = k + 1; i < n; ++i)
          a[i * n + k] *= r;
      } else {
        for (int i = k + 1; i < n; ++i)
          a[i * n + k] /= pivot;
      }
    } else if (info == 0) {
      info = k + 1;
    }
    for (int i = k + 1; i < n; ++i) {
      T l = a[i * n + k];
      for (int j = k + 1; j < n; ++j)
        a[i * n + j] -= l * a[k * n + j];
    }
  }
  return info;
}

/// dpotf2, lower: column j of L from the rows before it (dot products of rows of
/// the row-major factor).
template <typename T, int N> int potrfLower(int order, T* a) {
  const int n = N ? N : order;
  for (int j = 0; j < n; ++j) {
    T d = a[j * n + j];
    for (int k = 0; k < j; ++k)
      d -= a[j * n + k] * a[j * n + k];
    if (d <= T(0)) // as OpenBLAS's potrf: a NaN passes and makes the factor NaN
      return j + 1;
    d = std::sqrt(d);
    a[j * n + j] = d;
    T r = T(1) / d;
    for (int i = j + 1; i < n; ++i) {
      T s = a[i * n + j];
      for (int k = 0; k < j; ++k)
        s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s * r;
    }
  }
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      a[i * n + j] = T(0);
  return 0;
}

/// `a` transposed in place.
template <typename T, int N> void transposeInPlace(int order, T* a) {
  const int n = N ? N : order;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      std::swap(a[i * n + j], a[j * n + i]);
}

/// Upper: U' is the lower factor of A' (A's upper triangle read as a lower one).
template <typename T, int N> int potrfN(int order, bool upper, T* a) {
  if (!upper)
    return potrfLower<T, N>(order, a);
  transposeInPlace<T, N>(order, a);
  int info = potrfLower<T, N>(order, a);
  transposeInPlace<T, N>(order, a);
  return info;
}

/// The accumulators of a row of W points: vectors of at most 32 bytes, AVX2's
/// registers (GCC splits wider vector types through the stack there: rows of 16
/// floats took 1.3x NumPy's time), `chunks` of them a row.
template <typename T, int W> struct RowVectors {
  static constexpr int bytes = W * sizeof(T) < 32 ? W * int(sizeof(T)) : 32;
  static constexpr int lanes = bytes / int(sizeof(T)), chunks = W / lanes;
  typedef T V __attribute__((vector_size(bytes)));
};

/// Substitution with the n x n triangular `m` (lower: forwards; upper: backwards)
/// over the `cols` columns of the n rows of `b`, `ld` apart, a row at a time:
/// b(i,:) = (b(i,:) - sum m(i,k) b(k,:)) / m(i,i).
template <typename T, int N, bool Lower, int Cols>
void substituteN(int order, int columns, int64_t ld, bool unit, const T* m, T* b) {
  const int n = N ? N : order, cols = Cols ? Cols : columns;
  for (int s = 0; s < n; ++s) {
    int i = Lower ? s : n - 1 - s;
    T* bi = b + i * ld;
    for (int k = Lower ? 0 : i + 1; k < (Lower ? i : n); ++k) {
      T mik = m[i * n + k];
      const T* bk = b + k * ld;
      for (int c = 0; c < cols; ++c)
        bi[c] -= mik * bk[c];
    }
    if (!unit)
      for (int c = 0; c < cols; ++c)
        bi[c] /= m[i * n + i];
  }
}

/// substituteN over the first 8 x 16 bytes of columns, each row's points held in
/// eight 16-byte vectors (SSE2's and NEON's registers, so no clone of the file
/// spills them) while the rows before it are read: a row-at-a-time update loads and
/// stores b(i,:) once per term. The same operations in the same order, so the same
/// bits.
template <typename T, int N, bool Lower>
[[gnu::always_inline]] inline void substituteRun(int order, int64_t ld, bool unit, const T* m,
                                                 T* b) {
  typedef T V __attribute__((vector_size(16)));
  constexpr int kChunks = 8;
  const int n = N ? N : order;
  for (int s = 0; s < n; ++s) {
    int i = Lower ? s : n - 1 - s;
    V acc[kChunks];
    __builtin_memcpy(&acc, b + i * ld, sizeof(acc));
    for (int k = Lower ? 0 : i + 1; k < (Lower ? i : n); ++k) {
      T mik = m[i * n + k];
      for (int q = 0; q < kChunks; ++q) { // a vector of row k at a time: 16 registers
        V bk;
        __builtin_memcpy(&bk, b + k * ld + q * int(16 / sizeof(T)), sizeof(bk));
        acc[q] -= mik * bk;
      }
    }
    if (!unit)
      for (int q = 0; q < kChunks; ++q)
        acc[q] /= m[i * n + i];
    __builtin_memcpy(b + i * ld, &acc, sizeof(acc));
  }
}

/// substituteN for any number of columns: one known at compile time, else runs of
/// 128 bytes (eight independent sums, so the latency of one hides behind the
/// others) and the rest a row at a time.
template <typename T, int N, bool Lower>
void substitute(int order, int cols, int64_t ld, bool unit, const T* m, T* b) {
  if (cols == 1)
    return substituteN<T, N, Lower, 1>(order, 1, ld, unit, m, b);
  constexpr int kRun = 128 / int(sizeof(T));
  int c = 0;
  for (; c + kRun <= cols; c += kRun)
    substituteRun<T, N, Lower>(order, ld, unit, m, b + c);
  if (c < cols)
    substituteN<T, N, Lower, 0>(order, cols - c, ld, unit, m, b + c);
}

/// dgetrs: the row swaps, then L (unit lower) and U.
template <typename T, int N>
void getrsN(int order, int cols, int64_t ld, const T* lu, const int* ipiv, T* b) {
  const int n = N ? N : order;
  for (int k = 0; k < n; ++k)
    if (int p = ipiv[k] - 1; p != k)
      for (int c = 0; c < cols; ++c)
        std::swap(b[k * ld + c], b[p * ld + c]);
  substitute<T, N, true>(n, cols, ld, /*unit=*/true, lu, b);
  substitute<T, N, false>(n, cols, ld, /*unit=*/false, lu, b);
}

/// dtrsm, left side: op(A) (A' copied out first) by substitution.
template <typename T, int N>
void trsmN(int order, int cols, int64_t ld, bool lower, bool trans, bool unit, const T* a, T* b) {
  const int n = N ? N : order;
  T t[kMaxSmallN * kMaxSmallN];
  if (trans) {
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        t[i * n + j] = a[j * n + i];
    a = t;
  }
  if (lower != trans)
    substitute<T, N, true>(n, cols, ld, unit, a, b);
  else
    substitute<T, N, false>(n, cols, ld, unit, a, b);
}

/// Rows i .. i + R - 1 of C = op(A) B for B of k rows of W (>= n) points, the
/// columns past n zero: each row's W accumulators in vectors (GCC's vector type:
/// plain arrays of floats were kept in memory, 4x slower), the R rows' independent
/// sums interleaved over p (sums over k in order; products and sums round apart).
template <typename T, int W, int R, bool TransA>
[[gnu::always_inline]] inline void gemmRows(int i, int m, int n, int k, const T* a, const T* b,
                                            T* c) {
  using RV = RowVectors<T, W>;
  typename RV::V row[R][RV::chunks] = {};
  for (int p = 0; p < k; ++p) {
    typename RV::V bp[RV::chunks];
    __builtin_memcpy(&bp, b + p * W, sizeof(bp));
    for (int r = 0; r < R; ++r) {
      T aip = TransA ? a[p * m + i + r] : a[(i + r) * k + p];
      for (int q = 0; q < RV::chunks; ++q)
        row[r][q] += aip * bp[q];
    }
  }
  for (int r = 0; r < R; ++r) {
    T* ci = c + (i + r) * n;
    if (n == W) { // one store: a loop over j < n becomes a call to memcpy per row
      __builtin_memcpy(ci, &row[r], sizeof(row[r]));
      continue;
    }
    for (int j = 0; j < W; ++j)
      if (j < n)
        ci[j] = row[r][j / RV::lanes][j % RV::lanes];
  }
}

/// gemm with op(A) known and op(B) in rows of W points (4, 8 or 16, the first
/// that holds n): op(B) copied out, transposed and padded with zeros, unless it is
/// B itself (n = W); then C four rows at a time (two where a row is four vectors,
/// so that the accumulators stay in AVX2's 16 registers).
template <typename T, int W, bool TransA>
[[gnu::always_inline]] inline void gemmW(int m, int n, int k, bool transB, const T* a, const T* b,
                                         T* c) {
  constexpr int R = RowVectors<T, W>::chunks >= 4 ? 2 : 4;
  T t[kMaxSmallN * kMaxSmallN];
  if (transB || n != W) {
    for (int p = 0; p < k; ++p)
      for (int j = 0; j < W; ++j)
        t[p * W + j] = j >= n ? T(0) : transB ? b[j * k + p] : b[p * n + j];
    b = t;
  }
  int i = 0;
  for (; i + R <= m; i += R)
    gemmRows<T, W, R, TransA>(i, m, n, k, a, b, c);
  for (; i < m; ++i)
    gemmRows<T, W, 1, TransA>(i, m, n, k, a, b, c);
}

/// gemm with op(A) known.
template <typename T, bool TransA>
[[gnu::always_inline]] inline void gemmT(int m, int n, int k, bool transB, const T* a, const T* b,
                                         T* c) {
  if (n <= 4)
    gemmW<T, 4, TransA>(m, n, k, transB, a, b, c);
  else if (n <= 8)
    gemmW<T, 8, TransA>(m, n, k, transB, a, b, c);
  else
    gemmW<T, 16, TransA>(m, n, k, transB, a, b, c);
}

} // namespace

template <typename T> int getrf(int n, T* a, int* ipiv) {
  return dispatch(n, [&](auto N) { return getrfN<T, N()>(n, a, ipiv); });
}

template <typename T> void getrs(int n, int cols, int64_t ld, const T* lu, const int* ipiv, T* b) {
  dispatch(n, [&](auto N) { getrsN<T, N()>(n, cols, ld, lu, ipiv, b); });
}

template <typename T> int potrf(int n, bool upper, T* a) {
  return dispatch(n, [&](auto N) { return potrfN<T, N()>(n, upper, a); });
}

template <typename T>
void trsm(int n, int cols, int64_t ld, bool lower, bool trans, bool unit, const T* a, T* b) {
  dispatch(n, [&](auto N) { trsmN<T, N()>(n, cols, ld, lower, trans, unit, a, b); });
}

namespace {

/// gemmT for the transposes given at run time.
template <typename T>
[[gnu::always_inline]] inline void gemmAny(int m, int n, int k, bool transA, bool transB,
                                           const T* a, const T* b, T* c) {
  if (transA)
    return gemmT<T, true>(m, n, k, transB, a, b, c);
  return gemmT<T, false>(m, n, k, transB, a, b, c);
}

// The products are compute-bound: with GCC on x86-64 they are compiled for AVX-512 and
// AVX2 as well as the baseline, and the one whose features the CPU has is picked when the
// program loads. Contraction to FMA is off (-ffp-contract=off), so every version rounds alike.
// Not under ThreadSanitizer: it instruments the resolver that picks the version, which the
// loader runs before TSan's runtime is up (the program dies in the loader). Not under
// AddressSanitizer either: with it, the AVX-512 version faulted in gemmRows on a CPU with
// AVX-512 (GCC 12, 2026-12-03; the plain build's passes there).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) &&                             \
    !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define GRAPHC_SMALL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define GRAPHC_SMALL_CLONES
#endif

GRAPHC_SMALL_CLONES void gemmFloat(int m, int n, int k, bool ta, bool tb, const float* a,
                                   const float* b, float* c) {
  gemmAny(m, n, k, ta, tb, a, b, c);
}

GRAPHC_SMALL_CLONES void gemmDouble(int m, int n, int k, bool ta, bool tb, const double* a,
                                    const double* b, double* c) {
  gemmAny(m, n, k, ta, tb, a, b, c);
}

} // namespace

template <typename T>
void gemm(int m, int n, int k, bool transA, bool transB, const T* a, const T* b, T* c) {
  if constexpr (std::is_same_v<T, float>)
    gemmFloat(m, n, k, transA, transB, a, b, c);
  else
    gemmDouble(m, n, k, transA, transB, a, b, c);
}

template int getrf<float>(int, float*, int*);
template int getrf<double>(int, double*, int*);
template void getrs<float>(int, int, int64_t, const float*, const int*, float*);
template void getrs<double>(int, int, int64_t, const double*, const int*, double*);
template int potrf<float>(int, bool, float*);
template int potrf<double>(int, bool, double*);
template void trsm<float>(int, int, int64_t, bool, bool, bool, const float*, float*);
template void trsm<double>(int, int, int64_t, bool, bool, bool, const double*, double*);
template void gemm<float>(int, int, int, bool, bool, const float*, const float*, float*);
template void gemm<double>(int, int, int, bool, bool, const double*, const double*, double*);

} // namespace graphc::cpu::small
