//===- passes/Batch.cpp - A leading batch axis over a whole graph ---------===//
//
// One forward walk over the live nodes. Each new value is either batched (the
// original type behind a leading axis of size `batch`) or unbatched (the original
// type). A node without a batched operand is copied. A node with one gets its
// op's batching rule, and every operand it needs batched that is not is broadcast
// along the batch first:
//   - elementwise, assume_*, diag, diag_part, triu, tril and the linear-algebra ops
//     (all of which act on trailing axes or elementwise): the same op over batched
//     operands; matmul of a batched [m,k] by an unbatched matrix becomes one
//     [batch*m, k] product instead of a broadcast of the right-hand side;
//   - reductions shift their axes by one;
//   - broadcast_to, reshape, transpose, slice and concat shift their shape, axis,
//     permutation or bounds attributes past the batch axis.
//
//===----------------------------------------------------------------------===//
#include "passes/Batch.h"

#include "ir/OpCases.h"
#include "passes/Rewrite.h"

#include <fmt/format.h>

namespace graphc::passes {
namespace {

using ir::Attrs;
using ir::Node;
using ir::Op;
using ir::TensorType;
using ir::Value;

/// The new values of one old node, and whether they carry the batch axis.
struct Mapped {
  ValueList values;
  bool batched = false;
};

/// `xs` behind `first`.
std::vector<int64_t> prepend(int64_t first, llvm::ArrayRef<int64_t> xs) {
  std::vector<int64_t> out{first};
  out.insert(out.end(), xs.begin(), xs.end());
  return out;
}

/// Axis numbers moved past the batch axis.
std::vector<int64_t> shifted(llvm::ArrayRef<int64_t> axes) {
  std::vector<int64_t> out;
  for (int64_t a : axes)
    out.push_back(a + 1);
  return out;
}

[[noreturn]] void noRule(const Node& n) {
  throw Error(fmt::format("cannot batch {}: no batching rule for this op", n.info().name.str()),
              n.loc());
}

class Batcher {
public:
  Batcher(const ir::Graph& source, ir::Graph& target, int64_t batch)
      : source_(source), target_(target), batch_(batch), map_(source.nodes().size()) {}

  void addParameters(llvm::ArrayRef<bool> batched);
  void addNodes();
  void addOutputs();

private:
  bool isBatched(Value old) const { return map_[old.node->id()].batched; }
  Value map(Value old) const { return map_[old.node->id()].values[old.index]; }
  /// The new value of `old` with the batch axis, broadcast along it when unbatched.
  Value batched(Value old);
  /// op(operands){attrs} in the new graph, at the location of the node being batched.
  Value apply(Op op, llvm::ArrayRef<Value> operands, const Attrs& attrs = {});

  /// A copy of `n` over its operands' new (unbatched) values.
  ValueList copy(const Node& n);
  /// `n` with a batched operand, by its op's batching rule.
  ValueList batchNode(const Node& n);
  /// The attributes of `n` over batched operands: axis numbers past the batch axis.
  Attrs batchedAttrs(const Node& n) const;
  Value matmul(const Node& n);
  Value broadcastTo(const Node& n);

