//===- ir/Graph.h - Nodes, values and graphs --------------------*- C++ -*-===//
//
// A Graph is an SSA dataflow graph of Nodes with static types. Nodes are created
// only through Graph::create, which checks the typing rules (ir/Infer.h) and
// hash-conses: creating a node structurally equal to an existing one returns the
// existing one, so structural equality within a graph is pointer equality.
// Nodes are kept in creation order, which is a topological order.
//
// A Node may have several results (lu, qr); a Value names one result of a node.
// A Module holds the graphs of one .gir file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Attr.h"
#include "ir/Op.h"
#include "ir/Types.h"
#include "support/Error.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace graphc::ir {

class Node;

/// One result of a node.
struct Value {
  Node* node = nullptr;
  uint32_t index = 0;

  const TensorType& type() const;
  explicit operator bool() const { return node != nullptr; }
  friend bool operator==(Value a, Value b) { return a.node == b.node && a.index == b.index; }
  friend bool operator!=(Value a, Value b) { return !(a == b); }
};

/// An operation in a graph. Immutable once created.
class Node {
public:
  Op op() const { return op_; }
  const OpInfo& info() const { return opInfo(op_); }
  OpKind kind() const { return info().kind; }
  llvm::ArrayRef<Value> operands() const { return operands_; }
  Value operand(unsigned i) const { return operands_[i]; }
  const Attrs& attrs() const { return attrs_; }
  llvm::ArrayRef<TensorType> types() const { return types_; }
  const TensorType& type(unsigned i = 0) const { return types_[i]; }
  unsigned numResults() const { return static_cast<unsigned>(types_.size()); }
  Value result(unsigned i = 0) { return Value{this, i}; }

  /// Position in the graph's creation order.
  unsigned id() const { return id_; }
  /// The name the node was given (from text or the frontend); not part of its identity.
  const std::string& name() const { return name_; }
  /// Where the node was written, when it came from text or the frontend.
  const SourceLoc& loc() const { return loc_; }
  /// Structural hash: op, attributes, types and the operands' structural hashes.
  size_t hash() const { return hash_; }

private:
  friend class Graph;
  Node() = default;

  Op op_{};
  llvm::SmallVector<Value, 2> operands_;
  Attrs attrs_;
  llvm::SmallVector<TensorType, 1> types_;
  unsigned id_ = 0;
  std::string name_;
  SourceLoc loc_;
  size_t hash_ = 0;
};

inline const TensorType& Value::type() const {
  return node->type(index);
}

/// A graph: parameters, nodes and outputs.
class Graph {
public:
  explicit Graph(std::string name = "main");
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph();

  const std::string& name() const { return name_; }
  void setName(std::string name) { name_ = std::move(name); }

  /// Adds a graph input. Throws if the name is taken or empty.
  Value addParameter(llvm::StringRef name, const TensorType& type, SourceLoc loc = {});

  /// Creates op(operands){attrs}, or returns the structurally equal node that exists.
  /// `resultTypes` is required for source ops and checked against the inferred types
  /// otherwise. Throws graphc::Error (carrying `loc`) when a typing rule is broken or an
  /// operand belongs to another graph. `name` is a hint kept for printing.
  Node* create(Op op, llvm::ArrayRef<Value> operands, const Attrs& attrs = {},
               llvm::ArrayRef<TensorType> resultTypes = {}, SourceLoc loc = {},
               llvm::StringRef name = {});
  /// create() for single-result ops, returning the result.
  Value apply(Op op, llvm::ArrayRef<Value> operands, const Attrs& attrs = {},
              llvm::ArrayRef<TensorType> resultTypes = {}, SourceLoc loc = {});

  /// Gives `n` the printing name `name` if it has none yet (names are not identity).
  void nameIfUnnamed(Node* n, llvm::StringRef name);

  /// Appends a graph output (values may repeat).
  void addOutput(Value v);
  llvm::ArrayRef<Value> outputs() const { return outputs_; }
  /// The parameter nodes, in signature order.
  llvm::ArrayRef<Node*> params() const { return params_; }
  /// The parameter called `name`, or nullptr.
  Node* findParam(llvm::StringRef name) const;
  /// Every node in creation (topological) order, parameters included.
  llvm::ArrayRef<Node*> nodes() const { return order_; }

  /// Structural hash of the whole graph (parameters, nodes reachable from outputs).
  size_t hash() const;

private:
  bool owns(const Node* n) const;

  std::string name_;
  std::vector<std::unique_ptr<Node>> storage_;
  std::vector<Node*> order_;
  std::vector<Node*> params_;
  std::vector<Value> outputs_;
  std::unordered_multimap<size_t, Node*> interned_;
};

/// True when the graphs have the same name, parameters, nodes (in order) and outputs.
bool structurallyEqual(const Graph& a, const Graph& b);

/// The graphs of one .gir file, in file order.
struct Module {
  std::vector<std::unique_ptr<Graph>> graphs;

  /// The graph called `name`, or nullptr.
  Graph* find(llvm::StringRef name) const;
};

} // namespace graphc::ir
