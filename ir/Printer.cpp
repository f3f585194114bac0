//===- ir/Printer.cpp - The text format, writing side ---------------------===//
#include "ir/Printer.h"

#include "llvm/ADT/StringSet.h"

#include <cctype>
#include <fmt/format.h>

namespace graphc::ir {
namespace {

bool isIdentifier(llvm::StringRef s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.')
      return false;
  return true;
}

} // namespace

NameTable::NameTable(const Graph& g) : names_(g.nodes().size()) {
  llvm::StringSet<> used;
  for (const Node* n : g.nodes())
    if (isIdentifier(n->name()) && used.insert(n->name()).second)
      names_[n->id()] = n->name();
  unsigned next = 0;
  for (const Node* n : g.nodes()) {
    if (!names_[n->id()].empty())
      continue;
    std::string name;
    do
      name = std::to_string(next++);
    while (used.contains(name));
    used.insert(name);
    names_[n->id()] = name;
  }
}

std::string NameTable::operator()(Value v) const {
  const std::string& b = names_[v.node->id()];
  if (v.node->numResults() == 1)
    return "%" + b;
  return fmt::format("%{}#{}", b, v.index);
}

std::string printValues(const NameTable& names, llvm::ArrayRef<Value> values) {
  std::string out;
  for (Value v : values)
    out += (out.empty() ? "" : ", ") + names(v);
  return out;
}

std::string printGraph(const Graph& g, const Annotator& annotate) {
  NameTable names(g);
  std::string out = fmt::format("graph @{}(", g.name());
  for (const Node* p : g.params())
    out += fmt::format("{}%{}: {}", p == g.params().front() ? "" : ", ", names.base(p),
                       p->type().str());
  out += ") {\n";
  for (const Node* n : g.nodes()) {
    if (n->op() == Op::Parameter)
      continue;
    out += "  %" + names.base(n);
    if (n->numResults() != 1)
      out += fmt::format(":{}", n->numResults());
    out += " = " + opName(n->op()).str();
    if (!n->operands().empty())
      out += " " + printValues(names, n->operands());
    if (!n->attrs().empty())
      out += " " + attrsString(n->attrs());
    out += " :";
    for (const TensorType& t : n->types())
      out += (&t == n->types().begin() ? " " : ", ") + t.str();
    if (std::string note = annotate ? annotate(*n) : ""; !note.empty())
      out += "  // " + note;
    out += "\n";
  }
  out += "  return " + printValues(names, g.outputs()) + "\n}\n";
  return out;
}

std::string printModule(const Module& m, const Annotator& annotate) {
  std::string out;
  for (const auto& g : m.graphs)
    out += (out.empty() ? "" : "\n") + printGraph(*g, annotate);
  return out;
}

} // namespace graphc::ir
