//===- codegen/CudaHelpers.cpp - The device helpers of generated kernels -===//
//
// The CUDA C++ every generated kernel starts with (its typedefs) and the device
// helpers a kernel may need (CudaEmitter.h's Helper flags), each printed once.
//
//===----------------------------------------------------------------------===//
#include "codegen/CudaEmitter.h"

namespace graphc::codegen::detail {

const char* typedefsText() {
  return R"(typedef int i32;
typedef long long i64;
typedef unsigned u32;
typedef unsigned long long u64;
typedef float f32;
typedef double f64;
)";
}

const char* helperText(Helper h) {
  switch (h) {
  case kVec:
    return R"(// N consecutive elements, loaded and stored as one aligned vector.
template <typename T, int N> struct alignas(sizeof(T) * N) gc_vec { T x[N]; };
)";
  case kBest:
    return R"(// The running extreme of max/min/argmax/argmin: value and position (-1: none),
// the position of the kernel's index type I (i32 where every index fits).
template <typename T, typename I> struct gc_best { T v; I i; };
// b replaces a when it comes first in the order: NaN, then the larger (Max) or
// smaller value; ties go to the lower position.
template <bool Max, typename T, typename I>
__device__ __forceinline__ gc_best<T, I> gc_pick(gc_best<T, I> a, gc_best<T, I> b) {
  if (b.i < 0) return a;
  if (a.i < 0) return b;
  bool an = a.v != a.v, bn = b.v != b.v;
  bool takeB = (an || bn) ? (an && bn ? b.i < a.i : bn)
                          : (b.v == a.v ? b.i < a.i : (Max ? b.v > a.v : b.v < a.v));
  return takeB ? b : a;
}
// a with v at position j added, j after every position a has seen (a lane's
// points come in increasing j): the same order as gc_pick, in fewer steps.
template <bool Max, typename T, typename I>
__device__ __forceinline__ gc_best<T, I> gc_push(gc_best<T, I> a, T v, I j) {
  bool take = a.i < 0 || (a.v == a.v && !(Max ? v <= a.v : v >= a.v));
  return {take ? v : a.v, take ? j : a.i};
}
template <typename T, typename I>
__device__ __forceinline__ gc_best<T, I> gc_shfl_xor(gc_best<T, I> a, int m) {
  return {__shfl_xor_sync(0xffffffffu, a.v, m), __shfl_xor_sync(0xffffffffu, a.i, m)};
}
)";
  case kIntDiv:
    return R"(// Integer division truncating toward zero; MIN / -1 wraps; b == 0 is error `code`.
template <typename T, typename U>
__device__ T gc_div(T a, T b, int* error, int code) {
  if (b == 0) { atomicCAS(error, 0, code); return 0; }
  if (b == T(-1)) return (T)(U(0) - (U)a);
  return a / b;
}
)";
  case kIntRem:
    return R"(// The integer remainder truncated toward zero (C's %); MIN % -1 is 0; b == 0 is
// error `code`.
template <typename T>
__device__ T gc_trem(T a, T b, int* error, int code) {
  if (b == 0) { atomicCAS(error, 0, code); return 0; }
  if (b == T(-1)) return 0;
  return a % b;
}
)";
  case kIntPow:
    return R"(// Integer power by squaring, wrapping; a negative exponent is error `code`.
template <typename T, typename U>
__device__ T gc_pow(T base, T e, int* error, int code) {
  if (e < 0) { atomicCAS(error, 0, code); return 0; }
  U r = 1, b = (U)base;
  for (; e > 0; e >>= 1) {
    if (e & 1) r *= b;
    b *= b;
  }
  return (T)r;
}
)";
  case kMoments:
    return R"(// var: the count n of a lane's points and the sums s1, s2 of their deviations
