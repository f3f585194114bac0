//===- ir/Dot.cpp - Graphviz rendering of graphs --------------------------===//
#include "ir/Dot.h"

#include "ir/Printer.h"

#include <fmt/format.h>

namespace graphc::ir {
namespace {

/// `s` as the inside of a DOT double-quoted string.
std::string escape(llvm::StringRef s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

/// The DOT identifier of a node.
std::string dotId(const Node* n) {
  return fmt::format("n{}", n->id());
}

/// The label lines of a non-parameter node: "%ym = mean", "{axes=[1], keepdims}",
/// "f64[4,1]". Lines are joined with DOT's `\n`.
std::string label(const NameTable& names, const Node* n) {
  std::string head = "%" + names.base(n);
  if (n->numResults() != 1)
    head += fmt::format(":{}", n->numResults());
  std::string out = escape(head + " = " + opName(n->op()).str());
  if (!n->attrs().empty())
    out += "\\n" + escape(attrsString(n->attrs()));
  std::string types;
  for (const TensorType& t : n->types())
    types += (types.empty() ? "" : ", ") + t.str();
  return out + "\\n" + escape(types);
}

void printNodes(std::string& out, const Graph& g, const NameTable& names) {
  for (const Node* n : g.nodes()) {
    if (n->op() == Op::Parameter) {
      out += fmt::format("  {} [label=\"{}\", shape=ellipse, style=filled, "
                         "fillcolor=lightblue];\n",
                         dotId(n), escape("%" + names.base(n) + ": " + n->type().str()));
      continue;
    }
    out += fmt::format("  {} [label=\"{}\"];\n", dotId(n), label(names, n));
  }
}

/// The edge from `v`'s node, labelled with the result index when it has several.
std::string edge(Value v, const std::string& to) {
  std::string attrs = v.node->numResults() == 1 ? "" : fmt::format(" [label=\"#{}\"]", v.index);
  return fmt::format("  {} -> {}{};\n", dotId(v.node), to, attrs);
}

void printEdges(std::string& out, const Graph& g) {
  for (const Node* n : g.nodes())
    for (Value v : n->operands())
      out += edge(v, dotId(n));
}

void printOutputs(std::string& out, const Graph& g) {
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    std::string id = fmt::format("out{}", i);
    out += fmt::format("  {} [label=\"return #{}\", shape=house, style=filled, "
                       "fillcolor=palegreen];\n",
                       id, i);
    out += edge(g.outputs()[i], id);
  }
}

} // namespace

std::string printDot(const Graph& g) {
  NameTable names(g);
  std::string out = fmt::format("digraph \"{}\" {{\n", escape("@" + g.name()));
  out += "  node [shape=box, fontname=\"monospace\"];\n";
  out += "  edge [fontname=\"monospace\"];\n";
  printNodes(out, g, names);
  printEdges(out, g);
  printOutputs(out, g);
  return out + "}\n";
}

std::string printDot(const Module& m) {
  std::string out;
  for (const auto& g : m.graphs)
    out += (out.empty() ? "" : "\n") + printDot(*g);
  return out;
}

} // namespace graphc::ir