  const ir::Graph& source_;
  ir::Graph& target_;
  int64_t batch_;
  std::vector<Mapped> map_; // by old node id
  SourceLoc loc_;
};

Value Batcher::apply(Op op, llvm::ArrayRef<Value> operands, const Attrs& attrs) {
  return target_.apply(op, operands, attrs, {}, loc_);
}

Value Batcher::batched(Value old) {
  Value v = map(old);
  if (isBatched(old))
    return v;
  return apply(Op::BroadcastTo, {v}, Attrs{{"shape", prepend(batch_, v.type().shape)}});
}

void Batcher::addParameters(llvm::ArrayRef<bool> batched) {
  for (size_t i = 0; i < source_.params().size(); ++i) {
    const Node* p = source_.params()[i];
    const std::string& name = p->attrs().getStr("name");
    bool b = batched.empty() || batched[i];
    TensorType t = p->type();
    int64_t elements;
    if (b && __builtin_mul_overflow(batch_, t.numel(), &elements))
      throw Error(fmt::format("batch {}: parameter %{} ({}) would have too many elements", batch_,
                              name, t.str()),
                  p->loc());
    if (b)
      t = TensorType(t.dtype, prepend(batch_, t.shape));
    map_[p->id()] = {{target_.addParameter(name, t, p->loc())}, b};
  }
}

void Batcher::addNodes() {
  std::vector<bool> live = liveNodes(source_);
  for (const Node* n : source_.nodes()) {
    if (!live[n->id()] || n->op() == Op::Parameter)
      continue;
    loc_ = n->loc();
    if (llvm::none_of(n->operands(), [&](Value v) { return isBatched(v); })) {
      map_[n->id()] = {copy(*n), false};
      continue;
    }
    ValueList values = batchNode(*n);
    target_.nameIfUnnamed(values.front().node, n->name());
    map_[n->id()] = {std::move(values), true};
  }
}

void Batcher::addOutputs() {
  for (Value v : source_.outputs()) {
    loc_ = v.node->loc();
    target_.addOutput(batched(v));
  }
}

ValueList Batcher::copy(const Node& n) {
  ValueList operands;
  for (Value v : n.operands())
    operands.push_back(map(v));
  return resultsOf(target_.create(n.op(), operands, n.attrs(), n.types(), loc_, n.name()));
}

ValueList Batcher::batchNode(const Node& n) {
  if (n.op() == Op::Matmul)
    return {matmul(n)};
  if (n.op() == Op::BroadcastTo)
    return {broadcastTo(n)};
  ValueList operands;
  for (Value v : n.operands())
    operands.push_back(batched(v));
  return resultsOf(target_.create(n.op(), operands, batchedAttrs(n), {}, loc_));
}

Attrs Batcher::batchedAttrs(const Node& n) const {
  Attrs attrs = n.attrs();
  switch (batchRuleOf(n.kind())) {
  case BatchRule::Within:
    return attrs;
  case BatchRule::Axes:
    return attrs.set("axes", shifted(attrs.getInts("axes")));
  case BatchRule::Source:
    noRule(n);
  case BatchRule::Shape:
    break;
  }
  switch (n.op()) {
  case Op::Reshape:
    return attrs.set("shape", prepend(batch_, attrs.getInts("shape")));
  case Op::Transpose:
    return attrs.set("perm", prepend(0, shifted(attrs.getInts("perm"))));
  case Op::Slice:
    attrs.set("start", prepend(0, attrs.getInts("start")));
    attrs.set("stop", prepend(batch_, attrs.getInts("stop")));
    if (attrs.has("stride"))
      attrs.set("stride", prepend(1, attrs.getInts("stride")));
    return attrs;
  case Op::Concat:
    return attrs.set("axis", attrs.getInt("axis") + 1);
  case Op::Diag: // these act on the trailing axes
  case Op::DiagPart:
  case Op::Triu:
  case Op::Tril:
    return attrs;
  case Op::BroadcastTo:
  GRAPHC_SOURCE_CASES:
  GRAPHC_ELEMENTWISE_CASES:
  GRAPHC_REDUCE_CASES:
  GRAPHC_LINALG_CASES:
  GRAPHC_ASSUME_CASES:
  GRAPHC_COLLECTIVE_CASES:
    noRule(n);
  }
  ir::unknownOp();
}

/// broadcast_to x[batch, s...] to [batch, shape...]: x gets shape's rank first, with
/// unit axes after the batch axis (a broadcast adds axes in front of s).
Value Batcher::broadcastTo(const Node& n) {
  Value x = map(n.operand(0));
  const std::vector<int64_t>& shape = n.attrs().getInts("shape");
  const TensorType& item = n.operand(0).type();
  if (static_cast<int64_t>(shape.size()) > item.rank()) {
    std::vector<int64_t> unitsFirst(shape.size() - item.rank(), 1);
    unitsFirst.insert(unitsFirst.end(), item.shape.begin(), item.shape.end());
    x = apply(Op::Reshape, {x}, Attrs{{"shape", prepend(batch_, unitsFirst)}});
  }
  return apply(Op::BroadcastTo, {x}, Attrs{{"shape", prepend(batch_, shape)}});
}

/// A batched [m,k] matrix times an unbatched one is one [batch*m, k] product;
/// every other matmul runs over batched operands.
Value Batcher::matmul(const Node& n) {
  Value a = n.operand(0), b = n.operand(1);
  bool rowsStack =
      isBatched(a) && !isBatched(b) && a.type().rank() == 2 && !n.attrs().flag("transpose_a");
  if (!rowsStack)
    return apply(Op::Matmul, {batched(a), batched(b)}, n.attrs());
  int64_t m = a.type().shape[0], k = a.type().shape[1];
  Value rows = apply(Op::Reshape, {map(a)}, Attrs{{"shape", std::vector<int64_t>{batch_ * m, k}}});
  Value product = apply(Op::Matmul, {rows, map(b)}, n.attrs());
  return apply(Op::Reshape, {product}, Attrs{{"shape", prepend(batch_, n.type().shape)}});
}

} // namespace

BatchRule batchRuleOf(ir::OpKind kind) {
  switch (kind) {
  case ir::OpKind::Reduce:
    return BatchRule::Axes;
  case ir::OpKind::Shape:
    return BatchRule::Shape;
  case ir::OpKind::Source:
    return BatchRule::Source;
  case ir::OpKind::Unary:
  case ir::OpKind::Logical:
  case ir::OpKind::Binary:
  case ir::OpKind::Compare:
  case ir::OpKind::Select:
  case ir::OpKind::Cast:
  case ir::OpKind::Linalg:
  case ir::OpKind::Assume:
  case ir::OpKind::Collective:
    return BatchRule::Within;
  }
  ir::unknownOp();
}

std::unique_ptr<ir::Graph> batchGraph(const ir::Graph& g, int64_t batch,
                                      llvm::ArrayRef<bool> batchedParams) {
  if (batch < 1)
    throw Error(fmt::format("@{}: the batch size must be at least 1, got {}", g.name(), batch));
  if (!batchedParams.empty() && batchedParams.size() != g.params().size())
    throw Error(fmt::format("@{}: {} batched-parameter flags given for {} parameters", g.name(),
                            batchedParams.size(), g.params().size()));
  auto out = std::make_unique<ir::Graph>(g.name());
  Batcher batcher(g, *out, batch);
  batcher.addParameters(batchedParams);
  batcher.addNodes();
  batcher.addOutputs();
  return out;
}

} // namespace graphc::passes
