//===- passes/Structure.cpp - Matrix structure analysis -------------------===//
//
// One forward walk over the nodes; each op has a transfer rule from its operands'
// facts to its results' facts. Implied facts (SPD => PSD => symmetric, diagonal =>
// triangular, ...) are closed in normalize() so rules only state what is new.
//
//===----------------------------------------------------------------------===//
#include "passes/Structure.h"

#include "ir/OpCases.h"
#include "ir/Printer.h"
#include "passes/Match.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace graphc::passes {
namespace {

using ir::Node;
using ir::Op;
using ir::TensorType;
using ir::Value;
using S = Structure;

constexpr uint16_t kElementFacts = S::Positive | S::NonNegative | S::Uniform;
/// Matrix facts that survive scaling by a positive number.
constexpr uint16_t kPositiveScaleInvariant =
    S::Symmetric | S::PSD | S::SPD | S::Lower | S::Upper | S::Diagonal | S::PositiveDiagonal;
/// Matrix facts that survive any elementwise map fixing zero (negation, any scaling).
constexpr uint16_t kZeroPatternFacts = S::Symmetric | S::Lower | S::Upper | S::Diagonal;

bool isSquare(const TensorType& t) {
  return t.rank() >= 2 && t.shape[t.rank() - 1] == t.shape[t.rank() - 2];
}

int64_t matrixSize(const TensorType& t) {
  return t.shape[t.rank() - 1];
}

/// Closes the facts under implication and drops matrix facts of non-square values.
Structure normalize(Structure s, const TensorType& t) {
  if (!isSquare(t)) {
    s.props &= kElementFacts;
    s.lowRank = s.lowRankPlusDiagonal = 0;
    return s;
  }
  int64_t n = matrixSize(t);
  if (s.lowRank >= n)
    s.lowRank = 0;
  if (s.lowRankPlusDiagonal >= n)
    s.lowRankPlusDiagonal = 0;
  if (s.has(S::Identity))
    s.props |= S::Diagonal | S::SPD;
  if (s.has(S::Lower | S::Upper))
    s.props |= S::Diagonal;
  if (s.has(S::Diagonal))
    s.props |= S::Symmetric | S::Lower | S::Upper;
  if (s.has(S::Diagonal | S::PositiveDiagonal))
    s.props |= S::SPD;
  if (s.lowRankPlusDiagonal > 0)
    s.props |= S::SPD;
  if (s.lowRank > 0)
    s.props |= S::PSD;
  if (s.has(S::SPD))
    s.props |= S::PSD | S::PositiveDiagonal;
  if (s.has(S::PSD))
    s.props |= S::Symmetric;
  if (s.has(S::Positive))
    s.props |= S::NonNegative;
  return s;
}

/// Facts of a matrix seen through an optional transpose.
Structure transposed(Structure s) {
  bool lower = s.has(S::Lower), upper = s.has(S::Upper);
  s.props &= ~(S::Lower | S::Upper);
  s.props |= (lower ? S::Upper : 0) | (upper ? S::Lower : 0);
  return s;
}

class Analyzer {
public:
  explicit Analyzer(std::vector<std::vector<Structure>>& facts) : facts_(facts) {}

  Structure of(Value v) const { return facts_[v.node->id()][v.index]; }

