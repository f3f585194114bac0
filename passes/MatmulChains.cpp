//===- passes/MatmulChains.cpp - Cheaper association of matmul chains -----===//
#include "passes/MatmulChains.h"

#include "ir/OpCases.h"
#include "passes/Match.h"
#include "passes/Rewrite.h"

#include <cmath>

namespace graphc::passes {
namespace {

using ir::Attrs;
using ir::Node;
using ir::Op;
using ir::Value;

/// `core` times (or divided by) a uniform scalar, as found in the source graph.
struct Scaled {
  Value core;
  Op scaleOp = Op::Mul; ///< Mul or Div; meaningful when `scale` is set
  std::optional<double> scale;
};

Scaled peelUniformScale(Value v) {
  const Node* n = v.node;
  if (n->op() == Op::Mul || n->op() == Op::Div) {
    std::optional<double> c1 = uniformValue(n->operand(1));
    if (c1)
      return {n->operand(0), n->op(), c1};
    std::optional<double> c0 = uniformValue(n->operand(0));
    if (c0 && n->op() == Op::Mul)
      return {n->operand(1), Op::Mul, c0};
  }
  return {v, Op::Mul, std::nullopt};
}

/// True when moving the scale `c` of a `dtype` product across a matmul keeps the
/// intermediates' range: c and 1/c are normal numbers of the dtype.
bool movableScale(double c, ir::DType dtype) {
  if (dtype == ir::DType::F32)
    return std::isnormal(static_cast<float>(c)) && std::isnormal(1.0f / static_cast<float>(c));
  return std::isnormal(c) && std::isnormal(1.0 / c);
}

/// Where every element of `v` (of more than one) is the same: that element as a
/// 1 x 1 matrix in the new graph. So it is where `v` is a uniform constant, or a
/// broadcast of a one-element value seen through reshapes and transposes.
std::optional<Value> repeatedElement(Rewriter& rw, Value v) {
  if (v.type().numel() <= 1)
    return std::nullopt;
  const ir::TensorType one{v.type().dtype, {1, 1}};
  if (std::optional<double> c = uniformValue(v))
    return rw.full(*c, one);
  for (Value x = v;; x = x.node->operand(0)) {
    if (x.type().numel() == 1)
      return rw.apply(Op::Reshape, {rw.map(x)}, Attrs{{"shape", std::vector<int64_t>{1, 1}}});
    Op op = x.node->op();
    if (op != Op::BroadcastTo && op != Op::Reshape && op != Op::Transpose)
      return std::nullopt;
  }
}

/// Rows and columns of a matmul operand as the product sees it.
std::pair<int64_t, int64_t> dims(Value v, bool transposed) {
  const ir::TensorType& t = v.type();
  int64_t r = t.shape[t.rank() - 2], c = t.shape[t.rank() - 1];
  return transposed ? std::pair{c, r} : std::pair{r, c};
}

class Reassociator {
public:
  Reassociator(const ir::Graph& g, PassStats& stats) : uses_(useCounts(g)), stats_(stats) {}

  std::optional<ValueList> operator()(Rewriter& rw, const Node& n) {
    if (std::optional<Value> s = summedProducts(rw, n))
      return ValueList{*s};
    if (std::optional<Value> u = uniformFactor(rw, n))
      return ValueList{*u};
    if (std::optional<Value> d = distributed(rw, n))
      return ValueList{*d};
    if (n.op() != Op::Matmul || n.attrs().flag("transpose_a"))
      return std::nullopt;
    Value a = n.operand(0), b = n.operand(1);
    Scaled s = peelUniformScale(a);
    const Node* inner = s.core.node;
    if (inner->op() != Op::Matmul || uses_[inner->id()] != 1 ||
        (s.scale && (uses_[a.node->id()] != 1 || !movableScale(*s.scale, a.type().dtype))))
      return std::nullopt;
    Value x = inner->operand(0), y = inner->operand(1);
    bool ta = inner->attrs().flag("transpose_a"), tb = inner->attrs().flag("transpose_b");
    bool tb2 = n.attrs().flag("transpose_b");
    auto [m, k] = dims(x, ta);
    int64_t p = dims(y, tb).second, q = dims(b, tb2).second;
    double leftFirst = 2.0 * m * k * p + 2.0 * m * p * q;  // (X*Y)*B
    double rightFirst = 2.0 * k * p * q + 2.0 * m * k * q; // X*(Y*B)
    if (2 * rightFirst > leftFirst)
      return std::nullopt;
    stats_.count("reassociated");
    Value yb = rw.apply(Op::Matmul, {rw.map(y), rw.map(b)},
                        Attrs{{"transpose_a", tb}, {"transpose_b", tb2}});
    Value out = rw.apply(Op::Matmul, {rw.map(x), yb}, Attrs{{"transpose_a", ta}});
    if (s.scale)
      out = rw.apply(s.scaleOp, {out, rw.full(*s.scale, out.type())});
    return ValueList{out};
  }

private:
  static constexpr int kTermDepth = 8; // how deep summedProducts looks into a combination

