//===- ir/Verifier.h - Whole-graph invariant checks -------------*- C++ -*-===//
//
// Re-checks a graph after it was built or transformed: every node's types follow
// the typing rules (ir/Infer.h), operands are defined before use and belong to the
// graph, parameters are numbered in order, and the graph has outputs. Passes run it
// after every step in debug builds.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

namespace graphc::ir {

/// Throws graphc::Error for the first broken rule, naming the op and its operand
/// types, at the node's source location when it has one.
void verify(const Graph& g);

/// verify() for each graph of the module.
void verify(const Module& m);

} // namespace graphc::ir
