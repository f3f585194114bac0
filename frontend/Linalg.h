//===- frontend/Linalg.h - Linear algebra -----------------------*- C++ -*-===//
//
// Matrix functions of the DSL, batched over leading axes. Operands of the two-operand
// functions (matmul, solve, triangular_solve) broadcast their batch axes NumPy-style;
// the matrix axes must agree. Nothing is chosen here: `solve` records a plain solve
// and the compiler decides (Cholesky when it can prove the matrix SPD, LU otherwise).
//
//   Tensor z   = solve(cyy + 0.1 * eye(d), obs - y);
//   auto [q, r] = qr(a);
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/Tensor.h"

namespace graphc {

/// Flags of matmul: multiply by the transpose of an operand without forming it.
struct MatmulOptions {
  bool transpose_a = false;
  bool transpose_b = false;
};

/// Matrix product a * b (or with transposed operands).
Tensor matmul(const Tensor& a, const Tensor& b, MatmulOptions options = {},
              SrcLoc loc = SrcLoc::current());
/// x with a * x = b, for square a.
Tensor solve(const Tensor& a, const Tensor& b, SrcLoc loc = SrcLoc::current());

/// The Cholesky factor of an SPD matrix: lower L with a = L*L' (or upper U, a = U'*U).
Tensor cholesky(const Tensor& a, bool upper = false, SrcLoc loc = SrcLoc::current());

/// Flags of triangular_solve. Note the default: the matrix is lower triangular.
struct TriangularSolveOptions {
  bool lower = true;          ///< read the lower (else upper) triangle of a
  bool right_side = false;    ///< solve x * a = b (else a * x = b)
  bool transpose_a = false;   ///< use a' instead of a
  bool unit_diagonal = false; ///< assume ones on the diagonal
};

/// x with op(a) * x = b (or x * op(a) = b), a triangular.
Tensor triangular_solve(const Tensor& a, const Tensor& b, TriangularSolveOptions options = {},
                        SrcLoc loc = SrcLoc::current());

/// Results of lu(): the factors of a = p * l * u (the ir op's three results, in order).
struct LuResult {
  Tensor p; ///< permutation matrix
  Tensor l; ///< unit lower triangular
  Tensor u; ///< upper triangular
};
/// LU factorization with partial pivoting of square matrices.
LuResult lu(const Tensor& a, SrcLoc loc = SrcLoc::current());

/// Results of qr(): a = q * r, reduced (q is m x k, r is k x n, k = min(m, n)).
struct QrResult {
  Tensor q;
  Tensor r;
};
/// Reduced QR factorization.
QrResult qr(const Tensor& a, SrcLoc loc = SrcLoc::current());

/// The inverse of square matrices.
Tensor inverse(const Tensor& a, SrcLoc loc = SrcLoc::current());
/// The determinant (batch shape).
Tensor det(const Tensor& a, SrcLoc loc = SrcLoc::current());
/// log |det a| (batch shape).
Tensor logdet(const Tensor& a, SrcLoc loc = SrcLoc::current());
/// The sum of the diagonal (batch shape).
Tensor trace(const Tensor& a, SrcLoc loc = SrcLoc::current());

/// x * x' for x [..., n, k], or x' * x with `transpose` (x [..., k, n]): the full
/// symmetric [..., n, n] product through BLAS syrk. matmul(x, x, {.transpose_b = true})
/// compiles to the same.
Tensor syrk(const Tensor& x, bool transpose = false, SrcLoc loc = SrcLoc::current());

/// Structure assertions on square matrices [..., n, n] (any numeric dtype). Each
/// returns `a` unchanged and tells the compiler a fact it cannot prove about a
/// run-time matrix, so that a solve picks the method that fact allows:
///
///   Tensor x = solve(assume_spd(cov), b); // Cholesky instead of LU
///
/// The assertion is trusted, not checked: a false one gives wrong results, except
/// assume_spd, whose Cholesky fails on a matrix that is not positive definite and
/// falls back to LU (only the lower triangle is read, so the matrix must be symmetric).
Tensor assume_spd(const Tensor& a, SrcLoc loc = SrcLoc::current());
/// Asserts a == a'.
Tensor assume_symmetric(const Tensor& a, SrcLoc loc = SrcLoc::current());
/// Asserts zeros above the diagonal.
Tensor assume_lower(const Tensor& a, SrcLoc loc = SrcLoc::current());
/// Asserts zeros below the diagonal.
Tensor assume_upper(const Tensor& a, SrcLoc loc = SrcLoc::current());
/// Asserts zeros off the diagonal.
Tensor assume_diagonal(const Tensor& a, SrcLoc loc = SrcLoc::current());

} // namespace graphc