  /// A sum over both axes of a combination (add, sub, neg) of matrices with products
  /// among them: 1' (A B) 1 = (1' A) (B 1), the dot product of op(A)'s column sums
  /// and op(B)'s row sums, and no product. Only through nodes with no other use
  /// (else they, and the products under them, are computed anyway).
  std::optional<Value> summedProducts(Rewriter& rw, const Node& n) {
    if (n.op() != Op::Sum || n.operand(0).type().rank() != 2 || !hasProduct(n.operand(0)))
      return std::nullopt;
    if (n.attrs().getInts("axes").size() != 2) // both axes (they are distinct)
      return std::nullopt;
    stats_.count("summed-product");
    Value total = sumOfTerms(rw, n.operand(0));
    if (n.attrs().flag("keepdims"))
      total = rw.apply(Op::Reshape, {total}, Attrs{{"shape", std::vector<int64_t>{1, 1}}});
    return total;
  }

  /// Whether `v`, used once, is a product of matrices or a combination with one.
  bool hasProduct(Value v, int depth = kTermDepth) const {
    const Node* n = v.node;
    if (uses_[n->id()] != 1 || depth == 0)
      return false;
    switch (n->op()) {
    case Op::Matmul:
      return n->operand(0).type().rank() == 2 && n->operand(1).type().rank() == 2;
    case Op::Add:
    case Op::Sub:
      return hasProduct(n->operand(0), depth - 1) || hasProduct(n->operand(1), depth - 1);
    case Op::Neg:
      return hasProduct(n->operand(0), depth - 1);
    default:
      return false;
    }
  }

  /// The sum of all elements of matrix `v` (of the source graph) in the new graph,
  /// its products as dot products of sums.
  Value sumOfTerms(Rewriter& rw, Value v, int depth = kTermDepth) {
    const Node* n = v.node;
    auto sum = [&](Value x, std::vector<int64_t> axes) {
      return rw.apply(Op::Sum, {x}, Attrs{{"axes", std::move(axes)}});
    };
    if (hasProduct(v, depth))
      switch (n->op()) {
      case Op::Matmul: { // op(A)'s column sums times op(B)'s row sums
        bool ta = n->attrs().flag("transpose_a"), tb = n->attrs().flag("transpose_b");
        Value columns = sum(rw.map(n->operand(0)), {ta ? 1 : 0});
        Value rows = sum(rw.map(n->operand(1)), {tb ? 0 : 1});
        return sum(rw.apply(Op::Mul, {columns, rows}), {0});
      }
      case Op::Add:
      case Op::Sub:
        return rw.apply(n->op(), {sumOfTerms(rw, n->operand(0), depth - 1),
                                  sumOfTerms(rw, n->operand(1), depth - 1)});
      case Op::Neg:
        return rw.apply(Op::Neg, {sumOfTerms(rw, n->operand(0), depth - 1)});
      default:
        break;
      }
    return sum(rw.map(v), {0, 1});
  }

  /// matmul(U, B) or matmul(A, U) with every element of U one value s (a broadcast
  /// of a one-element value, as a reverse-mode sum's cotangent is): each row of the
  /// product is s times op(B)'s column sums, each column s times op(A)'s row sums.
  std::optional<Value> uniformFactor(Rewriter& rw, const Node& n) {
    if (n.op() != Op::Matmul || n.operand(0).type().rank() != 2 || n.operand(1).type().rank() != 2)
      return std::nullopt;
    std::optional<Value> s = repeatedElement(rw, n.operand(0));
    const bool left = s.has_value();
    if (!left)
      s = repeatedElement(rw, n.operand(1));
    if (!s)
      return std::nullopt;
    stats_.count("uniform-factor");
    bool ta = n.attrs().flag("transpose_a"), tb = n.attrs().flag("transpose_b");
    const ir::Shape& shape = n.type().shape;
    Value other = rw.map(n.operand(left ? 1 : 0));
    int64_t axis = left ? (tb ? 1 : 0) : (ta ? 0 : 1);
    std::vector<int64_t> line =
        left ? std::vector<int64_t>{1, shape[1]} : std::vector<int64_t>{shape[0], 1};
    Value sums = rw.apply(Op::Reshape,
                          {rw.apply(Op::Sum, {other}, Attrs{{"axes", std::vector<int64_t>{axis}}})},
                          Attrs{{"shape", line}});
    Value scale = rw.apply(Op::BroadcastTo, {*s}, Attrs{{"shape", line}});
    return rw.apply(Op::BroadcastTo, {rw.apply(Op::Mul, {scale, sums})},
                    Attrs{{"shape", std::vector<int64_t>(shape.begin(), shape.end())}});
  }

