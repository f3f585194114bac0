//===- passes/LinalgForms.cpp - Traces, quadratic forms, inverses, logdets ===//
//
// Matching looks at the graph before the pass, where the structure facts were
// computed; expansion builds in the new graph. Which uses of an inverse (or of a
// solve for the identity) need the matrix itself is found once, up front.
//
//===----------------------------------------------------------------------===//
#include "passes/LinalgForms.h"

#include "ir/OpCases.h"
#include "passes/LowerLinalg.h"
#include "passes/Match.h"
#include "passes/Rewrite.h"
#include "passes/Structure.h"

#include <numeric>

namespace graphc::passes {
namespace {

using ir::Attrs;
using ir::Node;
using ir::Op;
using ir::Value;
using Axes = std::vector<int64_t>;

/// v' for the last two axes of `v`, in the new graph.
Value transposeMatrix(Rewriter& rw, Value v) {
  Axes perm(v.type().rank());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return rw.apply(Op::Transpose, {v}, Attrs{{"perm", perm}});
}

/// c * v, without the multiplication when c = 1.
Value times(Rewriter& rw, Value v, double c) {
  return c == 1 ? v : rw.apply(Op::Mul, {v, rw.full(c, v.type())});
}

/// sum(x) over the two matrix axes: a batch-shaped result, like trace.
Value sumMatrices(Rewriter& rw, Value x) {
  int64_t r = x.type().rank();
  return rw.apply(Op::Sum, {x}, Attrs{{"axes", Axes{r - 2, r - 1}}});
}

/// True when `v` is an identity matrix (`eye`).
bool isEye(Value v) {
  return v.node->op() == Op::Eye;
}

/// The matrix A of `n` = inverse(A) or solve(A, I).
std::optional<Value> inverted(const Node& n) {
  if (n.op() == Op::Inverse)
    return n.operand(0);
  if (n.op() == Op::Solve && isEye(n.operand(1)))
    return n.operand(0);
  return std::nullopt;
}

class Forms {
public:
  Forms(const ir::Graph& g, const StructureMap& facts, PassStats& stats)
      : facts_(facts), stats_(stats), explicit_(g.nodes().size()) {
    std::vector<bool> live = liveNodes(g);
    for (const Node* n : g.nodes())
      if (live[n->id()])
        for (unsigned i = 0; i < n->operands().size(); ++i)
          if (!coveredUse(*n, i))
            explicit_[n->operand(i).node->id()] = true;
    for (Value v : g.outputs())
      explicit_[v.node->id()] = true;
  }

  std::optional<ValueList> operator()(Rewriter& rw, const Node& n) {
    std::optional<Value> v;
    switch (n.op()) {
    case Op::Trace:
      v = trace(rw, n);
      break;
    case Op::Sum:
      v = quadraticSum(rw, n);
      break;
    case Op::Matmul:
      v = quadraticProduct(rw, n);
      if (!v)
        v = rightSolve(rw, n);
      break;
    case Op::Inverse:
    case Op::Solve:
      if (std::optional<Value> a = inverted(n); a && explicit_[n.id()] && factorable(*a))
        v = count("spd-inverse", spdInverse(rw, *a));
      break;
    case Op::Logdet:
    case Op::Det:
      if (factorable(n.operand(0)))
        v = count(n.op() == Op::Logdet ? "logdet" : "det", determinant(rw, n));
      break;
    case Op::Mean:
    case Op::Var:
    case Op::Max:
    case Op::Min:
    case Op::Prod:
    case Op::Argmax:
    case Op::Argmin:
    case Op::Cholesky:
    case Op::TriangularSolve:
    case Op::Lu:
    case Op::Qr:
    case Op::Syrk:
    GRAPHC_SOURCE_CASES:
    GRAPHC_ELEMENTWISE_CASES:
    GRAPHC_SHAPE_CASES:
    GRAPHC_ASSUME_CASES:
    GRAPHC_COLLECTIVE_CASES:
      break;
    }
    return v ? std::optional<ValueList>(ValueList{*v}) : std::nullopt;
  }

private:
  /// Whether operand `i` of `user`, if an inverse of an SPD matrix, is taken care of
  /// without forming the inverse: by lower-linalg (inverse(A) * B) or by this pass
  /// (P * inverse(A), a trace).
  static bool coveredUse(const Node& user, unsigned i) {
    if (user.op() == Op::Trace)
      return true;
    if (user.op() != Op::Matmul)
      return false;
    return i == 1 ||
           (user.operand(0).node->op() == Op::Inverse && !user.attrs().flag("transpose_a"));
  }

