//===- passes/Canonicalize.cpp - Folding and algebraic simplification -----===//
//
// One bottom-up sweep: each rule looks at a node whose operands were already
// canonicalized in the new graph. The pass manager may run it again until it
// reports no change. Elementwise ops on uniform float operands fold through the
// interpreter's scalar functions (ir/Scalar.h), only where IEEE 754 fixes the result,
// so a folded constant has the bits the backends compute unfolded.
//
//===----------------------------------------------------------------------===//
#include "passes/Canonicalize.h"

#include "ir/OpCases.h"
#include "ir/Scalar.h"
#include "passes/Match.h"
#include "passes/Rewrite.h"
#include "support/Error.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace graphc::passes {
namespace {

using ir::Attrs;
using ir::Node;
using ir::Op;
using ir::Value;

bool isUniform(Value v, double c) {
  std::optional<double> u = uniformValue(v);
  return u && *u == c;
}

/// Unary or binary `op` on the uniform operands `a` and `b` in dtype T (f32, f64),
/// through the scalar functions the interpreter runs (ir/Scalar.h); nullopt for the
/// math library's functions (exp, sin, pow, ...), whose last bit is each backend's,
/// and for other kinds of op.
template <typename T> std::optional<double> foldScalar(Op op, double a, double b) {
  auto fail = [](const char* message) { throw Error(message); }; // integers only
  ir::scalar::Primitives<T, decltype(fail)> p{fail};
  T x = static_cast<T>(a), y = static_cast<T>(b);
  std::optional<double> r;
  if (ir::opInfo(op).kind == ir::OpKind::Unary)
    ir::scalar::unary(op, p, ir::scalar::Which::Exact, [&](auto f) { r = f(x); });
  else if (ir::opInfo(op).kind == ir::OpKind::Binary)
    ir::scalar::binary(op, p, ir::scalar::Which::Exact, [&](auto f) { r = f(x, y); });
  return r;
}

/// var(x) with the mean's `attrs` when `squares` is square(x - broadcast_to(m)) (or
/// d * d) and m = mean(x) over the same axes with keepdims: the variance as one
/// reduction, computed in double from x (docs/ops.md), rather than a mean of
/// squares of deviations from a rounded mean, and one pass over x instead of two.
std::optional<Value> asVariance(Rewriter& rw, const Attrs& attrs, Value squares) {
  const Node& s = *squares.node;
  if (s.op() != Op::Square && (s.op() != Op::Mul || s.operand(0) != s.operand(1)))
    return std::nullopt;
  const Node& d = *s.operand(0).node;
  if (d.op() != Op::Sub)
    return std::nullopt;
  Value x = d.operand(0), m = d.operand(1);
  if (m.node->op() == Op::BroadcastTo)
    m = m.node->operand(0);
  const Node& mean = *m.node;
  if (mean.op() != Op::Mean || mean.operand(0) != x || !mean.attrs().flag("keepdims") ||
      mean.attrs().getInts("axes") != attrs.getInts("axes"))
    return std::nullopt;
  return rw.apply(Op::Var, {x}, attrs);
}

/// True when `v` is a reshape that only puts unit axes before its operand's:
/// f64[] to f64[1,1], f64[4] to f64[1,4].
bool addsLeadingUnits(Value v) {
  if (v.node->op() != Op::Reshape)
    return false;
  llvm::ArrayRef<int64_t> from = v.node->operand(0).type().shape, to = v.type().shape;
  return to.size() >= from.size() && to.take_back(from.size()) == from &&
         llvm::all_of(to.drop_back(from.size()), [](int64_t d) { return d == 1; });
}

bool isMatrixTranspose(Value v) {
  bool flipped;
  peelMatrixTranspose(v, flipped);
  return flipped;
}

/// True when `perm` keeps the axes of `shape` other than its unit ones in order: the
/// transpose only moves unit axes, a reshape.
bool movesOnlyUnitAxes(llvm::ArrayRef<int64_t> perm, llvm::ArrayRef<int64_t> shape) {
  int64_t last = -1;
  for (int64_t p : perm)
    if (shape[p] != 1) {
      if (p < last)
        return false;
      last = p;
    }
  return true;
}

/// x transposed by `perm`: x itself where nothing moves, a reshape (which every
/// kernel reads as it reads x) where only unit axes do.
Value transposed(Rewriter& rw, Value x, const std::vector<int64_t>& perm) {
  if (isIdentityPerm(perm))
    return x;
  if (!movesOnlyUnitAxes(perm, x.type().shape))
    return rw.apply(Op::Transpose, {x}, Attrs{{"perm", perm}});
  std::vector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(x.type().shape[p]);
  return rw.apply(Op::Reshape, {x}, Attrs{{"shape", shape}});
}

/// Reduction `n` of transpose(x, perm), the transpose's one use: the reduction of x
/// over the axes they are, its result transposed into n's order (a reshape where
/// only unit axes move, nothing where none do), so that x is read once in its own
/// order rather than moved first. An argmax or argmin keeps its reduced axes in
/// order, which its flattened positions follow.
std::optional<Value> reduceThroughTranspose(Rewriter& rw, const Node& n, Value t) {
  if (t.node->op() != Op::Transpose)
    return std::nullopt;
  Value x = t.node->operand(0);
  const std::vector<int64_t>& perm = t.node->attrs().getInts("perm");
  const std::vector<int64_t>& axes = n.attrs().getInts("axes");
  std::vector<int64_t> inner;
  for (int64_t a : axes)
    inner.push_back(perm[a]);
  bool positions = n.op() == Op::Argmax || n.op() == Op::Argmin;
  if (positions && !std::is_sorted(inner.begin(), inner.end()))
    return std::nullopt;
  std::sort(inner.begin(), inner.end());
  bool keepdims = n.attrs().flag("keepdims");
  Value r = rw.apply(n.op(), {x}, Attrs{{"axes", inner}, {"keepdims", keepdims}});
  std::vector<int64_t> back = perm; // keepdims: r has x's axes
  if (!keepdims) {                  // r's axes are x's kept ones in order: rank each kept axis of t
    back.clear();
    for (size_t i = 0; i < perm.size(); ++i)
      if (!llvm::is_contained(axes, static_cast<int64_t>(i)))
        back.push_back(llvm::count_if(
            perm, [&](int64_t p) { return p < perm[i] && !llvm::is_contained(inner, p); }));
  }
  return transposed(rw, r, back);
}

/// The reductions that reduce over all of their axes at once, whatever the order
/// of the axes: reducing over axes B, then over the rest of A, gives the reduction
/// over A (the mean too: every mean over B counts the same points).
bool composes(Op op) {
  return op == Op::Sum || op == Op::Prod || op == Op::Max || op == Op::Min || op == Op::Mean;
}

/// The live reductions of `g` that compose (composes()), by operand.
std::map<std::pair<const Node*, unsigned>, std::vector<const Node*>>
composingReductions(const ir::Graph& g, const std::vector<unsigned>& uses) {
  std::map<std::pair<const Node*, unsigned>, std::vector<const Node*>> out;
  for (const Node* n : g.nodes())
    if (composes(n->op()) && uses[n->id()] > 0)
      out[{n->operand(0).node, n->operand(0).index}].push_back(n);
  return out;
}

/// Of `siblings` (reductions of one operand), the one with op `op` and dtype
/// `dtype` over the most axes that are a strict subset of `axes`; null if none.
const Node* closestPartial(Op op, ir::DType dtype, const std::vector<int64_t>& axes,
                           llvm::ArrayRef<const Node*> siblings) {
  const Node* best = nullptr;
  for (const Node* s : siblings) {
    const std::vector<int64_t>& fewer = s->attrs().getInts("axes");
    if (s->op() == op && s->type().dtype == dtype && fewer.size() < axes.size() &&
        llvm::all_of(fewer, [&](int64_t a) { return llvm::is_contained(axes, a); }) &&
        (!best || fewer.size() > best->attrs().getInts("axes").size()))
      best = s;
  }
  return best;
}

/// `op` of x (in the new graph) over `axes`, as the reduction over the rest of
/// them of the closest partial reduction among `siblings` (itself built the same
/// way), else directly.
Value reduceThroughPartials(Rewriter& rw, Op op, Value x, const std::vector<int64_t>& axes,
                            bool keepdims, ir::DType dtype, llvm::ArrayRef<const Node*> siblings) {
  const Node* best = closestPartial(op, dtype, axes, siblings);
  if (!best)
    return rw.apply(op, {x}, Attrs{{"axes", axes}, {"keepdims", keepdims}});
  const std::vector<int64_t>& fewer = best->attrs().getInts("axes");
  const bool kept = best->attrs().flag("keepdims");
  Value partial = reduceThroughPartials(rw, op, x, fewer, kept, dtype, siblings);
  std::vector<int64_t> rest = axes; // A's axes in `partial` (B's left as units)
  if (!kept) {                      // A's other axes, numbered as in `partial`
    rest.clear();
    for (int64_t a : axes)
      if (!llvm::is_contained(fewer, a))
        rest.push_back(a - llvm::count_if(fewer, [&](int64_t b) { return b < a; }));
  }
  Value r = rw.apply(op, {partial}, Attrs{{"axes", rest}, {"keepdims", false}});
  if (keepdims) {
    std::vector<int64_t> shape(x.type().shape.begin(), x.type().shape.end());
    for (int64_t a : axes)
      shape[a] = 1;
    r = rw.apply(Op::Reshape, {r}, Attrs{{"shape", shape}});
  }
  return r;
}

/// Reduction `n` of x (`x` in the new graph) where the graph also reduces x with
/// the same op over fewer of n's axes (`siblings` holds x's reductions): n as a
/// reduction of that one (reduceThroughPartials), so that x is read once.
/// sum(X) beside sum(X, 0) is sum(sum(X, 0)). An f64 value differs from a
/// reduction in one go by rounding only, as a split reduction's does.
std::optional<Value> reduceAPartialReduction(Rewriter& rw, const Node& n, Value x,
                                             llvm::ArrayRef<const Node*> siblings) {
  const std::vector<int64_t>& axes = n.attrs().getInts("axes");
  // An f32 sum, mean or prod accumulates in double in one go; through its f32
  // partials it would be rounded twice. max and min are exact.
  const ir::DType t = x.type().dtype;
  const bool exact = n.op() == Op::Max || n.op() == Op::Min;
  if ((!exact && t == ir::DType::F32) || (n.op() == Op::Mean && !ir::isFloat(t)) ||
      !closestPartial(n.op(), n.type().dtype, axes, siblings))
    return std::nullopt;
  return reduceThroughPartials(rw, n.op(), x, axes, n.attrs().flag("keepdims"), n.type().dtype,
                               siblings);
}

class Canonicalizer {
public:
  Canonicalizer(const ir::Graph& g, PassStats& stats)
      : uses_(useCounts(g)), reductions_(composingReductions(g, uses_)), stats_(stats) {}

