//===- passes/Centering.cpp - Uncentered covariances made centered --------===//
//
// Matching looks at the graph before the pass: at each add or sub, the linear terms
// of its two operands (collectLinearTerms) are searched for a product on one side
// and the outer product of its means on the other, so the rewrite fires at the
// lowest node that holds both, once. Expansion builds the centered operands in the
// new graph, where they merge with any centering the graph already has.
//
//===----------------------------------------------------------------------===//
#include "passes/Centering.h"

#include "passes/Match.h"
#include "passes/Rewrite.h"

#include <cmath>

namespace graphc::passes {
namespace {

using ir::Attrs;
using ir::Node;
using ir::Op;
using ir::TensorType;
using ir::Value;

/// mean(source, {axis}) (with or without keepdims) times `scale`, seen through the
/// reshapes and transposes that only move unit axes (its elements stay in order);
/// a sum over the axis is its length times the mean.
struct MeanVector {
  Value source;
  int64_t axis;
  double scale;
};

/// The extents of `t` other than 1, in order.
std::vector<int64_t> nonUnitExtents(const TensorType& t) {
  std::vector<int64_t> out;
  for (int64_t d : t.shape)
    if (d != 1)
      out.push_back(d);
  return out;
}

/// True when the reshape or transpose `n` keeps the order of its elements: it only
/// adds, drops or moves axes of extent 1.
bool keepsElementOrder(const Node& n) {
  const TensorType& from = n.operand(0).type();
  if (n.op() == Op::Reshape)
    return nonUnitExtents(from) == nonUnitExtents(n.type());
  if (n.op() != Op::Transpose)
    return false;
  int64_t last = -1;
  for (int64_t axis : n.attrs().getInts("perm")) {
    if (from.shape[axis] == 1)
      continue;
    if (axis < last)
      return false;
    last = axis;
  }
  return true;
}

std::optional<MeanVector> meanVector(Value v) {
  double scale = 1;
  for (;;) {
    v = peelUniformScale(v, scale);
    const Node& n = *v.node;
    if ((n.op() == Op::Reshape || n.op() == Op::Transpose) && keepsElementOrder(n)) {
      v = n.operand(0);
      continue;
    }
    bool reduces = n.op() == Op::Mean || n.op() == Op::Sum;
    if (!reduces || n.attrs().getInts("axes").size() != 1)
      return std::nullopt;
    int64_t axis = n.attrs().getInts("axes")[0];
    if (n.op() == Op::Mean)
      return MeanVector{n.operand(0), axis, scale};
    // sum(x, {axis}) is its length times the mean.
    int64_t extent = n.operand(0).type().shape[axis];
    if (extent == 0)
      return std::nullopt;
    return MeanVector{n.operand(0), axis, scale * static_cast<double>(extent)};
  }
}

/// An outer product: element (i, j) is rows[i] * cols[j].
struct Outer {
  MeanVector rows, cols;
};

/// Where `v` is a broadcast_to to `like` of a value that has extent 1 on `axis` and
/// `like`'s extents elsewhere: that value.
std::optional<Value> broadcastAlong(Value v, const TensorType& like, int64_t axis) {
  if (v.node->op() != Op::BroadcastTo)
    return std::nullopt;
  Value x = v.node->operand(0);
  const TensorType& t = x.type();
  if (t.rank() != like.rank() || t.shape[axis] != 1)
    return std::nullopt;
  for (int64_t i = 0; i < t.rank(); ++i)
    if (i != axis && t.shape[i] != like.shape[i])
      return std::nullopt;
  return x;
}

/// u*w' written as a matmul of two mean vectors (inner extent 1), or as the
/// elementwise product of a broadcast column and a broadcast row.
std::optional<Outer> matchOuter(const Node& n) {
  if (n.op() == Op::Matmul) {
    const TensorType& a = n.operand(0).type();
    if (a.shape[a.rank() - (n.attrs().flag("transpose_a") ? 2 : 1)] != 1)
      return std::nullopt;
    std::optional<MeanVector> u = meanVector(n.operand(0)), w = meanVector(n.operand(1));
    return u && w ? std::optional<Outer>(Outer{*u, *w}) : std::nullopt;
  }
  if (n.op() != Op::Mul || n.type().rank() < 2)
    return std::nullopt;
  int64_t r = n.type().rank();
  for (int side = 0; side < 2; ++side) {
    double s0 = 1, s1 = 1;
    std::optional<Value> column =
        broadcastAlong(peelUniformScale(n.operand(side), s0), n.type(), r - 1);
    std::optional<Value> row =
        broadcastAlong(peelUniformScale(n.operand(1 - side), s1), n.type(), r - 2);
    if (!column || !row)
      continue;
    std::optional<MeanVector> u = meanVector(*column), w = meanVector(*row);
    if (!u || !w)
      continue;
    u->scale *= s0 * s1;
    return Outer{*u, *w};
  }
  return std::nullopt;
}

/// op(a) * op(b): a matmul, or a syrk (a*a' or a'*a).
struct Product {
  Value a, b;
  bool ta, tb;
  bool syrk;
  /// The contracted axes of a and b.
  int64_t axisA() const { return a.type().rank() - (ta ? 2 : 1); }
  int64_t axisB() const { return b.type().rank() - (tb ? 1 : 2); }
};

std::optional<Product> matchProduct(const Node& n) {
  if (n.op() == Op::Matmul)
    return Product{n.operand(0), n.operand(1), n.attrs().flag("transpose_a"),
                   n.attrs().flag("transpose_b"), false};
  if (n.op() == Op::Syrk) {
    bool t = n.attrs().flag("transpose");
    return Product{n.operand(0), n.operand(0), t, !t, true};
  }
  return std::nullopt;
}

/// a == b to the rounding of a literal of `dtype`.
bool sameCoefficient(double a, double b, ir::DType dtype) {
  double eps = dtype == ir::DType::F64 ? 1e-12 : 1e-5;
  return std::abs(a - b) <= eps * std::max(std::abs(a), std::abs(b));
}

/// A product term and the outer product of its means that cancel to the centered product.
struct Centerable {
  const LinearTerm* product;
  const LinearTerm* outer;
  Product p;
};

/// The first product in `ps` whose means' outer product, with the coefficient
/// -n times the product's, is in `os`.
std::optional<Centerable> findPair(const std::vector<LinearTerm>& ps,
                                   const std::vector<LinearTerm>& os, ir::DType dtype) {
  for (const LinearTerm& pt : ps) {
    std::optional<Product> p = matchProduct(*pt.leaf.node);
    if (!p || pt.coefficient == 0)
      continue;
    double n = static_cast<double>(p->a.type().shape[p->axisA()]);
    for (const LinearTerm& ot : os) {
      std::optional<Outer> o = matchOuter(*ot.leaf.node);
      if (!o || o->rows.source != p->a || o->rows.axis != p->axisA() || o->cols.source != p->b ||
          o->cols.axis != p->axisB())
        continue;
      double c = ot.coefficient * o->rows.scale * o->cols.scale;
      if (sameCoefficient(c, -n * pt.coefficient, dtype))
        return Centerable{&pt, &ot, *p};
    }
  }
  return std::nullopt;
}

/// x - mean(x, {axis}) in the new graph, for `x` of the source graph.
Value centered(Rewriter& rw, Value x, int64_t axis) {
  Value nx = rw.map(x);
  Value m =
      rw.apply(Op::Mean, {nx}, Attrs{{"axes", std::vector<int64_t>{axis}}, {"keepdims", true}});
  std::vector<int64_t> shape(nx.type().shape.begin(), nx.type().shape.end());
  return rw.apply(Op::Sub, {nx, rw.apply(Op::BroadcastTo, {m}, Attrs{{"shape", shape}})});
}

/// c * v, without the multiplication when c = 1.
Value scaled(Rewriter& rw, Value v, double c) {
  return c == 1 ? v : rw.apply(Op::Mul, {v, rw.full(c, v.type())});
}

/// The centered product plus every other term of `sides`, in the new graph.
Value rebuild(Rewriter& rw, const Centerable& c,
              std::initializer_list<const std::vector<LinearTerm>*> sides) {
  const Product& p = c.p;
  Value xc = centered(rw, p.a, p.axisA());
  Value out = p.syrk ? rw.apply(Op::Syrk, {xc}, Attrs{{"transpose", p.ta}})
                     : rw.apply(Op::Matmul, {xc, centered(rw, p.b, p.axisB())},
                                Attrs{{"transpose_a", p.ta}, {"transpose_b", p.tb}});
  out = scaled(rw, out, c.product->coefficient);
  for (const std::vector<LinearTerm>* terms : sides)
    for (const LinearTerm& t : *terms) {
      if (&t == c.product || &t == c.outer)
        continue;
      Value v = rw.map(t.leaf);
      out = t.coefficient == -1 ? rw.apply(Op::Sub, {out, v})
                                : rw.apply(Op::Add, {out, scaled(rw, v, t.coefficient)});
    }
  return out;
}

} // namespace

std::unique_ptr<ir::Graph> centerCovariances(const ir::Graph& g, PassStats& stats) {
  return rewrite(g, [&](Rewriter& rw, const Node& n) -> std::optional<ValueList> {
    if ((n.op() != Op::Add && n.op() != Op::Sub) || !ir::isFloat(n.type().dtype) ||
        n.type().rank() < 2)
      return std::nullopt;
    std::vector<LinearTerm> lhs, rhs;
    if (!collectLinearTerms(n.operand(0), 1, lhs) ||
        !collectLinearTerms(n.operand(1), n.op() == Op::Add ? 1 : -1, rhs))
      return std::nullopt;
    std::optional<Centerable> c = findPair(lhs, rhs, n.type().dtype);
    if (!c)
      c = findPair(rhs, lhs, n.type().dtype);
    if (!c)
      return std::nullopt;
    stats.count("centered");
    return ValueList{rebuild(rw, *c, {&lhs, &rhs})};
  });
}

} // namespace graphc::passes
