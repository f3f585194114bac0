//===- passes/ShareFactors.cpp - One factorization per matrix -------------===//
#include "passes/ShareFactors.h"

#include "passes/Match.h"
#include "passes/Rewrite.h"
#include "passes/Structure.h"

#include <map>

namespace graphc::passes {
namespace {

using ir::Attrs;
using ir::Node;
using ir::Op;
using ir::Value;
using S = Structure;

using ValueKey = std::pair<unsigned, unsigned>; // node id, result index

ValueKey keyOf(Value v) {
  return {v.node->id(), v.index};
}

/// True when lower-linalg leaves a solve with a matrix of these facts on LU.
bool staysOnLu(const Structure& s) {
  return (s.props & (S::Identity | S::Diagonal | S::Lower | S::Upper | S::SPD)) == 0 &&
         s.lowRankPlusDiagonal == 0;
}

Value triangularSolve(Rewriter& rw, Value a, Value b, bool lower, bool transposeA, bool unit) {
  Attrs attrs;
  attrs.set("lower", lower).set("transpose_a", transposeA).set("unit_diagonal", unit);
  return rw.apply(Op::TriangularSolve, {a, b}, attrs);
}

/// solve(A, b), or solve(A', b) with `transposed`, through A = P L U.
Value luSolve(Rewriter& rw, Value a, Value b, bool transposed) {
  Node* f = rw.target().create(Op::Lu, {a});
  Value p = f->result(0), l = f->result(1), u = f->result(2);
  if (!transposed) {
    Value y = rw.apply(Op::Matmul, {p, b}, Attrs{{"transpose_a", true}});
    y = triangularSolve(rw, l, y, /*lower=*/true, false, /*unit=*/true);
    return triangularSolve(rw, u, y, /*lower=*/false, false, false);
  }
  Value y = triangularSolve(rw, u, b, /*lower=*/false, /*transposeA=*/true, false);
  y = triangularSolve(rw, l, y, /*lower=*/true, /*transposeA=*/true, /*unit=*/true);
  return rw.apply(Op::Matmul, {p, y});
}

/// log |det A| = sum(log |diag(U)|) through A = P L U.
Value luLogdet(Rewriter& rw, Value a) {
  Value u = rw.target().create(Op::Lu, {a})->result(2);
  Value d = rw.apply(Op::Log, {rw.apply(Op::Abs, {rw.apply(Op::DiagPart, {u})})});
  return rw.apply(Op::Sum, {d}, Attrs{{"axes", std::vector<int64_t>{d.type().rank() - 1}}});
}

} // namespace

std::unique_ptr<ir::Graph> shareFactors(const ir::Graph& g, PassStats& stats) {
  StructureMap facts(g);
  std::vector<bool> live = liveNodes(g);
  std::map<ValueKey, int> uses; // factorizations by matrix, transposes peeled
  for (const Node* n : g.nodes())
    if (live[n->id()] && (n->op() == Op::Solve || n->op() == Op::Logdet)) {
      bool flipped = false;
      Value a = peelMatrixTranspose(n->operand(0), flipped);
      if (staysOnLu(facts[a]))
        ++uses[keyOf(a)];
    }
  return rewrite(g, [&](Rewriter& rw, const Node& n) -> std::optional<ValueList> {
    if (n.op() == Op::Transpose && swapsMatrixAxes(n.attrs().getInts("perm")) &&
        facts[n.operand(0)].has(S::Symmetric)) {
      stats.count("symmetric-transpose");
      return ValueList{rw.map(n.operand(0))};
    }
    if (n.op() != Op::Solve && n.op() != Op::Logdet)
      return std::nullopt;
    bool flipped = false;
    Value a = peelMatrixTranspose(n.operand(0), flipped);
    auto it = uses.find(keyOf(a));
    if (it == uses.end() || it->second < 2)
      return std::nullopt;
    stats.count("shared-lu");
    if (n.op() == Op::Logdet)
      return ValueList{luLogdet(rw, rw.map(a))};
    return ValueList{luSolve(rw, rw.map(a), rw.map(n.operand(1)), flipped)};
  });
}

} // namespace graphc::passes
