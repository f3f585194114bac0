//===- passes/SplitReductions.cpp - Reductions in two passes for the GPU --===//
#include "passes/SplitReductions.h"

#include "passes/Rewrite.h"

#include <fmt/format.h>
#include <map>
#include <optional>

namespace graphc::passes {
namespace {

using ir::DType;
using ir::Node;
using ir::Op;
using ir::Value;

bool splittable(Op op) {
  return op == Op::Sum || op == Op::Mean || op == Op::Var || op == Op::Max || op == Op::Min ||
         op == Op::Prod || op == Op::Argmax || op == Op::Argmin;
}

std::vector<int64_t> concat(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b,
                            llvm::ArrayRef<int64_t> c) {
  std::vector<int64_t> out(a.begin(), a.end());
  out.insert(out.end(), b.begin(), b.end());
  out.insert(out.end(), c.begin(), c.end());
  return out;
}

/// Where a reduction splits: axes [a0, a1] of its operand (extent points in all)
/// into `pieces`, as contiguous runs or interleaved.
struct Cut {
  size_t a0 = 0, a1 = 0;
  int64_t extent = 1, pieces = 0;
  bool contiguous = false;

  /// The shape that replaces axes [a0, a1].
  std::vector<int64_t> middle() const {
    if (contiguous)
      return {pieces, extent / pieces};
    return {extent / pieces, pieces};
  }
};

class Splitter {
public:
  Splitter(Rewriter& rw, const RoutePolicy& policy) : rw_(rw), policy_(policy) {}

  /// Where `op` over `axes` of x splits, if it does.
  std::optional<Cut> plan(Op op, Value x, const std::vector<int64_t>& axes, bool log) const {
    const ir::Shape& s = x.type().shape;
    if (!splittable(op) || axes.empty() || x.type().numel() == 0)
      return std::nullopt;
    for (size_t i = 1; i < axes.size(); ++i)
      if (axes[i] != axes[i - 1] + 1)
        return std::nullopt;
    Cut c;
    c.a0 = static_cast<size_t>(axes.front());
    c.a1 = static_cast<size_t>(axes.back());
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < s.size(); ++i)
      (i < c.a0 ? outer : i > c.a1 ? inner : c.extent) *= s[i];
    c.contiguous = inner == 1;
    ReductionSplit split = chooseReductionSplit(policy_, outer * inner, c.extent, c.contiguous);
    if (log && logRoutes())
      fmt::print(stderr, "[graphc] route: {} of {}: {}\n", ir::opName(op), x.type().str(),
                 split.chunks ? "split, " + split.reason : "one kernel, " + split.reason);
    if (split.chunks == 0)
      return std::nullopt;
    c.pieces = split.chunks;
    return c;
  }

