//===- passes/Match.h - Small pattern predicates shared by passes -*- C++ -*-===//
#pragma once

#include "ir/Graph.h"

#include <optional>
#include <vector>

namespace graphc::passes {

/// True when `perm` is 0, 1, ..., n-1.
bool isIdentityPerm(const std::vector<int64_t>& perm);
/// True when `perm` swaps the last two axes and keeps the batch axes in place.
bool swapsMatrixAxes(const std::vector<int64_t>& perm);
/// Where `v` is transpose(x) swapping the last two axes: x, with `flipped` set.
/// Otherwise `v` itself, with `flipped` cleared.
ir::Value peelMatrixTranspose(ir::Value v, bool& flipped);
/// The value every element of `v` has, when known at compile time (a `full`, a
/// uniform `constant`, or one seen through broadcast_to / reshape / transpose).
std::optional<double> uniformValue(ir::Value v);

} // namespace graphc::passes