  std::vector<Structure> analyze(const Node& n) {
    std::vector<Structure> out(n.numResults());
    switch (n.op()) {
    case Op::Lu:
      out[1].props = S::Lower | S::PositiveDiagonal; // unit diagonal
      out[2].props = S::Upper;
      break;
    case Op::Qr:
      out[1].props = S::Upper;
      break;
    case Op::Matmul:
    case Op::Solve:
    case Op::Cholesky:
    case Op::TriangularSolve:
    case Op::Inverse:
    case Op::Det:
    case Op::Logdet:
    case Op::Trace:
    case Op::Syrk:
    GRAPHC_SOURCE_CASES:
    GRAPHC_ELEMENTWISE_CASES:
    GRAPHC_SHAPE_CASES:
    GRAPHC_REDUCE_CASES:
    GRAPHC_ASSUME_CASES:
    GRAPHC_COLLECTIVE_CASES:
      out[0] = single(n);
      break;
    }
    for (unsigned i = 0; i < n.numResults(); ++i)
      out[i] = normalize(out[i], n.type(i));
    return out;
  }

private:
  Structure single(const Node& n) {
    if (n.kind() == ir::OpKind::Assume)
      return assumed(n);
    switch (n.op()) {
    case Op::Full:
      return fromScalar(n.attrs().getFloat("value"), n.type());
    case Op::Constant:
      return fromLiteral(n.attrs().getFloats("value"), n.type());
    case Op::Eye:
      return {static_cast<uint16_t>(S::Identity | S::NonNegative)};
    case Op::Iota:
      return {S::NonNegative};
    case Op::BroadcastTo:
      return broadcast(n);
    case Op::Transpose:
      return transpose(n);
    case Op::Reshape:
      return {static_cast<uint16_t>(of(n.operand(0)).props & kElementFacts)};
    case Op::Add:
      return add(of(n.operand(0)), of(n.operand(1)), n);
    case Op::Sub:
      return sub(of(n.operand(0)), of(n.operand(1)));
    case Op::Mul:
      return mul(of(n.operand(0)), of(n.operand(1)));
    case Op::Div:
      return div(of(n.operand(0)), of(n.operand(1)));
    case Op::Matmul:
      return matmul(n);
    case Op::Syrk:
      return gram(matchGram(n)->rank());
    case Op::Diag:
      return diag(of(n.operand(0)));
    case Op::Tril:
      return {static_cast<uint16_t>(n.attrs().getInt("k") <= 0 ? S::Lower : 0)};
    case Op::Triu:
      return {static_cast<uint16_t>(n.attrs().getInt("k") >= 0 ? S::Upper : 0)};
    case Op::Cholesky:
      return {static_cast<uint16_t>((n.attrs().flag("upper") ? S::Upper : S::Lower) |
                                    S::PositiveDiagonal)};
    case Op::Inverse: {
      Structure a = of(n.operand(0));
      a.props &= S::Symmetric | S::SPD | S::Lower | S::Upper | S::Diagonal | S::Identity;
      return a;
    }
    case Op::Parameter:
    case Op::Pow:
    case Op::Maximum:
    case Op::Minimum:
    case Op::Atan2:
    case Op::Remainder:
    case Op::Slice:
    case Op::Concat:
    case Op::DiagPart:
    case Op::Solve:
    case Op::TriangularSolve:
    case Op::Lu:
    case Op::Qr:
    case Op::Det:
    case Op::Logdet:
    case Op::Trace:
    GRAPHC_UNARY_CASES:
    GRAPHC_LOGICAL_CASES:
    GRAPHC_COMPARE_CASES:
    GRAPHC_SELECT_CASES:
    GRAPHC_CAST_CASES:
    GRAPHC_REDUCE_CASES:
    GRAPHC_ASSUME_CASES:
    GRAPHC_COLLECTIVE_CASES:
      return elementwise(n);
    }
    ir::unknownOp();
  }

  static Structure fromScalar(double c, const TensorType& t) {
    Structure s{S::Uniform};
    if (c > 0)
      s.props |= S::Positive;
    if (c >= 0)
      s.props |= S::NonNegative;
    if (isSquare(t))
      s.props |= c == 0 ? S::Diagonal : S::Symmetric;
    return s;
  }

