//===- ir/Dot.h - Graphviz rendering of graphs ------------------*- C++ -*-===//
//
// Renders a graph in Graphviz DOT for `graphc dump --format=dot`. Each IR node is
// one DOT node labelled with its name, op, attributes and result types; edges run
// from operands to users (labelled `#i` when the operand is result i of a
// multi-result node). Parameters are blue ellipses and each graph output is a
// separate `return #i` node. Output depends only on the graph, so it is stable
// across runs and suitable for golden tests.
//
//   dot -Tsvg <(graphc dump --format=dot examples/enkf_small.gir) > enkf.svg
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <string>

namespace graphc::ir {

/// One `digraph` for `g`.
std::string printDot(const Graph& g);

/// One `digraph` per graph of `m`, in file order (Graphviz renders each).
std::string printDot(const Module& m);

} // namespace graphc::ir