  /// `op` over `axes` of x (no keepdims), split where the policy says.
  Value reduce(Op op, Value x, const std::vector<int64_t>& axes) {
    std::optional<Cut> cut = plan(op, x, axes, true);
    if (!cut)
      return rw_.apply(op, {x}, ir::Attrs{{"axes", axes}});
    memo_.clear();
    Value pieces = regroup(x, *cut);
    DType dtype = x.type().dtype;
    // Sums and products widen their partials; the extremes compare in the input's type.
    bool accumulates = op == Op::Sum || op == Op::Mean || op == Op::Var || op == Op::Prod;
    bool widen = accumulates && ir::isFloat(dtype) && dtype != DType::F64;
    if (widen)
      pieces = rw_.apply(Op::Cast, {pieces}, ir::Attrs{{"dtype", DType::F64}});
    std::vector<int64_t> inner{static_cast<int64_t>(cut->contiguous ? cut->a0 + 1 : cut->a0)};
    std::vector<int64_t> across{static_cast<int64_t>(cut->a0)};
    Value out;
    if (op == Op::Argmax || op == Op::Argmin)
      return firstExtreme(op, pieces, *cut, inner, across);
    if (op == Op::Var) {
      // Equal pieces: the variance is the mean of theirs plus the variance of their means.
      Value means = rw_.apply(Op::Mean, {pieces}, ir::Attrs{{"axes", inner}});
      Value vars = rw_.apply(Op::Var, {pieces}, ir::Attrs{{"axes", inner}});
      out = rw_.apply(Op::Add, {reduce(Op::Mean, vars, across), reduce(Op::Var, means, across)});
    } else {
      Value partial = rw_.apply(op, {pieces}, ir::Attrs{{"axes", inner}});
      out = reduce(op, partial, across);
    }
    if (widen)
      out = rw_.apply(Op::Cast, {out}, ir::Attrs{{"dtype", dtype}});
    return out;
  }

private:
  /// argmax (argmin) over the pieces' axis `inner`, combined across the pieces: the
  /// smallest index, counted in the merged reduced axes, among the pieces whose
  /// extreme is the overall one (or NaN, which wins).
  Value firstExtreme(Op op, Value pieces, const Cut& c, const std::vector<int64_t>& inner,
                     const std::vector<int64_t>& across) {
    Op extreme = op == Op::Argmax ? Op::Max : Op::Min;
    Value local = rw_.apply(op, {pieces}, ir::Attrs{{"axes", inner}});
    Value best = rw_.apply(extreme, {pieces}, ir::Attrs{{"axes", inner}});
    const ir::Shape& shape = best.type().shape; // [.., pieces, ..]
    std::vector<int64_t> kept(shape.begin(), shape.end());
    kept[c.a0] = 1;
    Value top = rw_.apply(Op::Reshape, {reduce(extreme, best, across)}, ir::Attrs{{"shape", kept}});
    std::vector<int64_t> full(shape.begin(), shape.end());
    top = rw_.apply(Op::BroadcastTo, {top}, ir::Attrs{{"shape", full}});
    ir::TensorType indices(DType::I64, shape);
    Value piece = rw_.target().apply(Op::Iota, {}, ir::Attrs{{"axis", static_cast<int64_t>(c.a0)}},
                                     {indices});
    int64_t length = c.extent / c.pieces;
    // Piece p holds points [p * length, (p + 1) * length), or p, p + pieces, ...
    Value index =
        c.contiguous
            ? rw_.apply(
                  Op::Add,
                  {rw_.apply(Op::Mul, {piece, rw_.full(static_cast<double>(length), indices)}),
                   local})
            : rw_.apply(
                  Op::Add,
                  {rw_.apply(Op::Mul, {local, rw_.full(static_cast<double>(c.pieces), indices)}),
                   piece});
    Value wins =
        rw_.apply(Op::Or, {rw_.apply(Op::Eq, {best, top}), rw_.apply(Op::Ne, {best, best})});
    Value candidate =
        rw_.apply(Op::Select, {wins, index, rw_.full(static_cast<double>(c.extent), indices)});
    return reduce(Op::Min, candidate, across);
  }

  /// v (axes [a0, a1] as the reduction's operand's) with those axes regrouped as
  /// the cut says, the reshape pushed up through elementwise ops and broadcasts.
  using Key = std::pair<const Node*, unsigned>;
  static Key key(Value v) { return {v.node, v.index}; }

  /// Regroups v, after the values its regrouping reads (an explicit stack: a prologue
  /// may be a chain of thousands of ops).
  Value regroup(Value root, const Cut& c) {
    std::vector<std::pair<Value, bool>> work{{root, false}};
    while (!work.empty()) {
      auto [v, expanded] = work.back();
      if (memo_.count(key(v))) {
        work.pop_back();
        continue;
      }
      if (!expanded) {
        work.back().second = true;
        for (Value in : regroupedInputs(v, c))
          if (!memo_.count(key(in)))
            work.push_back({in, false});
        continue;
      }
      work.pop_back();
      memo_[key(v)] = regroupNew(v, c);
    }
    return memo_.at(key(root));
  }

  /// Where v is elementwise over operands of its shape: true.
  static bool elementwiseOfSameShape(const Node& n, const ir::Shape& shape) {
    return ir::isElementwise(ir::opInfo(n.op()).kind) && n.numResults() == 1 &&
           llvm::all_of(n.operands(), [&](Value o) { return o.type().shape == shape; });
  }

