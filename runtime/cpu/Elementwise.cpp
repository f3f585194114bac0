//===- runtime/cpu/Elementwise.cpp - Sources and elementwise kernels ------===//
//
// Source ops (constant, full, iota, eye) and every elementwise op as one typed loop
// per op: the op is chosen once, outside the loop, and the element type comes from
// visitDType. The unary and binary ops' scalar functions are ir/Scalar.h's (the
// composite ones ir/Formulas.h's formulas over its primitives). Integer semantics:
// arithmetic wraps around; div truncates toward zero; remainder takes the sign of the
// divisor (NumPy); division by zero and negative integer powers are errors. See
// docs/ops.md.
//
//===----------------------------------------------------------------------===//
#include "ir/Formulas.h"
#include "ir/OpCases.h"
#include "ir/Scalar.h"
#include "runtime/cpu/Kernels.h"

#include <cmath>
#include <limits>

namespace graphc::cpu {
namespace {

using ir::Op;

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

//===--- Unary and binary -------------------------------------------------===//

/// ir/Scalar.h's primitives with the step's failure for integer errors.
template <typename T> auto primitives(const Step& s) {
  auto fail = [&s](const char* message) { s.fail(message); };
  return ir::scalar::Primitives<T, decltype(fail)>{fail};
}

template <typename T> void unary(const Step& s, const T* x, T* o, int64_t n) {
  auto map = [&](auto f) {
    for (int64_t i = 0; i < n; ++i)
      o[i] = f(x[i]);
  };
  if (!ir::scalar::unary(s.op, primitives<T>(s), ir::scalar::Which::All, map))
    s.fail("internal error: no kernel for this dtype");
}

template <typename T> void binary(const Step& s, const T* x, const T* y, T* o, int64_t n) {
  auto map = [&](auto f) {
    for (int64_t i = 0; i < n; ++i)
      o[i] = f(x[i], y[i]);
  };
  if (!ir::scalar::binary(s.op, primitives<T>(s), ir::scalar::Which::All, map))
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
      [[maybe_unused]] auto b = primitives<S>(s);
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
  GRAPHC_COLLECTIVE_CASES:
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
  case ir::OpKind::Collective:
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