// from a shift k (its first point) and of their squares; centered (gc_center), k
// is their mean and s2 the sum of squared deviations from it, the form states merge
// in (Chan, Golub and LeVeque).
struct gc_moments { f64 n, k, s1, s2; };
__device__ __forceinline__ gc_moments gc_push(gc_moments a, f64 x) {
  if (a.n == 0) a.k = x;
  const f64 d = x - a.k;
  return {a.n + 1, a.k, a.s1 + d, a.s2 + d * d};
}
__device__ __forceinline__ gc_moments gc_center(gc_moments a) {
  if (a.n == 0) return a;
  const f64 d = a.s1 / a.n;
  return {a.n, a.k + d, 0, a.s2 - a.s1 * d};
}
__device__ __forceinline__ gc_moments gc_merge(gc_moments a, gc_moments b) {
  if (b.n == 0) return a;
  if (a.n == 0) return b;
  const f64 n = a.n + b.n, d = b.k - a.k, f = b.n / n;
  return {n, a.k + d * f, 0, a.s2 + b.s2 + d * d * a.n * f};
}
// b (mean bk, squares bs2) holds as many points as a: no division.
__device__ __forceinline__ gc_moments gc_merge_even(gc_moments a, f64 bk, f64 bs2) {
  const f64 d = bk - a.k;
  return {a.n + a.n, (a.k + bk) * 0.5, 0, a.s2 + bs2 + d * d * (a.n * 0.5)};
}
__device__ __forceinline__ gc_moments gc_shfl_xor(gc_moments a, int m) {
  return {__shfl_xor_sync(0xffffffffu, a.n, m), __shfl_xor_sync(0xffffffffu, a.k, m), 0,
          __shfl_xor_sync(0xffffffffu, a.s2, m)};
}
// a merged with the state of lane ^ m, the lower lane's first: both lanes get the
// same bits (gc_merge is not symmetric in its rounding; gc_merge_even is).
__device__ __forceinline__ gc_moments gc_merge_lanes(gc_moments a, int m) {
  const gc_moments b = gc_shfl_xor(a, m);
  return threadIdx.x & m ? gc_merge(b, a) : gc_merge(a, b);
}
)";
  case kExtreme:
    return R"(// The running float max (Max) or min of max/min: NaN wins, then the first NaN.
template <bool Max, typename T> __device__ __forceinline__ T gc_extreme(T a, T b) {
  return a != a ? a : b != b ? b : Max ? (b > a ? b : a) : (b < a ? b : a);
}
)";
  case kOnline:
    return R"(// An online max and sum: m, the max of a segment's points y so far, and s, the sum
// of exp(y - m) over them, in one pass over the points. The points come G at a time
// (those past the segment's end as -inf), and s is rescaled where m grows. A point of
// -inf adds nothing; where every point is -inf, gc_online_sum gives NaN, as the sum
// of exp(y - max) does (exp(-inf + inf)).
// s, a sum kept against max m, kept against the max n >= m instead. The factor in
// T, as each exp(y - m) is: in f64, logsumexp over rows of 50257 f32 took 0.1594 ms
// on an H100, against 0.1512.
template <typename T> __device__ __forceinline__ f64 gc_online_scale(f64 s, T m, T n) {
  return s == 0 ? 0 : s * (f64)exp(m - n);
}
template <int G, typename T>
__device__ __forceinline__ void gc_online_push(T& m, f64& s, const T (&y)[G]) {
  T n = m;
#pragma unroll
  for (int g = 0; g < G; ++g) n = gc_extreme<true>(n, y[g]);
  if (!(n == m)) {
    s = gc_online_scale(s, m, n);
    m = n;
  }
  if (isinf(m) && m < 0) return; // every point so far is -inf
#pragma unroll
  for (int g = 0; g < G; ++g) s += (f64)exp(y[g] - m);
}
template <typename T> __device__ __forceinline__ f64 gc_online_sum(T m, f64 s, i64 points) {
  return points > 0 && isinf(m) && m < 0 ? __longlong_as_double(0x7ff8000000000000ULL) : s;
}
)";
  case kCopyAsync:
    return R"(// 16 bytes from global to shared memory, the thread going on while they come
// (cp.async, compute capability 8.0 on), and the wait for all of the thread's.
__device__ __forceinline__ void gc_copy_async(void* to, const void* from) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"((u32)__cvta_generic_to_shared(to)), "l"(from));
#else
  *(float4*)to = *(const float4*)from;
#endif
}
__device__ __forceinline__ void gc_copy_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}
)";
  }
  return "";
}

} // namespace graphc::codegen::detail
