//===- passes/Canonicalize.h - Folding and algebraic simplification -*- C++ -*-===//
//
// Brings a graph to a canonical form that later passes can match on:
//  - folds uniform (`full`) values through shape ops and float arithmetic;
//  - drops identities: x+0, x-0, x*1, x/1, pow(x,1), neg(neg x), no-op reshape /
//    broadcast_to / transpose / cast, reshape and broadcast chains;
//  - composes transposes, and moves matrix transposes into matmul flags, including
//    (A*B)' = B'*A', and drops the transpose of a syrk (symmetric);
//  - reads an operand once for reductions over nested axes: sum(X) beside
//    sum(X, 0) is sum(sum(X, 0)) (also prod, max, min, mean);
//  - collapses a repeated assertion, assume_X(assume_X a) -> assume_X a; other
//    assume_* ops carry information and stay;
//  - CSE and DCE come with the rebuild (passes/Rewrite.h).
// Sound for IEEE values: nothing is simplified that could change a NaN or an inf
// (no x*0 -> 0, no x-x -> 0).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/PassManager.h"

namespace graphc::passes {

/// The canonicalize pass. Counts "folded" and "simplified".
std::unique_ptr<ir::Graph> canonicalize(const ir::Graph& g, PassStats& stats);

} // namespace graphc::passes
