//===- runtime/cuda/SolverCalls.cpp - Factorizations and what uses them --===//
//
// Call<T>'s solve, cholesky, lu, qr, inverse, det and logdet (LibraryCall.h):
// cuSOLVER per item, or cuBLAS's batched LU and QR for batches of small matrices
// (with a helper kernel forming Q), beside SmallBatched's Cholesky and tiny LU and
// ClusterQr's one-kernel QR. Where LAPACK's answer depends on the orientation (LU
// pivots, QR), the row-major matrix is transposed into the workspace first.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/LibraryCall.h"

#include "runtime/cuda/ClusterQr.h"
#include "runtime/cuda/SmallBatched.h"

namespace graphc::cuda::library {

using ir::Op;

template <typename T> void Call<T>::solve(const T* a, const T* rhs, T* x) {
  Matrices mx = result(0);
  if (route_ == Route::TinyLu)
    return kernels_.small().luSolve(mx.batch, mx.rows, mx.cols, a, rhs, x, info_, stream_);
  LuFactors lu = factorLu(a, info_);
  if (mx.size() == 0)
    return;
  T* cm = static_cast<T*>(s_.second); // the right-hand sides, column-major
  transpose(mx.batch, mx.rows, mx.cols, rhs, cm);
  solveLu(lu, CUBLAS_OP_N, cm);
  transpose(mx.batch, mx.cols, mx.rows, cm, x);
}

/// potrf is much faster on column-major lower factors (1.3 ms against 3.7 ms for
/// upper at n = 3000 f64 on an H200). A row-major symmetric A is its own
/// column-major view, and the column-major lower factor L (A = L L') read row-major
/// is L': the upper factor `upper` asks for. The lower one is its transpose.
template <typename T> void Call<T>::cholesky(const T* a, T* l) {
  bool upper = flag("upper");
  Matrices m = operand(0);
  if (route_ == Route::SmallCholesky)
    return kernels_.small().cholesky(m.batch, m.rows, a, l, upper, info_, stream_);
  T* f = upper ? l : static_cast<T*>(s_.matrix);
  copy(a, f, m);
  if (m.size() == 0)
    return;
  if (route_ == Route::Potrf)
    GRAPHC_CUDA_CHECK(Lib<T>::potrf(solver_, CUBLAS_FILL_MODE_LOWER, toInt(m.rows), f, m.ld(),
                                    static_cast<T*>(s_.work), s_.lwork, info_));
  else
    GRAPHC_CUDA_CHECK(Lib<T>::potrfBatched(solver_, CUBLAS_FILL_MODE_LOWER, toInt(m.rows),
                                           pointers(f, m, 0), m.ld(), info_, toInt(m.batch)));
  if (!upper)
    transpose(m.batch, m.rows, m.cols, f, l);
  int upperPart = !upper;
  launch("zeroTriangle", m.batch * m.size(), {&m.batch, &m.rows, &m.cols, &l, &upperPart});
}

template <typename T> void Call<T>::lu(const T* a, T* p, T* l, T* u) {
  Matrices m = operand(0);
  T* f = factorLu(a, s_.info).factors;
  if (m.size() == 0)
    return;
  int *pivots = s_.pivots, *info = s_.info;
  if (route_ == Route::BatchedLu)
    launch("refactorSingular", m.batch, {&m.batch, &m.rows, &a, &f, &pivots, &info});
  zero(p, m);
  launch("permutation", m.batch * m.rows, {&m.batch, &m.rows, &pivots, &p});
  unpackTriangle(m.batch, m.rows, m.cols, f, m.rows, m.size(), l, /*unitLower=*/1);
  unpackTriangle(m.batch, m.rows, m.cols, f, m.rows, m.size(), u, /*unitLower=*/0);
}

/// Reduced QR of A: in one cluster kernel where it takes the shape (ClusterQr.h),
/// else with A transposed into the workspace first (so that LAPACK sees A, not
/// A'): geqrf, R from its upper part, orgqr, Q back to row-major. A null `q`
/// (nothing reads Q) skips forming Q.
template <typename T> void Call<T>::qr(const T* a, T* q, T* r) {
  Matrices ma = operand(0), mq = result(0), mr = result(1);
  int64_t k = mq.cols;
  if (k == 0) {
    if (q)
      zero(q, mq);
    return zero(r, mr);
  }
  if (route_ == Route::ClusterQr)
    return kernels_.qr().qr(ma.batch, ma.rows, ma.cols, a, q, r, stream_);
  T* f = static_cast<T*>(s_.matrix);
  T* tau = static_cast<T*>(s_.second);
  transpose(ma.batch, ma.rows, ma.cols, a, f);
  if (route_ == Route::BatchedQr)
    return batchedQr(f, tau, q, r);
  for (int64_t b = 0; b < ma.batch; ++b)
    GRAPHC_CUDA_CHECK(Lib<T>::geqrf(solver_, toInt(ma.rows), toInt(ma.cols), f + b * ma.size(),
                                    toInt(ma.rows), tau + b * k, static_cast<T*>(s_.work), s_.lwork,
                                    s_.info + b));
  unpackTriangle(ma.batch, k, ma.cols, f, ma.rows, ma.size(), r, /*unitLower=*/0);
  if (!q)
    return;
  for (int64_t b = 0; b < ma.batch; ++b)
    GRAPHC_CUDA_CHECK(Lib<T>::orgqr(solver_, toInt(ma.rows), toInt(k), toInt(k), f + b * ma.size(),
                                    toInt(ma.rows), tau + b * k, static_cast<T*>(s_.work), s_.lwork,
                                    s_.info + b));
  // Q is column-major rows x k with leading dimension rows, i.e. row-major k x rows.
  launchTranspose(ma.batch, k, ma.rows, f, ma.size(), q, mq.size());
}

/// A^-1 = X with A' X' = I: getrs with op T on A's LU factors leaves X' in
/// column-major order, which is X row-major.
template <typename T> void Call<T>::inverse(const T* a, T* x) {
  Matrices m = operand(0);
  if (route_ == Route::TinyLu)
    return kernels_.small().luSolve<T>(m.batch, m.rows, m.rows, a, nullptr, x, info_, stream_);
  LuFactors lu = factorLu(a, info_);
  if (m.size() == 0)
    return;
  launch("identity", m.batch * m.size(), {&m.batch, &m.rows, &x});
  solveLu(lu, CUBLAS_OP_T, x);
}

template <typename T> void Call<T>::determinant(const T* a, T* out) {
  Matrices m = operand(0);
  T* lu = factorLu(a, s_.info).factors;
  int* pivots = s_.pivots;
  int logAbs = n_.op() == Op::Logdet;
  launch("luDeterminant", m.batch, {&m.batch, &m.rows, &lu, &pivots, &out, &logAbs});
}

/// getrf of A itself (transposed into the workspace, so the pivots and U(i,i)
/// are LAPACK's on row-major A), pivots in the workspace, info in `info`: one
/// getrfBatched for a batch of small matrices (its info is per item, on the
/// device, LAPACK's), else cuSOLVER per item.
template <typename T> typename Call<T>::LuFactors Call<T>::factorLu(const T* a, int* info) {
  Matrices m = operand(0);
  LuFactors lu{static_cast<T*>(s_.matrix), nullptr};
  if (m.size() == 0)
    return lu;
  transpose(m.batch, m.rows, m.cols, a, lu.factors);
  if (route_ == Route::BatchedLu) {
    lu.items = pointers(lu.factors, m, 0);
    GRAPHC_CUDA_CHECK(Lib<T>::getrfBatched(blas_, toInt(m.rows), lu.items, m.ld(), s_.pivots, info,
                                           toInt(m.batch)));
    return lu;
  }
  for (int64_t b = 0; b < m.batch; ++b)
    GRAPHC_CUDA_CHECK(Lib<T>::getrf(solver_, toInt(m.rows), toInt(m.rows),
                                    lu.factors + b * m.size(), m.ld(), static_cast<T*>(s_.work),
                                    s_.pivots + b * m.rows, info + b));
  return lu;
}

/// op(A) X = B in place on the column-major n x cols right-hand sides `b` (cols
/// from the result type), from factorLu's factors. Singular items were reported
/// by getrf; getrsBatched's own info is a host word for invalid arguments only.
template <typename T> void Call<T>::solveLu(const LuFactors& lu, cublasOperation_t op, T* b) {
  Matrices ma = operand(0), mx = result(0);
  int n = toInt(ma.rows), cols = toInt(mx.cols);
  if (lu.items) {
    int invalid = 0;
    GRAPHC_CUDA_CHECK(Lib<T>::getrsBatched(blas_, op, n, cols, lu.items, ma.ld(), s_.pivots,
                                           pointers(b, mx, mx.batch), ma.ld(), &invalid,
                                           toInt(mx.batch)));
    return checkArguments("getrsBatched", invalid);
  }
  for (int64_t i = 0; i < ma.batch; ++i)
    GRAPHC_CUDA_CHECK(Lib<T>::getrs(solver_, op, n, cols, lu.factors + i * ma.size(), ma.ld(),
                                    s_.pivots + i * ma.rows, b + i * mx.size(), ma.ld(),
                                    s_.info + i));
}

/// The batched tail of qr() on the column-major copies `f`: geqrfBatched (its info
/// is a host word for invalid arguments only: QR cannot fail), R from its upper
/// part, Q formed from the reflectors straight into row-major `q` (cuBLAS has no
/// batched orgqr).
template <typename T> void Call<T>::batchedQr(T* f, T* tau, T* q, T* r) {
  Matrices ma = operand(0);
  int64_t k = std::min(ma.rows, ma.cols);
  int invalid = 0;
  GRAPHC_CUDA_CHECK(Lib<T>::geqrfBatched(blas_, toInt(ma.rows), toInt(ma.cols), pointers(f, ma, 0),
                                         toInt(ma.rows), pointers(tau, ma.batch, k, ma.batch),
                                         &invalid, toInt(ma.batch)));
  checkArguments("geqrfBatched", invalid);
  unpackTriangle(ma.batch, k, ma.cols, f, ma.rows, ma.size(), r, /*unitLower=*/0);
  int64_t stride = ma.size();
  if (q)
    launch("householderQ", ma.batch * k, {&ma.batch, &ma.rows, &k, &f, &stride, &tau, &q});
}

template void Call<float>::solve(const float*, const float*, float*);
template void Call<float>::cholesky(const float*, float*);
template void Call<float>::lu(const float*, float*, float*, float*);
template void Call<float>::qr(const float*, float*, float*);
template void Call<float>::inverse(const float*, float*);
template void Call<float>::determinant(const float*, float*);
template void Call<double>::solve(const double*, const double*, double*);
template void Call<double>::cholesky(const double*, double*);
template void Call<double>::lu(const double*, double*, double*, double*);
template void Call<double>::qr(const double*, double*, double*);
template void Call<double>::inverse(const double*, double*);
template void Call<double>::determinant(const double*, double*);

} // namespace graphc::cuda::library
