//===- ir/Scalar.h - Elementwise ops on C++ scalars --------------*- C++ -*-===//
//
// The elementwise ops of one and two operands on C++ scalars, written once: the
// interpreter's loops (runtime/cpu/Elementwise.cpp) and the constant folder
// (passes/Canonicalize.cpp) both take each op's scalar function from here. The
// composite ops are ir/Formulas.h's formulas over Primitives, the others C++
// arithmetic and the C math library. Integer arithmetic wraps (two's complement);
// div truncates toward zero; remainder takes the sign of the divisor (NumPy); a zero
// integer divisor and a negative integer power are errors (docs/ops.md).
//
// Which ops a caller takes (Which): the folder takes only the ops whose result IEEE
// 754 fixes (correctly rounded arithmetic, sqrt, floor, the formulas over them), so
// that a folded constant has the bits every backend computes; the math library's
// functions (exp, log, sin, pow, ...) differ by an ulp or so between glibc, the CPU
// JIT's own (codegen/LlvmMath.h) and CUDA's, and are left to the backend.
//
//   ir::scalar::Primitives<float, Fail> b{fail};
//   ir::scalar::unary(Op::Abs, b, Which::Exact, [&](auto f) { r = f(x); });
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Formulas.h"
#include "ir/Op.h"
#include "ir/OpCases.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace graphc::ir::scalar {

/// A double as the integer type T: truncated toward zero, NaN as 0, values past T's
/// range as its least or greatest value (a plain C conversion of those is undefined).
template <typename T> T toInteger(double v) {
  static_assert(std::is_integral_v<T> && std::is_signed_v<T>);
  constexpr double bound = -static_cast<double>(std::numeric_limits<T>::min()); // 2^(bits - 1)
  if (v != v)
    return T(0);
  if (v >= bound)
    return std::numeric_limits<T>::max();
  if (v <= -bound)
    return std::numeric_limits<T>::min();
  return static_cast<T>(v);
}

/// A double (an attribute's value) as an element of type T: nonzero -> true for
/// bool, toInteger for the integers.
template <typename T> T fromDouble(double v) {
  if constexpr (std::is_same_v<T, bool>)
    return v != 0.0;
  else if constexpr (std::is_integral_v<T>)
    return toInteger<T>(v);
  else
    return static_cast<T>(v);
}

/// Integer arithmetic wraps around (two's complement) instead of overflowing.
template <typename T> T wrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) +
                          static_cast<std::make_unsigned_t<T>>(b));
  else
    return a + b;
}
template <typename T> T wrapSub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) -
                          static_cast<std::make_unsigned_t<T>>(b));
  else
    return a - b;
}
template <typename T> T wrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) *
                          static_cast<std::make_unsigned_t<T>>(b));
  else
    return a * b;
}

/// The primitives of ir/Formulas.h on scalars of type T, which the composite ops'
/// formulas are written over: each is inlined into its caller's loop. `fail(message)`
/// reports an integer error (a zero divisor, a negative power) and does not return.
template <typename T, typename Fail> struct Primitives {
  static constexpr bool kFloat = std::is_floating_point_v<T>;
  Fail fail;

  static constexpr bool isFloat() { return kFloat; }
  static T constant(double c) { return static_cast<T>(c); }
  static T neg(T x) {
    if constexpr (kFloat)
      return -x;
    else
      return wrapSub(T(0), x);
  }
  static T add(T x, T y) { return wrapAdd(x, y); }
  static T sub(T x, T y) { return wrapSub(x, y); }
  static T mul(T x, T y) { return wrapMul(x, y); }
  /// Integer division truncates toward zero; MIN / -1 wraps; a zero divisor fails.
  T div(T x, T y) const {
    if constexpr (kFloat) {
      return x / y;
    } else {
      if (y == 0)
        fail("integer division by zero");
      return y == -1 ? wrapSub(T(0), x) : static_cast<T>(x / y);
    }
  }
  static T exp(T x) { return std::exp(x); }
  static T sqrt(T x) { return std::sqrt(x); }
  static bool lt(T x, T y) { return x < y; }
  static bool gt(T x, T y) { return x > y; }
  static bool ge(T x, T y) { return x >= y; }
  static bool ne(T x, T y) { return x != y; }
  static bool isNan(T x) { return x != x; }
  static bool either(bool a, bool b) { return a || b; }
  static bool both(bool a, bool b) { return a && b; }
  static bool differ(bool a, bool b) { return a != b; }
  static T select(bool c, T x, T y) { return c ? x : y; }
  T truncRem(T x, T y) const {
    if constexpr (kFloat) {
      return std::fmod(x, y);
    } else {
      if (y == 0)
        fail("integer remainder by zero");
      return y == -1 ? T(0) : static_cast<T>(x % y);
    }
  }
  template <typename U> static U let(U x) { return x; }

  /// Integer power by squaring; wraps on overflow; a negative exponent fails.
  T intPow(T base, T exp) const {
    if (exp < 0)
      fail("integers to negative integer powers are not allowed");
    T result = 1;
    while (exp > 0) {
      if (exp & 1)
        result = wrapMul(result, base);
      base = wrapMul(base, base);
      exp >>= 1;
    }
    return result;
  }
};

