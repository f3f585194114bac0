//===- passes/Rewrite.h - Rebuilding a graph node by node -------*- C++ -*-===//
//
// Graphs are immutable and hash-consed, so a pass does not edit a graph: it
// rebuilds it. rewrite() walks the live nodes of a graph in order (operands first)
// and asks a rule for each one's replacement in the new graph; a node the rule
// declines is copied. Dead nodes are dropped (dead-code elimination) and equal
// nodes merge in the new graph (CSE), so every pass gets both for free.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/SmallVector.h"

#include <functional>
#include <memory>
#include <optional>

namespace graphc::passes {

using ValueList = llvm::SmallVector<ir::Value, 1>;

/// The state of one rebuild: the new graph and the map from old values to new.
class Rewriter {
public:
  Rewriter(const ir::Graph& source, ir::Graph& target) : source_(source), target_(target) {}

  const ir::Graph& source() const { return source_; }
  ir::Graph& target() { return target_; }

  /// The new value standing for `old`, which must have been visited.
  ir::Value map(ir::Value old) const;
  /// The new values of a node's operands.
  ValueList mapOperands(const ir::Node& n) const;
  /// A copy of `n` over the new operands, keeping its name and location.
  ValueList copy(const ir::Node& n);

  /// Builders in the new graph, at the location of the node being rewritten.
  ir::Value apply(ir::Op op, llvm::ArrayRef<ir::Value> operands, const ir::Attrs& attrs = {});
  ir::Value full(double value, const ir::TensorType& type);

private:
  friend std::unique_ptr<ir::Graph>
  rewrite(const ir::Graph&,
          const std::function<std::optional<ValueList>(Rewriter&, const ir::Node&)>&);
  const ir::Graph& source_;
  ir::Graph& target_;
  std::vector<ValueList> map_; // by old node id
  SourceLoc loc_;
};

/// A rewrite rule: the replacement values of `node` built in rw.target() (one per
/// result), or nullopt to keep the node as it is.
using RewriteRule = std::function<std::optional<ValueList>(Rewriter& rw, const ir::Node& node)>;

/// Rebuilds `g` applying `rule` to every live node. Parameters and outputs carry over.
std::unique_ptr<ir::Graph> rewrite(const ir::Graph& g, const RewriteRule& rule);

/// A copy of `g` with its live nodes only: what an executable keeps of a graph.
std::unique_ptr<ir::Graph> copyLive(const ir::Graph& g);

/// The results of `n`, in order.
ValueList resultsOf(ir::Node* n);
/// A copy of `n` in `into` over `operands` (values of `into`), keeping its attributes,
/// types, location and name; its results.
ValueList copyNode(ir::Graph& into, const ir::Node& n, llvm::ArrayRef<ir::Value> operands);

/// Copies the live nodes of `g` into `into`, with g's parameters standing for `args`
/// (one value of `into` per parameter, of its type), and returns g's outputs there.
ValueList inlineGraph(const ir::Graph& g, ir::Graph& into, llvm::ArrayRef<ir::Value> args);

/// The nodes of `g` that outputs depend on, as a mask by node id.
std::vector<bool> liveNodes(const ir::Graph& g);

/// How many times each node's results are used by live nodes and outputs, by node id.
std::vector<unsigned> useCounts(const ir::Graph& g);

} // namespace graphc::passes
