//===- frontend/Shape.cpp - Data movement and reductions ------------------===//
#include "frontend/Shape.h"

#include "frontend/Trace.h"

#include <algorithm>
#include <fmt/format.h>
#include <numeric>

namespace graphc {
namespace {

[[noreturn]] void fail(ir::Op op, const TensorType& x, const std::string& message,
                       const SrcLoc& loc) {
  throw Error(fmt::format("{}({}): {}", ir::opName(op).str(), x.str(), message), toSourceLoc(loc));
}

/// `axis` made non-negative for rank `rank`, or a failure naming `op`.
int64_t normalizeAxis(int64_t axis, int64_t rank, ir::Op op, const TensorType& x,
                      const SrcLoc& loc) {
  if (axis < -rank || axis >= rank)
    fail(op, x, fmt::format("axis {} is out of range for rank {}", axis, rank), loc);
  return axis < 0 ? axis + rank : axis;
}

} // namespace

std::vector<int64_t> Axes::normalize(int64_t rank, llvm::StringRef op, const TensorType& x,
                                     const SrcLoc& loc) const {
  std::vector<int64_t> out(all_ ? rank : 0);
  std::iota(out.begin(), out.end(), 0);
  for (int64_t a : axes_) {
    if (a < -rank || a >= rank)
      throw Error(
          fmt::format("{}({}): axis {} is out of range for rank {}", op.str(), x.str(), a, rank),
          toSourceLoc(loc));
    out.push_back(a < 0 ? a + rank : a);
  }
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    throw Error(fmt::format("{}({}): repeated axis", op.str(), x.str()), toSourceLoc(loc));
  return out;
}

Tensor broadcast_to(const Tensor& x, llvm::ArrayRef<int64_t> shape, SrcLoc loc) {
  if (x.defined() && llvm::ArrayRef<int64_t>(x.shape()) == shape)
    return x;
  return detail::emit1(ir::Op::BroadcastTo, {x},
                       ir::Attrs{{"shape", std::vector<int64_t>(shape.begin(), shape.end())}}, loc);
}

Tensor reshape(const Tensor& x, llvm::ArrayRef<int64_t> shape, SrcLoc loc) {
  std::vector<int64_t> dims(shape.begin(), shape.end());
  auto inferred = std::find(dims.begin(), dims.end(), -1);
  if (inferred != dims.end()) {
    if (std::find(inferred + 1, dims.end(), -1) != dims.end())
      fail(ir::Op::Reshape, x.type(), "only one dimension may be -1", loc);
    *inferred = 1; // the other entries' count (checked: they may be negative or huge)
    int64_t known = ir::checkedNumElements(dims).value_or(0);
    if (known == 0 || x.numel() % known != 0)
      fail(ir::Op::Reshape, x.type(),
           fmt::format("cannot reshape {} elements to {}", x.numel(), ir::shapeString(shape)), loc);
    *inferred = x.numel() / known;
  }
  return detail::emit1(ir::Op::Reshape, {x}, ir::Attrs{{"shape", dims}}, loc);
}

Tensor transpose(const Tensor& x, llvm::ArrayRef<int64_t> perm, SrcLoc loc) {
  int64_t rank = x.rank();
  std::vector<int64_t> p(rank);
  std::iota(p.begin(), p.end(), 0);
  if (perm.empty()) {
    if (rank < 2)
      fail(ir::Op::Transpose, x.type(), "needs rank >= 2 to swap the last two axes", loc);
    std::swap(p[rank - 1], p[rank - 2]);
  } else {
    p.clear();
    for (int64_t a : perm)
      p.push_back(a < 0 ? a + rank : a);
  }
  return detail::emit1(ir::Op::Transpose, {x}, ir::Attrs{{"perm", p}}, loc);
}

Tensor slice(const Tensor& x, llvm::ArrayRef<int64_t> start, llvm::ArrayRef<int64_t> stop,
             llvm::ArrayRef<int64_t> stride, SrcLoc loc) {
  auto normalized = [&](llvm::ArrayRef<int64_t> idx) {
    std::vector<int64_t> out(idx.begin(), idx.end());
    for (size_t i = 0; i < out.size() && i < x.shape().size(); ++i)
      if (out[i] < 0)
        out[i] += x.shape()[i];
    return out;
  };
  ir::Attrs attrs{{"start", normalized(start)}, {"stop", normalized(stop)}};
  if (!stride.empty())
    attrs.set("stride", std::vector<int64_t>(stride.begin(), stride.end()));
  return detail::emit1(ir::Op::Slice, {x}, attrs, loc);
}

Tensor concat(const std::vector<Tensor>& xs, int64_t axis, SrcLoc loc) {
  if (xs.empty())
    throw Error("concat: needs at least one tensor", toSourceLoc(loc));
  axis = normalizeAxis(axis, xs[0].rank(), ir::Op::Concat, xs[0].type(), loc);
  return detail::emit1(ir::Op::Concat, xs, ir::Attrs{{"axis", axis}}, loc);
}

Tensor diag(const Tensor& v, SrcLoc loc) {
  return detail::emit1(ir::Op::Diag, {v}, {}, loc);
}

Tensor diag_part(const Tensor& m, SrcLoc loc) {
  return detail::emit1(ir::Op::DiagPart, {m}, {}, loc);
}

Tensor triu(const Tensor& m, int64_t k, SrcLoc loc) {
  ir::Attrs attrs;
  if (k != 0)
    attrs.set("k", k);
  return detail::emit1(ir::Op::Triu, {m}, attrs, loc);
}

Tensor tril(const Tensor& m, int64_t k, SrcLoc loc) {
  ir::Attrs attrs;
  if (k != 0)
    attrs.set("k", k);
  return detail::emit1(ir::Op::Tril, {m}, attrs, loc);
}

Tensor reduce(ir::Op op, const Tensor& x, const Axes& axes, bool keepdims, SrcLoc loc) {
  if (!x.defined())
    throw Error(fmt::format("{}: null Tensor", ir::opName(op).str()), toSourceLoc(loc));
  ir::Attrs attrs{{"axes", axes.normalize(x.rank(), ir::opName(op), x.type(), loc)}};
  attrs.set("keepdims", keepdims);
  return detail::emit1(op, {x}, attrs, loc);
}

#define GRAPHC_DEFINE_REDUCE(name, Code)                                                           \
  Tensor name(const Tensor& x, const Axes& axes, bool keepdims, SrcLoc loc) {                      \
    return reduce(ir::Op::Code, x, axes, keepdims, loc);                                           \
  }
GRAPHC_FRONTEND_REDUCE_OPS(GRAPHC_DEFINE_REDUCE)
#undef GRAPHC_DEFINE_REDUCE

Tensor all_reduce(const Tensor& x, const std::string& reduction, SrcLoc loc) {
  return detail::emit1(ir::Op::AllReduce, {x}, ir::Attrs{{"reduction", reduction}}, loc);
}

} // namespace graphc