  static Structure fromLiteral(const std::vector<double>& xs, const TensorType& t) {
    Structure s;
    if (std::all_of(xs.begin(), xs.end(), [](double x) { return x > 0; }))
      s.props |= S::Positive;
    if (std::all_of(xs.begin(), xs.end(), [](double x) { return x >= 0; }))
      s.props |= S::NonNegative;
    if (std::all_of(xs.begin(), xs.end(), [&](double x) { return x == xs.front(); }))
      s.props |= S::Uniform;
    if (!isSquare(t) || xs.empty())
      return s;
    int64_t n = matrixSize(t);
    bool sym = true, lower = true, upper = true, posDiag = true;
    for (size_t base = 0; base < xs.size(); base += n * n)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double x = xs[base + i * n + j];
          sym &= x == xs[base + j * n + i];
          lower &= j <= i || x == 0;
          upper &= j >= i || x == 0;
          posDiag &= i != j || x > 0;
        }
    s.props |= (sym ? S::Symmetric : 0) | (lower ? S::Lower : 0) | (upper ? S::Upper : 0) |
               (posDiag ? S::PositiveDiagonal : 0);
    if (!(lower && upper)) // only diagonal literals are claimed definite
      s.props &= ~S::PositiveDiagonal;
    return s;
  }

  Structure broadcast(const Node& n) {
    Structure x = of(n.operand(0));
    const TensorType& to = n.type();
    if (broadcastKeepsMatrices(n.operand(0).type(), to))
      return x;
    Structure s{static_cast<uint16_t>(x.props & kElementFacts)};
    if (x.has(S::Uniform) && isSquare(to))
      s.props |= S::Symmetric;
    return s;
  }

  Structure transpose(const Node& n) {
    Structure x = of(n.operand(0));
    const auto& perm = n.attrs().getInts("perm");
    if (swapsMatrixAxes(perm))
      return transposed(x);
    int64_t r = static_cast<int64_t>(perm.size());
    bool keepsMatrix = r >= 2 && perm[r - 2] == r - 2 && perm[r - 1] == r - 1;
    if (!keepsMatrix)
      return {static_cast<uint16_t>(x.props & kElementFacts)};
    return x;
  }

  static Structure add(Structure a, Structure b, const Node& n) {
    Structure s;
    s.props = static_cast<uint16_t>(elementSum(a, b) |
                                    (a.props & b.props & (kZeroPatternFacts | S::PSD)));
    if ((a.has(S::PSD) && b.has(S::SPD)) || (a.has(S::SPD) && b.has(S::PSD)))
      s.props |= S::SPD;
    if (a.lowRank > 0 && b.lowRank > 0)
      s.lowRank = a.lowRank + b.lowRank;
    auto plusDiagonal = [](const Structure& lr, const Structure& d) {
      return lr.lowRank > 0 && d.has(S::Diagonal | S::SPD) ? lr.lowRank : 0;
    };
    s.lowRankPlusDiagonal = std::max(plusDiagonal(a, b), plusDiagonal(b, a));
    // A + A' is symmetric.
    bool f0, f1;
    Value x0 = peelMatrixTranspose(n.operand(0), f0), x1 = peelMatrixTranspose(n.operand(1), f1);
    if (x0 == x1 && f0 != f1)
      s.props |= S::Symmetric;
    return s;
  }

  static uint16_t elementSum(const Structure& a, const Structure& b) {
    uint16_t p = a.props & b.props & S::Uniform;
    if (a.has(S::NonNegative) && b.has(S::NonNegative))
      p |= S::NonNegative;
    if ((a.has(S::Positive) && b.has(S::NonNegative)) ||
        (a.has(S::NonNegative) && b.has(S::Positive)))
      p |= S::Positive;
    return p;
  }

  static Structure sub(Structure a, Structure b) {
    return {static_cast<uint16_t>(a.props & b.props & (kZeroPatternFacts | S::Uniform))};
  }

