//===- passes/LowerLinalg.cpp - Structure-aware solve lowering ------------===//
//
// Matching looks at the graph before the pass (where the structure facts were
// computed); expansion builds in the new graph through the Rewriter.
//
//===----------------------------------------------------------------------===//
#include "passes/LowerLinalg.h"

#include "passes/Match.h"
#include "passes/Rewrite.h"
#include "passes/Structure.h"

#include <limits>

namespace graphc::passes {
namespace {

using ir::Attrs;
using ir::Node;
using ir::Op;
using ir::TensorType;
using ir::Value;
using S = Structure;

/// The pieces of D + c*U*U' found in the graph before the pass.
struct LowRankPlusDiagonal {
  Value factor;    ///< X, with U = X (transposed = false) or U = X' (transposed = true)
  bool transposed; ///< the Gram matrix was X'*X
  double scale;    ///< c > 0
  Value diagonal;  ///< the matrix D
};

/// Peels positive uniform scalings off `v`: v = scale * inner.
Value peelScale(Value v, double& scale) {
  for (;;) {
    const Node* n = v.node;
    if (n->op() == Op::Mul) {
      std::optional<double> c0 = uniformValue(n->operand(0)), c1 = uniformValue(n->operand(1));
      if (c1 && *c1 > 0) {
        scale *= *c1, v = n->operand(0);
        continue;
      }
      if (c0 && *c0 > 0) {
        scale *= *c0, v = n->operand(1);
        continue;
      }
    } else if (n->op() == Op::Div) {
      std::optional<double> c = uniformValue(n->operand(1));
      if (c && *c > 0) {
        scale /= *c, v = n->operand(0);
        continue;
      }
    }
    return v;
  }
}

/// `a` = c*U*U' + D, D a positive diagonal, whatever the rank of U.
std::optional<LowRankPlusDiagonal> matchGramPlusDiagonal(const StructureMap& facts, Value a) {
  if (a.node->op() != Op::Add)
    return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    Value p = a.node->operand(side), d = a.node->operand(1 - side);
    if (!facts[d].has(S::Diagonal | S::SPD))
      continue;
    double scale = 1;
    std::optional<Gram> gram = matchGram(*peelScale(p, scale).node);
    if (!gram)
      continue;
    return LowRankPlusDiagonal{gram->factor, gram->transposed, scale, d};
  }
  return std::nullopt;
}

/// Flops of solving an n x n SPD matrix for m right-hand sides by Cholesky, and by
/// Woodbury when the matrix is a rank-k part plus a diagonal.
double choleskySolveFlops(double n, double m) {
  return n * n * n / 3 + 2 * n * n * m;
}
double woodburySolveFlops(double n, double k, double m) {
  return 2 * n * k * k + 4 * n * k * m + k * k * k / 3 + 2 * k * k * m;
}

/// A product P * solve(S, R) that can go through S's Gram factor F, S = c*F*F' + D,
/// where P = scale * X*F' (or P = F') and R = sigma*F + u*1' (matchColumnOffsets),
/// plus, in the inner-system form, a diagonal E (W1b adds R = 0.1 I to it):
/// P*S^-1*E = scale * Z * (D^-1 E F)', since F'*S^-1 = T^-1 * F'*D^-1.
/// Two forms, the cheaper taken (both cheaper than forming P and solving for R):
///
///  - through the factor of S (n x n): P*S^-1*R = scale * X * (sigma * M'M + M'w * 1')
///    with L = cholesky(S), M = L^-1 F, w = L^-1 u: one triangular solve for F's k
///    columns and a syrk replace forming P and the two solves for R's columns;
///  - in the inner system (k x k), by the push-through identity
///    F'*S^-1 = T^-1 * F'*D^-1 with T = I + c*F'*D^-1*F, so F'*S^-1*F = (I - T^-1)/c:
///    P*S^-1*R = scale * (a*(X - Z) + Z*q*1'), a = sigma/c, Z = X*T^-1,
///    q = F'*D^-1*u (X = I when P = F'). S itself is not needed: at d = N the EnKF
///    drops to 90 GFLOP (a syrk, a k x k Cholesky, two triangular solves for X).
struct ThroughFactor {
  const Node* solve = nullptr;
  Value factor;            ///< F
  std::optional<Value> x;  ///< X; absent when P = F'
  bool transposeX = false; ///< P = scale * X'*F'
  double scale = 1, sigma = 0;
  std::vector<std::pair<double, Value>> offset;      ///< u as a sum of column vectors
  std::vector<std::pair<double, Value>> rhsDiagonal; ///< E as a sum of diagonal matrices
  bool inner = false;                                ///< the inner-system form
  double gramScale = 1;                              ///< c
  Value diagonal;                                    ///< D
};

/// `t`'s dtype and batch axes (all but the last two) followed by `trailing`.
TensorType batchedLike(const TensorType& t, llvm::ArrayRef<int64_t> trailing) {
  TensorType out(t.dtype, llvm::ArrayRef<int64_t>(t.shape).drop_back(2));
  out.shape.append(trailing.begin(), trailing.end());
  return out;
}

class Lowering {
public:
  Lowering(const ir::Graph& g, const StructureMap& facts, PassStats& stats)
      : facts_(facts), stats_(stats), uses_(useCounts(g)), throughFactor_(g.nodes().size()),
        solveTaken_(g.nodes().size()) {
    std::vector<bool> live = liveNodes(g);
    for (const Node* n : g.nodes()) {
      if (!live[n->id()])
        continue;
      throughFactor_[n->id()] = matchThroughFactor(*n);
      if (throughFactor_[n->id()])
        solveTaken_[throughFactor_[n->id()]->solve->id()] = uses_[n->operand(1).node->id()] == 1;
    }
  }

