//===- runtime/cuda/BlasCalls.cpp - Products and triangular solves -------===//
//
// Call<T>'s matmul, syrk and triangular_solve (LibraryCall.h): cuBLAS's gemm and
// trsm, batched where cuBLAS has a batched routine, beside SmallBatched's kernels
// for small and tall shapes, the panel solve of medium triangles and the blocked
// solve of BlockedSolve.h.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/LibraryCall.h"

#include "runtime/cuda/SmallBatched.h"

namespace graphc::cuda::library {

template <typename T> void Call<T>::matmul(const T* a, const T* b, T* c) {
  bool ta = flag("transpose_a"), tb = flag("transpose_b");
  Matrices ma = operand(0), mb = operand(1), mc = result(0);
  int64_t k = ta ? ma.rows : ma.cols;
  if (mc.size() == 0)
    return;
  if (k == 0)
    return zero(c, mc);
  // Row-major C = op(A) op(B) is column-major C' = op(B)' op(A)'.
  GRAPHC_CUDA_CHECK(Lib<T>::gemmStridedBatched(
      blas_, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, toInt(mc.cols),
      toInt(mc.rows), toInt(k), &one_, b, mb.ld(), mb.size(), a, ma.ld(), ma.size(), &zero_, c,
      mc.ld(), mc.size(), toInt(mc.batch)));
}

/// X X' (X' X with `transpose`): syrk fills one triangle, mirrored onto the other.
template <typename T> void Call<T>::syrk(const T* x, T* c) {
  bool trans = flag("transpose");
  Matrices mx = operand(0), mc = result(0);
  int64_t k = trans ? mx.rows : mx.cols;
  if (mc.size() == 0)
    return;
  if (k == 0)
    return zero(c, mc);
  const SmallBatched& small = kernels_.small();
  if (route_ == Route::TallGram)
    return small.tallGram(mc.batch, k, mc.rows, x, s_.partials, c, stream_);
  if (route_ == Route::SmallGram)
    return small.gram(mc.batch, mc.rows, k, x, c, stream_);
  // X row-major is X' column-major: X X' = (X')' X' is syrk with op T, or one
  // gemm with ops T, N.
  if (route_ == Route::GemmGram)
    GRAPHC_CUDA_CHECK(Lib<T>::gemmStridedBatched(
        blas_, trans ? CUBLAS_OP_N : CUBLAS_OP_T, trans ? CUBLAS_OP_T : CUBLAS_OP_N, toInt(mc.rows),
        toInt(mc.rows), toInt(k), &one_, x, mx.ld(), mx.size(), x, mx.ld(), mx.size(), &zero_, c,
        mc.ld(), mc.size(), toInt(mc.batch)));
  else
    for (int64_t b = 0; b < mc.batch; ++b)
      GRAPHC_CUDA_CHECK(Lib<T>::syrk(
          blas_, CUBLAS_FILL_MODE_LOWER, trans ? CUBLAS_OP_N : CUBLAS_OP_T, toInt(mc.rows),
          toInt(k), &one_, x + b * mx.size(), mx.ld(), &zero_, c + b * mc.size(), mc.ld()));
  // Column-major lower is row-major upper.
  kernels_[fmt::format("mirrorUpper<{}>", Lib<T>::name)].launch(
      tiledLaunch(mc.batch, mc.rows, mc.rows, stream_), {&mc.batch, &mc.rows, &c});
}

/// op(A) X = B is X' op(A)' = B' column-major: the side and triangle flip.
template <typename T> void Call<T>::triangularSolve(const T* a, const T* rhs, T* x) {
  bool lower = flag("lower"), right = flag("right_side");
  bool trans = flag("transpose_a"), unit = flag("unit_diagonal");
  Matrices ma = operand(0), mx = result(0);
  const SmallBatched& small = kernels_.small();
  if (route_ == Route::SmallTrsm)
    return small.triangularSolve(mx.batch, ma.rows, mx.cols, a, rhs, x, {lower, trans, unit}, info_,
                                 stream_);
  if (!unit) // run() zeroed the info words
    launch("firstZeroDiagonal", ma.batch * ma.rows, {&ma.batch, &ma.rows, &a, &info_});
  if (route_ == Route::BlockedTrsm) {
    BlockedSolve blocked = *blockedSolve(n_);
    for (int64_t b = 0; b < mx.batch; ++b)
      solveByBlocks(blas_, small, stream_, blocked, a + b * ma.size(), rhs + b * mx.size(),
                    x + b * mx.size(), static_cast<T*>(s_.matrix));
    return;
  }
  if (route_ == Route::PanelTrsm)
    return small.panelSolve(mx.batch, mx.rows, mx.cols, a, rhs, x, {lower, trans, unit}, right,
                            stream_);
  copy(rhs, x, mx);
  if (mx.size() == 0)
    return;
  auto side = right ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT;
  auto uplo = lower ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  auto op = trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  auto diag = unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
  int m = toInt(mx.cols), n = toInt(mx.rows);
  // One vector: SmallBatched's kernel, 0.14 ms at n = 3000 (H200, f64), against
  // 0.19 for trsv and 1.48 for trsm. X op(A) = B for a row is op(A)' X' = B'.
  if (route_ == Route::VectorTrsm) {
    small.solveVector(mx.batch, ma.rows, a, ma.size(), {lower, trans != right, unit}, x, mx.size(),
                      s_.info, stream_);
    return;
  }
  if (route_ == Route::Trsm)
    GRAPHC_CUDA_CHECK(
        Lib<T>::trsm(blas_, side, uplo, op, diag, m, n, &one_, a, ma.ld(), x, mx.ld()));
  else
    GRAPHC_CUDA_CHECK(Lib<T>::trsmBatched(blas_, side, uplo, op, diag, m, n, &one_,
                                          pointers(const_cast<T*>(a), ma, 0), ma.ld(),
                                          pointers(x, mx, mx.batch), mx.ld(), toInt(mx.batch)));
}

template void Call<float>::matmul(const float*, const float*, float*);
template void Call<float>::syrk(const float*, float*);
template void Call<float>::triangularSolve(const float*, const float*, float*);
template void Call<double>::matmul(const double*, const double*, double*);
template void Call<double>::syrk(const double*, double*);
template void Call<double>::triangularSolve(const double*, const double*, double*);

} // namespace graphc::cuda::library
