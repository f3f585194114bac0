//===- passes/SplitReductions.h - Reductions in two passes for the GPU -*- C++ -*-===//
//
// A reduction with few outputs and a long reduced extent leaves most of the GPU
// idle in one fused kernel (passes/RoutePolicy.h says when). This pass rewrites it
// into two reductions: the reduced axes (one run of adjacent axes) are merged and
// cut into `chunks` pieces, a partial reduction reduces each piece, and a second
// reduction combines the pieces (and may split again). The pieces are laid out so
// that both kernels read memory in order: along trailing axes the pieces are
// contiguous runs, [.., chunks, extent / chunks]; along leading axes chunk c takes
// every chunks-th point, [.., extent / chunks, chunks, ..], so that neighbouring
// threads read neighbouring elements.
//
//   sum over axis 0 of f32[1048576,4]   ->   x' = reshape x : f32[32,32768,4]
//                                           p  = sum(cast<f64> x') {axes=[0]} : f64[32768,4]
//                                           s  = sum p {axes=[0]} ...  (split again)
//
// Combines: sum of sums, mean of means (the pieces are equal), max of maxes, min,
// prod; var = mean of the pieces' variances + variance of their means (population
// variances of equal pieces). Float partials of sum, mean, var and prod are f64:
// the result is as accurate as one pass (which accumulates in double). argmax and
// argmin are not split. The reshape is pushed up through the reduction's
// elementwise prologue and broadcasts, so that a fused kernel sees it on its loads
// only (codegen/Kernel.h cannot read a broadcast through a reshape that regroups
// axes).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/PassManager.h"
#include "passes/RoutePolicy.h"

namespace graphc::passes {

/// The split-reductions pass with `policy`. Counts "split".
std::unique_ptr<ir::Graph> splitReductions(const ir::Graph& g, const RoutePolicy& policy,
                                           PassStats& stats);

/// The split-reductions pass with the GPU's policy (the registered pass).
std::unique_ptr<ir::Graph> splitReductions(const ir::Graph& g, PassStats& stats);

} // namespace graphc::passes
