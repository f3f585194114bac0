//===- runtime/cpu/SmallLinalg.h - Factorizations of tiny matrices -*- C++ -*-===//
//
// Internal to the cpu backend. LU with partial pivoting, Cholesky and the solves
// with their factors (and the products) for row-major matrices of order up to
// kMaxSmallN, as plain
// loops that the compiler unrolls for each n up to 8 (and as loops over a run-time
// n up to kMaxSmallN): for batches of tiny systems one LAPACK call per matrix costs
// far more than the arithmetic (runtime/cpu/Linalg.cpp splits such batches over
// the thread pool and calls these instead).
//
// They compute what LAPACK's unblocked routines compute (dgetf2, dgetrs, dpotf2,
// dtrsm), so the results agree with LAPACK's up to rounding, and report the same
// `info`: getrf the first zero pivot (1-based, factoring on), potrf the first
// leading minor that is not positive definite (the matrix is then left partly
// factored; a NaN pivot is not a failure but makes the factor NaN, as in
// OpenBLAS's potrf, which tests `<= 0`). Pivots are chosen as LAPACK's idamax chooses
// them, the first largest |a(i,k)|, so they are LAPACK's. NaN and Inf follow IEEE
// arithmetic.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace graphc::cpu::small {

/// The largest n the kernels here take; LAPACK is faster beyond it.
constexpr int64_t kMaxSmallN = 16;

/// LU with partial pivoting of the n x n matrix `a` in place (L unit lower below
/// the diagonal, U on and above it); `ipiv[k]` is the 1-based row swapped with
/// row k + 1, as getrf's. Returns 0, or the 1-based index of the first zero pivot.
template <typename T> int getrf(int n, T* a, int* ipiv);

/// Solves A X = B in place of `b` (n x `cols`, rows `ld` apart) from getrf's `lu`,
/// `ipiv`.
template <typename T> void getrs(int n, int cols, int64_t ld, const T* lu, const int* ipiv, T* b);

/// Cholesky of the symmetric n x n `a` in place: L with A = L L' in the lower
/// triangle (read from the lower triangle), or with `upper` U = L' in the upper one
/// (read from the upper triangle); the other triangle is set to zero. Returns 0,
/// or the 1-based order of the first leading minor that is not positive definite.
template <typename T> int potrf(int n, bool upper, T* a);

/// Solves op(A) X = B in place of `b` (n x `cols`, rows `ld` apart) for the
/// triangular n x n `a`:
/// op(A) = A or A' (`trans`), A lower or upper, its diagonal read or taken as ones
/// (`unit`). The diagonal has no zeros (the caller checks).
template <typename T>
void trsm(int n, int cols, int64_t ld, bool lower, bool trans, bool unit, const T* a, T* b);

/// C = op(A) op(B) for the m x n `c`, op(A) m x k (A stored k x m with `transA`),
/// op(B) k x n (B stored n x k with `transB`); sums over k in order. With B = A
/// and transB = !transA it is syrk's C = X X' (or X' X), exactly symmetric.
template <typename T>
void gemm(int m, int n, int k, bool transA, bool transB, const T* a, const T* b, T* c);

} // namespace graphc::cpu::small
