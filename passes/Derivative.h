//===- passes/Derivative.h - JVP, VJP and gradient graphs -------*- C++ -*-===//
//
// The derivative graphs users ask for, built from the two transforms: the JVP graph
// is linearize(g); the VJP graph is transpose(linearize(g)); the gradient graph is
// the VJP graph with the cotangent of the first (scalar) output set to one. They
// are plain graphs: print them, run the passes on them, compile them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <vector>

namespace graphc::passes {

/// Which derivative graph to build.
enum class DerivativeMode {
  /// (primals, one tangent per wrt input) -> (outputs, one tangent per output)
  Jvp,
  /// (primals, one cotangent per output) -> (outputs, one cotangent per wrt input)
  Vjp,
  /// (primals) -> (outputs, the gradient of output 0 per wrt input); output 0 must be
  /// a floating-point scalar; the other outputs ride along
  Grad,
};

/// The derivative graph of `g` with respect to the parameters at indices `wrt`,
/// named @g_jvp, @g_vjp or @g_grad. Throws graphc::Error for the errors of
/// linearize and transpose, and for a gradient of an output that is not a float scalar.
std::unique_ptr<ir::Graph> derivative(const ir::Graph& g, DerivativeMode mode,
                                      llvm::ArrayRef<unsigned> wrt);

/// The indices of the parameters called `names` (all parameters when empty), for
/// `wrt`. Throws graphc::Error naming an unknown parameter and listing the known.
std::vector<unsigned> paramIndices(const ir::Graph& g, llvm::ArrayRef<std::string> names);

} // namespace graphc::passes