  /// matmul(M, C) (or M' C) with C thin (at most half as many columns as M has rows
  /// after the transpose) and M a sum of products, solves and identities: each term
  /// times C, never forming M.
  std::optional<Value> distributed(Rewriter& rw, const Node& n) {
    if (n.op() != Op::Matmul || n.attrs().flag("transpose_b"))
      return std::nullopt;
    Value m = n.operand(0), c = n.operand(1);
    bool ta = n.attrs().flag("transpose_a");
    if (!expands(m.node->op()) || 2 * dims(c, false).second > dims(m, ta).second)
      return std::nullopt;
    stats_.count("distributed");
    return times(rw, m, ta, rw.map(c), 6);
  }

  static bool expands(Op op) {
    return op == Op::Add || op == Op::Sub || op == Op::Neg || op == Op::Solve || op == Op::Eye;
  }

  /// op(m) * c in the new graph, m of the source graph and c of the new one, op the
  /// transpose when `t`; terms are expanded up to `depth` levels.
  Value times(Rewriter& rw, Value m, bool t, Value c, int depth) {
    const Node* n = m.node;
    auto rec = [&](Value v, bool tv, Value cv) { return times(rw, v, tv, cv, depth - 1); };
    if (depth > 0)
      switch (n->op()) {
      case Op::Add:
      case Op::Sub:
        return rw.apply(n->op(), {rec(n->operand(0), t, c), rec(n->operand(1), t, c)});
      case Op::Neg:
        return rw.apply(Op::Neg, {rec(n->operand(0), t, c)});
      case Op::Eye:
        if (dims(m, false).first == dims(m, false).second)
          return c;
        break;
      case Op::Matmul: { // (X Y) C = X (Y C); (X Y)' C = Y' (X' C)
        Value x = n->operand(0), y = n->operand(1);
        bool tx = n->attrs().flag("transpose_a"), ty = n->attrs().flag("transpose_b");
        return t ? rec(y, !ty, rec(x, !tx, c)) : rec(x, tx, rec(y, ty, c));
      }
      case Op::Solve: { // A^-1 B C;  (A^-1 B)' C = B' (A'^-1 C)
        Value a = rw.map(n->operand(0));
        if (!t)
          return rw.apply(Op::Solve, {a, rec(n->operand(1), false, c)});
        Value at = rw.apply(Op::Transpose, {a}, Attrs{{"perm", matrixSwap(a.type().rank())}});
        return rec(n->operand(1), true, rw.apply(Op::Solve, {at, c}));
      }
      case Op::Parameter:
      case Op::Constant:
      case Op::Full:
      case Op::Iota:
      case Op::Abs:
      case Op::Sign:
      case Op::Exp:
      case Op::Log:
      case Op::Log1p:
      case Op::Expm1:
      case Op::Sqrt:
      case Op::Rsqrt:
      case Op::Square:
      case Op::Reciprocal:
      case Op::Sin:
      case Op::Cos:
      case Op::Tanh:
      case Op::Sigmoid:
      case Op::Relu:
      case Op::Erf:
      case Op::Floor:
      case Op::Ceil:
      case Op::Round:
      case Op::Mul:
      case Op::Div:
      case Op::Pow:
      case Op::Maximum:
      case Op::Minimum:
      case Op::Atan2:
      case Op::Remainder:
      case Op::Cholesky:
      case Op::TriangularSolve:
      case Op::Lu:
      case Op::Qr:
      case Op::Inverse:
      case Op::Det:
      case Op::Logdet:
      case Op::Trace:
      case Op::Syrk:
      GRAPHC_LOGICAL_CASES:
      GRAPHC_COMPARE_CASES:
      GRAPHC_SELECT_CASES:
      GRAPHC_CAST_CASES:
      GRAPHC_SHAPE_CASES:
      GRAPHC_REDUCE_CASES:
      GRAPHC_ASSUME_CASES:
      GRAPHC_COLLECTIVE_CASES:
        break;
      }
    return rw.apply(Op::Matmul, {rw.map(m), c}, Attrs{{"transpose_a", t}});
  }

  std::vector<unsigned> uses_; // by source node id
  PassStats& stats_;
};

} // namespace

std::unique_ptr<ir::Graph> reassociateMatmuls(const ir::Graph& g, PassStats& stats) {
  Reassociator r(g, stats);
  return rewrite(g, [&](Rewriter& rw, const Node& n) { return r(rw, n); });
}

} // namespace graphc::passes