  /// Scaling `m` elementwise by the uniform value `c`.
  static Structure scaled(Structure m, const Structure& c) {
    Structure s = m;
    if (c.has(S::Positive)) {
      s.props &= kPositiveScaleInvariant | S::NonNegative | S::Positive | S::Uniform;
    } else if (c.has(S::NonNegative)) {
      s.props &=
          S::Symmetric | S::PSD | S::Lower | S::Upper | S::Diagonal | S::NonNegative | S::Uniform;
      s.lowRankPlusDiagonal = 0;
    } else {
      s.props &= kZeroPatternFacts | S::Uniform;
      s.lowRank = s.lowRankPlusDiagonal = 0;
    }
    return s;
  }

  static Structure mul(Structure a, Structure b) {
    Structure s;
    if (b.has(S::Uniform))
      s = scaled(a, b);
    else if (a.has(S::Uniform))
      s = scaled(b, a);
    // Zero patterns survive any elementwise product; Schur: PSD o PSD is PSD.
    s.props |= (a.props | b.props) & (S::Diagonal | S::Lower | S::Upper);
    s.props |= a.props & b.props & (S::Symmetric | S::PSD | S::Positive | S::NonNegative);
    if (a.has(S::NonNegative) && b.has(S::NonNegative))
      s.props |= S::NonNegative;
    return s;
  }

  static Structure div(Structure a, Structure b) {
    Structure s;
    if (b.has(S::Uniform | S::Positive))
      s = scaled(a, b);
    else if (b.has(S::Uniform))
      s.props = a.props & kZeroPatternFacts;
    if (a.has(S::Positive) && b.has(S::Positive))
      s.props |= S::Positive;
    if (a.has(S::NonNegative) && b.has(S::Positive))
      s.props |= S::NonNegative;
    s.props |= a.props & b.props & S::Uniform;
    return s;
  }

  Structure matmul(const Node& n) {
    Structure s;
    if (std::optional<Gram> g = matchGram(n)) // X*X' or X'*X
      s = gram(g->rank());
    Structure sa = of(n.operand(0)), sb = of(n.operand(1));
    if (n.attrs().flag("transpose_a"))
      sa = transposed(sa);
    if (n.attrs().flag("transpose_b"))
      sb = transposed(sb);
    s.props |= sa.props & sb.props & (S::Lower | S::Upper | S::Diagonal);
    return s;
  }

  /// A Gram matrix of rank <= k: PSD (normalize() drops the rank when k >= n).
  static Structure gram(int64_t k) {
    Structure s{S::PSD};
    s.lowRank = k;
    return s;
  }

  /// assume_*: the operand's facts plus the asserted one (the user's word).
  Structure assumed(const Node& n) {
    static constexpr std::pair<Op, uint16_t> kAsserted[] = {{Op::AssumeSpd, S::SPD},
                                                            {Op::AssumeSymmetric, S::Symmetric},
                                                            {Op::AssumeLower, S::Lower},
                                                            {Op::AssumeUpper, S::Upper},
                                                            {Op::AssumeDiagonal, S::Diagonal}};
    Structure s = of(n.operand(0));
    for (auto [op, fact] : kAsserted)
      if (n.op() == op)
        s.props |= fact;
    return s;
  }

  static Structure diag(const Structure& v) {
    Structure s{S::Diagonal};
    if (v.has(S::Positive))
      s.props |= S::PositiveDiagonal;
    if (v.has(S::NonNegative))
      s.props |= S::PSD;
    return s;
  }

