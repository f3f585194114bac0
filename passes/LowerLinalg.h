//===- passes/LowerLinalg.h - Structure-aware solve lowering ----*- C++ -*-===//
//
// Picks the cheapest sound method for each linear solve, from the structure the
// graph proves (passes/Structure.h). Each rule is a match + expand:
//
//   matmul(inverse(A), B)       -> solve(A, B)
//   matmul(X, X) {transpose_b}  -> syrk(X)  (X*X', and X'*X -> syrk(X) {transpose});
//                                  here rather than in canonicalize, so the structure
//                                  rules see both spellings and the pass that picks
//                                  library calls picks this one too
//   solve(identity, B)          -> B
//   solve(diagonal D, B)        -> B / diag_part(D)
//   solve(triangular T, B)      -> triangular_solve(T, B)
//   solve(D + c*U*U', B)        -> Woodbury with a k x k Cholesky, when the cost model
//                                  says so (D a positive diagonal, U of rank k << n)
//   logdet(D + c*U*U'), det     -> logdet(D) + logdet(I + c*U'D^-1 U) (the matrix
//                                  determinant lemma) through the k x k Cholesky the
//                                  Woodbury solves of the matrix share, where
//                                  woodburyPays for one column
//   solve(SPD S, B)             -> L = cholesky(S) {fallback}; two triangular solves
//   anything else               -> stays solve (LU)
//
//   P * solve(S, R), S = c*F*F' + D, P = s*X*F' (or F'), R = sigma*F + u*1' (+ E)
//                               -> with sigma != 0, in the inner k x k system
//                                  T = I + c*F'D^-1 F (push-through identity):
//                                  s*(a*(X - Z) + Z*q*1'), Z = X*T^-1, a = sigma/c,
//                                  q = F'D^-1 u, plus s*Z*(D^-1 E F)' for a diagonal
//                                  E in R (W1b's R = 0.1 I); otherwise, without E,
//                                  through S's factor:
//                                  s * X * (sigma*M'M + M'w*1'), M = L^-1 F,
//                                  w = L^-1 u, L = cholesky(S); the cheaper, when it
//                                  costs fewer flops than forming P and solving for
//                                  R. The EnKF update is this product (obs - y is -Yc
//                                  plus broadcast columns): at d = N it drops from
//                                  198 to 90 GFLOP, and at N << d no d x d matrix is
//                                  formed
//
// Several solves with one matrix share one factorization (hash-consing merges the
// cholesky nodes). A `cholesky {fallback}` is one the compiler chose: if it fails at
// run time (SPD in exact arithmetic, not numerically), the run falls back to the
// graph as it was before this pass (LU) and says so.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/PassManager.h"

namespace graphc::passes {

/// The cost model for Woodbury: true when solving D + c*U*U' (n x n, U of rank k)
/// for m right-hand sides through the k x k capacitance matrix is cheaper than a
/// Cholesky of the n x n matrix.
bool woodburyPays(int64_t n, int64_t k, int64_t m);

/// The lower-linalg pass. Counts "inverse-to-solve", "syrk", "identity", "diagonal",
/// "triangular", "woodbury", "determinant-lemma", "cholesky", "through-factor" and
/// "inner-system" rewrites.
std::unique_ptr<ir::Graph> lowerLinalg(const ir::Graph& g, PassStats& stats);

} // namespace graphc::passes
