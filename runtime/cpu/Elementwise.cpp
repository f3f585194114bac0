//===- runtime/cpu/Elementwise.cpp - Sources and elementwise kernels ------===//
//
// Source ops (constant, full, iota, eye) and every elementwise op as one typed loop
// per op: the op is chosen once, outside the loop, and the element type comes from
// visitDType. The composite ops (abs, sigmoid, remainder, ...) are ir/Formulas.h's
// formulas over the scalar primitives of Scalar<T>. Integer semantics: arithmetic
// wraps around; div truncates toward zero; remainder takes the sign of the divisor
// (NumPy); division by zero and negative integer powers are errors. See docs/ops.md.
//
//===----------------------------------------------------------------------===//
#include "ir/Formulas.h"
#include "ir/OpCases.h"
#include "runtime/cpu/Kernels.h"

#include <cmath>
#include <limits>

namespace graphc::cpu {
namespace {

using ir::Op;

template <typename T> constexpr bool kIsFloat = std::is_floating_point_v<T>;

//===--- Sources ----------------------------------------------------------===//

Array constant(const Step& s) {
  const std::vector<double>& values = s.attrs.getFloats("value");
  Array out = Array::empty(s.type().dtype, s.type().shape);
  visitDType(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    for (size_t i = 0; i < values.size(); ++i)
      o[i] = fromDouble<T>(values[i]);
  });
  return out;
}

/// iota: each element is its index along `axis`.
Array iota(const Step& s) {
  const ir::TensorType& t = s.type();
  int64_t axis = s.attrs.getInt("axis");
  int64_t inner = ir::numElements(llvm::ArrayRef<int64_t>(t.shape).drop_front(axis + 1));
  int64_t len = t.shape[axis];
  Array out = Array::empty(t.dtype, t.shape);
  visitNumeric(s, t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    for (int64_t i = 0, n = out.numel(); i < n; ++i)
      o[i] = static_cast<T>((i / inner) % len);
  });
  return out;
}

/// eye: identity matrices (ones where row == column) batched over leading axes.
Array eye(const Step& s) {
  const ir::TensorType& t = s.type();
  int64_t rows = t.shape[t.rank() - 2], cols = t.shape[t.rank() - 1];
  Array out = Array::zeros(t.dtype, t.shape);
  visitNumeric(s, t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    for (int64_t b = 0, nb = out.numel() / std::max<int64_t>(rows * cols, 1);
         b < nb && rows * cols > 0; ++b)
      for (int64_t i = 0; i < std::min(rows, cols); ++i)
        o[b * rows * cols + i * cols + i] = T(1);
  });
  return out;
}

//===--- Primitives -------------------------------------------------------===//

/// Integer division truncating toward zero; MIN / -1 wraps; a zero divisor fails.
template <typename T> T intDiv(const Step& s, T a, T b) {
  if (b == 0)
    s.fail("integer division by zero");
  if (b == -1)
    return wrapSub(T(0), a);
  return a / b;
}

/// The primitives of ir/Formulas.h on scalars of type T, which the composite ops'
/// formulas are written over: each is inlined into the loop of its op.
template <typename T> struct Scalar {
  const Step& s;

  static constexpr bool isFloat() { return kIsFloat<T>; }
  static T constant(double c) { return static_cast<T>(c); }
  static T neg(T x) {
    if constexpr (kIsFloat<T>)
      return -x;
    else
      return wrapSub(T(0), x);
  }
  static T add(T x, T y) { return wrapAdd(x, y); }
  static T sub(T x, T y) { return wrapSub(x, y); }
  static T mul(T x, T y) { return wrapMul(x, y); }
  T div(T x, T y) const {
    if constexpr (kIsFloat<T>)
      return x / y;
    else
      return intDiv(s, x, y);
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
    if constexpr (kIsFloat<T>) {
      return std::fmod(x, y);
    } else {
      if (y == 0)
        s.fail("integer remainder by zero");
      return y == -1 ? T(0) : static_cast<T>(x % y);
    }
  }
  template <typename U> static U let(U x) { return x; }
};

//===--- Unary ------------------------------------------------------------===//