  std::optional<ValueList> operator()(Rewriter& rw, const Node& n) {
    if (n.op() == Op::Solve)
      return solveTaken_[n.id()] ? std::nullopt
                                 : std::optional<ValueList>(
                                       ValueList{solve(rw, n.operand(0), rw.map(n.operand(1)))});
    if (const std::optional<ThroughFactor>& t = throughFactor_[n.id()]) {
      stats_.count(t->inner ? "inner-system" : "through-factor");
      return ValueList{t->inner ? innerSystem(rw, *t) : throughFactor(rw, *t)};
    }
    if (n.op() == Op::Matmul && n.operand(0).node->op() == Op::Inverse &&
        !n.attrs().flag("transpose_a")) {
      stats_.count("inverse-to-solve");
      Value b = rw.map(n.operand(1));
      if (n.attrs().flag("transpose_b"))
        b = rw.apply(Op::Transpose, {b}, Attrs{{"perm", matrixSwap(b.type().rank())}});
      return ValueList{solve(rw, n.operand(0).node->operand(0), b)};
    }
    if (n.op() == Op::Logdet || n.op() == Op::Det)
      if (std::optional<Value> v = determinantLemma(rw, n))
        return ValueList{*v};
    if (n.op() == Op::Matmul)
      if (std::optional<Gram> g = matchGram(n)) {
        stats_.count("syrk");
        return ValueList{
            rw.apply(Op::Syrk, {rw.map(g->factor)}, Attrs{{"transpose", g->transposed}})};
      }
    return std::nullopt;
  }

private:
  /// Where `n` is P * solve(S, R) as ThroughFactor describes, and going through
  /// S's factor costs fewer flops than forming P and solving for R: the pieces.
  std::optional<ThroughFactor> matchThroughFactor(const Node& n) const {
    if (n.op() != Op::Matmul || n.attrs().flag("transpose_b") ||
        n.operand(1).node->op() != Op::Solve)
      return std::nullopt;
    const Node& solve = *n.operand(1).node;
    Value s = solve.operand(0);
    std::optional<LowRankPlusDiagonal> lr = matchGramPlusDiagonal(facts_, s);
    if (!lr || lr->transposed || !facts_[s].has(S::SPD))
      return std::nullopt;
    ThroughFactor t;
    t.solve = &solve;
    t.factor = lr->factor;
    t.gramScale = lr->scale;
    t.diagonal = lr->diagonal;
    double pFlops = 0; // forming P, when only this product uses it
    bool flipped;
    Value a = peelMatrixTranspose(n.operand(0), flipped);
    if (a != t.factor || flipped == n.attrs().flag("transpose_a")) { // not P = F'
      if (n.attrs().flag("transpose_a"))
        return std::nullopt;
      Value core = peelScale(n.operand(0), t.scale);
      const Node& p = *core.node;
      if (p.op() != Op::Matmul || peelMatrixTranspose(p.operand(1), flipped) != t.factor ||
          flipped == p.attrs().flag("transpose_b"))
        return std::nullopt;
      t.x = p.operand(0);
      t.transposeX = p.attrs().flag("transpose_a");
      if (uses_[p.id()] == 1 && uses_[n.operand(0).node->id()] == 1)
        pFlops = 2.0 * n.type().shape[n.type().rank() - 2] * s.type().shape.back() *
                 t.factor.type().shape.back();
    }
    std::optional<RightHandSide> rhs = matchRightHandSide(solve.operand(1));
    std::optional<ColumnOffsets> f = matchColumnOffsets(t.factor);
    if (!rhs || !f || !f->base || f->scale == 0 ||
        (rhs->columns.base && *rhs->columns.base != *f->base))
      return std::nullopt;
    const ColumnOffsets* r = &rhs->columns;
    t.rhsDiagonal = rhs->diagonal;
    t.sigma = r->base ? r->scale / f->scale : 0;
    t.offset = r->columns;
    for (const auto& [c, v] : f->columns)
      t.offset.emplace_back(-t.sigma * c, v);
    // R = 0*F: no form to take (and 0*F is not 0 where F holds inf)
    if (t.sigma == 0 && t.offset.empty() && t.rhsDiagonal.empty())
      return std::nullopt;
    const ir::TensorType &rt = solve.operand(1).type(), &ft = t.factor.type();
    double nn = ft.shape[ft.rank() - 2], k = ft.shape.back(), m = rt.shape.back();
    double rows = t.x ? n.type().shape[n.type().rank() - 2] : 0;
    double solveFlops = 0; // solving for R, when only this product uses the solution
    if (uses_[solve.id()] == 1)
      solveFlops =
          woodburyPays(nn, k, m) ? woodburySolveFlops(nn, k, m) : choleskySolveFlops(nn, m);
    // S's own syrk counts for the forms that need S when only this solve uses S
    double formS = uses_[solve.id()] == 1 && uses_[s.node->id()] == 1 ? nn * nn * k : 0;
    double plain = formS + pFlops + solveFlops + 2 * (t.x ? rows : k) * nn * m;
    double through = formS + nn * nn * nn / 3 + nn * nn * k + (t.sigma != 0 ? nn * k * k : 0) +
                     (t.offset.empty() ? 0 : nn * nn + 2 * nn * k) + 2 * rows * k * m;
    double inner = std::numeric_limits<double>::infinity();
    if (t.sigma != 0) // Z = X*T^-1 is two triangular solves for X's rows (for I's, k)
      inner = nn * k * k + k * k * k / 3 + 2 * (t.x ? rows : k) * k * k +
              (t.offset.empty() ? 0 : 2 * nn * k + 2 * rows * k) +
              (t.rhsDiagonal.empty() ? 0 : 2 * (t.x ? rows : k) * k * nn);
    if (!t.rhsDiagonal.empty()) // only the inner system takes a diagonal in R
      through = std::numeric_limits<double>::infinity();
    t.inner = inner < through;
    return std::min(inner, through) < plain ? std::optional<ThroughFactor>(t) : std::nullopt;
  }

