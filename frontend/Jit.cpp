//===- frontend/Jit.cpp - Tracing C++ functions into graphs ---------------===//
#include "frontend/Jit.h"

#include <fmt/format.h>

namespace graphc::detail {

Extracted traceGraph(llvm::StringRef name, llvm::ArrayRef<ParamSpec> params, TraceBody body) {
  auto g = std::make_shared<TraceGraph>();
  std::vector<Tensor> symbols;
  std::vector<const ir::Node*> fixed;
  for (const ParamSpec& p : params) {
    ir::Value v = g->addSymbolic(p.name, p.type);
    symbols.emplace_back(g, v);
    fixed.push_back(v.node);
  }
  std::vector<Tensor> results;
  {
    TraceScope scope(g);
    results = body(symbols);
  }
  std::vector<ir::Value> outputs;
  for (const Tensor& r : results) {
    if (!r.defined())
      throw Error(fmt::format("trace @{}: the function returned a null Tensor", name.str()));
    outputs.push_back(g->import(*r.impl()->graph, r.value()));
  }
  return extract(*g, outputs, name, fixed);
}

std::string JitCache::key(llvm::ArrayRef<TensorType> types) const {
  std::string k;
  for (const TensorType& t : types)
    k += t.str() + ";";
  return k;
}

std::vector<Tensor> JitCache::call(std::vector<Tensor> args, TraceBody body, const SrcLoc& loc) {
  evalAll(args, loc);
  std::vector<TensorType> types;
  for (const Tensor& a : args)
    types.push_back(a.type());
  Backend& backend = defaultBackend();
  std::string k = backend.name().str() + ":" + key(types);
  auto it = entries_.find(k);
  if (it == entries_.end()) {
    std::vector<ParamSpec> params;
    for (size_t i = 0; i < types.size(); ++i)
      params.push_back(
          {i < paramNames_.size() ? paramNames_[i] : fmt::format("arg{}", i), types[i]});
    ++traces_;
    Extracted e = traceGraph(name_, params, body);
    auto program = ProgramCache::global().get(std::move(e.graph), backend);
    it = entries_.emplace(k, Entry{std::move(program), std::move(e.inputs)}).first;
  }
  std::vector<Array> inputs;
  for (const Leaf& leaf : it->second.inputs)
    inputs.push_back(leaf.data ? *leaf.data : args[leaf.symbolic].array());
  std::vector<Array> outputs = it->second.program->exe->run(inputs);
  return std::vector<Tensor>(outputs.begin(), outputs.end());
}

const ir::Graph* JitCache::graphFor(llvm::ArrayRef<TensorType> types) const {
  for (const auto& [k, entry] : entries_)
    if (k.substr(k.find(':') + 1) == key(types))
      return entry.program->graph.get();
  return nullptr;
}

} // namespace graphc::detail
