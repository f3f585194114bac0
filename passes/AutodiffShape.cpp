//===- passes/AutodiffShape.cpp - Derivatives of shape ops and reductions --===//
//
// The shape ops, sum, mean, trace and the assume_* ops are linear: their JVP is the
// op applied to the tangents, their transpose the adjoint data movement (broadcast
// <-> sum, slice <-> zero padding, concat <-> slices, diag <-> diag_part). var, max,
// min and prod get their derivatives here too:
//   d var(x)  = 2 mean((x - mean(x)) dx)
//   d max(x)  = sum(dx * [x == max]) / count(x == max): ties share the tangent evenly
//   d prod(x) = sum(dx * prod(x) / x): NaN where an element of x is zero.
//
//===----------------------------------------------------------------------===//
#include "ir/OpCases.h"
#include "passes/Autodiff.h"

#include <fmt/format.h>

namespace graphc::passes::rules {

using ir::Attrs;
using ir::Op;
using ir::Value;

namespace {

/// `a` with a zero block of length `n` inserted along `axis`, before (or after) it.
Value padAxis(DiffBuilder& b, Value a, int64_t axis, int64_t n, bool before) {
  if (n == 0)
    return a;
  ir::TensorType zt = a.type();
  zt.shape[axis] = n;
  Value z = b.zeros(zt);
  return before ? b.concat({z, a}, axis) : b.concat({a, z}, axis);
}

/// The adjoint of slice: `ct` (the slice's shape) scattered into zeros of `shape`.
Value unslice(DiffBuilder& b, Value ct, const ir::Node& slice, llvm::ArrayRef<int64_t> shape) {
  const auto& start = slice.attrs().getInts("start");
  std::vector<int64_t> stride = slice.attrs().getInts("stride");
  stride.resize(shape.size(), 1);
  Value v = ct;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    ir::Shape s = v.type().shape;
    int64_t m = s[i];
    if (stride[i] > 1 && m > 0) {
      // [.., m, ..] -> [.., m, 1, ..] -> zero-padded [.., m, stride, ..] -> [.., m*stride, ..]
      ir::Shape withUnit = s;
      withUnit.insert(withUnit.begin() + i + 1, 1);
      v = padAxis(b, b.reshape(v, withUnit), i + 1, stride[i] - 1, /*before=*/false);
      s[i] = m * stride[i];
      v = b.reshape(v, s);
      int64_t keep = std::min(s[i], shape[i] - start[i]);
      std::vector<int64_t> lo(s.size(), 0), hi(s.begin(), s.end());
      hi[i] = keep;
      v = b.slice(v, lo, hi);
    }
    int64_t len = v.type().shape[i];
    v = padAxis(b, v, i, start[i], /*before=*/true);
    v = padAxis(b, v, i, shape[i] - start[i] - len, /*before=*/false);
  }
  return v;
}

/// The adjoint of diag_part: `ct` ([..., k]) on the diagonal of zeros of `shape`.
Value undiagPart(DiffBuilder& b, Value ct, llvm::ArrayRef<int64_t> shape) {
  int64_t r = static_cast<int64_t>(shape.size());
  Value d = b.diag(ct);
  int64_t k = ct.type().shape.back();
  d = padAxis(b, d, r - 2, shape[r - 2] - k, /*before=*/false);
  return padAxis(b, d, r - 1, shape[r - 1] - k, /*before=*/false);
}

Attrs withKeepdims(const Attrs& reduce) {
  Attrs a = reduce;
  a.set("keepdims", true);
  return a;
}

} // namespace

ValueList jvpLinear(DiffBuilder& b, const JvpNode& n) {
  const ir::Node& node = n.node;
  if (node.op() == Op::Add)
    return {b.add(n.dinputs[0], n.dinputs[1])};
  if (node.op() == Op::Sub)
    return {b.sub(n.dinputs[0], n.dinputs[1])};
  if (node.kind() == ir::OpKind::Assume) // the fact holds for the primal, not the tangent
    return {n.dinputs[0]};
  bool any = false;
  ValueList operands;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    any = any || n.dinputs[i];
    operands.push_back(b.orZeros(n.dinputs[i], n.inputs[i].type()));
  }
  if (!any)
    return {Value()};
  return {b.apply(node.op(), operands, node.attrs())};
}

