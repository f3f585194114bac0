//===- passes/Transpose.cpp - The adjoint of a linear graph ---------------===//
#include "passes/Transpose.h"

#include "passes/Autodiff.h"
#include "passes/Rewrite.h"

#include <fmt/format.h>
#include <set>

namespace graphc::passes {
namespace {

using ir::Node;
using ir::Value;

/// Checks indices: in range and once each.
std::set<unsigned> indexSet(const ir::Graph& g, llvm::ArrayRef<unsigned> xs, size_t size,
                            const char* what) {
  std::set<unsigned> out;
  for (unsigned i : xs)
    if (i >= size || !out.insert(i).second)
      throw Error(fmt::format("transpose of @{}: {} index {} is out of range or repeated", g.name(),
                              what, i));
  return out;
}

[[noreturn]] void noTranspose(const Node& n) {
  throw Error(fmt::format("cannot transpose {}: it depends on the linear inputs but is not "
                          "linear in them",
                          n.info().name.str()),
              n.loc());
}

} // namespace

std::unique_ptr<ir::Graph> transpose(const ir::Graph& g, llvm::ArrayRef<unsigned> linearParams,
                                     llvm::ArrayRef<unsigned> linearOutputs) {
  std::set<unsigned> linParams = indexSet(g, linearParams, g.params().size(), "parameter");
  std::set<unsigned> linOutputs = indexSet(g, linearOutputs, g.outputs().size(), "output");
  auto out = std::make_unique<ir::Graph>(g.name() + "_transpose");
  size_t numNodes = g.nodes().size();
  std::vector<bool> linear(numNodes, false), live = liveNodes(g);
  std::vector<ValueList> mapped(numNodes);

  // Forward: which nodes depend on the linear parameters; copy the others.
  for (unsigned i = 0; i < g.params().size(); ++i) {
    const Node* p = g.params()[i];
    if (linParams.count(i))
      linear[p->id()] = true;
    else
      mapped[p->id()] = {out->addParameter(p->name(), p->type(), p->loc())};
  }
  for (const Node* n : g.nodes()) {
    if (n->op() == ir::Op::Parameter || !live[n->id()])
      continue;
    for (Value v : n->operands())
      linear[n->id()] = linear[n->id()] || linear[v.node->id()];
    if (linear[n->id()])
      continue;
    ValueList ins;
    for (Value v : n->operands())
      ins.push_back(mapped[v.node->id()][v.index]);
    mapped[n->id()] = copyNode(*out, *n, ins);
  }

  // Seed the cotangents of the linear outputs.
  std::vector<Value> ct(numNodes);
  auto accumulate = [&](Value at, Value c, const SourceLoc& loc) {
    if (!c)
      return;
    Value& slot = ct[at.node->id()];
    DiffBuilder b(*out, loc);
    slot = b.add(slot, c);
  };
  unsigned numCotangents = 0;
  for (unsigned i = 0; i < g.outputs().size(); ++i) {
    Value v = g.outputs()[i];
    if (!linOutputs.count(i)) {
      if (linear[v.node->id()])
        throw Error(fmt::format("transpose of @{}: output {} depends on the linear inputs but is "
                                "not marked linear",
                                g.name(), i),
                    v.node->loc());
      continue;
    }
    Value param = out->addParameter(fmt::format("ct{}", numCotangents++), v.type());
    if (linear[v.node->id()])
      accumulate(v, param, v.node->loc());
  }

  // Backward over the linear nodes.
  for (auto it = g.nodes().rbegin(); it != g.nodes().rend(); ++it) {
    const Node* n = *it;
    Value c = ct[n->id()];
    if (!c || !linear[n->id()] || n->op() == ir::Op::Parameter)
      continue;
    const DiffRule& rule = diffRule(n->op());
    if (!rule.transpose || n->numResults() != 1)
      noTranspose(*n);
    ValueList ins;
    llvm::SmallVector<bool, 4> lin;
    for (Value v : n->operands()) {
      lin.push_back(linear[v.node->id()]);
      ins.push_back(lin.back() ? Value() : mapped[v.node->id()][v.index]);
    }
    DiffBuilder b(*out, n->loc());
    ValueList cts = rule.transpose(b, LinearNode{*n, ins, lin}, c);
    for (unsigned i = 0; i < n->operands().size(); ++i) {
      if (!lin[i] || !cts[i])
        continue;
      if (cts[i].type() != n->operand(i).type())
        throw Error(fmt::format("internal error: the transpose rule of {} returned a cotangent "
                                "of type {} for an operand of type {}",
                                n->info().name.str(), cts[i].type().str(),
                                n->operand(i).type().str()),
                    n->loc());
      accumulate(n->operand(i), cts[i], n->loc());
    }
  }

  for (unsigned i = 0; i < g.outputs().size(); ++i)
    if (!linOutputs.count(i))
      out->addOutput(mapped[g.outputs()[i].node->id()][g.outputs()[i].index]);
  for (unsigned i : linearParams) {
    const Node* p = g.params()[i];
    DiffBuilder b(*out, p->loc());
    out->addOutput(b.orZeros(ct[p->id()], p->type()));
  }
  return out;
}

} // namespace graphc::passes
