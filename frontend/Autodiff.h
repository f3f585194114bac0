//===- frontend/Autodiff.h - Derivatives of traced functions ----*- C++ -*-===//
//
// Forward and reverse mode for functions written with the DSL. Each function is
// traced once on symbolic copies of its arguments; the derivative graph
// (passes/Derivative.h) is built from that trace and recorded into the graph of the
// arguments, like any other op. So derivatives are lazy tensors: they evaluate
// eagerly when asked, compose (a Hessian-vector product is jvp of grad), and inside
// `jit` become part of one compiled, prepared program.
//
//   auto loss = [](Tensor a) { auto [q, r] = qr(a); return sum(q) + sum(r); };
//   auto g = grad(loss);                   // a function of the same arguments
//   Tensor da = g({a})[0];                 // eager
//   auto step = jit([&](Tensor a) { return g({a})[0]; });  // compiled once
//   auto [outs, touts] = jvp(loss, {a}, {da});
//
// Only floating-point arguments are differentiated; integer and bool ones are
// passed through. A function must not capture symbolic tensors of an enclosing trace.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/Tensor.h"

#include <functional>
#include <vector>

namespace graphc {

/// A function of tensors to differentiate.
using TensorFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

/// Outputs and their tangents.
struct JvpResult {
  std::vector<Tensor> outputs;
  std::vector<Tensor> tangents;
};

/// The outputs of f at `primals` and their tangents along `tangents` (one per
/// primal, of its type). Throws graphc::Error for a tangent of the wrong type or an
/// integer primal with a tangent.
JvpResult jvp(const TensorFunction& f, const std::vector<Tensor>& primals,
              const std::vector<Tensor>& tangents, SrcLoc loc = SrcLoc::current());

/// Outputs and the pullback: cotangents of the outputs -> cotangents of the primals.
struct VjpResult {
  std::vector<Tensor> outputs;
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> pullback;
};

/// f at `primals` and its pullback, which takes one cotangent per output (of its
/// type) and returns one cotangent per primal in `argnums` (all primals when empty).
VjpResult vjp(const TensorFunction& f, const std::vector<Tensor>& primals,
              const std::vector<int>& argnums = {}, SrcLoc loc = SrcLoc::current());

/// The function returning f's outputs, then the gradient of f's first output (a
/// floating-point scalar) with respect to each argument in `argnums`.
TensorFunction valueAndGrad(TensorFunction f, std::vector<int> argnums = {0});

/// The function returning the gradients of f's first output (a floating-point
/// scalar) with respect to each argument in `argnums`.
TensorFunction grad(TensorFunction f, std::vector<int> argnums = {0});

} // namespace graphc
