//===- passes/Unbatch.h - The item graph of a graph batched by hand -*- C++ -*-===//
//
// unbatchGraph() is the inverse of batchGraph() (passes/Batch.h) for graphs that a
// user batched by hand: when every output has a leading axis of one length B and,
// op by op, item b of every value along that axis depends only on item b of the
// parameters whose leading axis is B (the others shared by every item), it returns
// the graph of one item. batchGraph(item, B, batched) then computes what the graph
// does. The per-item LU fallback (runtime/core/Compile.h) uses it to redo only the
// items whose chosen Cholesky failed.
//
// Each rule below is exact, so the decomposition is sound whatever the user meant
// by a leading axis of length B: a value is batched (its leading axis is the item
// axis) or shared (it depends on no batched value). An op with a batched operand is
// kept only where it acts within items:
//   - elementwise and assume_* ops, and the linear-algebra ops over leading batch
//     axes (operands of rank 3 or more, so that the leading axis is not a matrix's);
//   - reductions over other axes; broadcast_to, reshape, transpose, slice and concat
//     that keep the leading axis where it is and whole; diag, diag_part, triu and
//     tril on operands whose trailing axes do not include it.
// A shared operand of such an op must be the same for every item: a broadcast along
// the leading axis, or a `full` or `eye`. Anything else leaves the graph whole.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace graphc::passes {

/// A graph seen as batchGraph(item, batch, batched).
struct Unbatched {
  std::unique_ptr<ir::Graph> item;
  int64_t batch = 0;
  /// Per parameter: whether its leading axis is the item axis.
  std::vector<bool> batched;
};

/// The item graph of `g` when `g` computes its items apart along a leading axis
/// (see the file comment); std::nullopt otherwise.
std::optional<Unbatched> unbatchGraph(const ir::Graph& g);

} // namespace graphc::passes
