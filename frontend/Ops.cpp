//===- frontend/Ops.cpp - Elementwise math, operators and factories -------===//
#include "frontend/Ops.h"

#include "frontend/Shape.h"
#include "frontend/Trace.h"
#include "ir/Infer.h"

#include <fmt/format.h>

namespace graphc {
namespace {

/// The tensors of an elementwise op: scalars turned into `full` constants and every
/// operand broadcast to the common shape. `like` picks the operand whose dtype the
/// scalars take (the first tensor when -1).
std::vector<Tensor> elementwiseOperands(ir::Op op, llvm::ArrayRef<const Operand*> xs,
                                        const SrcLoc& loc, int like = -1) {
  std::vector<const Tensor*> tensors;
  for (const Operand* x : xs)
    if (!x->isScalar())
      tensors.push_back(&x->tensor());
  if (tensors.empty())
    throw Error(fmt::format("{}: needs at least one tensor operand", ir::opName(op).str()),
                toSourceLoc(loc));
  Shape shape = tensors[0]->shape();
  for (const Tensor* t : tensors) {
    std::optional<Shape> b = ir::broadcastShapes(shape, t->shape());
    if (!b) {
      std::vector<Tensor> ts;
      for (const Tensor* u : tensors)
        ts.push_back(*u);
      throw Error(fmt::format("{}({}): shapes do not broadcast", ir::opName(op).str(),
                              detail::typesString(ts)),
                  toSourceLoc(loc));
    }
    shape = *b;
  }
  DType dtype =
      like >= 0 && !xs[like]->isScalar() ? xs[like]->tensor().dtype() : tensors[0]->dtype();
  std::vector<Tensor> out;
  for (const Operand* x : xs) {
    if (x->isScalar())
      out.push_back(full(shape, x->scalar(), dtype, loc));
    else if (x->tensor().shape() != shape)
      out.push_back(broadcast_to(x->tensor(), shape, loc));
    else
      out.push_back(x->tensor());
  }
  return out;
}

} // namespace

Tensor unary(ir::Op op, const Tensor& x, SrcLoc loc) {
  return detail::emit1(op, {x}, {}, loc);
}

Tensor binary(ir::Op op, const Operand& a, const Operand& b) {
  const SrcLoc& loc = a.isScalar() ? b.loc() : a.loc();
  return detail::emit1(op, elementwiseOperands(op, {&a, &b}, loc), {}, loc);
}

#define GRAPHC_DEFINE_UNARY(name, Code)                                                            \
  Tensor name(const Tensor& x, SrcLoc loc) {                                                       \
    return unary(ir::Op::Code, x, loc);                                                            \
  }
GRAPHC_UNARY_ELEMENTWISE_OPS(GRAPHC_DEFINE_UNARY)
#undef GRAPHC_DEFINE_UNARY

#define GRAPHC_DEFINE_BINARY(name, Code)                                                           \
  Tensor name(const Operand& a, const Operand& b) {                                                \
    return binary(ir::Op::Code, a, b);                                                             \
  }
GRAPHC_BINARY_ELEMENTWISE_OPS(GRAPHC_DEFINE_BINARY)
#undef GRAPHC_DEFINE_BINARY

Tensor select(const Operand& cond, const Operand& a, const Operand& b) {
  const SrcLoc& loc = !cond.isScalar() ? cond.loc() : !a.isScalar() ? a.loc() : b.loc();
  // Scalars take the dtype of the value operands, not of the bool condition.
  int like = !a.isScalar() ? 1 : 2;
  std::vector<Tensor> xs = elementwiseOperands(ir::Op::Select, {&cond, &a, &b}, loc, like);
  if (cond.isScalar())
    xs[0] = full(xs[1].shape(), cond.scalar() != 0 ? 1.0 : 0.0, DType::Bool, loc);
  return detail::emit1(ir::Op::Select, xs, {}, loc);
}

Tensor cast(const Tensor& x, DType dtype, SrcLoc loc) {
  if (x.defined() && x.dtype() == dtype)
    return x;
  return detail::emit1(ir::Op::Cast, {x}, ir::Attrs{{"dtype", dtype}}, loc);
}

Tensor clip(const Tensor& x, double lo, double hi, SrcLoc loc) {
  return minimum(maximum(Operand(x, loc), lo), hi);
}

Tensor operator+(const Operand& a, const Operand& b) {
  return add(a, b);
}
Tensor operator-(const Operand& a, const Operand& b) {
  return sub(a, b);
}
Tensor operator*(const Operand& a, const Operand& b) {
  return mul(a, b);
}
Tensor operator/(const Operand& a, const Operand& b) {
  return div(a, b);
}
Tensor operator-(const Operand& x) {
  return neg(x.tensor(), x.loc());
}
Tensor operator==(const Operand& a, const Operand& b) {
  return eq(a, b);
}
Tensor operator!=(const Operand& a, const Operand& b) {
  return ne(a, b);
}
Tensor operator<(const Operand& a, const Operand& b) {
  return lt(a, b);
}
Tensor operator<=(const Operand& a, const Operand& b) {
  return le(a, b);
}
Tensor operator>(const Operand& a, const Operand& b) {
  return gt(a, b);
}
Tensor operator>=(const Operand& a, const Operand& b) {
  return ge(a, b);
}
Tensor operator&(const Operand& a, const Operand& b) {
  return logical_and(a, b);
}
Tensor operator|(const Operand& a, const Operand& b) {
  return logical_or(a, b);
}
Tensor operator!(const Operand& x) {
  return logical_not(x.tensor(), x.loc());
}

Tensor& operator+=(Tensor& a, const Operand& b) {
  return a = add(Operand(a, b.loc()), b);
}
Tensor& operator-=(Tensor& a, const Operand& b) {
  return a = sub(Operand(a, b.loc()), b);
}
Tensor& operator*=(Tensor& a, const Operand& b) {
  return a = mul(Operand(a, b.loc()), b);
}
Tensor& operator/=(Tensor& a, const Operand& b) {
  return a = div(Operand(a, b.loc()), b);
}

Tensor full(llvm::ArrayRef<int64_t> shape, double value, DType dtype, SrcLoc loc) {
  return detail::emitSource(ir::Op::Full, ir::Attrs{{"value", value}}, TensorType(dtype, shape),
                            loc);
}

Tensor zeros(llvm::ArrayRef<int64_t> shape, DType dtype, SrcLoc loc) {
  return full(shape, 0.0, dtype, loc);
}

Tensor ones(llvm::ArrayRef<int64_t> shape, DType dtype, SrcLoc loc) {
  return full(shape, 1.0, dtype, loc);
}

Tensor eye(int64_t n, DType dtype, SrcLoc loc) {
  return eye({n, n}, dtype, loc);
}

Tensor eye(llvm::ArrayRef<int64_t> shape, DType dtype, SrcLoc loc) {
  return detail::emitSource(ir::Op::Eye, {}, TensorType(dtype, shape), loc);
}

Tensor iota(llvm::ArrayRef<int64_t> shape, int64_t axis, DType dtype, SrcLoc loc) {
  int64_t rank = static_cast<int64_t>(shape.size());
  if (axis < 0)
    axis += rank;
  return detail::emitSource(ir::Op::Iota, ir::Attrs{{"axis", axis}}, TensorType(dtype, shape), loc);
}

Tensor constant(const std::vector<double>& values, llvm::ArrayRef<int64_t> shape, DType dtype,
                SrcLoc loc) {
  return detail::emitSource(ir::Op::Constant, ir::Attrs{{"value", values}},
                            TensorType(dtype, shape), loc);
}

Tensor scalar(double value, DType dtype, SrcLoc loc) {
  return full({}, value, dtype, loc);
}

} // namespace graphc
