//===- passes/Shard.cpp - One graph as the program of each rank of a device set -===//
//
// One forward walk over the live nodes, as passes/Batch.cpp walks them: each new
// value is replicated or split along one axis (all results of a node alike), and a
// node's rule follows from its operands' splits. The rules are grouped by op kind;
// what they cannot do without another rank's data fails in fail().
//
//===----------------------------------------------------------------------===//
#include "passes/Shard.h"

#include "ir/OpCases.h"
#include "passes/Rewrite.h"

#include <fmt/format.h>

#include <algorithm>

namespace graphc::passes {

Share Share::of(int64_t length, int ranks, int rank) {
  int64_t base = length / ranks, extra = length % ranks;
  return {rank * base + std::min<int64_t>(rank, extra), base + (rank < extra ? 1 : 0)};
}

namespace {

using ir::Attrs;
using ir::Node;
using ir::Op;
using ir::TensorType;
using ir::Value;

/// The new values of one old node, and the axis they are split along.
struct Mapped {
  ValueList values;
  int axis = kReplicated;
};

class Sharder {
public:
  Sharder(const ir::Graph& source, ir::Graph& target, int ranks, int rank)
      : source_(source), target_(target), ranks_(ranks), rank_(rank), map_(source.nodes().size()) {}

  void addParameters(llvm::ArrayRef<int> axes);
  void addNodes();
  std::vector<int> addOutputs();

private:
  int axisOf(Value old) const { return map_[old.node->id()].axis; }
  Value map(Value old) const { return map_[old.node->id()].values[old.index]; }
  [[noreturn]] void fail(const Node& n, const std::string& why) const {
    throw Error(fmt::format("cannot shard {}: {}", n.info().name.str(), why), n.loc());
  }
  /// `t` with axis `axis` cut to this rank's share.
  TensorType local(TensorType t, int axis) const {
    if (axis != kReplicated)
      t.shape[axis] = Share::of(t.shape[axis], ranks_, rank_).extent;
    return t;
  }
  Value apply(Op op, llvm::ArrayRef<Value> operands, const Attrs& attrs = {}) {
    return target_.apply(op, operands, attrs, {}, loc_);
  }
  Value full(double value, const TensorType& type) {
    return target_.apply(Op::Full, {}, Attrs{{"value", value}}, {type}, loc_);
  }
  /// op(operands){attrs} for node `n`, named as it is.
  ValueList create(const Node& n, llvm::ArrayRef<Value> operands, const Attrs& attrs) {
    return resultsOf(target_.create(n.op(), operands, attrs, {}, loc_, n.name()));
  }

  /// The new value of `old` split along `axis`: as it is when it is split so; this
  /// rank's share when it is replicated.
  Value splitAlong(const Node& user, Value old, int axis);
  /// The sum (max, min) over the ranks of `v`.
  Value allReduce(Value v, const char* reduction = "sum") {
    return apply(Op::AllReduce, {v}, Attrs{{"reduction", std::string(reduction)}});
  }

  /// `n`'s new values and their axis, by its kind's rule; `axis` is the split its
  /// operands share, if any.
  Mapped shard(const Node& n);
  Mapped elementwise(const Node& n, int axis);
  Mapped reduce(const Node& n, int axis);
  Mapped matmul(const Node& n);
  Mapped syrk(const Node& n, int axis);
  Mapped linalg(const Node& n, int axis);
  Mapped shapeOp(const Node& n, int axis);