  /// Sign facts of elementwise ops; everything else gets no facts.
  Structure elementwise(const Node& n) {
    if (!ir::isElementwise(n.kind()) || n.operands().empty())
      return {};
    Structure x = of(n.operand(0));
    uint16_t uniform = S::Uniform;
    for (Value v : n.operands())
      uniform &= of(v).props;
    Structure s{uniform};
    bool pos = x.has(S::Positive), nonneg = x.has(S::NonNegative);
    switch (n.op()) {
    case Op::Exp:
    case Op::Sigmoid:
      s.props |= S::Positive;
      break;
    case Op::Square:
    case Op::Abs:
      s.props |= pos ? S::Positive : S::NonNegative;
      break;
    case Op::Relu:
      s.props |= S::NonNegative;
      break;
    case Op::Sqrt:
    case Op::Rsqrt:
    case Op::Reciprocal:
      s.props |= pos ? S::Positive : 0;
      s.props |= nonneg && n.op() == Op::Sqrt ? S::NonNegative : 0;
      break;
    case Op::Neg:
      s.props |= x.props & kZeroPatternFacts;
      break;
    case Op::Maximum: {
      Structure y = of(n.operand(1));
      s.props |= (x.props | y.props) & (S::Positive | S::NonNegative);
      break;
    }
    case Op::Minimum:
      s.props |= x.props & of(n.operand(1)).props & (S::Positive | S::NonNegative);
      break;
    case Op::Cast:
      if (ir::isFloat(n.type().dtype))
        s.props |= x.props & (S::Positive | S::NonNegative);
      else
        s.props |= x.props & S::NonNegative;
      break;
    case Op::Sign:
    case Op::Log:
    case Op::Log1p:
    case Op::Expm1:
    case Op::Sin:
    case Op::Cos:
    case Op::Tanh:
    case Op::Erf:
    case Op::Floor:
    case Op::Ceil:
    case Op::Round:
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Pow:
    case Op::Atan2:
    case Op::Remainder:
    GRAPHC_SOURCE_CASES:
    GRAPHC_LOGICAL_CASES:
    GRAPHC_COMPARE_CASES:
    GRAPHC_SELECT_CASES:
    GRAPHC_SHAPE_CASES:
    GRAPHC_REDUCE_CASES:
    GRAPHC_LINALG_CASES:
    GRAPHC_ASSUME_CASES:
    GRAPHC_COLLECTIVE_CASES:
      break;
    }
    return s;
  }

  std::vector<std::vector<Structure>>& facts_;
};

} // namespace

std::string structureString(const Structure& s) {
  std::vector<std::string> parts;
  auto add = [&](bool cond, const char* name) {
    if (cond)
      parts.push_back(name);
  };
  add(s.has(S::Identity), "identity");
  add(!s.has(S::Identity) && s.has(S::Diagonal), "diagonal");
  add(!s.has(S::Diagonal) && s.has(S::Lower), "lower");
  add(!s.has(S::Diagonal) && s.has(S::Upper), "upper");
  add(s.has(S::SPD), "spd");
  add(!s.has(S::SPD) && s.has(S::PSD), "psd");
  add(!s.has(S::PSD) && !s.has(S::Diagonal) && s.has(S::Symmetric), "symmetric");
  add(!s.has(S::SPD) && s.has(S::PositiveDiagonal), "posdiag");
  if (s.lowRank > 0)
    parts.push_back(fmt::format("lowrank({})", s.lowRank));
  if (s.lowRankPlusDiagonal > 0)
    parts.push_back(fmt::format("lowrank({})+diag", s.lowRankPlusDiagonal));
  add(s.has(S::Positive), "positive");
  add(!s.has(S::Positive) && s.has(S::NonNegative), "nonneg");
  add(s.has(S::Uniform), "uniform");
  return fmt::format("{}", fmt::join(parts, ", "));
}

StructureMap::StructureMap(const ir::Graph& g) : facts_(g.nodes().size()) {
  Analyzer analyzer(facts_);
  for (const Node* n : g.nodes())
    facts_[n->id()] = analyzer.analyze(*n);
}

std::string printWithStructure(const ir::Graph& g) {
  StructureMap facts(g);
  return ir::printGraph(g, [&](const Node& n) {
    std::string note;
    for (unsigned i = 0; i < n.numResults(); ++i) {
      std::string s = structureString(facts.at(n, i));
      if (s.empty())
        continue;
      note += note.empty() ? "" : "; ";
      note += n.numResults() > 1 ? fmt::format("#{}: {}", i, s) : s;
    }
    return note;
  });
}

} // namespace graphc::passes
