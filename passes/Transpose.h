//===- passes/Transpose.h - The adjoint of a linear graph -------*- C++ -*-===//
//
// transpose() turns a graph that is linear in some of its parameters into the
// graph of its adjoint. The part that does not depend on the linear parameters is
// copied as it is; the linear part is walked backwards, each node's transpose rule
// (passes/Autodiff.h) sending its result's cotangent to its linear operands, where
// cotangents of several uses add up. Reverse mode is transpose after linearize.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/ArrayRef.h"

#include <memory>

namespace graphc::passes {

/// The adjoint of `g`, linear in its parameters `linearParams` and with linear
/// outputs `linearOutputs` (indices). Its parameters are g's other parameters, then
/// one cotangent per linear output (`ct0`, `ct1`, ... in output order, of its type);
/// its outputs are g's other outputs, then the cotangent of each linear parameter.
/// Throws graphc::Error, at the node's location, when a node that depends on the
/// linear parameters is not linear in them, or an output that is not marked linear
/// depends on them.
std::unique_ptr<ir::Graph> transpose(const ir::Graph& g, llvm::ArrayRef<unsigned> linearParams,
                                     llvm::ArrayRef<unsigned> linearOutputs);

} // namespace graphc::passes
