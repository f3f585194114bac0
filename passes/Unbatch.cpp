//===- passes/Unbatch.cpp - The item graph of a graph batched by hand -----===//
//
// One forward walk over the live nodes, mirroring passes/Batch.cpp: a node with no
// batched operand is copied whole (shared); one with a batched operand gets its
// op's rule, which drops the leading axis from its attributes, or gives up. The
// item node's inferred types must be the batched node's without the leading axis.
//
//===----------------------------------------------------------------------===//
#include "passes/Unbatch.h"

#include "ir/OpCases.h"
#include "passes/Batch.h"
#include "passes/Rewrite.h"

namespace graphc::passes {
namespace {

using ir::Attrs;
using ir::Node;
using ir::Op;
using ir::TensorType;
using ir::Value;

/// Thrown inside the walk when the graph does not come apart.
struct Whole {};

std::vector<int64_t> dropFirst(llvm::ArrayRef<int64_t> xs) {
  return xs.drop_front().vec();
}
/// Axis numbers of an item: one less, none of them the leading axis.
std::vector<int64_t> lowered(llvm::ArrayRef<int64_t> axes) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    if (a == 0)
      throw Whole{};
    out.push_back(a - 1);
  }
  return out;
}
bool same(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  return a == b;
}
void require(bool condition) {
  if (!condition)
    throw Whole{};
}

class Unbatcher {
public:
  Unbatcher(const ir::Graph& source, ir::Graph& target, int64_t batch)
      : source_(source), target_(target), batch_(batch), map_(source.nodes().size()),
        batched_(source.nodes().size(), false) {}

  std::vector<bool> addParameters();
  void addNodes();
  void addOutputs();

private:
  bool isBatched(Value v) const { return batched_[v.node->id()]; }
  Value map(Value v) const { return map_[v.node->id()][v.index]; }
  /// An item's value of operand `v`: the batched value, or a shared one that is the
  /// same for every item, without its leading axis.
  Value itemOf(Value v);
  /// The item's values of the batched node `n`.
  ValueList unbatch(const Node& n);
  Attrs itemAttrs(const Node& n) const;

  const ir::Graph& source_;
  ir::Graph& target_;
  int64_t batch_;
  std::vector<ValueList> map_; // by old node id
  std::vector<bool> batched_;  // by old node id
};

std::vector<bool> Unbatcher::addParameters() {
  std::vector<bool> flags;
  for (const Node* p : source_.params()) {
    TensorType t = p->type();
    bool b = t.rank() >= 1 && t.shape[0] == batch_;
    if (b)
      t.shape.erase(t.shape.begin());
    map_[p->id()] = {target_.addParameter(p->attrs().getStr("name"), t, p->loc())};
    batched_[p->id()] = b;
    flags.push_back(b);
  }
  return flags;
}

void Unbatcher::addNodes() {
  std::vector<bool> live = liveNodes(source_);
  for (const Node* n : source_.nodes()) {
    if (!live[n->id()] || n->op() == Op::Parameter)
      continue;
    if (llvm::none_of(n->operands(), [&](Value v) { return isBatched(v); })) {
      ValueList operands;
      for (Value v : n->operands())
        operands.push_back(map(v));
      map_[n->id()] = copyNode(target_, *n, operands);
      continue;
    }
    ValueList values = unbatch(*n);
    for (unsigned i = 0; i < n->numResults(); ++i) {
      const TensorType& t = n->type(i);
      require(t.rank() >= 1 && t.shape[0] == batch_ &&
              same(values[i].type().shape, dropFirst(t.shape)));
    }
    target_.nameIfUnnamed(values.front().node, n->name());
    map_[n->id()] = std::move(values);
    batched_[n->id()] = true;
  }
}

void Unbatcher::addOutputs() {
  for (Value v : source_.outputs())
    target_.addOutput(itemOf(v));
}

Value Unbatcher::itemOf(Value v) {
  if (isBatched(v))
    return map(v);
  const Node& n = *v.node;
  const TensorType& t = n.type();
  require(t.rank() >= 1 && t.shape[0] == batch_);
  TensorType item(t.dtype, dropFirst(t.shape));
  if (n.op() == Op::Full || (n.op() == Op::Eye && t.rank() >= 3))
    return target_.create(n.op(), {}, n.attrs(), {item}, n.loc(), n.name())->result(0);
  require(n.op() == Op::BroadcastTo);
  // The leading axis is one the broadcast adds, or one it stretches from length 1.
  Value x = map(n.operand(0));
  const TensorType& from = n.operand(0).type();
  if (from.rank() == t.rank()) {
    require(from.shape[0] == 1);
    x = target_.apply(Op::Reshape, {x}, Attrs{{"shape", dropFirst(from.shape)}}, {}, n.loc());
  }
  std::vector<int64_t> shape = dropFirst(t.shape);
  if (same(x.type().shape, shape))
    return x;
  return target_.apply(Op::BroadcastTo, {x}, Attrs{{"shape", shape}}, {}, n.loc());
}