template <typename T> void unary(const Step& s, const T* x, T* o, int64_t n) {
  Scalar<T> b{s};
  auto map = [&](auto f) {
    for (int64_t i = 0; i < n; ++i)
      o[i] = f(x[i]);
  };
  switch (s.op) {
  case Op::Neg:
    return map([&](T v) { return b.neg(v); });
  case Op::Abs:
    return map([&](T v) { return ir::formula::abs(b, v); });
  case Op::Sign:
    return map([&](T v) { return ir::formula::sign(b, v); });
  case Op::Square:
    return map([&](T v) { return ir::formula::square(b, v); });
  case Op::Relu:
    return map([&](T v) { return ir::formula::relu(b, v); });
  case Op::Exp:
  case Op::Log:
  case Op::Log1p:
  case Op::Expm1:
  case Op::Sqrt:
  case Op::Rsqrt:
  case Op::Reciprocal:
  case Op::Sin:
  case Op::Cos:
  case Op::Tanh:
  case Op::Sigmoid:
  case Op::Erf:
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
    break;
  }
  if constexpr (kIsFloat<T>) {
    switch (s.op) {
    case Op::Exp:
      return map([](T v) { return std::exp(v); });
    case Op::Log:
      return map([](T v) { return std::log(v); });
    case Op::Log1p:
      return map([](T v) { return std::log1p(v); });
    case Op::Expm1:
      return map([](T v) { return std::expm1(v); });
    case Op::Sqrt:
      return map([](T v) { return std::sqrt(v); });
    case Op::Rsqrt:
      return map([&](T v) { return ir::formula::rsqrt(b, v); });
    case Op::Reciprocal:
      return map([&](T v) { return ir::formula::reciprocal(b, v); });
    case Op::Sin:
      return map([](T v) { return std::sin(v); });
    case Op::Cos:
      return map([](T v) { return std::cos(v); });
    case Op::Tanh:
      return map([](T v) { return std::tanh(v); });
    case Op::Sigmoid:
      return map([&](T v) { return ir::formula::sigmoid(b, v); });
    case Op::Erf:
      return map([](T v) { return std::erf(v); });
    case Op::Floor:
      return map([](T v) { return std::floor(v); });
    case Op::Ceil:
      return map([](T v) { return std::ceil(v); });
    case Op::Round:
      return map([](T v) { return std::nearbyint(v); }); // half to even
    case Op::Neg:
    case Op::Abs:
    case Op::Sign:
    case Op::Square:
    case Op::Relu:
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
      break;
    }
  }
  s.fail("internal error: no kernel for this dtype");
}

//===--- Binary -----------------------------------------------------------===//

/// Integer power by squaring; wraps on overflow.
template <typename T> T intPow(const Step& s, T base, T exp) {
  if (exp < 0)
    s.fail("integers to negative integer powers are not allowed");
  T result = 1;
  while (exp > 0) {
    if (exp & 1)
      result = wrapMul(result, base);
    base = wrapMul(base, base);
    exp >>= 1;
  }
  return result;
}

template <typename T> void binary(const Step& s, const T* x, const T* y, T* o, int64_t n) {
  Scalar<T> b{s};
  auto map = [&](auto f) {
    for (int64_t i = 0; i < n; ++i)
      o[i] = f(x[i], y[i]);
  };
  switch (s.op) {
  case Op::Add:
    return map([&](T x, T y) { return b.add(x, y); });
  case Op::Sub:
    return map([&](T x, T y) { return b.sub(x, y); });
  case Op::Mul:
    return map([&](T x, T y) { return b.mul(x, y); });
  case Op::Div:
    return map([&](T x, T y) { return b.div(x, y); });
  case Op::Pow:
    if constexpr (kIsFloat<T>)
      return map([](T x, T y) { return std::pow(x, y); });
    else
      return map([&](T x, T y) { return intPow(s, x, y); });
  case Op::Maximum:
    return map([&](T x, T y) { return ir::formula::maximum(b, x, y); });
  case Op::Minimum:
    return map([&](T x, T y) { return ir::formula::minimum(b, x, y); });
  case Op::Remainder:
    return map([&](T x, T y) { return ir::formula::remainder(b, x, y); });
  case Op::Atan2:
    if constexpr (kIsFloat<T>)
      return map([](T x, T y) { return std::atan2(x, y); });
    break;
  GRAPHC_ALL_BUT_BINARY_CASES:
    break;
  }
  s.fail("internal error: no kernel for this dtype");
}

template <typename T> void compare(const Step& s, const T* x, const T* y, bool* o, int64_t n) {
  auto map = [&](auto f) {
    for (int64_t i = 0; i < n; ++i)
      o[i] = f(x[i], y[i]);
  };
  switch (s.op) {
  case Op::Eq:
    return map([](T a, T b) { return a == b; });
  case Op::Ne:
    return map([](T a, T b) { return a != b; });
  case Op::Lt:
    return map([](T a, T b) { return a < b; });
  case Op::Le:
    return map([](T a, T b) { return a <= b; });
  case Op::Gt:
    return map([](T a, T b) { return a > b; });
  case Op::Ge:
    return map([](T a, T b) { return a >= b; });
  GRAPHC_ALL_BUT_COMPARE_CASES:
    s.fail("internal error: not a comparison");
  }
}

