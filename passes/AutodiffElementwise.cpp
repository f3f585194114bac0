//===- passes/AutodiffElementwise.cpp - Derivatives of elementwise ops -----===//
//
// JVP rules of the elementwise ops (the derivative of each unary and binary op
// times the tangents) and transpose rules of the ones a JVP emits on tangents:
// neg, add, sub, mul and div by a non-linear operand, select and casts.
// Ties of maximum/minimum split the tangent evenly between the operands.
//
//===----------------------------------------------------------------------===//
#include "ir/OpCases.h"
#include "passes/Autodiff.h"

#include <cmath>
#include <fmt/format.h>

namespace graphc::passes::rules {

using ir::Op;
using ir::Value;

namespace {

/// The derivative of unary op `op` at x (result y), times nothing.
Value unaryDerivative(DiffBuilder& b, Op op, Value x, Value y) {
  auto one = [&] { return b.scalar(1, x); };
  switch (op) {
  case Op::Abs:
    return b.apply(Op::Sign, {x});
  case Op::Exp:
    return y;
  case Op::Log:
    return b.apply(Op::Reciprocal, {x});
  case Op::Log1p:
    return b.apply(Op::Reciprocal, {b.add(x, one())});
  case Op::Expm1:
    return b.add(y, one());
  case Op::Sqrt:
    return b.div(b.scalar(0.5, x), y);
  case Op::Rsqrt:
    return b.scale(b.mul(b.mul(y, y), y), -0.5);
  case Op::Square:
    return b.scale(x, 2);
  case Op::Reciprocal:
    return b.neg(b.mul(y, y));
  case Op::Sin:
    return b.apply(Op::Cos, {x});
  case Op::Cos:
    return b.neg(b.apply(Op::Sin, {x}));
  case Op::Tanh:
    return b.sub(one(), b.mul(y, y));
  case Op::Sigmoid:
    return b.mul(y, b.sub(one(), y));
  case Op::Relu:
    return b.select(b.apply(Op::Gt, {x, b.scalar(0, x)}), one(), Value());
  case Op::Erf:
    return b.scale(b.apply(Op::Exp, {b.neg(b.mul(x, x))}), 2 / std::sqrt(M_PI));
  case Op::Neg:
  case Op::Sign:
  case Op::Floor:
  case Op::Ceil:
  case Op::Round:
  GRAPHC_SOURCE_CASES:
  GRAPHC_LOGICAL_CASES:
  GRAPHC_BINARY_CASES:
  GRAPHC_COMPARE_CASES:
  GRAPHC_SELECT_CASES:
  GRAPHC_CAST_CASES:
  GRAPHC_SHAPE_CASES:
  GRAPHC_REDUCE_CASES:
  GRAPHC_LINALG_CASES:
  GRAPHC_ASSUME_CASES:
  GRAPHC_COLLECTIVE_CASES:
    throw Error(fmt::format("internal error: no unary derivative for {}", ir::opName(op).str()));
  }
  ir::unknownOp();
}

/// The weight of the first operand in the tangent of maximum (`pick` = gt) or
/// minimum (`pick` = lt): 1 where it wins, 1/2 on ties, 0 where it loses.
Value winnerWeight(DiffBuilder& b, Op pick, Value x, Value y) {
  Value half = b.select(b.apply(Op::Eq, {x, y}), b.scalar(0.5, x), Value());
  return b.select(b.apply(pick, {x, y}), b.scalar(1, x), b.orZeros(half, x.type()));
}

} // namespace

ValueList jvpZero(DiffBuilder&, const JvpNode& n) {
  return ValueList(n.results.size(), Value());
}

ValueList jvpUnary(DiffBuilder& b, const JvpNode& n) {
  Value dx = n.dinputs[0];
  if (!dx)
    return {Value()};
  return {b.mul(dx, unaryDerivative(b, n.node.op(), n.inputs[0], n.results[0]))};
}

ValueList jvpBinary(DiffBuilder& b, const JvpNode& n) {
  Value x = n.inputs[0], y = n.inputs[1], r = n.results[0];
  Value dx = n.dinputs[0], dy = n.dinputs[1];
  auto times = [&](Value d, Value f) { return d ? b.mul(d, f) : Value(); };
  switch (n.node.op()) {
  case Op::Mul:
    return {b.add(times(dx, y), times(dy, x))};
  case Op::Div: // (dx - r dy) / y
    return {b.div(b.orZeros(b.sub(dx, times(dy, r)), r.type()), y)};
  case Op::Pow: {
    Value t = times(dx, b.mul(y, b.apply(Op::Pow, {x, b.sub(y, b.scalar(1, y))})));
    if (!dy)
      return {t};
    // r * log(x), taken as 0 where x == 0 (the limit for y > 0).
    Value logTerm =
        b.select(b.apply(Op::Eq, {x, b.scalar(0, x)}), Value(), b.mul(r, b.apply(Op::Log, {x})));
    return {b.add(t, b.mul(dy, logTerm))};
  }
  case Op::Maximum:
  case Op::Minimum: {
    Value w = winnerWeight(b, n.node.op() == Op::Maximum ? Op::Gt : Op::Lt, x, y);
    return {b.add(times(dx, w), times(dy, b.sub(b.scalar(1, w), w)))};
  }
  case Op::Atan2: { // atan2(x, y): (y dx - x dy) / (x^2 + y^2)
    Value num = b.sub(times(dx, y), times(dy, x));
    return {b.div(num, b.add(b.mul(x, x), b.mul(y, y)))};
  }
  case Op::Remainder: // x - floor(x / y) * y
    return {b.sub(dx, times(dy, b.apply(Op::Floor, {b.div(x, y)})))};
  case Op::Add:
  case Op::Sub:
  GRAPHC_SOURCE_CASES:
  GRAPHC_UNARY_CASES:
  GRAPHC_LOGICAL_CASES:
  GRAPHC_COMPARE_CASES:
  GRAPHC_SELECT_CASES:
  GRAPHC_CAST_CASES:
  GRAPHC_SHAPE_CASES:
  GRAPHC_REDUCE_CASES:
  GRAPHC_LINALG_CASES:
  GRAPHC_ASSUME_CASES:
  GRAPHC_COLLECTIVE_CASES:
    throw Error(
        fmt::format("internal error: no binary derivative for {}", n.node.info().name.str()));
  }
  ir::unknownOp();
}

ValueList jvpSelect(DiffBuilder& b, const JvpNode& n) {
  return {b.select(n.inputs[0], n.dinputs[1], n.dinputs[2])};
}

ValueList jvpCast(DiffBuilder& b, const JvpNode& n) {
  ir::DType to = n.results[0].type().dtype;
  if (!n.dinputs[0] || !ir::isFloat(to))
    return {Value()};
  return {b.cast(n.dinputs[0], to)};
}

ValueList transposeNeg(DiffBuilder& b, const LinearNode&, Value ct) {
  return {b.neg(ct)};
}

ValueList transposeAddSub(DiffBuilder& b, const LinearNode& n, Value ct) {
  Value second = n.node.op() == Op::Sub ? b.neg(ct) : ct;
  return {n.linear[0] ? ct : Value(), n.linear[1] ? second : Value()};
}

ValueList transposeMulDiv(DiffBuilder& b, const LinearNode& n, Value ct) {
  bool isDiv = n.node.op() == Op::Div;
  if (n.linear[0] && n.linear[1])
    notLinear(n, "both operands depend on the linear inputs");
  if (isDiv && n.linear[1])
    notLinear(n, "the divisor depends on the linear inputs");
  if (n.linear[0])
    return {isDiv ? b.div(ct, n.inputs[1]) : b.mul(ct, n.inputs[1]), Value()};
  return {Value(), b.mul(ct, n.inputs[0])};
}

ValueList transposeSelect(DiffBuilder& b, const LinearNode& n, Value ct) {
  if (n.linear[0])
    notLinear(n, "the condition depends on the linear inputs");
  Value c = n.inputs[0];
  return {Value(), n.linear[1] ? b.select(c, ct, Value()) : Value(),
          n.linear[2] ? b.select(c, Value(), ct) : Value()};
}

ValueList transposeCast(DiffBuilder& b, const LinearNode& n, Value ct) {
  ir::DType from = n.node.operand(0).type().dtype;
  if (!ir::isFloat(from) || !ir::isFloat(n.node.type().dtype))
    notLinear(n, "only casts between float types are linear");
  return {b.cast(ct, from)};
}

} // namespace graphc::passes::rules