  /// R = sigma*F + u*1' + E: the columns part and the diagonal terms E.
  struct RightHandSide {
    ColumnOffsets columns;
    std::vector<std::pair<double, Value>> diagonal;
  };

  /// R's linear terms split into diagonal matrices and the rest (matchColumnOffsets);
  /// nullopt when the rest has two bases.
  std::optional<RightHandSide> matchRightHandSide(Value r) const {
    std::vector<LinearTerm> terms;
    if (!collectLinearTerms(r, 1, terms))
      return std::nullopt;
    RightHandSide out;
    for (const LinearTerm& t : terms) {
      if (facts_[t.leaf].has(S::Diagonal)) {
        out.diagonal.emplace_back(t.coefficient, t.leaf);
        continue;
      }
      std::optional<ColumnOffsets> c = matchColumnOffsets(t.leaf);
      if (!c || (c->base && out.columns.base && *c->base != *out.columns.base))
        return std::nullopt;
      if (c->base) {
        out.columns.base = c->base;
        out.columns.scale += t.coefficient * c->scale;
      }
      for (const auto& [k, v] : c->columns)
        out.columns.columns.emplace_back(t.coefficient * k, v);
    }
    return out;
  }

  /// scale * Z * (D^-1 E F)' for ThroughFactor's diagonal E, in the new graph.
  Value diagonalPart(Rewriter& rw, const ThroughFactor& t, Value z, Value f, Value dvec) {
    std::optional<Value> e;                                 // E's diagonal as a vector
    std::optional<double> d = uniformValue(dvec), eu = 0.0; // D's and E's, when uniform
    for (const auto& [c, m] : t.rhsDiagonal) {
      Value term = diagonalOf(rw, m);
      std::optional<double> u = uniformValue(term);
      eu = eu && u ? std::optional<double>(*eu + c * *u) : std::nullopt;
      if (c != 1)
        term = rw.apply(Op::Mul, {term, rw.full(c, term.type())});
      e = e ? rw.apply(Op::Add, {*e, term}) : term;
    }
    Value g = f;
    double c = t.scale;
    if (d && eu)
      c *= *eu / *d;
    else
      g = rw.apply(Op::Mul, {f, alongRows(rw, rw.apply(Op::Div, {*e, dvec}), f.type())});
    Value w = rw.apply(Op::Matmul, {z, g}, Attrs{{"transpose_b", true}});
    return c == 1 ? w : rw.apply(Op::Mul, {w, rw.full(c, w.type())});
  }