  const ir::Graph& source_;
  ir::Graph& target_;
  int ranks_, rank_;
  std::vector<Mapped> map_; // by old node id
  SourceLoc loc_;
};

void Sharder::addParameters(llvm::ArrayRef<int> axes) {
  for (size_t i = 0; i < source_.params().size(); ++i) {
    const Node* p = source_.params()[i];
    const std::string& name = p->attrs().getStr("name");
    const TensorType& t = p->type();
    int axis = axes[i];
    if (axis != kReplicated && (axis < 0 || axis >= t.rank()))
      throw Error(fmt::format("parameter %{} ({}): no axis {} to split", name, t.str(), axis),
                  p->loc());
    if (axis != kReplicated && t.shape[axis] < ranks_)
      throw Error(fmt::format("parameter %{} ({}): axis {} of length {} cannot be split over {} "
                              "ranks",
                              name, t.str(), axis, t.shape[axis], ranks_),
                  p->loc());
    map_[p->id()] = {{target_.addParameter(name, local(t, axis), p->loc())}, axis};
  }
}

void Sharder::addNodes() {
  std::vector<bool> live = liveNodes(source_);
  for (const Node* n : source_.nodes()) {
    if (!live[n->id()] || n->op() == Op::Parameter)
      continue;
    loc_ = n->loc();
    map_[n->id()] = shard(*n);
  }
}

std::vector<int> Sharder::addOutputs() {
  std::vector<int> axes;
  for (Value v : source_.outputs()) {
    target_.addOutput(map(v));
    axes.push_back(axisOf(v));
  }
  return axes;
}

Value Sharder::splitAlong(const Node& user, Value old, int axis) {
  int has = axisOf(old);
  if (has == axis)
    return map(old);
  if (has != kReplicated)
    fail(user,
         fmt::format("operands split along axes {} and {} (that needs an all-gather)", axis, has));
  TensorType want = local(old.type(), axis);
  const Node& n = *old.node;
  if (n.op() == Op::Full)
    return full(n.attrs().getFloat("value"), want);
  if (n.op() == Op::BroadcastTo) { // made at the share's shape where the axis is broadcast
    const TensorType& x = n.operand(0).type();
    int64_t at = axis - (old.type().rank() - x.rank());
    if (at < 0 || x.shape[at] == 1)
      return apply(Op::BroadcastTo, {map(n.operand(0))},
                   Attrs{{"shape", std::vector<int64_t>(want.shape.begin(), want.shape.end())}});
  }
  Share share = Share::of(old.type().shape[axis], ranks_, rank_);
  std::vector<int64_t> start(old.type().rank(), 0),
      stop(old.type().shape.begin(), old.type().shape.end());
  start[axis] = share.offset;
  stop[axis] = share.offset + share.extent;
  return apply(Op::Slice, {map(old)}, Attrs{{"start", start}, {"stop", stop}});
}

Mapped Sharder::shard(const Node& n) {
  int axis = kReplicated;
  for (Value v : n.operands())
    if (axisOf(v) != kReplicated) {
      axis = axisOf(v);
      break;
    }
  if (n.kind() == ir::OpKind::Collective)
    fail(n, "the graph is sharded already");
  if (axis == kReplicated) { // every operand whole: the node as it is
    ValueList operands;
    for (Value v : n.operands())
      operands.push_back(map(v));
    return {resultsOf(target_.create(n.op(), operands, n.attrs(),
                                     n.kind() == ir::OpKind::Source ? n.types()
                                                                    : llvm::ArrayRef<TensorType>{},
                                     loc_, n.name())),
            kReplicated};
  }
  switch (n.kind()) {
  case ir::OpKind::Unary:
  case ir::OpKind::Binary:
  case ir::OpKind::Compare:
  case ir::OpKind::Logical:
  case ir::OpKind::Select:
  case ir::OpKind::Cast:
    return elementwise(n, axis);
  case ir::OpKind::Assume: // a fact about whole matrices: split along a batch axis only
    return linalg(n, axis);
  case ir::OpKind::Reduce:
    return reduce(n, axis);
  case ir::OpKind::Linalg:
    if (n.op() == Op::Matmul)
      return matmul(n);
    if (n.op() == Op::Syrk)
      return syrk(n, axis);
    return linalg(n, axis);
  case ir::OpKind::Shape:
    return shapeOp(n, axis);
  case ir::OpKind::Source:
  case ir::OpKind::Collective:
    break;
  }
  ir::unknownOp();
}

Mapped Sharder::elementwise(const Node& n, int axis) {
  ValueList operands; // splitAlong names an operand split along another axis
  for (Value v : n.operands())
    operands.push_back(splitAlong(n, v, axis));
  return {create(n, operands, n.attrs()), axis};
}

Mapped Sharder::reduce(const Node& n, int axis) {
  Value x = map(n.operand(0));
  const Attrs& attrs = n.attrs();
  const auto& axes = attrs.getInts("axes");
  bool keep = attrs.flag("keepdims");
  if (std::find(axes.begin(), axes.end(), axis) == axes.end()) {
    int before = static_cast<int>(
        std::count_if(axes.begin(), axes.end(), [&](int64_t a) { return a < axis; }));
    return {create(n, {x}, attrs), keep ? axis : axis - before};
  }
  // Over the split axis: reduce the share, then combine the ranks.
  int64_t count = 1;
  for (int64_t a : axes)
    count *= n.operand(0).type().shape[a];
  auto mean = [&](Value v, const Attrs& a) {
    Value s = allReduce(apply(Op::Sum, {v}, a));
    return apply(Op::Mul, {s, full(1.0 / static_cast<double>(count), s.type())});
  };
  switch (n.op()) {
  case Op::Sum:
    return {{allReduce(apply(Op::Sum, {x}, attrs))}, kReplicated};
  case Op::Max:
    return {{allReduce(apply(Op::Max, {x}, attrs), "max")}, kReplicated};
  case Op::Min:
    return {{allReduce(apply(Op::Min, {x}, attrs), "min")}, kReplicated};
  case Op::Mean:
    return {{mean(x, attrs)}, kReplicated};
  case Op::Var: { // the mean first, then the squared deviations from it (two passes)
    Attrs kept = attrs;
    kept.set("keepdims", true);
    Value m =
        apply(Op::BroadcastTo, {mean(x, kept)},
              Attrs{{"shape", std::vector<int64_t>(x.type().shape.begin(), x.type().shape.end())}});
    Value d = apply(Op::Sub, {x, m});
    return {{mean(apply(Op::Mul, {d, d}), attrs)}, kReplicated};
  }
  case Op::Prod:
  case Op::Argmax:
  case Op::Argmin:
    fail(n, fmt::format("a reduction over the split axis {} (no all-reduce for it)", axis));
  GRAPHC_ALL_BUT_REDUCE_CASES:
    break;
  }
  ir::unknownOp();
}

Mapped Sharder::matmul(const Node& n) {
  Value a = n.operand(0), b = n.operand(1);
  const int r = static_cast<int>(a.type().rank());
  const bool ta = n.attrs().flag("transpose_a"), tb = n.attrs().flag("transpose_b");
  const int rowA = ta ? r - 1 : r - 2, inA = ta ? r - 2 : r - 1;
  const int inB = tb ? r - 1 : r - 2, colB = tb ? r - 2 : r - 1;
  const int sa = axisOf(a), sb = axisOf(b);
  if ((sa != kReplicated && sa < r - 2) || (sb != kReplicated && sb < r - 2)) { // a batch axis
    int axis = sa != kReplicated && sa < r - 2 ? sa : sb;
    return {create(n, {splitAlong(n, a, axis), splitAlong(n, b, axis)}, n.attrs()), axis};
  }
  if ((sa == inA || sa == kReplicated) && (sb == inB || sb == kReplicated)) // contracted
    return {
        {allReduce(apply(Op::Matmul, {splitAlong(n, a, inA), splitAlong(n, b, inB)}, n.attrs()))},
        kReplicated};
  if (sa == rowA && sb == kReplicated)
    return {create(n, {map(a), map(b)}, n.attrs()), r - 2};
  if (sb == colB && sa == kReplicated)
    return {create(n, {map(a), map(b)}, n.attrs()), r - 1};
  fail(n, fmt::format("operands split along axes {} and {}, not only the contracted one (that "
                      "needs an all-gather)",
                      sa, sb));
}

Mapped Sharder::syrk(const Node& n, int axis) {
  const int r = static_cast<int>(n.operand(0).type().rank());
  const int contracted = n.attrs().flag("transpose") ? r - 2 : r - 1;
  if (axis < r - 2)
    return {create(n, {map(n.operand(0))}, n.attrs()), axis};
  if (axis == contracted)
    return {{allReduce(apply(Op::Syrk, {map(n.operand(0))}, n.attrs()))}, kReplicated};
  fail(n,
       fmt::format("its operand is split along the kept axis {} (that needs an all-gather)", axis));
}

Mapped Sharder::linalg(const Node& n, int axis) {
  const int r = static_cast<int>(n.operand(0).type().rank());
  // Independent right-hand sides: the columns of B in A X = B, its rows in X A = B.
  bool solve = n.op() == Op::Solve || n.op() == Op::TriangularSolve;
  int independent = n.op() == Op::TriangularSolve && n.attrs().flag("right_side") ? r - 2 : r - 1;
  if (solve && axisOf(n.operand(0)) == kReplicated && axisOf(n.operand(1)) == independent)
    return {create(n, {map(n.operand(0)), map(n.operand(1))}, n.attrs()), independent};
  if (axis >= r - 2)
    fail(n, fmt::format("a matrix split along axis {} (it needs the whole matrix)", axis));
  ValueList operands;
  for (Value v : n.operands())
    operands.push_back(splitAlong(n, v, axis));
  return {create(n, operands, n.attrs()), axis};
}

Mapped Sharder::shapeOp(const Node& n, int axis) {
  Value x = n.operand(0);
  const TensorType& in = x.type();
  const int r = static_cast<int>(in.rank());
  Attrs attrs = n.attrs();
  auto localShape = [&](const TensorType& t, int at) {
    TensorType l = local(t, at);
    return std::vector<int64_t>(l.shape.begin(), l.shape.end());
  };
  switch (n.op()) {
  case Op::BroadcastTo: {
    int at = axis + static_cast<int>(n.type().rank()) - r;
    return {create(n, {map(x)}, attrs.set("shape", localShape(n.type(), at))), at};
  }
  case Op::Reshape: { // the axis survives where the extents before it multiply alike
    int64_t before = 1, out = 1;
    for (int i = 0; i < axis; ++i)
      before *= in.shape[i];
    const ir::Shape& shape = n.type().shape;
    for (int b = 0; b < static_cast<int>(shape.size()); out *= shape[b], ++b)
      if (out == before && shape[b] == in.shape[axis])
        return {create(n, {map(x)}, attrs.set("shape", localShape(n.type(), b))), b};
    fail(n, fmt::format("it regroups the split axis {}", axis));
  }
  case Op::Transpose: {
    const auto& perm = attrs.getInts("perm");
    int at = static_cast<int>(std::find(perm.begin(), perm.end(), axis) - perm.begin());
    return {create(n, {map(x)}, attrs), at};
  }
  case Op::Slice: {
    std::vector<int64_t> start = attrs.getInts("start"), stop = attrs.getInts("stop");
    std::vector<int64_t> stride = attrs.getInts("stride");
    if (start[axis] != 0 || stop[axis] != in.shape[axis] || (!stride.empty() && stride[axis] != 1))
      fail(n, fmt::format("it cuts the split axis {}", axis));
    stop[axis] = local(in, axis).shape[axis];
    return {create(n, {map(x)}, attrs.set("stop", stop)), axis};
  }
  case Op::Concat: {
    if (attrs.getInt("axis") == axis)
      fail(n, fmt::format("it joins along the split axis {}", axis));
    ValueList operands;
    for (Value v : n.operands())
      operands.push_back(splitAlong(n, v, axis));
    return {create(n, operands, attrs), axis};
  }
  case Op::Diag: // the last axis becomes a matrix
  case Op::DiagPart:
  case Op::Triu:
  case Op::Tril:
    if (axis >= (n.op() == Op::Diag ? r - 1 : r - 2))
      fail(n, fmt::format("the split axis {} is one of its matrix axes", axis));
    return {create(n, {map(x)}, attrs), axis};
  GRAPHC_ALL_BUT_SHAPE_CASES:
    break;
  }
  ir::unknownOp();
}

} // namespace

ShardedGraph shardGraph(const ir::Graph& g, llvm::ArrayRef<int> axes, int ranks, int rank) {
  if (ranks < 1 || rank < 0 || rank >= ranks)
    throw Error(fmt::format("@{}: rank {} of {} ranks", g.name(), rank, ranks));
  if (axes.size() != g.params().size())
    throw Error(fmt::format("@{}: {} split axes given for {} parameters", g.name(), axes.size(),
                            g.params().size()));
  ShardedGraph out{std::make_unique<ir::Graph>(g.name()), {}};
  Sharder sharder(g, *out.graph, ranks, rank);
  sharder.addParameters(axes);
  sharder.addNodes();
  out.outputAxes = sharder.addOutputs();
  out.graph = copyLive(*out.graph); // a source made at the share's shape leaves the whole one
  return out;
}

} // namespace graphc::passes
