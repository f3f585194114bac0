//===- passes/Batch.h - A leading batch axis over a whole graph -*- C++ -*-===//
//
// batchGraph() is a vmap-style transform: it turns a graph that computes one item
// into one that computes `batch` items at once, each along a new leading axis.
// A batched parameter of type T[s...] becomes T[batch, s...]; an unbatched one
// keeps its type and is shared by every item. Every output gets the leading axis,
// and item b of every output equals the original graph run on item b of the
// batched inputs (and the shared unbatched ones).
//
// Work that depends on no batched value (constants, unbatched parameters and what
// is computed from them alone) stays unbatched and is done once; it is broadcast
// along the batch where it meets a batched value, or where it is an output. The
// linear-algebra ops of the IR already run over leading batch axes, so a batch of
// solves stays one solve node: structure analysis and lowering see it whole (a
// batch of SPD systems is still lowered to one batched Cholesky).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <memory>

namespace graphc::passes {

/// How a leading batch axis passes through an op, by its kind (the one table of
/// batchGraph() and of its inverse, passes/Unbatch.h): `Within` ops (elementwise,
/// assume_* and linear algebra over leading batch axes) keep their attributes,
/// reductions move their axes, shape ops have a rule of their own each, and sources
/// take no operands, so never a batched one.
enum class BatchRule { Within, Axes, Shape, Source };
BatchRule batchRuleOf(ir::OpKind kind);

/// The graph computing `g` for `batch` items along a new leading axis.
/// `batchedParams` says, per parameter of `g`, whether it gets the batch axis; empty
/// batches every parameter. Node names and source locations carry over. Throws
/// graphc::Error when `batch` < 1, when `batchedParams` has the wrong length, or
/// when a batched type would have too many elements.
std::unique_ptr<ir::Graph> batchGraph(const ir::Graph& g, int64_t batch,
                                      llvm::ArrayRef<bool> batchedParams = {});

} // namespace graphc::passes