ValueList Unbatcher::unbatch(const Node& n) {
  bool matrices = n.kind() == ir::OpKind::Linalg || n.kind() == ir::OpKind::Assume;
  ValueList operands;
  for (Value v : n.operands()) {
    require(!matrices || v.type().rank() >= 3);
    operands.push_back(itemOf(v));
  }
  Node* item = target_.create(n.op(), operands, itemAttrs(n), {}, n.loc());
  ValueList out;
  for (unsigned i = 0; i < item->numResults(); ++i)
    out.push_back(item->result(i));
  return out;
}

Attrs Unbatcher::itemAttrs(const Node& n) const {
  Attrs attrs = n.attrs();
  const TensorType& x = n.operand(0).type();
  switch (batchRuleOf(n.kind())) {
  case BatchRule::Within:
    return attrs;
  case BatchRule::Axes:
    return attrs.set("axes", lowered(attrs.getInts("axes")));
  case BatchRule::Source: // no operands, so never batched
    throw Whole{};
  case BatchRule::Shape:
    break;
  }
  switch (n.op()) {
  case Op::BroadcastTo: { // adds no axis in front of the leading one
    const std::vector<int64_t>& shape = attrs.getInts("shape");
    require(static_cast<int64_t>(shape.size()) == x.rank() && shape[0] == batch_);
    return attrs.set("shape", dropFirst(shape));
  }
  case Op::Reshape: { // row-major: the leading axis stays whole
    const std::vector<int64_t>& shape = attrs.getInts("shape");
    require(!shape.empty() && shape[0] == batch_);
    return attrs.set("shape", dropFirst(shape));
  }
  case Op::Transpose: {
    const std::vector<int64_t>& perm = attrs.getInts("perm");
    require(!perm.empty() && perm[0] == 0);
    return attrs.set("perm", lowered(dropFirst(perm)));
  }
  case Op::Slice: {
    const std::vector<int64_t>&start = attrs.getInts("start"), &stop = attrs.getInts("stop");
    require(!start.empty() && !stop.empty() && start[0] == 0 && stop[0] == batch_);
    attrs.set("start", dropFirst(start)).set("stop", dropFirst(stop));
    if (attrs.has("stride")) {
      require(!attrs.getInts("stride").empty() && attrs.getInts("stride")[0] == 1);
      attrs.set("stride", dropFirst(attrs.getInts("stride")));
    }
    return attrs;
  }
  case Op::Concat:
    return attrs.set("axis", lowered({attrs.getInt("axis")})[0]);
  case Op::Diag: // acts on the trailing axis
    require(x.rank() >= 2);
    return attrs;
  case Op::DiagPart: // act on the two trailing axes
  case Op::Triu:
  case Op::Tril:
    require(x.rank() >= 3);
    return attrs;
  GRAPHC_SOURCE_CASES:
  GRAPHC_ELEMENTWISE_CASES:
  GRAPHC_REDUCE_CASES:
  GRAPHC_LINALG_CASES:
  GRAPHC_ASSUME_CASES:
  GRAPHC_COLLECTIVE_CASES:
    throw Whole{};
  }
  ir::unknownOp();
}

} // namespace

std::optional<Unbatched> unbatchGraph(const ir::Graph& g) {
  if (g.outputs().empty())
    return std::nullopt;
  const TensorType& first = g.outputs().front().type();
  if (first.rank() < 1 || first.shape[0] < 1)
    return std::nullopt;
  Unbatched out{std::make_unique<ir::Graph>(g.name()), first.shape[0], {}};
  Unbatcher unbatcher(g, *out.item, out.batch);
  try {
    out.batched = unbatcher.addParameters();
    unbatcher.addNodes();
    unbatcher.addOutputs();
  } catch (const Whole&) {
    return std::nullopt;
  } catch (const Error&) { // an item node its type rules refuse
    return std::nullopt;
  }
  return out;
}

} // namespace graphc::passes