void logical(const Step& s, llvm::ArrayRef<const void*> xs, bool* o, int64_t n) {
  const bool* a = static_cast<const bool*>(xs[0]);
  const bool* b = xs.size() > 1 ? static_cast<const bool*>(xs[1]) : nullptr;
  for (int64_t i = 0; i < n; ++i)
    o[i] = s.op == Op::Not ? !a[i] : s.op == Op::And ? (a[i] && b[i]) : (a[i] || b[i]);
}

/// cast: C conversion; to bool is `!= 0`. Float to integer truncates toward zero.
void cast(const Step& s, DType from, const void* x, DType to, void* out, int64_t n) {
  visitDType(from, [&](auto fromTag) {
    using S = typename decltype(fromTag)::type;
    visitDType(to, [&](auto toTag) {
      using D = typename decltype(toTag)::type;
      const S* a = static_cast<const S*>(x);
      D* o = static_cast<D*>(out);
      [[maybe_unused]] Scalar<S> b{s};
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<D, bool>)
          o[i] = ir::formula::toBool(b, a[i]);
        else
          o[i] = static_cast<D>(a[i]);
      }
    });
  });
}

} // namespace

Arrays runSource(const Step& s) {
  switch (s.op) {
  case Op::Constant:
    return {constant(s)};
  case Op::Full:
    return {Array::full(s.type().dtype, s.type().shape, s.attrs.getFloat("value"))};
  case Op::Iota:
    return {iota(s)};
  case Op::Eye:
    return {eye(s)};
  case Op::Parameter:
  GRAPHC_ELEMENTWISE_CASES:
  GRAPHC_SHAPE_CASES:
  GRAPHC_REDUCE_CASES:
  GRAPHC_LINALG_CASES:
  GRAPHC_ASSUME_CASES:
    s.fail("internal error: not a source op");
  }
  ir::unknownOp();
}

void applyElementwise(const Step& s, DType operandType, llvm::ArrayRef<const void*> xs, void* out,
                      int64_t n) {
  auto in = [&](auto tag, size_t i) {
    return static_cast<const typename decltype(tag)::type*>(xs[i]);
  };
  auto result = [&](auto tag) { return static_cast<typename decltype(tag)::type*>(out); };
  switch (ir::opInfo(s.op).kind) {
  case ir::OpKind::Unary:
    return visitNumeric(s, operandType, [&](auto t) { unary(s, in(t, 0), result(t), n); });
  case ir::OpKind::Binary:
    return visitNumeric(s, operandType,
                        [&](auto t) { binary(s, in(t, 0), in(t, 1), result(t), n); });
  case ir::OpKind::Compare:
    return visitDType(operandType,
                      [&](auto t) { compare(s, in(t, 0), in(t, 1), static_cast<bool*>(out), n); });
  case ir::OpKind::Logical:
    return logical(s, xs, static_cast<bool*>(out), n);
  case ir::OpKind::Select:
    return visitDType(s.type().dtype, [&](auto t) {
      const bool* c = static_cast<const bool*>(xs[0]);
      const auto *a = in(t, 1), *b = in(t, 2);
      auto* o = result(t);
      for (int64_t i = 0; i < n; ++i)
        o[i] = c[i] ? a[i] : b[i];
    });
  case ir::OpKind::Cast:
    return cast(s, operandType, xs[0], s.type().dtype, out, n);
  case ir::OpKind::Source:
  case ir::OpKind::Shape:
  case ir::OpKind::Reduce:
  case ir::OpKind::Linalg:
  case ir::OpKind::Assume:
    s.fail("internal error: not an elementwise op");
  }
}

Arrays runElementwise(const Step& s, llvm::ArrayRef<Array> xs) {
  Array out = Array::empty(s.type().dtype, s.type().shape);
  llvm::SmallVector<const void*, 3> data;
  for (const Array& x : xs)
    data.push_back(x.rawData());
  // select's first operand is the bool condition; its values set the operand type.
  DType operandType = xs[ir::opInfo(s.op).kind == ir::OpKind::Select ? 1 : 0].dtype();
  applyElementwise(s, operandType, data, out.rawData(), out.numel());
  return {out};
}

} // namespace graphc::cpu
