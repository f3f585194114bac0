//===- passes/Linearize.h - Forward-mode differentiation --------*- C++ -*-===//
//
// linearize() turns a graph into its JVP graph: it takes the primal inputs and one
// tangent per differentiated input, and returns the primal outputs and their
// tangents. One forward walk over the live nodes copies each node and calls its
// op's JVP rule (passes/Autodiff.h) where an operand carries a tangent. Integer and
// bool values carry none; the tangent output of such an output is a zero of its
// type. The result is an ordinary graph: the passes optimize, fuse and lower it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/ArrayRef.h"

#include <memory>

namespace graphc::passes {

/// The JVP graph of `g` with respect to the parameters at indices `wrt`. Its
/// parameters are g's, then one tangent per entry of `wrt` (named `d` + the
/// parameter's name, of its type); its outputs are g's, then one tangent per output.
/// Throws graphc::Error naming the parameter when an index is out of range or
/// repeated, or the parameter is not floating point, and naming the op (at its
/// location) when it has no derivative rule.
std::unique_ptr<ir::Graph> linearize(const ir::Graph& g, llvm::ArrayRef<unsigned> wrt);

} // namespace graphc::passes
