//===- frontend/Autodiff.cpp - Derivatives of traced functions ------------===//
#include "frontend/Autodiff.h"

#include "frontend/Jit.h"
#include "passes/Derivative.h"
#include "passes/Rewrite.h"

#include <fmt/format.h>

namespace graphc {
namespace {

using passes::DerivativeMode;

/// The graph traced from f and where its inputs come from.
struct Traced {
  std::shared_ptr<ir::Graph> graph;
  std::vector<detail::Leaf> inputs;
};

/// f traced on symbolic copies of `args`.
Traced traced(const TensorFunction& f, const std::vector<Tensor>& args) {
  std::vector<ParamSpec> params;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].defined())
      throw Error(fmt::format("argument {} is a null Tensor", i));
    params.push_back({fmt::format("arg{}", i), args[i].type()});
  }
  detail::Extracted e = detail::traceGraph("f", params, f);
  return {std::shared_ptr<ir::Graph>(std::move(e.graph)), std::move(e.inputs)};
}

/// The arguments of a derivative graph of `t`: its inputs (the call's arguments and
/// the arrays f captured), then `extra`.
std::vector<Tensor> inputsOf(const Traced& t, const std::vector<Tensor>& args,
                             const std::vector<Tensor>& extra, const SrcLoc& loc) {
  std::vector<Tensor> out;
  for (const detail::Leaf& leaf : t.inputs)
    out.push_back(leaf.data ? Tensor(*leaf.data, loc) : args[leaf.symbolic]);
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

/// Records graph `d` applied to `args` into their common graph; returns its outputs.
std::vector<Tensor> record(const ir::Graph& d, const std::vector<Tensor>& args) {
  llvm::SmallVector<ir::Value, 8> values;
  std::shared_ptr<detail::TraceGraph> g = detail::unify(args, values);
  std::vector<Tensor> out;
  for (ir::Value v : passes::inlineGraph(d, g->graph(), values))
    out.emplace_back(g, v);
  return out;
}

/// The parameter indices of the argument numbers `argnums` (all when empty).
std::vector<unsigned> wrtOf(const std::vector<int>& argnums, size_t numArgs, const SrcLoc& loc) {
  std::vector<unsigned> wrt;
  for (int a : argnums) {
    if (a < 0 || static_cast<size_t>(a) >= numArgs)
      throw Error(
          fmt::format("argnum {} is out of range for a function of {} arguments", a, numArgs),
          toSourceLoc(loc));
    wrt.push_back(static_cast<unsigned>(a));
  }
  if (argnums.empty())
    for (unsigned i = 0; i < numArgs; ++i)
      wrt.push_back(i);
  return wrt;
}

/// Checks that `given` has one tensor of type types[i] per entry.
void checkTypes(const char* what, const std::vector<Tensor>& given,
                const std::vector<TensorType>& types, const SrcLoc& loc) {
  if (given.size() != types.size())
    throw Error(fmt::format("{}: {} given, {} expected", what, given.size(), types.size()),
                toSourceLoc(loc));
  for (size_t i = 0; i < given.size(); ++i)
    if (!given[i].defined() || given[i].type() != types[i])
      throw Error(fmt::format("{} {} is {}, expected {}", what, i,
                              given[i].defined() ? given[i].type().str() : "a null Tensor",
                              types[i].str()),
                  toSourceLoc(loc));
}

std::vector<Tensor> split(std::vector<Tensor>& all, size_t first) {
  std::vector<Tensor> tail(all.begin() + first, all.end());
  all.resize(first);
  return tail;
}

} // namespace

JvpResult jvp(const TensorFunction& f, const std::vector<Tensor>& primals,
              const std::vector<Tensor>& tangents, SrcLoc loc) {
  Traced t = traced(f, primals);
  std::vector<TensorType> types;
  std::vector<int> argnums;
  for (size_t i = 0; i < primals.size(); ++i)
    types.push_back(primals[i].type());
  checkTypes("jvp: tangent", tangents, types, loc);
  std::vector<Tensor> dts;
  for (size_t i = 0; i < primals.size(); ++i)
    if (ir::isFloat(types[i].dtype)) {
      argnums.push_back(static_cast<int>(i));
      dts.push_back(tangents[i]);
    }
  auto d = passes::derivative(*t.graph, DerivativeMode::Jvp, wrtOf(argnums, primals.size(), loc));
  JvpResult r;
  r.outputs = record(*d, inputsOf(t, primals, dts, loc));
  r.tangents = split(r.outputs, t.graph->outputs().size());
  return r;
}

VjpResult vjp(const TensorFunction& f, const std::vector<Tensor>& primals,
              const std::vector<int>& argnums, SrcLoc loc) {
  Traced t = traced(f, primals);
  std::shared_ptr<ir::Graph> d =
      passes::derivative(*t.graph, DerivativeMode::Vjp, wrtOf(argnums, primals.size(), loc));
  VjpResult r;
  r.outputs = record(*t.graph, inputsOf(t, primals, {}, loc));
  std::vector<TensorType> outTypes;
  for (ir::Value v : t.graph->outputs())
    outTypes.push_back(v.type());
  r.pullback = [t, d, primals, outTypes, loc](const std::vector<Tensor>& cts) {
    checkTypes("vjp: cotangent", cts, outTypes, loc);
    std::vector<Tensor> all = record(*d, inputsOf(t, primals, cts, loc));
    return split(all, outTypes.size());
  };
  return r;
}

TensorFunction valueAndGrad(TensorFunction f, std::vector<int> argnums) {
  return [f = std::move(f), argnums = std::move(argnums)](const std::vector<Tensor>& args) {
    SrcLoc loc = SrcLoc::current();
    Traced t = traced(f, args);
    auto d = passes::derivative(*t.graph, DerivativeMode::Grad, wrtOf(argnums, args.size(), loc));
    return record(*d, inputsOf(t, args, {}, loc));
  };
}

TensorFunction grad(TensorFunction f, std::vector<int> argnums) {
  TensorFunction vg = valueAndGrad(std::move(f), argnums);
  return [vg = std::move(vg), argnums = std::move(argnums)](const std::vector<Tensor>& args) {
    std::vector<Tensor> all = vg(args);
    size_t numGrads = argnums.empty() ? args.size() : argnums.size();
    return split(all, all.size() - numGrads);
  };
}

} // namespace graphc
