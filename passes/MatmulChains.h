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
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/PassManager.h"

namespace graphc::passes {

/// The matmul-chains pass. Counts "reassociated".
std::unique_ptr<ir::Graph> reassociateMatmuls(const ir::Graph& g, PassStats& stats);

} // namespace graphc::passes
