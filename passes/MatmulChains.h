//===- passes/MatmulChains.h - Cheaper association of matmul chains -*- C++ -*-===//
//
// Re-associates a product of three matrices when the other order costs much less:
//
//   matmul(matmul(X, Y), B)      -> matmul(X, matmul(Y, B))
//   matmul(c * matmul(X, Y), B)  -> c * matmul(X, matmul(Y, B))   (c a uniform scalar)
//
// The EnKF update in the ensemble regime is the case that matters: with Xc, Yc of
// size d x N and z of size d x N, (Xc*Yc')*z costs 4*d*d*N flops and a d x d
// intermediate; Xc*(Yc'*z) costs 4*d*N*N and none. The inner product must have no
// other use (else it is computed anyway). Transpose flags are carried over.
//
// A thin C (at most half as many columns as the product has rows) is also taken
// through the terms of a square M built of sums, products, solves and identities:
//
//   matmul(A + B, C)             -> matmul(A, C) + matmul(B, C)
//   matmul(matmul(X, Y), C)      -> matmul(X, matmul(Y, C))
//   matmul(solve(A, B), C)       -> solve(A, matmul(B, C))
//   matmul(solve(A, B)', C)      -> matmul(B', solve(A', C))
//   matmul(I, C)                 -> C
//
// so M is never formed. Reverse mode makes such M: the gradient of logdet(S) with
// S = F F' + D is solve(S', I) * F, and with this a solve for F's k columns.
//
// Products that are only summed, or that have a uniform factor, are not formed:
//
//   sum(matmul(A, B))            -> sum(colsums(A) .* rowsums(B))  (over both axes)
//   sum(P + matmul(A, B) - ...)  -> sum(P) + sum(colsums(A) .* rowsums(B)) - ...
//   matmul(s 1 1', B)            -> broadcast of s * colsums(B)
//   matmul(A, s 1 1')            -> broadcast of s * rowsums(A)
//
// (with op(A), op(B) where transposed), the first through add, sub and neg nodes that
// have no other use; s a uniform constant or any broadcast of a one-element value.
// Differentiating a loss sum(f(X)) makes both: a JVP sums its tangents' products and
// a VJP multiplies by the broadcast cotangent of the sum.
//
// Floating point. Re-association rounds differently (as every such rewrite does,
// the sums above included: an inf in A meets a zero of B in the product, not in the
// sums),
// and moving c changes which intermediate overflows or underflows: with c a normal
// number whose reciprocal is normal, that happens only where the original's
// products are within a factor c of the range's ends. A scale that is 0, subnormal,
// inf or NaN in the graph's dtype (or whose reciprocal is subnormal) makes the
// intermediates' range the result's: dividing X*Y by n = 1e-320 overflows entries
// that X*(Y*B)/n does not (inf - inf is NaN in one, +-inf in the other). The pass
// leaves such chains alone, so the result is the one the written order gives.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/PassManager.h"

namespace graphc::passes {

/// The matmul-chains pass. Counts "reassociated" and "distributed".
std::unique_ptr<ir::Graph> reassociateMatmuls(const ir::Graph& g, PassStats& stats);

} // namespace graphc::passes
