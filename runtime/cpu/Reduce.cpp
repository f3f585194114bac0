//===- runtime/cpu/Reduce.cpp - Reductions over axes ----------------------===//
//
// A reduction first moves the reduced axes last (a transposed view, copied only
// when it is not contiguous already), so every output element reduces one
// contiguous run of the operand. Floating-point sums and products accumulate in
// double; integer ones wrap around. var takes two passes in double: the mean, then
// the squared deviations from it. argmax/argmin over several axes return the
// index flattened over the reduced axes in C order (the first one on ties, the
// first NaN if any). max, min, mean, var, argmax and argmin over zero elements are
// errors; sum and prod over zero elements are 0 and 1.
//
//===----------------------------------------------------------------------===//
#include "ir/OpCases.h"
#include "runtime/cpu/Kernels.h"

#include <algorithm>
#include <fmt/format.h>

namespace graphc::cpu {
namespace {

using ir::Op;

template <typename T> constexpr bool kIsFloat = std::is_floating_point_v<T>;

/// Reduces each of `outer` contiguous runs of `inner` elements of `x` into `o`.
template <typename T, typename R>
void reduceRuns(const Step& s, const T* x, R* o, int64_t outer, int64_t inner) {
  using Acc = std::conditional_t<kIsFloat<T>, double, T>;
  for (int64_t r = 0; r < outer; ++r) {
    const T* p = x + r * inner;
    switch (s.op) {
    case Op::Sum:
    case Op::Mean: {
      Acc acc = 0;
      for (int64_t i = 0; i < inner; ++i)
        acc = wrapAdd(acc, static_cast<Acc>(p[i]));
      o[r] = static_cast<R>(s.op == Op::Mean ? acc / static_cast<Acc>(inner) : acc);
      break;
    }
    case Op::Var: { // float only: two passes in double
      double mean = 0, squares = 0;
      for (int64_t i = 0; i < inner; ++i)
        mean += static_cast<double>(p[i]);
      mean /= static_cast<double>(inner);
      for (int64_t i = 0; i < inner; ++i) {
        double d = static_cast<double>(p[i]) - mean;
        squares += d * d;
      }
      o[r] = static_cast<R>(squares / static_cast<double>(inner));
      break;
    }
    case Op::Prod: {
      Acc acc = 1;
      for (int64_t i = 0; i < inner; ++i)
        acc = wrapMul(acc, static_cast<Acc>(p[i]));
      o[r] = static_cast<R>(acc);
      break;
    }
    case Op::Max:
    case Op::Min:
    case Op::Argmax:
    case Op::Argmin: {
      int64_t best = 0;
      for (int64_t i = 1; i < inner; ++i)
        if (reductionPrefers(s.op, p[i], p[best]))
          best = i;
      o[r] = (s.op == Op::Argmax || s.op == Op::Argmin) ? static_cast<R>(best)
                                                        : static_cast<R>(p[best]);
      break;
    }
    GRAPHC_ALL_BUT_REDUCE_CASES:
      s.fail("internal error: not a reduction");
    }
  }
}

} // namespace

void failEmptyReduction(const Step& s, const ir::TensorType& input) {
  s.fail(fmt::format("reduction over zero elements (axes {} of {})",
                     ir::shapeString(s.attrs.getInts("axes")), input.str()));
}

Arrays runReduce(const Step& s, llvm::ArrayRef<Array> xs) {
  const Array& x = xs[0];
  const std::vector<int64_t>& axes = s.attrs.getInts("axes");
  ir::Shape shape, strides, keptShape, reducedShape;
  for (int pass = 0; pass < 2; ++pass) // kept axes first, then reduced axes
    for (int64_t i = 0; i < x.rank(); ++i) {
      bool reduced = std::find(axes.begin(), axes.end(), i) != axes.end();
      if (reduced != (pass == 1))
        continue;
      shape.push_back(x.shape()[i]);
      strides.push_back(x.strides()[i]);
      (reduced ? reducedShape : keptShape).push_back(x.shape()[i]);
    }
  int64_t outer = ir::numElements(keptShape), inner = ir::numElements(reducedShape);
  bool needsElements = s.op != Op::Sum && s.op != Op::Prod;
  if (inner == 0 && needsElements)
    failEmptyReduction(s, x.type());
  Array out = Array::empty(s.type().dtype, s.type().shape);
  if (outer == 0)
    return {out};
  Array y = x.view(shape, strides).contiguous();
  visitNumeric(s, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (out.dtype() == DType::I64 && x.dtype() != DType::I64)
      reduceRuns<T>(s, y.data<T>(), out.data<int64_t>(), outer, inner);
    else
      reduceRuns<T>(s, y.data<T>(), out.data<T>(), outer, inner);
  });
  return {out};
}

} // namespace graphc::cpu