  /// u, the sum of ThroughFactor's column vectors (t.offset not empty), in the new graph.
  static Value offsetColumn(Rewriter& rw, const ThroughFactor& t) {
    std::optional<Value> u;
    for (const auto& [c, v] : t.offset) {
      Value term = rw.map(v);
      if (c != 1)
        term = rw.apply(Op::Mul, {term, rw.full(c, term.type())});
      u = u ? rw.apply(Op::Add, {*u, term}) : term;
    }
    return *u;
  }

  /// ThroughFactor's product in the inner system, in the new graph.
  Value innerSystem(Rewriter& rw, const ThroughFactor& t) {
    Value f = rw.map(t.factor);
    const TensorType& ft = f.type();
    int64_t k = ft.shape.back();
    TensorType kk = batchedLike(ft, {k, k});
    // F'*D^-1*F as a syrk of D^-1/2 * F, or of F with 1/d on c when D = d*I
    double c = t.gramScale;
    Value dvec = diagonalOf(rw, t.diagonal);
    std::optional<Value> rootInverse; // D^-1/2 as a vector
    if (std::optional<double> d = uniformValue(dvec))
      c /= *d;
    else
      rootInverse = rw.apply(Op::Rsqrt, {dvec});
    Value fs = rootInverse ? rw.apply(Op::Mul, {f, alongRows(rw, *rootInverse, ft)}) : f;
    Value h = rw.apply(Op::Syrk, {fs}, Attrs{{"transpose", true}});
    Value eye = rw.target().apply(Op::Eye, {}, {}, {kk});
    if (c != 1)
      h = rw.apply(Op::Mul, {h, rw.full(c, kk)});
    Value tm = rw.apply(Op::Add, {eye, h});
    // T = U'*U; Z = Y*T^-1 = Y*U^-1*U^-T by two solves from the right
    Value u = rw.apply(Op::Cholesky, {tm}, Attrs{{"fallback", true}, {"upper", true}});
    Value y = eye;
    if (t.x) {
      y = rw.map(*t.x);
      if (t.transposeX)
        y = rw.apply(Op::Transpose, {y}, Attrs{{"perm", matrixSwap(y.type().rank())}});
    }
    Value z = rw.apply(Op::TriangularSolve, {u, y}, Attrs{{"right_side", true}});
    z = rw.apply(Op::TriangularSolve, {u, z}, Attrs{{"right_side", true}, {"transpose_a", true}});
    double a = t.sigma / t.gramScale;
    Value out = rw.apply(Op::Mul, {rw.apply(Op::Sub, {y, z}), rw.full(t.scale * a, y.type())});
    if (!t.rhsDiagonal.empty())
      out = rw.apply(Op::Add, {out, diagonalPart(rw, t, z, f, dvec)});
    if (t.offset.empty())
      return out;
    Value us = offsetColumn(rw, t); // u, times D^-1/2 when F is
    if (rootInverse)
      us = rw.apply(Op::Mul, {us, alongRows(rw, *rootInverse, us.type())});
    else if (c != t.gramScale)
      us = rw.apply(Op::Mul, {us, rw.full(c / t.gramScale, us.type())});
    Value q = rw.apply(Op::Matmul, {fs, us}, Attrs{{"transpose_a", true}});
    Value zq = rw.apply(Op::Matmul, {z, q});
    if (t.scale != 1)
      zq = rw.apply(Op::Mul, {zq, rw.full(t.scale, zq.type())});
    std::vector<int64_t> shape(y.type().shape.begin(), y.type().shape.end());
    return rw.apply(Op::Add, {out, rw.apply(Op::BroadcastTo, {zq}, Attrs{{"shape", shape}})});
  }