  std::optional<ValueList> operator()(Rewriter& rw, const Node& n) {
    if (n.numResults() != 1)
      return std::nullopt;
    ValueList xs = rw.mapOperands(n);
    if (std::optional<Value> v = fold(rw, n, xs)) {
      stats_.count("folded");
      return ValueList{*v};
    }
    if (std::optional<Value> v = simplify(rw, n, xs)) {
      stats_.count("simplified");
      return ValueList{*v};
    }
    return std::nullopt;
  }

private:
  std::optional<Value> fold(Rewriter& rw, const Node& n, const ValueList& xs) {
    if (xs.empty() || n.op() == Op::Full)
      return std::nullopt;
    switch (n.op()) {
    case Op::BroadcastTo:
    case Op::Reshape:
    case Op::Transpose:
      if (xs[0].node->op() == Op::Full)
        return rw.full(xs[0].node->attrs().getFloat("value"), n.type());
      return std::nullopt;
    case Op::Slice:
    case Op::Concat:
    case Op::Diag:
    case Op::DiagPart:
    case Op::Triu:
    case Op::Tril:
    GRAPHC_SOURCE_CASES:
    GRAPHC_ELEMENTWISE_CASES:
    GRAPHC_REDUCE_CASES:
    GRAPHC_LINALG_CASES:
    GRAPHC_ASSUME_CASES:
    GRAPHC_COLLECTIVE_CASES:
      break;
    }
    if (!ir::isElementwise(n.kind()) || !ir::isFloat(n.type().dtype))
      return std::nullopt;
    std::optional<double> a = uniformValue(xs[0]);
    std::optional<double> b = xs.size() > 1 ? uniformValue(xs[1]) : 0.0;
    if (!a || !b || xs.size() > 2)
      return std::nullopt;
    std::optional<double> r = n.type().dtype == ir::DType::F32 ? foldScalar<float>(n.op(), *a, *b)
                                                               : foldScalar<double>(n.op(), *a, *b);
    if (!r)
      return std::nullopt;
    return rw.full(*r, n.type());
  }