  Value count(llvm::StringRef what, Value v) {
    stats_.count(what);
    return v;
  }

  /// S is SPD, not diagonal, and Woodbury would not solve it for `m` columns more
  /// cheaply: the rules through S's Cholesky factor apply.
  bool factorable(Value s, int64_t m = 1) const {
    const Structure& f = facts_[s];
    if (!f.has(Structure::SPD) || f.has(Structure::Diagonal))
      return false;
    return !(f.lowRankPlusDiagonal > 0 &&
             woodburyPays(s.type().shape.back(), f.lowRankPlusDiagonal, m));
  }

  /// L = cholesky(S) {fallback}: the factor lower-linalg's solves with S use.
  static Value factor(Rewriter& rw, Value s) {
    return rw.apply(Op::Cholesky, {rw.map(s)}, Attrs{{"fallback", true}});
  }

  /// L^-1 * b for `b` of the new graph.
  static Value underFactor(Rewriter& rw, Value s, Value b) {
    return rw.apply(Op::TriangularSolve, {factor(rw, s), b}, Attrs{{"lower", true}});
  }

  /// sum(square(L^-1 b)) over the matrix axes: trace(b' S^-1 b).
  static Value quadraticTrace(Rewriter& rw, Value s, Value b) {
    return sumMatrices(rw, rw.apply(Op::Square, {underFactor(rw, s, b)}));
  }

  std::optional<Value> trace(Rewriter& rw, const Node& n) {
    Value a = n.operand(0);
    const Node& p = *a.node;
    if (std::optional<Value> s = inverted(p); s && factorable(*s, s->type().shape.back())) {
      Value eye = rw.target().apply(Op::Eye, {}, {}, {s->type()});
      return count("quadratic-form", quadraticTrace(rw, *s, eye));
    }
    // trace(solve(A, c*F*F')) and trace(inverse(A) * c*F*F')
    std::optional<std::pair<Value, Value>> system;
    if (p.op() == Op::Solve)
      system = std::make_pair(p.operand(0), p.operand(1));
    else if (p.op() == Op::Matmul && p.operand(0).node->op() == Op::Inverse &&
             !p.attrs().flag("transpose_a") && !p.attrs().flag("transpose_b"))
      system = std::make_pair(p.operand(0).node->operand(0), p.operand(1));
    if (system) {
      double c = 1;
      std::optional<Gram> gram = matchGram(*peelUniformScale(system->second, c).node);
      if (!gram)
        return std::nullopt;
      Value f = rw.map(gram->factor);
      if (gram->transposed) // F'F = (F')(F')'
        f = transposeMatrix(rw, f);
      stats_.count("trace-solve");
      if (factorable(system->first, f.type().shape.back()))
        return times(rw, count("quadratic-form", quadraticTrace(rw, system->first, f)), c);
      Value z = rw.apply(Op::Solve, {rw.map(system->first), f});
      return times(rw, sumMatrices(rw, rw.apply(Op::Mul, {f, z})), c);
    }
    if (p.op() == Op::Syrk)
      return count("trace-product", sumMatrices(rw, rw.apply(Op::Square, {rw.map(p.operand(0))})));
    const ir::TensorType& t = p.type(); // the trace of a non-square product is not a sum
    if (p.op() != Op::Matmul || t.shape[t.rank() - 1] != t.shape[t.rank() - 2] ||
        p.operand(0).node->op() == Op::Inverse || p.operand(1).node->op() == Op::Inverse)
      return std::nullopt;
    // trace(op(A)*op(B)) = sum(op(A) .* op(B)'); with one flag set, sum(A .* B).
    bool ta = p.attrs().flag("transpose_a"), tb = p.attrs().flag("transpose_b");
    Value x = rw.map(p.operand(0)), y = rw.map(p.operand(1));
    if (ta == tb)
      (ta ? x : y) = transposeMatrix(rw, ta ? x : y);
    return count("trace-product", sumMatrices(rw, rw.apply(Op::Mul, {x, y})));
  }

