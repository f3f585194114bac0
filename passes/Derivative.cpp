//===- passes/Derivative.cpp - JVP, VJP and gradient graphs ---------------===//
#include "passes/Derivative.h"

#include "passes/Linearize.h"
#include "passes/Rewrite.h"
#include "passes/Transpose.h"

#include <fmt/format.h>
#include <numeric>

namespace graphc::passes {
namespace {

std::vector<unsigned> range(unsigned from, unsigned count) {
  std::vector<unsigned> out(count);
  std::iota(out.begin(), out.end(), from);
  return out;
}

std::unique_ptr<ir::Graph> vjp(const ir::Graph& g, llvm::ArrayRef<unsigned> wrt) {
  auto lin = linearize(g, wrt);
  unsigned numParams = g.params().size(), numOutputs = g.outputs().size();
  auto out = transpose(*lin, range(numParams, wrt.size()), range(numOutputs, numOutputs));
  out->setName(g.name() + "_vjp");
  return out;
}

/// The VJP graph with its cotangent inputs bound: one for output 0, zero for the rest.
std::unique_ptr<ir::Graph> grad(const ir::Graph& g, llvm::ArrayRef<unsigned> wrt) {
  if (g.outputs().empty())
    throw Error(fmt::format("grad of @{}: the graph has no outputs", g.name()));
  ir::Value loss = g.outputs()[0];
  if (loss.type().rank() != 0 || !ir::isFloat(loss.type().dtype))
    throw Error(fmt::format("grad of @{}: output 0 is {}, not a floating-point scalar (use a "
                            "vjp for other outputs)",
                            g.name(), loss.type().str()),
                loss.node->loc());
  auto v = vjp(g, wrt);
  auto out = std::make_unique<ir::Graph>(g.name() + "_grad");
  std::vector<ir::Value> args;
  for (const ir::Node* p : g.params())
    args.push_back(out->addParameter(p->name(), p->type(), p->loc()));
  for (unsigned i = 0; i < g.outputs().size(); ++i) {
    const ir::TensorType& t = g.outputs()[i].type();
    args.push_back(out->apply(ir::Op::Full, {}, ir::Attrs{{"value", i == 0 ? 1.0 : 0.0}}, {t}));
  }
  for (ir::Value r : inlineGraph(*v, *out, args))
    out->addOutput(r);
  return out;
}

} // namespace

std::unique_ptr<ir::Graph> derivative(const ir::Graph& g, DerivativeMode mode,
                                      llvm::ArrayRef<unsigned> wrt) {
  switch (mode) {
  case DerivativeMode::Jvp:
    return linearize(g, wrt);
  case DerivativeMode::Vjp:
    return vjp(g, wrt);
  case DerivativeMode::Grad:
    return grad(g, wrt);
  }
  throw Error("internal error: unknown derivative mode");
}

std::vector<unsigned> paramIndices(const ir::Graph& g, llvm::ArrayRef<std::string> names) {
  std::vector<unsigned> out;
  if (names.empty())
    return range(0, g.params().size());
  for (const std::string& name : names) {
    const ir::Node* p = g.findParam(name);
    if (!p) {
      std::string known;
      for (const ir::Node* q : g.params())
        known += (known.empty() ? "%" : ", %") + q->name();
      throw Error(fmt::format("@{} has no parameter %{} (parameters: {})", g.name(), name, known));
    }
    for (unsigned i = 0; i < g.params().size(); ++i)
      if (g.params()[i] == p)
        out.push_back(i);
  }
  return out;
}

} // namespace graphc::passes
