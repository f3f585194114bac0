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
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/PassManager.h"

namespace graphc::passes {

/// The matmul-chains pass. Counts "reassociated" and "distributed".
std::unique_ptr<ir::Graph> reassociateMatmuls(const ir::Graph& g, PassStats& stats);

} // namespace graphc::passes
