//===- passes/Rewrite.cpp - Rebuilding a graph node by node ---------------===//
#include "passes/Rewrite.h"

#include <algorithm>
#include <fmt/format.h>

namespace graphc::passes {

using ir::Node;
using ir::Value;

ir::Value Rewriter::map(Value old) const {
  return map_[old.node->id()][old.index];
}

ValueList Rewriter::mapOperands(const Node& n) const {
  ValueList out;
  for (Value v : n.operands())
    out.push_back(map(v));
  return out;
}

ValueList resultsOf(Node* n) {
  ValueList out;
  for (unsigned i = 0; i < n->numResults(); ++i)
    out.push_back(n->result(i));
  return out;
}

ValueList copyNode(ir::Graph& into, const Node& n, llvm::ArrayRef<Value> operands) {
  return resultsOf(into.create(n.op(), operands, n.attrs(), n.types(), n.loc(), n.name()));
}

ValueList Rewriter::copy(const Node& n) {
  return copyNode(target_, n, mapOperands(n));
}

Value Rewriter::apply(ir::Op op, llvm::ArrayRef<Value> operands, const ir::Attrs& attrs) {
  return target_.apply(op, operands, attrs, {}, loc_);
}

Value Rewriter::full(double value, const ir::TensorType& type) {
  return target_.apply(ir::Op::Full, {}, ir::Attrs{{"value", value}}, {type}, loc_);
}

std::unique_ptr<ir::Graph> copyLive(const ir::Graph& g) {
  return rewrite(g, [](Rewriter&, const ir::Node&) { return std::optional<ValueList>(); });
}

ValueList inlineGraph(const ir::Graph& g, ir::Graph& into, llvm::ArrayRef<Value> args) {
  if (args.size() != g.params().size())
    throw Error(
        fmt::format("@{} takes {} inputs, {} given", g.name(), g.params().size(), args.size()));
  std::vector<ValueList> map(g.nodes().size());
  for (size_t i = 0; i < args.size(); ++i) {
    const Node* p = g.params()[i];
    if (args[i].type() != p->type())
      throw Error(fmt::format("@{}: input %{} is {}, but {} was given", g.name(), p->name(),
                              p->type().str(), args[i].type().str()),
                  p->loc());
    map[p->id()] = {args[i]};
  }
  std::vector<bool> live = liveNodes(g);
  for (const Node* n : g.nodes()) {
    if (n->op() == ir::Op::Parameter || !live[n->id()])
      continue;
    ValueList ins;
    for (Value v : n->operands())
      ins.push_back(map[v.node->id()][v.index]);
    map[n->id()] = copyNode(into, *n, ins);
  }
  ValueList out;
  for (Value v : g.outputs())
    out.push_back(map[v.node->id()][v.index]);
  return out;
}

std::vector<bool> liveNodes(const ir::Graph& g) {
  std::vector<bool> live(g.nodes().size(), false);
  for (Value v : g.outputs())
    live[v.node->id()] = true;
  for (auto it = g.nodes().rbegin(); it != g.nodes().rend(); ++it)
    if (live[(*it)->id()])
      for (Value v : (*it)->operands())
        live[v.node->id()] = true;
  return live;
}

std::vector<unsigned> useCounts(const ir::Graph& g) {
  std::vector<unsigned> uses(g.nodes().size());
  std::vector<bool> live = liveNodes(g);
  for (const Node* n : g.nodes())
    if (live[n->id()])
      for (Value v : n->operands())
        ++uses[v.node->id()];
  for (Value v : g.outputs())
    ++uses[v.node->id()];
  return uses;
}

std::unique_ptr<ir::Graph> rewrite(const ir::Graph& g, const RewriteRule& rule) {
  auto out = std::make_unique<ir::Graph>(g.name());
  Rewriter rw(g, *out);
  rw.map_.resize(g.nodes().size());
  for (const Node* p : g.params())
    rw.map_[p->id()] = {out->addParameter(p->attrs().getStr("name"), p->type(), p->loc())};
  std::vector<bool> live = liveNodes(g);
  for (const Node* n : g.nodes()) {
    if (!live[n->id()] || n->op() == ir::Op::Parameter)
      continue;
    rw.loc_ = n->loc();
    std::optional<ValueList> replaced = rule(rw, *n);
    if (replaced && n->numResults() == 1) // the replacement inherits the printing name
      out->nameIfUnnamed((*replaced)[0].node, n->name());
    rw.map_[n->id()] = replaced ? std::move(*replaced) : rw.copy(*n);
  }
  for (Value v : g.outputs())
    out->addOutput(rw.map(v));
  // Nodes built before a later rule bypassed them are dead now: one more copy drops them.
  std::vector<bool> liveOut = liveNodes(*out);
  bool allLive = std::all_of(out->nodes().begin(), out->nodes().end(), [&](const Node* n) {
    return liveOut[n->id()] || n->op() == ir::Op::Parameter;
  });
  if (!allLive)
    return rewrite(*out, [](Rewriter&, const Node&) { return std::nullopt; });
  return out;
}

} // namespace graphc::passes
