//===- frontend/Trace.cpp - Graphs under construction ---------------------===//
#include "frontend/Trace.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <atomic>
#include <fmt/format.h>
#include <set>

namespace graphc::detail {
namespace {

std::atomic<uint64_t> nextSerial{1};
thread_local std::shared_ptr<TraceGraph> activeTrace;

} // namespace

TraceGraph::TraceGraph() : serial_(nextSerial++) {}

ir::Value TraceGraph::addBound(const Array& data, SourceLoc loc) {
  std::string name = fmt::format("p{}", graph_.params().size());
  ir::Value v = graph_.addParameter(name, TensorType(data.dtype(), data.shape()), std::move(loc));
  bindings_.emplace(v.node, data);
  return v;
}

ir::Value TraceGraph::addSymbolic(llvm::StringRef name, const TensorType& type) {
  return graph_.addParameter(name, type);
}

const Array* TraceGraph::binding(const ir::Node* param) const {
  auto it = bindings_.find(param);
  return it == bindings_.end() ? nullptr : &it->second;
}

void TraceGraph::setComputed(ir::Value v, const Array& data) {
  computed_.insert_or_assign(key(v), data);
}

const Array* TraceGraph::computed(ir::Value v) const {
  auto it = computed_.find(key(v));
  return it == computed_.end() ? nullptr : &it->second;
}

bool TraceGraph::isLeaf(ir::Value v) const {
  return v.node->op() == ir::Op::Parameter || computed(v);
}

ir::Value TraceGraph::import(const TraceGraph& src, ir::Value root) {
  if (&src == this)
    return root;
  // Depth first, operands in order, with an explicit stack (a chain of any length):
  // an entry is expanded once (its operands pushed), then imported when they are.
  std::vector<std::pair<ir::Value, bool>> work{{root, false}};
  while (!work.empty()) {
    auto [v, expanded] = work.back();
    if (imported_.count(src.key(v))) {
      work.pop_back();
      continue;
    }
    bool leaf = src.computed(v) || v.node->op() == ir::Op::Parameter;
    if (!leaf && !expanded) {
      work.back().second = true;
      for (ir::Value o : llvm::reverse(v.node->operands()))
        work.push_back({o, false});
      continue;
    }
    work.pop_back();
    imported_.emplace(src.key(v), importOne(src, v));
  }
  return imported_.at(src.key(root));
}

ir::Value TraceGraph::importOne(const TraceGraph& src, ir::Value v) {
  if (const Array* data = src.computed(v))
    return addBound(*data, v.node->loc());
  if (v.node->op() == ir::Op::Parameter) {
    const Array* data = src.binding(v.node);
    if (!data)
      throw Error(fmt::format("the symbolic tensor '%{}' ({}) is used outside the jit trace "
                              "that made it",
                              v.node->name(), v.type().str()),
                  v.node->loc());
    return addBound(*data, v.node->loc());
  }
  llvm::SmallVector<ir::Value, 4> operands;
  for (ir::Value o : v.node->operands())
    operands.push_back(imported_.at(src.key(o)));
  llvm::ArrayRef<TensorType> given;
  if (v.node->kind() == ir::OpKind::Source)
    given = v.node->types();
  ir::Node* n =
      graph_.create(v.node->op(), operands, v.node->attrs(), given, v.node->loc(), v.node->name());
  return n->result(v.index);
}

std::shared_ptr<TraceGraph> currentGraph() {
  return activeTrace ? activeTrace : std::make_shared<TraceGraph>();
}

TraceScope::TraceScope(std::shared_ptr<TraceGraph> g) : previous_(std::move(activeTrace)) {
  activeTrace = std::move(g);
}

TraceScope::~TraceScope() {
  activeTrace = std::move(previous_);
}

std::shared_ptr<TraceGraph> unify(llvm::ArrayRef<Tensor> ts,
                                  llvm::SmallVectorImpl<ir::Value>& values) {
  std::shared_ptr<TraceGraph> target;
  for (const Tensor& t : ts) {
    if (!t.defined())
      throw Error("operation on a null Tensor");
    if (activeTrace && t.impl()->graph == activeTrace)
      target = activeTrace;
  }
  if (!target)
    target = ts.front().impl()->graph;
  values.clear();
  for (const Tensor& t : ts)
    values.push_back(target->import(*t.impl()->graph, t.impl()->value));
  return target;
}

std::vector<Tensor> emit(ir::Op op, llvm::ArrayRef<Tensor> operands, const ir::Attrs& attrs,
                         const SrcLoc& loc) {
  llvm::SmallVector<ir::Value, 4> values;
  std::shared_ptr<TraceGraph> g = unify(operands, values);
  ir::Node* n = g->graph().create(op, values, attrs, {}, toSourceLoc(loc));
  std::vector<Tensor> results;
  for (unsigned i = 0; i < n->numResults(); ++i)
    results.emplace_back(g, n->result(i));
  return results;
}

Tensor emit1(ir::Op op, llvm::ArrayRef<Tensor> operands, const ir::Attrs& attrs,
             const SrcLoc& loc) {
  return emit(op, operands, attrs, loc).front();
}

Tensor emitSource(ir::Op op, const ir::Attrs& attrs, const TensorType& type, const SrcLoc& loc) {
  std::shared_ptr<TraceGraph> g = currentGraph();
  ir::Node* n = g->graph().create(op, {}, attrs, {type}, toSourceLoc(loc));
  return Tensor(g, n->result());
}

Extracted extract(const TraceGraph& g, llvm::ArrayRef<ir::Value> outputs, llvm::StringRef name,
                  llvm::ArrayRef<const ir::Node*> fixed) {
  // Mark what the outputs need, stopping at leaves.
  std::set<std::pair<unsigned, uint32_t>> leaves; // (node id, result index), creation order
  std::vector<bool> needed(g.graph().nodes().size(), false);
  std::vector<ir::Value> stack(outputs.begin(), outputs.end());
  while (!stack.empty()) {
    ir::Value v = stack.back();
    stack.pop_back();
    if (g.isLeaf(v)) {
      leaves.insert({v.node->id(), v.index});
      continue;
    }
    if (needed[v.node->id()])
      continue;
    needed[v.node->id()] = true;
    stack.insert(stack.end(), v.node->operands().begin(), v.node->operands().end());
  }

  Extracted out;
  out.graph = std::make_unique<ir::Graph>(name.str());
  ir::Graph& dst = *out.graph;
  std::map<std::pair<unsigned, uint32_t>, ir::Value> map;
  for (size_t i = 0; i < fixed.size(); ++i) {
    const ir::Node* p = fixed[i];
    map[{p->id(), 0}] = dst.addParameter(p->name(), p->type(), p->loc());
    out.inputs.push_back(Leaf{std::nullopt, static_cast<int>(i)});
  }
  // One array bound at several leaves (a tensor used by expressions recorded apart,
  // then unified) is one parameter: the passes see one value, as in a trace.
  auto sameView = [](const Array& a, const Array& b) {
    return a.rawData() == b.rawData() && a.dtype() == b.dtype() && a.shape() == b.shape() &&
           a.strides() == b.strides();
  };
  for (auto [id, index] : leaves) {
    if (map.count({id, index}))
      continue;
    ir::Node* n = g.graph().nodes()[id];
    ir::Value v{n, index};
    const Array* data = g.computed(v);
    if (!data)
      data = g.binding(n);
    if (!data)
      throw Error(fmt::format("the symbolic tensor '%{}' ({}) is used outside the jit trace "
                              "that made it",
                              n->name(), v.type().str()),
                  n->loc());
    auto same = llvm::find_if(out.inputs,
                              [&](const Leaf& l) { return l.data && sameView(*l.data, *data); });
    if (same != out.inputs.end()) {
      map[{id, index}] = ir::Value{dst.params()[same - out.inputs.begin()], 0};
      continue;
    }
    map[{id, index}] =
        dst.addParameter(fmt::format("p{}", dst.params().size()), v.type(), n->loc());
    out.inputs.push_back(Leaf{*data, -1});
  }
  for (ir::Node* n : g.graph().nodes()) {
    if (!needed[n->id()])
      continue;
    llvm::SmallVector<ir::Value, 4> operands;
    for (ir::Value o : n->operands())
      operands.push_back(map.at({o.node->id(), o.index}));
    llvm::ArrayRef<TensorType> given;
    if (n->kind() == ir::OpKind::Source)
      given = n->types();
    ir::Node* copy = dst.create(n->op(), operands, n->attrs(), given, n->loc(), n->name());
    for (unsigned i = 0; i < n->numResults(); ++i)
      map.try_emplace({n->id(), i}, copy->result(i));
  }
  for (ir::Value v : outputs)
    dst.addOutput(map.at({v.node->id(), v.index}));
  return out;
}

std::string typesString(llvm::ArrayRef<Tensor> ts) {
  std::string s;
  for (const Tensor& t : ts)
    s += (s.empty() ? "" : ", ") + t.type().str();
  return s;
}

} // namespace graphc::detail
