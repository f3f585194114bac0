//===- passes/Match.cpp - Small pattern predicates shared by passes -------===//
#include "passes/Match.h"

#include "ir/OpCases.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <vector>

namespace graphc::passes {

using ir::Node;
using ir::Op;
using ir::Value;

bool isIdentityPerm(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

std::vector<int64_t> matrixSwap(int64_t rank) {
  std::vector<int64_t> perm(rank);
  for (int64_t i = 0; i < rank; ++i)
    perm[i] = i;
  std::swap(perm[rank - 1], perm[rank - 2]);
  return perm;
}

bool swapsMatrixAxes(const std::vector<int64_t>& perm) {
  int64_t r = static_cast<int64_t>(perm.size());
  if (r < 2 || perm[r - 2] != r - 1 || perm[r - 1] != r - 2)
    return false;
  return isIdentityPerm(std::vector<int64_t>(perm.begin(), perm.end() - 2));
}

bool broadcastKeepsMatrices(const ir::TensorType& from, const ir::TensorType& to) {
  return from.rank() >= 2 && from.shape.back() == to.shape.back() &&
         from.shape[from.rank() - 2] == to.shape[to.rank() - 2];
}

Value peelMatrixTranspose(Value v, bool& flipped) {
  const Node* n = v.node;
  flipped = n->op() == Op::Transpose && swapsMatrixAxes(n->attrs().getInts("perm"));
  return flipped ? n->operand(0) : v;
}

int64_t Gram::rank() const {
  const ir::TensorType& x = factor.type();
  return x.shape[x.rank() - (transposed ? 2 : 1)];
}

std::optional<Gram> matchGram(const Node& n) {
  if (n.op() == Op::Syrk)
    return Gram{n.operand(0), n.attrs().flag("transpose")};
  if (n.op() != Op::Matmul)
    return std::nullopt;
  bool fa, fb;
  Value a = peelMatrixTranspose(n.operand(0), fa);
  Value b = peelMatrixTranspose(n.operand(1), fb);
  bool ta = fa != n.attrs().flag("transpose_a");
  bool tb = fb != n.attrs().flag("transpose_b");
  if (a != b || ta == tb)
    return std::nullopt;
  return Gram{a, ta};
}

std::optional<double> uniformValue(Value v) {
  const Node* n = v.node;
  // Data movement keeps a uniform value: look through any chain of it (no recursion).
  while (n->op() == Op::BroadcastTo || n->op() == Op::Reshape || n->op() == Op::Transpose)
    n = n->operand(0).node;
  switch (n->op()) {
  case Op::Full:
    return n->attrs().getFloat("value");
  case Op::Constant: {
    const auto& xs = n->attrs().getFloats("value");
    bool uniform =
        !xs.empty() && std::all_of(xs.begin(), xs.end(), [&](double x) { return x == xs.front(); });
    return uniform ? std::optional<double>(xs.front()) : std::nullopt;
  }
  case Op::Parameter:
  case Op::Iota:
  case Op::Eye:
  GRAPHC_ELEMENTWISE_CASES:
  GRAPHC_SHAPE_CASES:
  GRAPHC_REDUCE_CASES:
  GRAPHC_LINALG_CASES:
  GRAPHC_ASSUME_CASES:
  GRAPHC_COLLECTIVE_CASES:
    return std::nullopt;
  }
  ir::unknownOp();
}

Value peelUniformScale(Value v, double& scale) {
  for (;;) {
    const Node& n = *v.node;
    if (n.op() == Op::Neg) {
      scale = -scale, v = n.operand(0);
      continue;
    }
    if (n.op() == Op::Mul) {
      if (std::optional<double> c = uniformValue(n.operand(1))) {
        scale *= *c, v = n.operand(0);
        continue;
      }
      if (std::optional<double> c = uniformValue(n.operand(0))) {
        scale *= *c, v = n.operand(1);
        continue;
      }
    }
    if (n.op() == Op::Div) {
      std::optional<double> c = uniformValue(n.operand(1));
      if (c && *c != 0) {
        scale /= *c, v = n.operand(0);
        continue;
      }
    }
    return v;
  }
}

bool collectLinearTerms(Value v, double scale, std::vector<LinearTerm>& terms, size_t maxTerms) {
  // An explicit stack, left operand on top: the terms come out left to right. Every
  // value waiting on the stack gives at least one term, so the walk stops once they
  // and the terms found would pass maxTerms (a sum of any length costs O(maxTerms)).
  std::vector<std::pair<Value, double>> work{{v, scale}};
  while (!work.empty()) {
    auto [w, c] = work.back();
    work.pop_back();
    w = peelUniformScale(w, c);
    const Node& n = *w.node;
    if (n.op() == Op::Add || n.op() == Op::Sub) {
      work.emplace_back(n.operand(1), n.op() == Op::Add ? c : -c);
      work.emplace_back(n.operand(0), c);
    } else {
      terms.push_back({c, w});
    }
    if (terms.size() + work.size() > maxTerms)
      return false;
  }
  return true;
}

namespace {

/// True when `n` broadcasts an [..., n, 1] column to [..., n, m].
bool broadcastsColumn(const Node& n) {
  if (n.op() != Op::BroadcastTo)
    return false;
  const ir::TensorType &from = n.operand(0).type(), &to = n.type();
  return from.rank() == to.rank() && from.shape.back() == 1 &&
         std::equal(from.shape.begin(), from.shape.end() - 1, to.shape.begin());
}

/// Adds c * v to `out`; false when that takes a second base. Walks the sums with an
/// explicit stack, left operand first (a chain of any length).
bool addColumnOffsets(ColumnOffsets& out, Value root, double rootScale) {
  std::vector<std::pair<Value, double>> work{{root, rootScale}};
  while (!work.empty()) {
    auto [v, c] = work.back();
    work.pop_back();
    const Node& n = *v.node;
    if (broadcastsColumn(n)) {
      out.columns.emplace_back(c, n.operand(0));
      continue;
    }
    std::optional<double> c0, c1;
    if (n.operands().size() == 2) {
      c0 = uniformValue(n.operand(0));
      c1 = uniformValue(n.operand(1));
    }
    bool split = true;
    switch (n.op()) {
    case Op::Add:
    case Op::Sub:
      split = !c0 && !c1;
      if (split) { // the right operand waits below the left one
        work.emplace_back(n.operand(1), n.op() == Op::Add ? c : -c);
        work.emplace_back(n.operand(0), c);
      }
      break;
    case Op::Neg:
      work.emplace_back(n.operand(0), -c);
      break;
    case Op::Mul:
      split = c1 || c0;
      if (split)
        work.push_back(c1 ? std::pair(n.operand(0), c * *c1) : std::pair(n.operand(1), c * *c0));
      break;
    case Op::Div:
      split = c1 && *c1 != 0;
      if (split)
        work.emplace_back(n.operand(0), c / *c1);
      break;
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
    case Op::Pow:
    case Op::Maximum:
    case Op::Minimum:
    case Op::Atan2:
    case Op::Remainder:
    GRAPHC_SOURCE_CASES:
    GRAPHC_LOGICAL_CASES:
    GRAPHC_COMPARE_CASES:
    GRAPHC_SELECT_CASES:
    GRAPHC_CAST_CASES:
    GRAPHC_SHAPE_CASES:
    GRAPHC_REDUCE_CASES:
    GRAPHC_LINALG_CASES:
    GRAPHC_ASSUME_CASES:
    GRAPHC_COLLECTIVE_CASES:
      split = false;
      break;
    }
    if (split)
      continue;
    if (out.base && *out.base != v)
      return false;
    out.base = v;
    out.scale += c;
  }
  return true;
}

/// A value of the expression matchShiftedGram walks: a uniform scalar `c`, or the
/// matrix scale * G + shift * I.
struct Affine {
  bool scalar;
  double c, scale, shift;
  static Affine uniform(double c) { return {true, c, 0, 0}; }
  static Affine matrix(double scale, double shift) { return {false, 0, scale, shift}; }
};

class ShiftedGramMatcher {
public:
  ShiftedGramMatcher(const ir::TensorType& type, llvm::function_ref<bool(const Node&)> within)
      : type_(type), within_(within) {}

  /// `root` as an Affine. The expression is walked with an explicit stack, each node
  /// once (operands before their user, the left one first): chains of any length and
  /// shared operands cost linear time.
  std::optional<Affine> of(Value root) {
    if (std::optional<std::optional<Affine>> l = leaf(root))
      return *l;
    llvm::DenseMap<const Node*, std::optional<Affine>> known;
    auto value = [&](Value v) {
      std::optional<std::optional<Affine>> l = leaf(v);
      return l ? *l : known.lookup(v.node);
    };
    std::vector<std::pair<const Node*, bool>> work{{root.node, false}};
    while (!work.empty()) {
      auto [n, expanded] = work.back();
      if (known.count(n)) {
        work.pop_back();
        continue;
      }
      if (!expanded) {
        work.back().second = true;
        for (unsigned i = static_cast<unsigned>(n->operands().size()); i-- > 0;) {
          Value o = n->operand(i);
          if (!leaf(o) && !known.count(o.node))
            work.emplace_back(o.node, false);
        }
        continue;
      }
      work.pop_back();
      if (n->op() == Op::Neg) {
        std::optional<Affine> a = value(n->operand(0));
        known[n] = a ? std::optional<Affine>(times(*a, -1)) : std::nullopt;
      } else {
        known[n] = combine(n->op(), value(n->operand(0)), value(n->operand(1)));
      }
    }
    return known.lookup(root.node);
  }

  std::optional<Value> product; ///< G, once found
  std::optional<Gram> gram;

private:
  /// What `v` is without looking at its operands, or nothing when it is a neg, add,
  /// sub, mul or div inside the match whose operands decide.
  std::optional<std::optional<Affine>> leaf(Value v) {
    if (std::optional<double> c = uniformValue(v))
      return Affine::uniform(*c);
    const Node& n = *v.node;
    if (v.type() != type_)
      return std::optional<Affine>();
    if (n.op() == Op::Eye)
      return Affine::matrix(0, 1);
    if (std::optional<Gram> g = matchGram(n)) {
      if (product && *product != v)
        return std::optional<Affine>(); // one Gram matrix only
      product = v;
      gram = g;
      return Affine::matrix(1, 0);
    }
    if (!within_(n))
      return std::optional<Affine>();
    Op op = n.op();
    if (op == Op::Neg || op == Op::Add || op == Op::Sub || op == Op::Mul || op == Op::Div)
      return std::nullopt;
    return std::optional<Affine>();
  }

  /// a op b for the binary ops leaf() leaves to their operands.
  static std::optional<Affine> combine(Op op, std::optional<Affine> a, std::optional<Affine> b) {
    if (!a || !b)
      return std::nullopt;
    if (op == Op::Add)
      return sum(*a, *b);
    if (op == Op::Sub)
      return sum(*a, times(*b, -1));
    if (op == Op::Mul) {
      if (a->scalar)
        return times(*b, a->c);
      if (b->scalar)
        return times(*a, b->c);
      if (a->scale == 0 && b->scale == 0) // c1 I * c2 I, elementwise
        return Affine::matrix(0, a->shift * b->shift);
      return std::nullopt;
    }
    if (b->scalar && b->c != 0) // div
      return a->scalar ? Affine::uniform(a->c / b->c) : times(*a, 1 / b->c);
    return std::nullopt;
  }

  static Affine times(Affine a, double c) {
    return a.scalar ? Affine::uniform(a.c * c) : Affine::matrix(a.scale * c, a.shift * c);
  }
  static std::optional<Affine> sum(const Affine& a, const Affine& b) {
    if (a.scalar && b.scalar)
      return Affine::uniform(a.c + b.c);
    if (a.scalar != b.scalar) { // a matrix plus a scalar: only 0 keeps it affine
      const Affine& s = a.scalar ? a : b;
      return s.c == 0 ? std::optional<Affine>(a.scalar ? b : a) : std::nullopt;
    }
    return Affine::matrix(a.scale + b.scale, a.shift + b.shift);
  }

  const ir::TensorType& type_;
  llvm::function_ref<bool(const Node&)> within_;
};

} // namespace

std::optional<ColumnOffsets> matchColumnOffsets(Value v) {
  ColumnOffsets out;
  return addColumnOffsets(out, v, 1) ? std::optional<ColumnOffsets>(out) : std::nullopt;
}

std::optional<ShiftedGram> matchShiftedGram(Value v, llvm::function_ref<bool(const Node&)> within) {
  ShiftedGramMatcher m(v.type(), within);
  std::optional<Affine> a = m.of(v);
  if (!a || a->scalar || !m.gram)
    return std::nullopt;
  return ShiftedGram{*m.gram, *m.product, a->scale, a->shift};
}

} // namespace graphc::passes
