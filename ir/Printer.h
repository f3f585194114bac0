//===- ir/Printer.h - The text format, writing side -------------*- C++ -*-===//
//
// Prints graphs in the .gir text format, which ir/Parser.h reads back:
//
//   graph @enkf(%xi: f64[4,3], %y: f64[4,3]) {
//     %ym = mean %y {axes=[1], keepdims} : f64[4,1]
//     %f:2 = qr %xi : f64[4,3], f64[3,3]
//     return %ym, %f#1
//   }
//
// A node with several results is named `%f:2` and its results are `%f#0`, `%f#1`.
// Every node is printed (dead ones too), in creation order, so parse(print(g)) == g.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <functional>
#include <string>
#include <vector>

namespace graphc::ir {

/// Names every node of a graph for printing: the node's own name where it is a
/// valid, unused identifier, otherwise a fresh number.
class NameTable {
public:
  explicit NameTable(const Graph& g);
  /// "%ym", "%3", or "%f#1" for result 1 of a multi-result node.
  std::string operator()(Value v) const;
  /// The node's name without '%' or result suffix.
  const std::string& base(const Node* n) const { return names_[n->id()]; }

private:
  std::vector<std::string> names_;
};

/// Extra text for a node, printed as a trailing `// ...` comment (which the parser
/// skips); "" prints nothing. Analyses use it to show their facts.
using Annotator = std::function<std::string(const Node&)>;

/// The text of one graph.
std::string printGraph(const Graph& g, const Annotator& annotate = {});
/// The text of a module: its graphs, separated by blank lines.
std::string printModule(const Module& m, const Annotator& annotate = {});
/// "%a, %b" for a list of values.
std::string printValues(const NameTable& names, llvm::ArrayRef<Value> values);

} // namespace graphc::ir
