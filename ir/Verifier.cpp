//===- ir/Verifier.cpp - Whole-graph invariant checks ---------------------===//
//
// Re-applies the typing rules of ir/Infer.h to every node and checks the graph's
// structural invariants. Graph::create already enforces most of them when a node is
// built; the verifier re-checks them so that a pass that breaks one is caught at the
// pass, with the node's source location.
//
//===----------------------------------------------------------------------===//
#include "ir/Verifier.h"

#include "ir/Infer.h"

#include "llvm/ADT/StringSet.h"

#include <fmt/format.h>

namespace graphc::ir {
namespace {

/// "f64[2,3], f64[3]": the operand types of `n`, as the typing rules print them.
std::string operandTypes(const Node* n) {
  std::string out;
  for (Value v : n->operands())
    out += (out.empty() ? "" : ", ") + v.type().str();
  return out;
}

/// Throws "op(operand types): message" at the node's location.
template <typename... Args>
[[noreturn]] void fail(const Node* n, fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format("{}({}): {}", opName(n->op()).str(), operandTypes(n),
                          fmt::format(f, std::forward<Args>(args)...)),
              n->loc());
}

bool ownsValue(const Graph& g, Value v) {
  llvm::ArrayRef<Node*> nodes = g.nodes();
  return v.node && v.node->id() < nodes.size() && nodes[v.node->id()] == v.node &&
         v.index < v.node->numResults();
}

void verifyOperands(const Graph& g, const Node* n) {
  for (size_t i = 0; i < n->operands().size(); ++i) {
    Value v = n->operand(static_cast<unsigned>(i));
    if (!ownsValue(g, v))
      throw Error(fmt::format("{}: operand {} is not a value of graph @{}", opName(n->op()).str(),
                              i, g.name()),
                  n->loc());
    if (v.node->id() >= n->id())
      throw Error(fmt::format("{}: operand {} is defined after its use", opName(n->op()).str(), i),
                  n->loc());
  }
}

void verifyTypes(const Node* n) {
  llvm::SmallVector<TensorType, 4> types;
  for (Value v : n->operands())
    types.push_back(v.type());
  TypeList inferred;
  try {
    // Source ops have nothing to infer from: their given type is checked instead.
    inferred = inferTypes(n->op(), types, n->attrs(),
                          n->kind() == OpKind::Source ? n->types() : llvm::ArrayRef<TensorType>());
  } catch (const Error& e) {
    throw Error(e.message(), n->loc());
  }
  if (inferred.size() != n->numResults())
    fail(n, "has {} result(s), but the typing rules give {}", n->numResults(), inferred.size());
  for (unsigned i = 0; i < inferred.size(); ++i)
    if (inferred[i] != n->type(i))
      fail(n, "result {} has type {}, but the typing rules give {}", i, n->type(i).str(),
           inferred[i].str());
}

void verifyParams(const Graph& g) {
  llvm::StringSet<> names;
  for (size_t i = 0; i < g.params().size(); ++i) {
    const Node* p = g.params()[i];
    if (p->op() != Op::Parameter || !ownsValue(g, Value{const_cast<Node*>(p), 0}))
      throw Error(
          fmt::format("signature entry {} of graph @{} is not one of its parameters", i, g.name()),
          p->loc());
    if (p->attrs().getInt("index", -1) != static_cast<int64_t>(i))
      fail(p, "parameter '%{}' has index {} but is at position {} of the signature",
           p->attrs().getStr("name"), p->attrs().getInt("index", -1), i);
    if (!names.insert(p->attrs().getStr("name")).second)
      fail(p, "parameter '%{}' is declared twice", p->attrs().getStr("name"));
  }
  size_t count = 0;
  for (const Node* n : g.nodes())
    count += n->op() == Op::Parameter;
  if (count != g.params().size())
    throw Error(fmt::format("graph @{} has {} parameter nodes but {} in its signature", g.name(),
                            count, g.params().size()));
}

} // namespace

void verify(const Graph& g) {
  llvm::ArrayRef<Node*> nodes = g.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node* n = nodes[i];
    if (n->id() != i)
      throw Error(
          fmt::format("{}: node at position {} has id {}", opName(n->op()).str(), i, n->id()),
          n->loc());
    verifyOperands(g, n);
    verifyTypes(n);
  }
  verifyParams(g);
  if (g.outputs().empty())
    throw Error(fmt::format("graph @{} has no outputs", g.name()));
  for (size_t i = 0; i < g.outputs().size(); ++i)
    if (!ownsValue(g, g.outputs()[i]))
      throw Error(fmt::format("output {} is not a value of graph @{}", i, g.name()));
}

void verify(const Module& m) {
  llvm::StringSet<> names;
  for (const auto& g : m.graphs) {
    if (!names.insert(g->name()).second)
      throw Error(fmt::format("graph @{} is defined twice in the module", g->name()));
    verify(*g);
  }
}

} // namespace graphc::ir
