//===- runtime/cuda/BlockedSolve.cpp - Large triangular solves by blocks ---===//
//
// The recursion of BlockedSolve.h over cuBLAS gemm. Its kernels, inverting the
// diagonal blocks and solving for a single vector, are in kernels/BlockedSolve.cu
// (SmallBatched's module, launched by SmallBatched::invertTriangles() and
// SmallBatched::solveVector()).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/BlockedSolve.h"

#include "passes/RoutePolicy.h"

#include "runtime/cuda/Check.h"
#include "runtime/cuda/Routines.h"
#include "runtime/cuda/SmallBatched.h"

namespace graphc::cuda {

namespace {

int64_t blocksOf(int64_t n) {
  return (n + kSolveBlock - 1) / kSolveBlock;
}

/// The recursion of solveByBlocks over the index range [lo, hi) of T,
/// block-aligned: the columns of B and X (T on the right) or their rows (on the
/// left). B (updated in place) and X are separate m x n column-major matrices.
template <typename T> class Recursion {
public:
  Recursion(cublasHandle_t blas, const BlockedSolve& s, const T* t, T* b, T* x, const T* inverses)
      : blas_(blas), s_(s), t_(t), b_(b), x_(x), inverses_(inverses),
        op_(s.transpose ? CUBLAS_OP_T : CUBLAS_OP_N), m_(static_cast<int>(s.m)),
        // op(T) is upper when exactly one of upper and transpose holds. X op(T) =
        // B with op(T) upper, and op(T) X = B with op(T) lower, start at block 0.
        forward_((s.upper != s.transpose) != s.left) {}

  void solve(int64_t lo, int64_t hi) {
    int64_t blocks = (hi - lo + kSolveBlock - 1) / kSolveBlock;
    if (blocks == 1)
      return solveBlock(lo, hi);
    int64_t mid = lo + (blocks + 1) / 2 * kSolveBlock;
    if (forward_) {
      solve(lo, mid);
      update(lo, mid, mid, hi);
      solve(mid, hi);
    } else {
      solve(mid, hi);
      update(mid, hi, lo, mid);
      solve(lo, mid);
    }
  }

private:
  /// X_j = B_j op(T_jj)^-1 (or op(T_jj)^-1 B_j) through the block's inverse.
  void solveBlock(int64_t lo, int64_t hi) {
    const T* inverse = inverses_ + lo / kSolveBlock * kSolveBlock * kSolveBlock;
    gemm(lo, hi, inverse, static_cast<int>(kSolveBlock), one_, zero_, b_, x_);
  }

  /// B_to -= X_from op(T)(from.., to..) (or op(T)(to.., from..) X_from).
  void update(int64_t from, int64_t fromEnd, int64_t to, int64_t toEnd) {
    // op(T)(i, j) is T(i, j), or T(j, i) read transposed.
    int64_t r = s_.left ? to : from, c = s_.left ? from : to;
    const T* m = s_.transpose ? t_ + c + r * s_.size() : t_ + r + c * s_.size();
    gemm(from, fromEnd, m, static_cast<int>(s_.size()), minusOne_, one_, x_, b_, to, toEnd);
  }

  /// out(part [to, toEnd)) = alpha (in(part [lo, hi)) op(m)) + beta out(...) with T
  /// on the right, or alpha op(m) in(...) + beta out(...) on the left; the part is
  /// [lo, hi) when `to` is -1. A part is a block of columns, or of rows on the left.
  void gemm(int64_t lo, int64_t hi, const T* m, int ldm, T alpha, T beta, const T* in, T* out,
            int64_t to = -1, int64_t toEnd = -1) {
    if (to < 0)
      to = lo, toEnd = hi;
    int k = static_cast<int>(hi - lo), w = static_cast<int>(toEnd - to);
    auto part = [&](auto* base, int64_t at) { return base + (s_.left ? at : at * s_.m); };
    if (s_.left)
      GRAPHC_CUDA_CHECK(Lib<T>::gemm(blas_, op_, CUBLAS_OP_N, w, static_cast<int>(s_.n), k, &alpha,
                                     m, ldm, part(in, lo), m_, &beta, part(out, to), m_));
    else
      GRAPHC_CUDA_CHECK(Lib<T>::gemm(blas_, CUBLAS_OP_N, op_, m_, w, k, &alpha, part(in, lo), m_, m,
                                     ldm, &beta, part(out, to), m_));
  }

  cublasHandle_t blas_;
  const BlockedSolve& s_;
  const T* t_;
  T* b_;
  T* x_;
  const T* inverses_;
  cublasOperation_t op_;
  int m_;
  bool forward_;
  const T one_ = T(1), zero_ = T(0), minusOne_ = T(-1);
};

} // namespace

bool solvesByBlocks(const BlockedSolve& s) {
  return passes::preferBlockedSolve(passes::RoutePolicy::gpu(), s.size(), s.left ? s.n : s.m) &&
         s.m <= INT32_MAX && s.n <= INT32_MAX;
}

int64_t blockedSolveWorkspace(const BlockedSolve& s) {
  return blocksOf(s.size()) * kSolveBlock * kSolveBlock + s.m * s.n;
}

template <typename T>
void solveByBlocks(cublasHandle_t blas, const SmallBatched& small, cudaStream_t stream,
                   const BlockedSolve& s, const T* t, const T* b, T* x, T* workspace) {
  T* updated = workspace + blocksOf(s.size()) * kSolveBlock * kSolveBlock;
  GRAPHC_CUDA_CHECK(
      cudaMemcpyAsync(updated, b, sizeof(T) * s.m * s.n, cudaMemcpyDeviceToDevice, stream));
  small.invertTriangles(s.size(), kSolveBlock, t, s.size(), s.upper, s.unit, workspace, stream);
  Recursion<T>(blas, s, t, updated, x, workspace).solve(0, s.size());
}

template void solveByBlocks<float>(cublasHandle_t, const SmallBatched&, cudaStream_t,
                                   const BlockedSolve&, const float*, const float*, float*, float*);
template void solveByBlocks<double>(cublasHandle_t, const SmallBatched&, cudaStream_t,
                                    const BlockedSolve&, const double*, const double*, double*,
                                    double*);

} // namespace graphc::cuda