  /// sum(B .* solve(S, B), axes) with the row axis among `axes`.
  std::optional<Value> quadraticSum(Rewriter& rw, const Node& n) {
    const Node& m = *n.operand(0).node;
    int64_t r = m.type().rank();
    const Axes& axes = n.attrs().getInts("axes");
    if (m.op() != Op::Mul || r < 2 || std::find(axes.begin(), axes.end(), r - 2) == axes.end())
      return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      const Node& s = *m.operand(side).node;
      Value b = m.operand(1 - side);
      if (s.op() != Op::Solve || s.operand(1) != b ||
          !factorable(s.operand(0), b.type().shape.back()))
        continue;
      Value sq = rw.apply(Op::Square, {underFactor(rw, s.operand(0), rw.map(b))});
      return count("quadratic-form", rw.apply(Op::Sum, {sq}, n.attrs()));
    }
    return std::nullopt;
  }

  /// B' * solve(S, B), or solve(S, B)' * B.
  std::optional<Value> quadraticProduct(Rewriter& rw, const Node& n) {
    if (!n.attrs().flag("transpose_a") || n.attrs().flag("transpose_b"))
      return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      const Node& s = *n.operand(1 - side).node;
      Value b = n.operand(side);
      int64_t k = b.type().shape.back();
      if (s.op() != Op::Solve || s.operand(1) != b || !factorable(s.operand(0), k))
        continue;
      Value m = underFactor(rw, s.operand(0), rw.map(b));
      int64_t r = m.type().rank();
      Value out = k == 1 ? rw.apply(Op::Sum, {rw.apply(Op::Square, {m})},
                                    Attrs{{"axes", Axes{r - 2}}, {"keepdims", true}})
                         : rw.apply(Op::Syrk, {m}, Attrs{{"transpose", true}});
      return count("quadratic-form", out);
    }
    return std::nullopt;
  }

  /// P * inverse(A), P * solve(A, I): right-side solves.
  std::optional<Value> rightSolve(Rewriter& rw, const Node& n) {
    std::optional<Value> a = inverted(*n.operand(1).node);
    if (!a)
      return std::nullopt;
    Value q = rw.map(n.operand(0));
    if (n.attrs().flag("transpose_a"))
      q = transposeMatrix(rw, q);
    int64_t rows = q.type().shape[q.type().rank() - 2];
    if (factorable(*a, rows)) { // Q*S^-1 = (Q*L^-T)*L^-1; S' = S
      Value l = factor(rw, *a);
      Value y = rw.apply(Op::TriangularSolve, {l, q},
                         Attrs{{"lower", true}, {"right_side", true}, {"transpose_a", true}});
      return count("right-solve", rw.apply(Op::TriangularSolve, {l, y},
                                           Attrs{{"lower", true}, {"right_side", true}}));
    }
    if (n.operand(1).node->op() != Op::Inverse)
      return std::nullopt;
    // Q*A^-1 = (A'^-1 Q')' and Q*A^-T = (A^-1 Q')'; A' = A when A is symmetric
    Value m = rw.map(*a);
    if (!n.attrs().flag("transpose_b") && !facts_[*a].has(Structure::Symmetric))
      m = transposeMatrix(rw, m);
    Value z = rw.apply(Op::Solve, {m, transposeMatrix(rw, q)});
    return count("right-solve", transposeMatrix(rw, z));
  }

  /// S^-1 = L^-T L^-1 = M'M with M = L^-1: symmetric by construction.
  static Value spdInverse(Rewriter& rw, Value s) {
    Value eye = rw.target().apply(Op::Eye, {}, {}, {s.type()});
    return rw.apply(Op::Syrk, {underFactor(rw, s, eye)}, Attrs{{"transpose", true}});
  }

  /// logdet(S) = 2 * sum(log(diag(L))), det(S) = prod(diag(L))^2.
  static Value determinant(Rewriter& rw, const Node& n) {
    Value d = rw.apply(Op::DiagPart, {factor(rw, n.operand(0))});
    Attrs last{{"axes", Axes{d.type().rank() - 1}}};
    if (n.op() == Op::Det)
      return rw.apply(Op::Square, {rw.apply(Op::Prod, {d}, last)});
    return times(rw, rw.apply(Op::Sum, {rw.apply(Op::Log, {d})}, last), 2);
  }

  const StructureMap& facts_;
  PassStats& stats_;
  std::vector<bool> explicit_; // by source node id: a use needs the value itself
};

} // namespace

std::unique_ptr<ir::Graph> rewriteLinalgForms(const ir::Graph& g, PassStats& stats) {
  StructureMap facts(g);
  Forms forms(g, facts, stats);
  return rewrite(g, [&](Rewriter& rw, const Node& n) { return forms(rw, n); });
}

} // namespace graphc::passes
