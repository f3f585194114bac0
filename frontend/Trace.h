//===- frontend/Trace.h - Graphs under construction -------------*- C++ -*-===//
//
// The machinery behind Tensor (internal to the frontend). A TraceGraph is an
// ir::Graph being recorded plus what is known about its leaves: parameters bound to
// data (eager tensors made from Arrays), symbolic parameters (jit tracing) and values
// already computed. Tensors of different graphs meet in one by importing (copying
// the nodes one needs), and `extract` cuts the part that computes some values into a
// clean, self-contained graph ready to compile.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/Tensor.h"

#include <map>
#include <optional>
#include <tuple>
#include <vector>

namespace graphc::detail {

/// A graph being recorded and the data bound to its leaves.
class TraceGraph {
public:
  TraceGraph();
  TraceGraph(const TraceGraph&) = delete;
  TraceGraph& operator=(const TraceGraph&) = delete;

  ir::Graph& graph() { return graph_; }
  const ir::Graph& graph() const { return graph_; }

  /// Adds a parameter bound to `data`.
  ir::Value addBound(const Array& data, SourceLoc loc);
  /// Adds a symbolic parameter (no data: jit tracing).
  ir::Value addSymbolic(llvm::StringRef name, const TensorType& type);
  /// The data bound to parameter `param`, or nullptr for a symbolic one.
  const Array* binding(const ir::Node* param) const;

  /// Records that `v` has been computed (eager evaluation).
  void setComputed(ir::Value v, const Array& data);
  /// The computed data of `v`, or nullptr.
  const Array* computed(ir::Value v) const;
  /// True when `v` is a leaf: a parameter or a computed value.
  bool isLeaf(ir::Value v) const;

  /// The value of this graph that stands for `v` of `src`, copying what is needed.
  ir::Value import(const TraceGraph& src, ir::Value v);

private:
  /// Imports `v` of `src` whose operands are imported already.
  ir::Value importOne(const TraceGraph& src, ir::Value v);

  using ValueKey = std::tuple<uint64_t, unsigned, uint32_t>; // graph serial, node id, index
  ValueKey key(ir::Value v) const { return {serial_, v.node->id(), v.index}; }

  uint64_t serial_;
  ir::Graph graph_;
  std::map<const ir::Node*, Array> bindings_;
  std::map<ValueKey, Array> computed_;
  std::map<ValueKey, ir::Value> imported_;
};

/// The shared state behind a Tensor handle. Evaluating rebinds it to a fresh graph
/// whose only node is a parameter bound to the result.
struct TensorImpl {
  std::shared_ptr<TraceGraph> graph;
  ir::Value value;
};

/// The graph new source nodes go to: the active trace, if any (see TraceScope).
std::shared_ptr<TraceGraph> currentGraph();

/// Makes `g` the graph that factories (eye, full, ...) record into on this thread,
/// for the scope's lifetime. Used by jit tracing.
class TraceScope {
public:
  explicit TraceScope(std::shared_ptr<TraceGraph> g);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

private:
  std::shared_ptr<TraceGraph> previous_;
};

/// Brings tensors into one graph: the active trace when one of them is in it, else
/// the first tensor's graph. Returns the graph and each tensor's value in it.
std::shared_ptr<TraceGraph> unify(llvm::ArrayRef<Tensor> ts,
                                  llvm::SmallVectorImpl<ir::Value>& values);

/// Appends op(operands){attrs} to the operands' common graph; returns every result.
/// Typing errors are thrown at `loc`.
std::vector<Tensor> emit(ir::Op op, llvm::ArrayRef<Tensor> operands, const ir::Attrs& attrs,
                         const SrcLoc& loc);
/// emit() for a single-result op.
Tensor emit1(ir::Op op, llvm::ArrayRef<Tensor> operands, const ir::Attrs& attrs, const SrcLoc& loc);
/// Appends a source op (no operands) of type `type` to the current graph.
Tensor emitSource(ir::Op op, const ir::Attrs& attrs, const TensorType& type, const SrcLoc& loc);

/// Where an input of an extracted graph comes from.
struct Leaf {
  /// The data bound to it (eager leaves and arrays captured by a jit trace).
  std::optional<Array> data;
  /// Index into the fixed parameters for a symbolic input, else -1.
  int symbolic = -1;
};

/// A self-contained graph cut out of a TraceGraph, and where its inputs come from.
struct Extracted {
  std::unique_ptr<ir::Graph> graph;
  std::vector<Leaf> inputs; ///< one per parameter of `graph`
};

/// Cuts out the nodes that compute `outputs` from their leaves into a new graph named
/// `name`. The `fixed` parameters (symbolic, in order, keeping their names) come first
/// even when unused; the other leaves follow in creation order, named p0, p1, ...
/// Dead nodes are dropped. Throws when a symbolic parameter that is not fixed is needed.
Extracted extract(const TraceGraph& g, llvm::ArrayRef<ir::Value> outputs, llvm::StringRef name,
                  llvm::ArrayRef<const ir::Node*> fixed = {});

/// "f64[3,4], f64[4]" for error messages.
std::string typesString(llvm::ArrayRef<Tensor> ts);

} // namespace graphc::detail
