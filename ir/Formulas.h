//===- ir/Formulas.h - Composite elementwise ops, written once --*- C++ -*-===//
//
// The meaning of every elementwise op that is a combination of others (abs, sign,
// square, relu, rsqrt, reciprocal, sigmoid, maximum, minimum, remainder, a cast to
// bool), written once as a formula over a few primitives. Each of the three
// targets implements the primitives once and calls these formulas from its switch
// over ir::Op: the interpreter (runtime/cpu/Elementwise.cpp, B a scalar evaluator:
// V the element type, C bool), the CPU JIT (codegen/LlvmOps.cpp, llvm::Value*) and
// the CUDA emitter (codegen/Cuda.cpp, expressions of CUDA C++). The ops that are not
// here are primitives: each maps 1:1 onto a target's instruction or function.
//
// A target B has, for values V of the operand type and conditions C:
//   bool isFloat()                    the operand type is f32 or f64
//   V constant(double c)              c in the operand type
//   V neg(V), add(V, V), sub(V, V), mul(V, V), div(V, V), exp(V), sqrt(V)
//                                     the IR's ops (integers wrap)
//   C lt(V, V), gt(V, V), ge(V, V), ne(V, V)
//                                     C's comparisons: NaN compares false but for ne
//   C isNan(V)                        x != x
//   C either(C, C), both(C, C), differ(C, C)
//                                     or, and, != of conditions
//   V select(C, V, V)                 both operands are values already (no side
//                                     effects to skip)
//   V truncRem(V, V)                  the remainder of division truncated toward zero
//                                     (C's %, fmod), the sign of the dividend; for
//                                     integers the target's own handling of a zero
//                                     divisor (an error) and of -1 (0: MIN % -1)
//   V let(V)                          the value, evaluated once where the formula uses
//                                     it more than once (a named temporary in CUDA)
//
//===----------------------------------------------------------------------===//
#pragma once

namespace graphc::ir::formula {

/// |x|: x above zero, else 0 - x, which is +0.0 at -0.0 and at +0.0 (IEEE 754's
/// abs, C's fabs, NumPy's abs) and NaN at NaN; integers wrap: abs(INT_MIN) == INT_MIN.
template <typename B, typename V> V abs(B& b, V x) {
  return b.select(b.gt(x, b.constant(0)), x, b.sub(b.constant(0), x));
}

/// 1 above zero, -1 below, 0 at zero; NaN stays NaN.
template <typename B, typename V> V sign(B& b, V x) {
  V zero = b.constant(0);
  V rest = b.isFloat() ? b.select(b.isNan(x), x, zero) : zero;
  return b.select(b.gt(x, zero), b.constant(1), b.select(b.lt(x, zero), b.constant(-1), rest));
}

/// x * x (integers wrap).
template <typename B, typename V> V square(B& b, V x) {
  return b.mul(x, x);
}

/// 0 below zero, else x; NaN stays NaN.
template <typename B, typename V> V relu(B& b, V x) {
  V zero = b.constant(0);
  return b.select(b.lt(x, zero), zero, x);
}

/// 1 / x.
template <typename B, typename V> V reciprocal(B& b, V x) {
  return b.div(b.constant(1), x);
}

/// 1 / sqrt(x).
template <typename B, typename V> V rsqrt(B& b, V x) {
  return b.div(b.constant(1), b.sqrt(x));
}

/// 1 / (1 + exp(-x)) without exponentiating a large positive number (no overflow,
/// no NaN): with e = exp(-|x|), 1 / (1 + e) for x >= 0, else e / (1 + e). One exp
/// and one division.
template <typename B, typename V> V sigmoid(B& b, V x) {
  auto positive = b.let(b.ge(x, b.constant(0)));
  V one = b.constant(1);
  V e = b.let(b.exp(b.select(positive, b.neg(x), x)));
  return b.div(b.select(positive, one, e), b.add(one, e));
}

/// The larger of x and y; NaN in x propagates (NumPy's maximum: x when x is NaN or
/// x > y, else y, which is NaN when y is).
template <typename B, typename V> V maximum(B& b, V x, V y) {
  return b.select(b.either(b.isNan(x), b.gt(x, y)), x, y);
}

/// The smaller of x and y; NaN propagates as in maximum.
template <typename B, typename V> V minimum(B& b, V x, V y) {
  return b.select(b.either(b.isNan(x), b.lt(x, y)), x, y);
}

/// The remainder with the sign of the divisor (NumPy, Python): x - floor(x / y) * y,
/// computed as the truncated remainder plus y where the signs differ.
template <typename B, typename V> V remainder(B& b, V x, V y) {
  V zero = b.constant(0);
  V r = b.let(b.truncRem(x, y));
  auto fix = b.both(b.ne(r, zero), b.differ(b.lt(r, zero), b.lt(y, zero)));
  return b.select(fix, b.add(r, y), r);
}

/// A cast to bool: x != 0 (NaN is true).
template <typename B, typename V> auto toBool(B& b, V x) {
  return b.ne(x, b.constant(0));
}

} // namespace graphc::ir::formula