  /// scale * X * (sigma * M'M + M'w * 1'), ThroughFactor's product in the new graph.
  Value throughFactor(Rewriter& rw, const ThroughFactor& t) {
    const ir::TensorType& rt = t.solve->operand(1).type();
    // S = L*L' = U'*U. The upper factor needs no transpose on the GPU (cuSOLVER's fast
    // potrf is column-major lower); the lower one is shared with other solves of S.
    Value s = t.solve->operand(0);
    bool upper = uses_[s.node->id()] == 1;
    Value f = rw.apply(Op::Cholesky, {rw.map(s)}, Attrs{{"fallback", true}, {"upper", upper}});
    auto solveL = [&](Value b) { // L^-1 b
      return rw.apply(Op::TriangularSolve, {f, b},
                      Attrs{{"lower", !upper}, {"transpose_a", upper}});
    };
    Value m = solveL(rw.map(t.factor));
    std::optional<Value> k; // F' S^-1 R, times scale
    if (t.sigma != 0) {
      k = rw.apply(Op::Syrk, {m}, Attrs{{"transpose", true}});
      if (t.sigma * t.scale != 1)
        k = rw.apply(Op::Mul, {*k, rw.full(t.sigma * t.scale, k->type())});
    }
    if (!t.offset.empty()) {
      Value w = solveL(offsetColumn(rw, t));
      Value g = rw.apply(Op::Matmul, {m, w}, Attrs{{"transpose_a", true}});
      if (t.scale != 1)
        g = rw.apply(Op::Mul, {g, rw.full(t.scale, g.type())});
      std::vector<int64_t> shape(g.type().shape.begin(), g.type().shape.end());
      shape.back() = rt.shape.back();
      g = rw.apply(Op::BroadcastTo, {g}, Attrs{{"shape", shape}});
      k = k ? rw.apply(Op::Add, {*k, g}) : g;
    }
    if (!t.x)
      return *k;
    return rw.apply(Op::Matmul, {rw.map(*t.x), *k}, Attrs{{"transpose_a", t.transposeX}});
  }