ValueList jvpReduce(DiffBuilder& b, const JvpNode& n) {
  Value x = n.inputs[0], y = n.results[0], dx = n.dinputs[0];
  if (!dx)
    return {Value()};
  const Attrs& attrs = n.node.attrs();
  const auto& axes = attrs.getInts("axes");
  const ir::Shape& shape = x.type().shape;
  auto sum = [&](Value v) { return b.apply(Op::Sum, {v}, attrs); };
  switch (n.node.op()) {
  case Op::Var: {
    Value mean = b.unreduce(b.apply(Op::Mean, {x}, withKeepdims(attrs)), axes, shape);
    return {b.scale(b.apply(Op::Mean, {b.mul(b.sub(x, mean), dx)}, attrs), 2)};
  }
  case Op::Max:
  case Op::Min: {
    Value mask =
        b.select(b.apply(Op::Eq, {x, b.unreduce(y, axes, shape)}), b.scalar(1, x), Value());
    return {b.div(sum(b.mul(dx, mask)), sum(mask))};
  }
  case Op::Prod:
    return {sum(b.mul(dx, b.div(b.unreduce(y, axes, shape), x)))};
  case Op::Sum:
  case Op::Mean:
  case Op::Argmax:
  case Op::Argmin:
  GRAPHC_SOURCE_CASES:
  GRAPHC_ELEMENTWISE_CASES:
  GRAPHC_SHAPE_CASES:
  GRAPHC_LINALG_CASES:
  GRAPHC_ASSUME_CASES:
  GRAPHC_COLLECTIVE_CASES:
    throw Error(
        fmt::format("internal error: no reduction derivative for {}", n.node.info().name.str()));
  }
  ir::unknownOp();
}

ValueList transposeShape(DiffBuilder& b, const LinearNode& n, Value ct) {
  const ir::Node& node = n.node;
  const ir::Shape& in = node.operand(0).type().shape;
  switch (node.op()) {
  case Op::BroadcastTo:
    return {b.sumTo(ct, in)};
  case Op::Reshape:
    return {b.reshape(ct, in)};
  case Op::Transpose: {
    const auto& perm = node.attrs().getInts("perm");
    std::vector<int64_t> inverse(perm.size());
    for (size_t i = 0; i < perm.size(); ++i)
      inverse[perm[i]] = static_cast<int64_t>(i);
    return {b.apply(Op::Transpose, {ct}, Attrs{{"perm", inverse}})};
  }
  case Op::Slice:
    return {unslice(b, ct, node, in)};
  case Op::Concat: {
    int64_t axis = node.attrs().getInt("axis"), offset = 0;
    ValueList out;
    for (size_t i = 0; i < node.operands().size(); ++i) {
      const ir::Shape& s = node.operand(i).type().shape;
      std::vector<int64_t> lo(s.size(), 0), hi(ct.type().shape.begin(), ct.type().shape.end());
      lo[axis] = offset;
      hi[axis] = offset + s[axis];
      offset += s[axis];
      out.push_back(n.linear[i] ? b.slice(ct, lo, hi) : Value());
    }
    return out;
  }
  case Op::Diag:
    return {b.diagPart(ct)};
  case Op::DiagPart:
    return {undiagPart(b, ct, in)};
  case Op::Triu:
  case Op::Tril:
    return {b.apply(node.op(), {ct}, node.attrs())};
  GRAPHC_ALL_BUT_SHAPE_CASES:
    throw Error(fmt::format("internal error: {} is not a shape op", node.info().name.str()));
  }
  ir::unknownOp();
}

ValueList transposeSumMean(DiffBuilder& b, const LinearNode& n, Value ct) {
  const ir::TensorType& in = n.node.operand(0).type();
  const auto& axes = n.node.attrs().getInts("axes");
  Value spread = b.unreduce(ct, axes, in.shape);
  if (n.node.op() == Op::Sum)
    return {spread};
  int64_t count = 1;
  for (int64_t a : axes)
    count *= in.shape[a];
  return {b.scale(spread, 1.0 / static_cast<double>(count))};
}

ValueList transposeIdentity(DiffBuilder&, const LinearNode&, Value ct) {
  return {ct};
}

namespace {
/// The sum over the ranks is linear; a max or min over them is not differentiated:
/// a graph is differentiated before it is sharded (passes/Shard.h), not after.
void requireSumOverRanks(const ir::Node& node) {
  const std::string& reduction = node.attrs().getStr("reduction");
  if (!reduction.empty() && reduction != "sum")
    throw Error(fmt::format("all_reduce {{reduction=\"{}\"}}: no derivative rule; differentiate "
                            "the graph before it is sharded",
                            reduction),
                node.loc());
}
} // namespace

ValueList jvpAllReduce(DiffBuilder& b, const JvpNode& n) {
  requireSumOverRanks(n.node);
  return jvpLinear(b, n);
}

// y = sum over ranks s of x_s on every rank r: each x_s gets the sum of every
// rank's cotangent.
ValueList transposeAllReduce(DiffBuilder& b, const LinearNode& n, Value ct) {
  requireSumOverRanks(n.node);
  return {b.apply(Op::AllReduce, {ct}, n.node.attrs())};
}

} // namespace graphc::passes::rules
