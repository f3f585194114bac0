//===- passes/ShareFactors.h - One factorization per matrix -----*- C++ -*-===//
//
// Derivative graphs solve with a matrix and with its transpose (the JVP of
// solve(A, B) solves with A again, its transpose with A'). Before lower-linalg picks
// methods, this pass makes those solves share one factorization:
//
//   transpose(S) (last two axes), S symmetric -> S
//   several solve(A, .), solve(A', .) and logdet(A), A without structure
//   lower-linalg uses
//     -> P, L, U = lu(A) once; solve(A, B) = U^-1 L^-1 (P' B),
//        solve(A', C) = P L^-T U^-T C (triangular solves), logdet(A) = sum(log|diag U|)
//
// A matrix factored once keeps its plain solve (LAPACK's getrf + getrs, whose row
// swaps cost nothing); with two or more, the saved getrf pays for the permutation
// products, which run at gemm speed while a factorization is latency-bound on the
// GPU. SPD matrices need no help: their Cholesky factors merge by hash-consing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/PassManager.h"

namespace graphc::passes {

/// The share-factors pass. Counts "symmetric-transpose" and "shared-lu" rewrites.
std::unique_ptr<ir::Graph> shareFactors(const ir::Graph& g, PassStats& stats);

} // namespace graphc::passes
