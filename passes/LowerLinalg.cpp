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

std::optional<LowRankPlusDiagonal> matchLowRankPlusDiagonal(const StructureMap& facts, Value a) {
  if (a.node->op() != Op::Add)
    return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    Value p = a.node->operand(side), d = a.node->operand(1 - side);
    if (facts[p].lowRank == 0 || !facts[d].has(S::Diagonal | S::SPD))
      continue;
    double scale = 1;
    std::optional<Gram> gram = matchGram(*peelScale(p, scale).node);
    if (!gram)
      continue;
    return LowRankPlusDiagonal{gram->factor, gram->transposed, scale, d};
  }
  return std::nullopt;
}

/// `t`'s dtype and batch axes (all but the last two) followed by `trailing`.
TensorType batchedLike(const TensorType& t, llvm::ArrayRef<int64_t> trailing) {
  TensorType out(t.dtype, llvm::ArrayRef<int64_t>(t.shape).drop_back(2));
  out.shape.append(trailing.begin(), trailing.end());
  return out;
}

class Lowering {
public:
  Lowering(const StructureMap& facts, PassStats& stats) : facts_(facts), stats_(stats) {}

  std::optional<ValueList> operator()(Rewriter& rw, const Node& n) {
    if (n.op() == Op::Solve)
      return ValueList{solve(rw, n.operand(0), rw.map(n.operand(1)))};
    if (n.op() == Op::Matmul && n.operand(0).node->op() == Op::Inverse &&
        !n.attrs().flag("transpose_a")) {
      stats_.count("inverse-to-solve");
      Value b = rw.map(n.operand(1));
      if (n.attrs().flag("transpose_b"))
        b = rw.apply(Op::Transpose, {b}, Attrs{{"perm", matrixSwap(b.type().rank())}});
      return ValueList{solve(rw, n.operand(0).node->operand(0), b)};
    }
    if (n.op() == Op::Matmul)
      if (std::optional<Gram> g = matchGram(n)) {
        stats_.count("syrk");
        return ValueList{
            rw.apply(Op::Syrk, {rw.map(g->factor)}, Attrs{{"transpose", g->transposed}})};
      }
    return std::nullopt;
  }

private:
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
      std::optional<LowRankPlusDiagonal> w = matchLowRankPlusDiagonal(facts_, a);
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

  static std::vector<int64_t> matrixSwap(int64_t rank) {
    std::vector<int64_t> perm(rank);
    for (int64_t i = 0; i < rank; ++i)
      perm[i] = i;
    std::swap(perm[rank - 1], perm[rank - 2]);
    return perm;
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
    Value u = rw.map(w.factor);
    if (w.transposed)
      u = rw.apply(Op::Transpose, {u}, Attrs{{"perm", matrixSwap(u.type().rank())}});
    const TensorType& ut = u.type();
    int64_t k = ut.shape.back();
    Value dinv = rw.apply(Op::Reciprocal, {diagonalOf(rw, w.diagonal)});
    Value wm = rw.apply(Op::Mul, {u, alongRows(rw, dinv, ut)});
    Value z = rw.apply(Op::Mul, {b, alongRows(rw, dinv, b.type())});
    Value scale = rw.full(w.scale, batchedLike(ut, {k, k}));
    Value gram = rw.apply(Op::Matmul, {u, wm}, Attrs{{"transpose_a", true}});
    Value eye = rw.target().apply(Op::Eye, {}, {}, {batchedLike(ut, {k, k})});
    Value cap = rw.apply(Op::Add, {eye, rw.apply(Op::Mul, {gram, scale})});
    Value t = rw.apply(Op::Matmul, {u, z}, Attrs{{"transpose_a", true}});
    Value y = spdSolve(rw, cap, t);
    Value correction = rw.apply(Op::Matmul, {wm, y});
    Value scaled = rw.apply(Op::Mul, {correction, rw.full(w.scale, correction.type())});
    return rw.apply(Op::Sub, {z, scaled});
  }

  const StructureMap& facts_;
  PassStats& stats_;
};

} // namespace

bool woodburyPays(int64_t n, int64_t k, int64_t m) {
  double nd = static_cast<double>(n), kd = static_cast<double>(k), md = static_cast<double>(m);
  double cholesky = nd * nd * nd / 3 + 2 * nd * nd * md;
  double woodbury = 2 * nd * kd * kd + 4 * nd * kd * md + kd * kd * kd / 3 + 2 * kd * kd * md;
  return 2 * woodbury < cholesky; // the factor 2 pays for the extra passes over memory
}

std::unique_ptr<ir::Graph> lowerLinalg(const ir::Graph& g, PassStats& stats) {
  StructureMap facts(g);
  Lowering lowering(facts, stats);
  return rewrite(g, [&](Rewriter& rw, const Node& n) { return lowering(rw, n); });
}

} // namespace graphc::passes