/// Which ops a dispatcher below gives (see the file comment).
enum class Which : uint8_t {
  Exact, ///< the ops whose results IEEE 754 (integers: two's complement) fixes
  All,   ///< also the math library's functions, whose last bit is each target's
};

/// Hands a dispatcher's scalar function g on T to its caller's f; each returns
/// whether f got it.
template <typename T, typename F> struct Offer {
  static constexpr bool kFloat = std::is_floating_point_v<T>;
  F& f;
  Which which;

  /// An op whose result IEEE 754 or two's complement fixes.
  template <typename G> bool exact(G g) const {
    f(g);
    return true;
  }
  /// An op of floats alone whose result IEEE 754 fixes.
  template <typename G> bool exactFloat(G g) const {
    if constexpr (kFloat)
      return exact(g);
    else
      return false;
  }
  /// A function of the math library, of floats alone: with Which::All.
  template <typename G> bool library(G g) const {
    if constexpr (kFloat) {
      if (which == Which::All)
        f(g);
      return which == Which::All;
    } else {
      return false;
    }
  }
};

/// Calls f(g) with g the function T(T) of unary op `op` on scalars of type T;
/// false (and no call) when `op` has none for T or is not in `which`.
template <typename T, typename Fail, typename F>
bool unary(Op op, const Primitives<T, Fail>& b, Which which, F&& f) {
  Offer<T, F> give{f, which};
  switch (op) {
  case Op::Neg:
    return give.exact([&](T v) { return b.neg(v); });
  case Op::Abs:
    return give.exact([&](T v) { return formula::abs(b, v); });
  case Op::Sign:
    return give.exact([&](T v) { return formula::sign(b, v); });
  case Op::Square:
    return give.exact([&](T v) { return formula::square(b, v); });
  case Op::Relu:
    return give.exact([&](T v) { return formula::relu(b, v); });
  case Op::Sqrt:
    return give.exactFloat([&](auto v) { return b.sqrt(v); });
  case Op::Rsqrt:
    return give.exactFloat([&](auto v) { return formula::rsqrt(b, v); });
  case Op::Reciprocal:
    return give.exactFloat([&](auto v) { return formula::reciprocal(b, v); });
  case Op::Floor:
    return give.exactFloat([](auto v) { return std::floor(v); });
  case Op::Ceil:
    return give.exactFloat([](auto v) { return std::ceil(v); });
  case Op::Round:
    return give.exactFloat([](auto v) { return std::nearbyint(v); }); // half to even
  case Op::Exp:
    return give.library([&](auto v) { return b.exp(v); });
  case Op::Log:
    return give.library([](auto v) { return std::log(v); });
  case Op::Log1p:
    return give.library([](auto v) { return std::log1p(v); });
  case Op::Expm1:
    return give.library([](auto v) { return std::expm1(v); });
  case Op::Sin:
    return give.library([](auto v) { return std::sin(v); });
  case Op::Cos:
    return give.library([](auto v) { return std::cos(v); });
  case Op::Tanh:
    return give.library([](auto v) { return std::tanh(v); });
  case Op::Sigmoid:
    return give.library([&](auto v) { return formula::sigmoid(b, v); });
  case Op::Erf:
    return give.library([](auto v) { return std::erf(v); });
  GRAPHC_ALL_BUT_UNARY_CASES:
    return false;
  }
  return false;
}

/// Calls f(g) with g the function T(T, T) of binary op `op` on scalars of type T;
/// false (and no call) when `op` has none for T or is not in `which`.
template <typename T, typename Fail, typename F>
bool binary(Op op, const Primitives<T, Fail>& b, Which which, F&& f) {
  Offer<T, F> give{f, which};
  switch (op) {
  case Op::Add:
    return give.exact([&](T x, T y) { return b.add(x, y); });
  case Op::Sub:
    return give.exact([&](T x, T y) { return b.sub(x, y); });
  case Op::Mul:
    return give.exact([&](T x, T y) { return b.mul(x, y); });
  case Op::Div:
    return give.exact([&](T x, T y) { return b.div(x, y); });
  case Op::Maximum:
    return give.exact([&](T x, T y) { return formula::maximum(b, x, y); });
  case Op::Minimum:
    return give.exact([&](T x, T y) { return formula::minimum(b, x, y); });
  case Op::Remainder:
    return give.exact([&](T x, T y) { return formula::remainder(b, x, y); });
  case Op::Pow: // integers by squaring, exactly
    if constexpr (Offer<T, F>::kFloat)
      return give.library([](T x, T y) { return std::pow(x, y); });
    else
      return give.exact([&](T x, T y) { return b.intPow(x, y); });
  case Op::Atan2:
    return give.library([](auto x, auto y) { return std::atan2(x, y); });
  GRAPHC_ALL_BUT_BINARY_CASES:
    return false;
  }
  return false;
}

} // namespace graphc::ir::scalar
