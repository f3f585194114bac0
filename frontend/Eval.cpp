//===- frontend/Eval.cpp - Evaluating lazy tensors ------------------------===//
#include "frontend/Eval.h"

#include "frontend/Trace.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"

#include <cstdlib>

namespace graphc {

ProgramCache& ProgramCache::global() {
  static ProgramCache cache;
  return cache;
}

std::shared_ptr<const ProgramCache::Program> ProgramCache::get(std::unique_ptr<ir::Graph> g,
                                                               Backend& backend) {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t h = g->hash();
  auto [first, last] = entries_.equal_range(h);
  for (auto it = first; it != last; ++it) {
    if (it->second->backend == backend.name() && ir::structurallyEqual(*it->second->graph, *g)) {
      ++hits_;
      return it->second;
    }
  }
  std::unique_ptr<Executable> exe = compile(*g, backend); // passes, then the backend
  ++compiles_;
  auto program =
      std::make_shared<const Program>(Program{backend.name().str(), std::move(g), std::move(exe)});
  entries_.emplace(h, program);
  return program;
}

size_t ProgramCache::compileCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return compiles_;
}

size_t ProgramCache::hitCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

void ProgramCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
}

namespace {

std::string& backendChoice() {
  static std::string name = [] {
    const char* env = std::getenv("GRAPHC_BACKEND");
    return std::string(env && *env ? env : "auto");
  }();
  return name;
}

} // namespace

void setDefaultBackend(std::string name) {
  getBackend(name); // throws for an unknown name
  backendChoice() = std::move(name);
}

Backend& defaultBackend() {
  return getBackend(backendChoice());
}

void evalAll(llvm::ArrayRef<Tensor> ts, SrcLoc loc) {
  std::vector<Tensor> pending;
  for (const Tensor& t : ts) {
    if (!t.defined())
      throw Error("eval() of a null Tensor", toSourceLoc(loc));
    if (!t.isEvaluated())
      pending.push_back(t);
  }
  if (pending.empty())
    return;
  llvm::SmallVector<ir::Value, 4> values;
  std::shared_ptr<detail::TraceGraph> g = detail::unify(pending, values);
  detail::Extracted e = detail::extract(*g, values, "eager");
  std::vector<Array> inputs;
  for (const detail::Leaf& leaf : e.inputs)
    inputs.push_back(*leaf.data);
  auto program = ProgramCache::global().get(std::move(e.graph), defaultBackend());
  std::vector<Array> outputs = program->exe->run(inputs);
  for (size_t i = 0; i < pending.size(); ++i) {
    detail::TensorImpl& impl = *pending[i].impl();
    // Later uses of the old graph reuse the result; the handle moves to a fresh graph
    // so that the old one can be freed.
    impl.graph->setComputed(impl.value, outputs[i]);
    auto fresh = std::make_shared<detail::TraceGraph>();
    impl.value = fresh->addBound(outputs[i], impl.value.node->loc());
    impl.graph = std::move(fresh);
  }
}

Tensor& Tensor::eval() {
  evalAll({*this});
  return *this;
}

bool Tensor::isEvaluated() const {
  return impl_ && impl_->value.node->op() == ir::Op::Parameter &&
         impl_->graph->binding(impl_->value.node);
}

const Array& Tensor::array() {
  eval();
  return *impl_->graph->binding(impl_->value.node);
}

} // namespace graphc