  std::optional<Value> simplify(Rewriter& rw, const Node& n, const ValueList& xs) {
    const Attrs& attrs = n.attrs();
    if (n.kind() == ir::OpKind::Reduce && uses_[n.operand(0).node->id()] == 1)
      if (std::optional<Value> v = reduceThroughTranspose(rw, n, xs[0]))
        return v;
    switch (n.op()) {
    case Op::Add:
      if (isUniform(xs[1], 0))
        return xs[0];
      if (isUniform(xs[0], 0))
        return xs[1];
      break;
    case Op::Sub:
      if (isUniform(xs[1], 0))
        return xs[0];
      break;
    case Op::Mul:
      if (isUniform(xs[1], 1))
        return xs[0];
      if (isUniform(xs[0], 1))
        return xs[1];
      break;
    case Op::Div:
    case Op::Pow:
      if (isUniform(xs[1], 1))
        return xs[0];
      break;
    case Op::Neg:
      if (xs[0].node->op() == Op::Neg)
        return xs[0].node->operand(0);
      break;
    case Op::Cast:
      if (attrs.getDType("dtype") == xs[0].type().dtype)
        return xs[0];
      break;
    case Op::Reshape:
    case Op::BroadcastTo:
      if (n.type() == xs[0].type())
        return xs[0];
      if (xs[0].node->op() == n.op()) // reshape(reshape x), broadcast(broadcast x)
        return rw.apply(n.op(), {xs[0].node->operand(0)}, attrs);
      if (n.op() == Op::BroadcastTo && addsLeadingUnits(xs[0])) // broadcasting aligns right
        return rw.apply(n.op(), {xs[0].node->operand(0)}, attrs);
      break;
    case Op::Sum:
    case Op::Prod:
    case Op::Max:
    case Op::Min:
    case Op::Mean:
      if (attrs.getInts("axes").empty())
        return xs[0];
      if (n.op() == Op::Mean)
        if (std::optional<Value> v = asVariance(rw, attrs, xs[0]))
          return v;
      if (auto it = reductions_.find({n.operand(0).node, n.operand(0).index});
          it != reductions_.end())
        return reduceAPartialReduction(rw, n, xs[0], it->second);
      return std::nullopt;
    case Op::Transpose:
      return simplifyTranspose(rw, attrs.getInts("perm"), xs[0]);
    case Op::Matmul:
      return simplifyMatmul(rw, attrs, xs);
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
    case Op::Maximum:
    case Op::Minimum:
    case Op::Atan2:
    case Op::Remainder:
    case Op::Slice:
    case Op::Concat:
    case Op::Diag:
    case Op::DiagPart:
    case Op::Triu:
    case Op::Tril:
    case Op::Var:
    case Op::Argmax:
    case Op::Argmin:
    case Op::Solve:
    case Op::Cholesky:
    case Op::TriangularSolve:
    case Op::Lu:
    case Op::Qr:
    case Op::Inverse:
    case Op::Det:
    case Op::Logdet:
    case Op::Trace:
    case Op::Syrk:
    GRAPHC_SOURCE_CASES:
    GRAPHC_LOGICAL_CASES:
    GRAPHC_COMPARE_CASES:
    GRAPHC_SELECT_CASES:
    GRAPHC_ASSUME_CASES:
    GRAPHC_COLLECTIVE_CASES:
      break;
    }
    // assume_X(assume_X(a)) -> assume_X(a); other assumes carry information and stay.
    if (n.kind() == ir::OpKind::Assume && xs[0].node->op() == n.op())
      return xs[0];
    return std::nullopt;
  }