  /// solve(a, b) for `a` of the source graph and `b` of the new graph.
  Value solve(Rewriter& rw, Value a, Value b) {
    const Structure& s = facts_[a];
    Value na = rw.map(a);
    if (s.has(S::Identity)) {
      stats_.count("identity");
      return b;
    }
    if (s.has(S::Diagonal)) {
      stats_.count("diagonal");
      return divideByDiagonal(rw, rw.apply(Op::DiagPart, {na}), b);
    }
    if (s.has(S::Lower) || s.has(S::Upper)) {
      stats_.count("triangular");
      return rw.apply(Op::TriangularSolve, {na, b}, Attrs{{"lower", s.has(S::Lower)}});
    }
    if (s.lowRankPlusDiagonal > 0) {
      const TensorType& t = a.type();
      int64_t n = t.shape.back(), m = b.type().shape.back();
      std::optional<LowRankPlusDiagonal> w = matchGramPlusDiagonal(facts_, a);
      if (w && woodburyPays(n, s.lowRankPlusDiagonal, m)) {
        stats_.count("woodbury");
        return woodbury(rw, *w, b);
      }
    }
    if (s.has(S::SPD)) {
      stats_.count("cholesky");
      return spdSolve(rw, na, b);
    }
    return rw.apply(Op::Solve, {na, b});
  }

  /// L = cholesky(a) {fallback}; solve L*Y = b; solve L'*X = Y.
  static Value spdSolve(Rewriter& rw, Value a, Value b) {
    Value l = rw.apply(Op::Cholesky, {a}, Attrs{{"fallback", true}});
    Value y = rw.apply(Op::TriangularSolve, {l, b}, Attrs{{"lower", true}});
    return rw.apply(Op::TriangularSolve, {l, y}, Attrs{{"lower", true}, {"transpose_a", true}});
  }

  /// b / d with the vector d ([..., n]) broadcast along b's columns.
  static Value divideByDiagonal(Rewriter& rw, Value d, Value b) {
    return rw.apply(Op::Div, {b, alongRows(rw, d, b.type())});
  }

  /// The vector d ([..., n]) as a column, broadcast to `like` ([..., n, m]).
  static Value alongRows(Rewriter& rw, Value d, const TensorType& like) {
    std::vector<int64_t> column(d.type().shape.begin(), d.type().shape.end());
    column.push_back(1);
    Value c = rw.apply(Op::Reshape, {d}, Attrs{{"shape", column}});
    return rw.apply(Op::BroadcastTo, {c},
                    Attrs{{"shape", std::vector<int64_t>(like.shape.begin(), like.shape.end())}});
  }

  /// The diagonal of D as a vector in the new graph, without forming D where the
  /// graph shows how D was built.
  Value diagonalOf(Rewriter& rw, Value dm) {
    const Node* n = dm.node;
    const TensorType& t = dm.type();
    TensorType vec = batchedLike(t, {t.shape.back()});
    if (n->op() == Op::Eye)
      return rw.full(1.0, vec);
    if (n->op() == Op::Diag)
      return rw.map(n->operand(0));
    // D broadcast along batch axes: the diagonal of D's operand, broadcast.
    if (n->op() == Op::BroadcastTo && broadcastKeepsMatrices(n->operand(0).type(), t))
      return rw.apply(Op::BroadcastTo, {diagonalOf(rw, n->operand(0))},
                      Attrs{{"shape", std::vector<int64_t>(vec.shape.begin(), vec.shape.end())}});
    if (n->op() == Op::Mul)
      for (int side = 0; side < 2; ++side) {
        std::optional<double> c = uniformValue(n->operand(1 - side));
        if (c && n->operand(side).node->op() == Op::Eye)
          return rw.full(*c, vec);
      }
    return rw.apply(Op::DiagPart, {rw.map(dm)});
  }

  /// (D + c*U*U')^-1 B = Z - c*W*(I + c*U'*W)^-1 * U'*Z, with W = D^-1*U, Z = D^-1*B.
  Value woodbury(Rewriter& rw, const LowRankPlusDiagonal& w, Value b) {
    Capacitance c = capacitance(rw, w);
    Value z = rw.apply(Op::Mul, {b, alongRows(rw, c.dinv, b.type())});
    Value t = rw.apply(Op::Matmul, {c.u, z}, Attrs{{"transpose_a", true}});
    Value y = spdSolve(rw, c.matrix, t);
    Value correction = rw.apply(Op::Matmul, {c.wm, y});
    Value scaled = rw.apply(Op::Mul, {correction, rw.full(w.scale, correction.type())});
    return rw.apply(Op::Sub, {z, scaled});
  }

