//===- ir/Graph.cpp - Nodes, values and graphs ----------------------------===//
#include "ir/Graph.h"

#include "ir/Infer.h"

#include "llvm/ADT/Hashing.h"

#include <fmt/format.h>

namespace graphc::ir {
namespace {

size_t structuralHash(Op op, llvm::ArrayRef<Value> operands, const Attrs& attrs,
                      llvm::ArrayRef<TensorType> types) {
  size_t h = llvm::hash_combine(static_cast<int>(op), hashValue(attrs));
  for (Value v : operands)
    h = llvm::hash_combine(h, v.node->hash(), v.index);
  for (const TensorType& t : types)
    h = llvm::hash_combine(h, hashValue(t));
  return h;
}

} // namespace

Graph::Graph(std::string name) : name_(std::move(name)) {}
Graph::~Graph() = default;

bool Graph::owns(const Node* n) const {
  return n && n->id_ < order_.size() && order_[n->id_] == n;
}

Value Graph::addParameter(llvm::StringRef name, const TensorType& type, SourceLoc loc) {
  if (name.empty())
    throw Error("a parameter needs a name", loc);
  if (findParam(name))
    throw Error(fmt::format("parameter '%{}' is declared twice", name.str()), loc);
  Attrs attrs{{"index", static_cast<int64_t>(params_.size())}, {"name", name.str()}};
  Node* n = create(Op::Parameter, {}, attrs, {type}, std::move(loc), name);
  params_.push_back(n);
  return n->result();
}

Node* Graph::create(Op op, llvm::ArrayRef<Value> operands, const Attrs& given,
                    llvm::ArrayRef<TensorType> resultTypes, SourceLoc loc, llvm::StringRef name) {
  Attrs attrs = given; // read from here on against op's schema (they may come from another op)
  attrs.tieTo(op);
  llvm::SmallVector<TensorType, 4> operandTypes;
  for (Value v : operands) {
    if (!owns(v.node) || v.index >= v.node->numResults())
      throw Error(fmt::format("{}: operand is not a value of graph @{}", opName(op).str(), name_),
                  loc);
    operandTypes.push_back(v.type());
  }
  TypeList types;
  try {
    types = inferTypes(op, operandTypes, attrs, resultTypes);
  } catch (const Error& e) {
    throw Error(e.message(), loc);
  }

  size_t h = structuralHash(op, operands, attrs, types);
  auto [first, last] = interned_.equal_range(h);
  for (auto it = first; it != last; ++it) {
    Node* n = it->second;
    if (n->op_ == op && llvm::ArrayRef<Value>(n->operands_) == operands && n->attrs_ == attrs &&
        llvm::ArrayRef<TensorType>(n->types_) == llvm::ArrayRef<TensorType>(types))
      return n;
  }

  auto node = std::unique_ptr<Node>(new Node());
  Node* n = node.get();
  n->op_ = op;
  n->operands_.assign(operands.begin(), operands.end());
  n->attrs_ = attrs;
  n->types_ = std::move(types);
  n->id_ = static_cast<unsigned>(order_.size());
  n->name_ = name.str();
  n->loc_ = std::move(loc);
  n->hash_ = h;
  storage_.push_back(std::move(node));
  order_.push_back(n);
  interned_.emplace(h, n);
  return n;
}

Value Graph::apply(Op op, llvm::ArrayRef<Value> operands, const Attrs& attrs,
                   llvm::ArrayRef<TensorType> resultTypes, SourceLoc loc) {
  Node* n = create(op, operands, attrs, resultTypes, std::move(loc));
  if (n->numResults() != 1)
    throw Error(fmt::format("{} has {} results; use create()", opName(op).str(), n->numResults()));
  return n->result();
}

void Graph::nameIfUnnamed(Node* n, llvm::StringRef name) {
  if (owns(n) && n->name_.empty())
    n->name_ = name.str();
}

void Graph::addOutput(Value v) {
  if (!owns(v.node) || v.index >= v.node->numResults())
    throw Error(fmt::format("output is not a value of graph @{}", name_));
  outputs_.push_back(v);
}

Node* Graph::findParam(llvm::StringRef name) const {
  for (Node* p : params_)
    if (p->attrs().getStr("name") == name)
      return p;
  return nullptr;
}

size_t Graph::hash() const {
  size_t h = 0;
  for (Node* p : params_)
    h = llvm::hash_combine(h, p->hash());
  for (Value v : outputs_)
    h = llvm::hash_combine(h, v.node->hash(), v.index);
  return h;
}

namespace {

/// The non-parameter nodes in creation order, then the parameters in signature
/// order: the order in which the text format lists them.
std::vector<const Node*> canonicalOrder(const Graph& g) {
  std::vector<const Node*> order;
  for (const Node* n : g.nodes())
    if (n->op() != Op::Parameter)
      order.push_back(n);
  order.insert(order.end(), g.params().begin(), g.params().end());
  return order;
}

} // namespace

bool structurallyEqual(const Graph& a, const Graph& b) {
  if (a.name() != b.name() || a.nodes().size() != b.nodes().size() ||
      a.params().size() != b.params().size() || a.outputs().size() != b.outputs().size())
    return false;
  std::vector<const Node*> xs = canonicalOrder(a), ys = canonicalOrder(b);
  // Position of each node of b in the canonical order, to compare operands by position.
  std::vector<size_t> posA(xs.size()), posB(ys.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    posA[xs[i]->id()] = i;
    posB[ys[i]->id()] = i;
  }
  auto sameValue = [&](Value x, Value y) {
    return posA[x.node->id()] == posB[y.node->id()] && x.index == y.index;
  };
  for (size_t i = 0; i < xs.size(); ++i) {
    const Node* x = xs[i];
    const Node* y = ys[i];
    if (x->op() != y->op() || x->attrs() != y->attrs() || x->types() != y->types() ||
        x->operands().size() != y->operands().size())
      return false;
    for (size_t k = 0; k < x->operands().size(); ++k)
      if (!sameValue(x->operand(k), y->operand(k)))
        return false;
  }
  for (size_t i = 0; i < a.outputs().size(); ++i)
    if (!sameValue(a.outputs()[i], b.outputs()[i]))
      return false;
  return true;
}

Graph* Module::find(llvm::StringRef name) const {
  for (const auto& g : graphs)
    if (g->name() == name)
      return g.get();
  return nullptr;
}

} // namespace graphc::ir
