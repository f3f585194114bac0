//===- passes/Linearize.cpp - Forward-mode differentiation ----------------===//
#include "passes/Linearize.h"

#include "passes/Autodiff.h"
#include "passes/Rewrite.h"

#include <fmt/format.h>
#include <set>

namespace graphc::passes {
namespace {

using ir::Node;
using ir::Value;

/// `base`, or `base` with underscores appended until no parameter of `g` has it.
std::string freshParamName(const ir::Graph& g, std::string base) {
  while (g.findParam(base))
    base += "_";
  return base;
}

/// Checks the differentiated parameters: in range, once each, floating point.
void checkWrt(const ir::Graph& g, llvm::ArrayRef<unsigned> wrt) {
  std::set<unsigned> seen;
  for (unsigned i : wrt) {
    if (i >= g.params().size())
      throw Error(fmt::format("@{} has {} parameters; cannot differentiate with respect to "
                              "parameter {}",
                              g.name(), g.params().size(), i));
    const Node* p = g.params()[i];
    if (!seen.insert(i).second)
      throw Error(fmt::format("parameter %{} is differentiated twice", p->name()), p->loc());
    if (!isDifferentiable(p->type()))
      throw Error(fmt::format("cannot differentiate @{} with respect to %{} ({}): only "
                              "floating-point inputs carry tangents",
                              g.name(), p->name(), p->type().str()),
                  p->loc());
  }
}

/// Checks what a rule returned: one tangent per result, each of the result's type.
void checkTangents(const Node& n, const ValueList& ts) {
  bool ok = ts.size() == n.numResults();
  for (unsigned i = 0; ok && i < ts.size(); ++i)
    ok = !ts[i] || ts[i].type() == n.type(i);
  if (!ok)
    throw Error(fmt::format("internal error: the JVP rule of {} returned tangents of the wrong "
                            "type",
                            n.info().name.str()),
                n.loc());
}

} // namespace

std::unique_ptr<ir::Graph> linearize(const ir::Graph& g, llvm::ArrayRef<unsigned> wrt) {
  checkWrt(g, wrt);
  auto out = std::make_unique<ir::Graph>(g.name() + "_jvp");
  std::vector<ValueList> primal(g.nodes().size()), tangent(g.nodes().size());
  for (const Node* p : g.params())
    primal[p->id()] = {out->addParameter(p->name(), p->type(), p->loc())};
  for (unsigned i : wrt) {
    const Node* p = g.params()[i];
    tangent[p->id()] = {out->addParameter(freshParamName(g, "d" + p->name()), p->type(), p->loc())};
  }

  std::vector<bool> live = liveNodes(g);
  for (const Node* n : g.nodes()) {
    if (n->op() == ir::Op::Parameter || !live[n->id()])
      continue;
    ValueList ins, dins;
    bool anyTangent = false;
    for (Value v : n->operands()) {
      ins.push_back(primal[v.node->id()][v.index]);
      const ValueList& t = tangent[v.node->id()];
      dins.push_back(t.empty() ? Value() : t[v.index]);
      anyTangent = anyTangent || dins.back();
    }
    primal[n->id()] = copyNode(*out, *n, ins);
    if (!anyTangent)
      continue;
    DiffBuilder b(*out, n->loc());
    tangent[n->id()] = diffRule(n->op()).jvp(b, JvpNode{*n, ins, primal[n->id()], dins});
    checkTangents(*n, tangent[n->id()]);
  }

  for (Value v : g.outputs())
    out->addOutput(primal[v.node->id()][v.index]);
  for (Value v : g.outputs()) {
    const ValueList& t = tangent[v.node->id()];
    Value dv = t.empty() ? Value() : t[v.index];
    DiffBuilder b(*out, v.node->loc());
    out->addOutput(b.orZeros(dv, v.type()));
  }
  return out;
}

} // namespace graphc::passes
