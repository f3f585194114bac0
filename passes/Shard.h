//===- passes/Shard.h - One graph as the program of each rank of a device set -*- C++ -*-===//
//
// shardGraph() turns a graph into the program one rank runs when some parameters
// are split along an axis over `ranks` ranks (the GPUs of a device set, or host
// threads): rank r holds rows [offset, offset + share) of each split axis, shares as
// even as they can be (the first L % ranks ranks get one more). Every rank runs the
// same program on its share (SPMD); values come out either split along an axis or
// replicated (the same bits on every rank).
//
// Each value is followed as replicated or split along one axis:
//   - elementwise ops and casts keep their operands' split; a replicated
//     operand meeting a split one is cut to the rank's share (a `full` or a
//     broadcast along that axis is made at the share's shape instead);
//   - broadcast_to, transpose, and reshape where the split axis survives whole
//     follow the axis; slice, concat, diag, diag_part, triu and tril work on the
//     other axes;
//   - a reduction over the split axis reduces the share, then an `all_reduce`
//     combines the ranks (sum, max, min; mean divides the sum by the whole count,
//     var takes the mean first and then the squared deviations, as the CPU does);
//   - matmul and syrk contracting over the split axis multiply the shares, then
//     all-reduce: with Y's rows split, Y'Y and Y'D are k x k and k x n sums over
//     the state axis. A split kept axis goes to the result; the linear-algebra ops
//     and assume_* take a split batch axis (and a solve a split right-hand-side
//     column axis).
// What would need another rank's share (an all-gather) is an error naming the op:
// a product of two operands split along kept axes, a solve of a matrix whose
// rows are split, an argmax over the split axis, a slice across it. Shard the
// optimized graph: after lower-linalg the EnKF of the ensemble regime solves a
// k x k system (Woodbury, push-through), which shards; its d x d form does not.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace graphc::passes {

/// Not split: every rank holds the whole value.
constexpr int kReplicated = -1;

/// The extent of rank `rank`'s share of an axis of length `length` over `ranks`
/// ranks, and where it starts.
struct Share {
  int64_t offset = 0, extent = 0;
  static Share of(int64_t length, int ranks, int rank);
};

/// The program of one rank and how its outputs lie.
struct ShardedGraph {
  std::unique_ptr<ir::Graph> graph;
  /// Per output: the axis it is split along, or kReplicated.
  std::vector<int> outputAxes;
};

/// The graph rank `rank` of `ranks` runs for `g`, with parameter i split along
/// `axes[i]` (kReplicated: every rank gets it whole). Throws graphc::Error naming the
/// parameter for a bad axis or one shorter than `ranks`, and naming the op (at its
/// location) where a value would need another rank's share.
ShardedGraph shardGraph(const ir::Graph& g, llvm::ArrayRef<int> axes, int ranks, int rank);

} // namespace graphc::passes