  std::optional<Value> simplifyTranspose(Rewriter& rw, const std::vector<int64_t>& perm, Value x) {
    if (movesOnlyUnitAxes(perm, x.type().shape))
      return transposed(rw, x, perm);
    const Node* inner = x.node;
    if (inner->op() == Op::Transpose) {
      const auto& p1 = inner->attrs().getInts("perm");
      std::vector<int64_t> composed(perm.size());
      for (size_t i = 0; i < perm.size(); ++i)
        composed[i] = p1[perm[i]];
      if (isIdentityPerm(composed))
        return inner->operand(0);
      return rw.apply(Op::Transpose, {inner->operand(0)}, Attrs{{"perm", composed}});
    }
    if (inner->op() == Op::Syrk && swapsMatrixAxes(perm)) // syrk is symmetric
      return x;
    if (inner->op() == Op::Matmul && swapsMatrixAxes(perm)) { // (op(A) op(B))' = op(B)' op(A)'
      bool ta = inner->attrs().flag("transpose_a"), tb = inner->attrs().flag("transpose_b");
      return rw.apply(Op::Matmul, {inner->operand(1), inner->operand(0)},
                      Attrs{{"transpose_a", !tb}, {"transpose_b", !ta}});
    }
    return std::nullopt;
  }

  /// matmul(A', B) -> matmul(A, B) {transpose_a}, and likewise for B.
  std::optional<Value> simplifyMatmul(Rewriter& rw, const Attrs& attrs, const ValueList& xs) {
    bool ta = attrs.flag("transpose_a"), tb = attrs.flag("transpose_b");
    Value a = xs[0], b = xs[1];
    bool changed = false;
    if (isMatrixTranspose(a)) {
      a = a.node->operand(0), ta = !ta, changed = true;
    }
    if (isMatrixTranspose(b)) {
      b = b.node->operand(0), tb = !tb, changed = true;
    }
    if (!changed)
      return std::nullopt;
    return rw.apply(Op::Matmul, {a, b}, Attrs{{"transpose_a", ta}, {"transpose_b", tb}});
  }

  std::vector<unsigned> uses_; ///< of g's nodes, by id
  std::map<std::pair<const Node*, unsigned>, std::vector<const Node*>> reductions_;
  PassStats& stats_;
};

} // namespace

std::unique_ptr<ir::Graph> canonicalize(const ir::Graph& g, PassStats& stats) {
  Canonicalizer c(g, stats);
  return rewrite(g, [&](Rewriter& rw, const Node& n) { return c(rw, n); });
}

} // namespace graphc::passes