  /// The pieces of Woodbury's k x k system for D + c*U*U', in the new graph.
  struct Capacitance {
    Value u, dinv, wm; ///< U, D^-1 as a vector, W = D^-1 U
    Value matrix;      ///< I + c*U'*W
  };
  Capacitance capacitance(Rewriter& rw, const LowRankPlusDiagonal& w) {
    Value u = rw.map(w.factor);
    if (w.transposed)
      u = rw.apply(Op::Transpose, {u}, Attrs{{"perm", matrixSwap(u.type().rank())}});
    const TensorType& ut = u.type();
    int64_t k = ut.shape.back();
    Value dinv = rw.apply(Op::Reciprocal, {diagonalOf(rw, w.diagonal)});
    Value wm = rw.apply(Op::Mul, {u, alongRows(rw, dinv, ut)});
    Value scale = rw.full(w.scale, batchedLike(ut, {k, k}));
    Value gram = rw.apply(Op::Matmul, {u, wm}, Attrs{{"transpose_a", true}});
    Value eye = rw.target().apply(Op::Eye, {}, {}, {batchedLike(ut, {k, k})});
    return {u, dinv, wm, rw.apply(Op::Add, {eye, rw.apply(Op::Mul, {gram, scale})})};
  }

  /// logdet or det of `n`'s matrix D + c*U*U' by the matrix determinant lemma,
  /// det(D + c*U*U') = det(D) * det(I + c*U'*D^-1*U), from the factor of Woodbury's
  /// k x k system (shared with the Woodbury solves of the matrix), where that costs
  /// less than factoring the n x n matrix (woodburyPays for one column).
  std::optional<Value> determinantLemma(Rewriter& rw, const Node& n) {
    Value a = n.operand(0);
    const Structure& s = facts_[a];
    std::optional<LowRankPlusDiagonal> w = matchGramPlusDiagonal(facts_, a);
    if (s.lowRankPlusDiagonal == 0 || !w ||
        !woodburyPays(a.type().shape.back(), s.lowRankPlusDiagonal, 1))
      return std::nullopt;
    Capacitance c = capacitance(rw, *w);
    Value l = rw.apply(Op::Cholesky, {c.matrix}, Attrs{{"fallback", true}});
    Value ld = rw.apply(Op::DiagPart, {l});
    Value dd = diagonalOf(rw, w->diagonal);
    Attrs last{{"axes", std::vector<int64_t>{ld.type().rank() - 1}}};
    stats_.count("determinant-lemma");
    if (n.op() == Op::Det) {
      Value pl = rw.apply(Op::Prod, {ld}, last);
      return rw.apply(Op::Mul, {rw.apply(Op::Prod, {dd}, last), rw.apply(Op::Mul, {pl, pl})});
    }
    Value sl = rw.apply(Op::Sum, {rw.apply(Op::Log, {ld})}, last);
    Value two = rw.full(2, sl.type());
    return rw.apply(Op::Add, {rw.apply(Op::Sum, {rw.apply(Op::Log, {dd})}, last),
                              rw.apply(Op::Mul, {sl, two})});
  }

  const StructureMap& facts_;
  PassStats& stats_;
  std::vector<unsigned> uses_;                              // by source node id
  std::vector<std::optional<ThroughFactor>> throughFactor_; // by source matmul id
  std::vector<bool> solveTaken_; // by source solve id: only a through-factor product uses it
};

} // namespace

bool woodburyPays(int64_t n, int64_t k, int64_t m) {
  double nd = static_cast<double>(n), kd = static_cast<double>(k), md = static_cast<double>(m);
  // the factor 2 pays for the extra passes over memory
  return 2 * woodburySolveFlops(nd, kd, md) < choleskySolveFlops(nd, md);
}

std::unique_ptr<ir::Graph> lowerLinalg(const ir::Graph& g, PassStats& stats) {
  StructureMap facts(g);
  Lowering lowering(g, facts, stats);
  return rewrite(g, [&](Rewriter& rw, const Node& n) { return lowering(rw, n); });
}

} // namespace graphc::passes