  /// Where v broadcasts u over the cut axes (unit) or along them (whole, then u
  /// padded with leading unit axes to v's rank is regrouped too).
  struct Broadcast {
    bool unit = false, whole = false;
    ir::Shape padded;
  };
  static Broadcast broadcastOf(Value v, const Cut& c) {
    const Node& n = *v.node;
    Broadcast b;
    if (n.op() != Op::BroadcastTo)
      return b;
    const ir::Shape& shape = v.type().shape;
    Value u = n.operand(0);
    b.padded.assign(shape.size() - u.type().shape.size(), 1);
    b.padded.append(u.type().shape.begin(), u.type().shape.end());
    llvm::ArrayRef<int64_t> cutAxes =
        llvm::ArrayRef<int64_t>(b.padded).slice(c.a0, c.a1 - c.a0 + 1);
    b.unit = llvm::all_of(cutAxes, [](int64_t d) { return d == 1; });
    b.whole = !b.unit && cutAxes == llvm::ArrayRef<int64_t>(shape).slice(c.a0, c.a1 - c.a0 + 1);
    return b;
  }

  /// u padded to the rank of the broadcast's result.
  Value padded(Value u, const Broadcast& b) {
    if (b.padded == u.type().shape)
      return u;
    return rw_.apply(Op::Reshape, {u},
                     ir::Attrs{{"shape", std::vector<int64_t>(b.padded.begin(), b.padded.end())}});
  }

  /// The values whose regrouped forms regroupNew(v) reads.
  std::vector<Value> regroupedInputs(Value v, const Cut& c) {
    const Node& n = *v.node;
    if (n.op() == Op::Full)
      return {};
    if (elementwiseOfSameShape(n, v.type().shape))
      return {n.operands().begin(), n.operands().end()};
    if (Broadcast b = broadcastOf(v, c); b.whole)
      return {padded(n.operand(0), b)};
    return {};
  }

  /// v regrouped, its regroupedInputs already in memo_.
  Value regroupNew(Value v, const Cut& c) {
    const Node& n = *v.node;
    llvm::ArrayRef<int64_t> s(v.type().shape);
    std::vector<int64_t> to = concat(s.take_front(c.a0), c.middle(), s.drop_front(c.a1 + 1));
    if (n.op() == Op::Full)
      return rw_.full(n.attrs().getFloat("value"), ir::TensorType(v.type().dtype, to));
    if (elementwiseOfSameShape(n, v.type().shape)) {
      llvm::SmallVector<Value, 3> operands;
      for (Value o : n.operands())
        operands.push_back(memo_.at(key(o)));
      return rw_.apply(n.op(), operands, n.attrs());
    }
    Broadcast b = broadcastOf(v, c);
    if (b.unit || b.whole) {
      llvm::ArrayRef<int64_t> p(b.padded);
      Value operand = b.unit ? rw_.apply(Op::Reshape, {n.operand(0)},
                                         ir::Attrs{{"shape", concat(p.take_front(c.a0), {1, 1},
                                                                    p.drop_front(c.a1 + 1))}})
                             : memo_.at(key(padded(n.operand(0), b)));
      if (llvm::ArrayRef<int64_t>(operand.type().shape) == llvm::ArrayRef<int64_t>(to))
        return operand;
      return rw_.apply(Op::BroadcastTo, {operand}, ir::Attrs{{"shape", to}});
    }
    return rw_.apply(Op::Reshape, {v}, ir::Attrs{{"shape", to}});
  }

  Rewriter& rw_;
  const RoutePolicy& policy_;
  std::map<Key, Value> memo_;
};

} // namespace

std::unique_ptr<ir::Graph> splitReductions(const ir::Graph& g, const RoutePolicy& policy,
                                           PassStats& stats) {
  return rewrite(g, [&](Rewriter& rw, const Node& n) -> std::optional<ValueList> {
    if (ir::opInfo(n.op()).kind != ir::OpKind::Reduce || !splittable(n.op()))
      return std::nullopt;
    Splitter splitter(rw, policy);
    Value x = rw.map(n.operand(0));
    const std::vector<int64_t>& axes = n.attrs().getInts("axes");
    if (!splitter.plan(n.op(), x, axes, false))
      return std::nullopt;
    Value out = splitter.reduce(n.op(), x, axes);
    if (out.type().shape != n.type().shape)
      out = rw.apply(
          Op::Reshape, {out},
          ir::Attrs{{"shape", std::vector<int64_t>(n.type().shape.begin(), n.type().shape.end())}});
    stats.count("split");
    return ValueList{out};
  });
}

std::unique_ptr<ir::Graph> splitReductions(const ir::Graph& g, PassStats& stats) {
  return splitReductions(g, RoutePolicy::gpu(), stats);
}

} // namespace graphc::passes
