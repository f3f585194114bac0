//===- passes/LinalgForms.h - Traces, quadratic forms, inverses, logdets -*- C++ -*-===//
//
// Sees through the linear-algebra forms users write, before lower-linalg picks a
// method for each solve. Each rule is a match + expand; L = cholesky(S) {fallback}
// is the lower factor lower-linalg makes for a solve with S, so every rule on one S
// and every solve with it share one factorization (hash-consing merges them), and a
// factorization that fails at run time falls back to the graph as written (LU).
//
//   trace(op(A)*op(B))           -> sum(op(A) .* op(B)')        any A, B ("trace-product")
//   trace(syrk(X))               -> sum(square(X))
//   trace(solve(A, c*F*F'))      -> c * sum(F .* solve(A, F))   any A ("trace-solve")
//   trace(inverse(A)*c*F*F')     -> the same
//   sum(B .* solve(S, B), axes)  -> sum(square(L^-1 B), axes)   ("quadratic-form")
//   B' * solve(S, B)             -> syrk(L^-1 B) {transpose}; for one column
//                                   sum(square(L^-1 b)) ("quadratic-form")
//   trace(inverse(S))            -> sum(square(L^-1))
//   inverse(S), solve(S, I)      -> syrk(L^-1) {transpose}: known symmetric ("spd-inverse")
//   P * inverse(S), P*solve(S,I) -> two right-side triangular solves with L ("right-solve")
//   P * inverse(A)               -> solve(A', P')'             any A ("right-solve")
//   logdet(S)                    -> 2 * sum(log(diag_part(L))) ("logdet")
//   det(S)                       -> square(prod(diag_part(L)))  ("det")
//
// Legality: the trace rules hold for every matrix (the trace of a product is the sum
// of an elementwise product); `axes` must include the row axis of B (then each
// column's b' S^-1 b = |L^-1 b|^2 is summed). The rules on S need S proven SPD
// (passes/Structure.h) and not diagonal (dividing by the diagonal is cheaper), and
// are left to lower-linalg where S is a low-rank part plus a diagonal that Woodbury
// solves more cheaply (woodburyPays). An explicit inverse(S) is only formed where
// something other than a matmul or a trace uses it: lower-linalg turns
// inverse(S) * B into a solve, and this pass P * inverse(S) into right-side solves.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/PassManager.h"

namespace graphc::passes {

/// The linalg-forms pass. Counts the rewrites named above.
std::unique_ptr<ir::Graph> rewriteLinalgForms(const ir::Graph& g, PassStats& stats);

} // namespace graphc::passes
