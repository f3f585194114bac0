//===- tests/support/RandomGraph.cpp - Random valid graphs ----------------===//
//
// One GraphBuilder per graph keeps a pool of the values built so far. For each op
// drawn it picks operands of fitting types from the pool, or makes fresh ones
// (parameters, full, constant, iota, eye), then calls Graph::create, which checks
// the typing rules: a generator bug shows up as a graphc::Error.
//
//===----------------------------------------------------------------------===//
#include "support/RandomGraph.h"

#include "ir/Infer.h"
#include "ir/OpCases.h"

#include <algorithm>
#include <fmt/format.h>
#include <functional>
#include <limits>
#include <numeric>
#include <set>

namespace graphc::testing {
namespace {

using namespace graphc::ir;

class GraphBuilder {
public:
  GraphBuilder(Graph& g, std::mt19937_64& rng, const RandomGraphOptions& opts,
               std::map<Op, unsigned>& counts)
      : g_(g), rng_(rng), opts_(opts), counts_(counts) {}

  void addOp(Op op);
  void addOutputs();

private:
  // --- random numbers --------------------------------------------------------
  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool coin(double p = 0.5) { return std::bernoulli_distribution(p)(rng_); }
  /// A dimension in [1, maxDim]; with `bounded`, 1 only now and then (unit axes
  /// make reductions and comparisons of single elements).
  int64_t dim() {
    if (opts_.bounded && opts_.maxDim > 1 && !coin(0.15))
      return uniform(2, opts_.maxDim);
    return uniform(1, opts_.maxDim);
  }
  template <typename T> const T& choose(const std::vector<T>& xs) {
    return xs[static_cast<size_t>(uniform(0, static_cast<int64_t>(xs.size()) - 1))];
  }

  double randomDouble() {
    if (opts_.bounded) // magnitude in [1, 2], either sign (no 0 when cast to an integer)
      return (coin() ? 1 : -1) * std::uniform_real_distribution<double>(1, 2)(rng_);
    switch (uniform(0, 5)) {
    case 0:
      return static_cast<double>(uniform(-3, 3));
    case 1:
      return std::ldexp(static_cast<double>(uniform(-1000, 1000)),
                        static_cast<int>(uniform(-8, 2)));
    case 2:
      return std::uniform_real_distribution<double>(-1e6, 1e6)(rng_);
    case 3:
      return std::exp(std::uniform_real_distribution<double>(-700, 700)(rng_));
    case 4:
      return choose(std::vector<double>{std::numeric_limits<double>::infinity(),
                                        -std::numeric_limits<double>::infinity(),
                                        std::numeric_limits<double>::quiet_NaN(), -0.0,
                                        std::numeric_limits<double>::denorm_min()});
    default:
      return std::uniform_real_distribution<double>(0, 1)(rng_);
    }
  }

  DType randomDType(bool numeric) {
    if (opts_.floatOnly)
      return coin() ? DType::F32 : DType::F64;
    std::vector<DType> ts(std::begin(kAllDTypes), std::end(kAllDTypes));
    if (numeric)
      ts.erase(ts.begin());
    return choose(ts);
  }

  Shape randomShape(unsigned minRank, unsigned maxRank) {
    Shape s;
    int64_t rank = uniform(minRank, std::max(minRank, maxRank));
    for (int64_t i = 0; i < rank; ++i)
      s.push_back(dim());
    return s;
  }

  TensorType randomType(unsigned minRank = 0, bool numeric = false) {
    return TensorType(randomDType(numeric), randomShape(minRank, opts_.maxRank));
  }

  // --- building --------------------------------------------------------------
  Node* create(Op op, llvm::ArrayRef<Value> operands, Attrs attrs = {},
               llvm::ArrayRef<TensorType> types = {}) {
    ++counts_[op];
    addSomeFlags(op, operands, attrs, types);
    std::string name;
    if (opts_.nameNodes && coin(0.3))
      name = choose(std::vector<std::string>{"a", "b", "tmp_1", "x.y", "v"});
    Node* n = g_.create(op, operands, attrs, types, {}, name);
    for (Value v : operands)
      used_.insert({v.node, v.index});
    for (unsigned i = 0; i < n->numResults(); ++i)
      if (!opts_.bounded || std::find(pool_.begin(), pool_.end(), n->result(i)) == pool_.end())
        pool_.push_back(n->result(i)); // (bounded: once, though hash-consing may return it)
    return n;
  }

  /// Sets some of the op's optional flags that leave the result types unchanged, so
  /// flags the generator does not know about (yet) are exercised too.
  void addSomeFlags(Op op, llvm::ArrayRef<Value> operands, Attrs& attrs,
                    llvm::ArrayRef<TensorType> types) {
    llvm::SmallVector<TensorType, 4> in;
    for (Value v : operands)
      in.push_back(v.type());
    for (const AttrSpec& spec : opInfo(op).attrs) {
      if (spec.kind != AttrKind::Bool || attrs.has(spec.name) || !coin(0.3))
        continue;
      Attrs more = attrs;
      more.set(spec.name, true);
      try {
        if (inferTypes(op, in, more, types) == inferTypes(op, in, attrs, types))
          attrs = std::move(more);
      } catch (const Error&) {
      }
    }
  }

  Value parameter(const TensorType& t) {
    ++counts_[Op::Parameter];
    Value v = g_.addParameter(fmt::format("p{}", g_.params().size()), t);
    pool_.push_back(v);
    return v;
  }

  /// A fresh value of type `t`, from a parameter or a source op.
  Value fresh(const TensorType& t) {
    if (g_.params().size() < opts_.maxParams && coin(0.6))
      return parameter(t);
    std::vector<Op> ops = {Op::Full};
    if (t.numel() <= 16)
      ops.push_back(Op::Constant);
    if (isNumeric(t.dtype) && t.rank() >= 1)
      ops.push_back(Op::Iota);
    if (isNumeric(t.dtype) && t.rank() >= 2)
      ops.push_back(Op::Eye);
    return source(choose(ops), t);
  }

  Value source(Op op, const TensorType& t) {
    Attrs attrs;
    if (op == Op::Full)
      attrs.set("value", randomDouble());
    if (op == Op::Constant) {
      std::vector<double> xs;
      for (int64_t i = 0; i < t.numel(); ++i)
        xs.push_back(randomDouble());
      attrs.set("value", xs);
    }
    if (op == Op::Iota)
      attrs.set("axis", someAxis(t));
    return create(op, {}, attrs, {t})->result();
  }

  /// A pool value satisfying `pred`, or an invalid Value.
  Value pick(const std::function<bool(const TensorType&)>& pred) {
    std::vector<Value> fits;
    for (Value v : pool_)
      if (pred(v.type()))
        fits.push_back(v);
    if (fits.empty() || coin(0.15))
      return {};
    if (opts_.bounded && coin(0.5)) // chains: the newest value that fits
      return fits.back();
    return choose(fits);
  }

  /// A pool value satisfying `pred`, else a fresh one of type `make()`.
  Value pickOr(const std::function<bool(const TensorType&)>& pred,
               const std::function<TensorType()>& make) {
    Value v = pick(pred);
    return v ? v : fresh(make());
  }

  /// A value of exactly type `t`.
  Value ofType(const TensorType& t) {
    return pickOr([&](const TensorType& u) { return u == t; }, [&] { return t; });
  }

  /// A second operand of `a`'s type: with `bounded`, another value than `a` where
  /// the pool has one (a - a, a < a and select(c, a, a) are trivial).
  Value secondOperand(Value a) {
    if (!opts_.bounded)
      return ofType(a.type());
    std::vector<Value> others;
    for (Value v : pool_)
      if (v != a && v.type() == a.type())
        others.push_back(v);
    return others.empty() || coin(0.15) ? fresh(a.type()) : choose(others);
  }

  /// With `bounded`, tanh(x) for a float x: what exp and divisors are built on.
  Value squashed(Value x) {
    if (!opts_.bounded || !isFloat(x.type().dtype))
      return x;
    return create(Op::Tanh, {x})->result();
  }

  /// An axis of `t` longer than 1 when `bounded` and there is one, else any axis.
  int64_t someAxis(const TensorType& t) {
    std::vector<int64_t> longer;
    for (int64_t i = 0; i < t.rank(); ++i)
      if (t.shape[i] > 1)
        longer.push_back(i);
    return opts_.bounded && !longer.empty() ? choose(longer) : uniform(0, t.rank() - 1);
  }

  /// True when the typing rules accept op(types){attrs}.
  static bool accepts(Op op, llvm::ArrayRef<TensorType> types, const Attrs& attrs = {}) {
    try {
      inferTypes(op, types, attrs);
      return true;
    } catch (const Error&) {
      return false;
    }
  }

  /// A floating-point matrix (rank 2, or 3 with a batch axis), square when asked.
  Value matrix(bool square, bool numericOk = false) {
    auto fits = [&](const TensorType& t) {
      return t.rank() >= 2 && t.rank() <= 3 &&
             (isFloat(t.dtype) || (numericOk && isNumeric(t.dtype))) &&
             (!square || t.shape[t.rank() - 1] == t.shape[t.rank() - 2]);
    };
    return pickOr(fits, [&] {
      Shape s = randomShape(0, 1);
      int64_t m = dim();
      s.push_back(m);
      s.push_back(square ? m : dim());
      return TensorType(coin() ? DType::F32 : DType::F64, s);
    });
  }

  static TensorType withLastTwo(const TensorType& like, int64_t m, int64_t n) {
    TensorType t(like.dtype, llvm::ArrayRef<int64_t>(like.shape).drop_back(2));
    t.shape.push_back(m);
    t.shape.push_back(n);
    return t;
  }

  void addElementwise(Op op, OpKind kind);
  void addShape(Op op);
  void addReduce(Op op);
  void addLinalg(Op op);

  Graph& g_;
  std::mt19937_64& rng_;
  const RandomGraphOptions& opts_;
  std::map<Op, unsigned>& counts_;
  std::vector<Value> pool_;
  std::set<std::pair<const Node*, unsigned>> used_; ///< values some node reads
};

void GraphBuilder::addElementwise(Op op, OpKind kind) {
  switch (kind) {
  case OpKind::Unary:
  case OpKind::Binary:
  case OpKind::Compare: {
    unsigned arity = kind == OpKind::Unary ? 1 : 2;
    // With `bounded`, exp and div take floats: their operand and divisor are squashed.
    bool floatsOnly = opts_.bounded && (op == Op::Exp || op == Op::Div);
    Value a = pickOr(
        [&](const TensorType& t) {
          return (!floatsOnly || isFloat(t.dtype)) &&
                 accepts(op, llvm::SmallVector<TensorType, 2>(arity, t));
        },
        [&] {
          return TensorType(coin() ? DType::F32 : DType::F64, randomShape(0, opts_.maxRank));
        });
    if (arity == 1)
      create(op, {op == Op::Exp ? squashed(a) : a});
    else if (op == Op::Div && opts_.bounded) // a / exp(tanh(b)): a divisor in [1/e, e]
      create(op, {a, create(Op::Exp, {squashed(secondOperand(a))})->result()});
    else
      create(op, {a, secondOperand(a)});
    return;
  }
  case OpKind::Logical: {
    auto isBool = [](const TensorType& t) { return t.dtype == DType::Bool; };
    auto boolType = [&] { return TensorType(DType::Bool, randomShape(0, opts_.maxRank)); };
    Value a = pickOr(isBool, boolType);
    if (op == Op::Not)
      create(op, {a});
    else
      create(op, {a, ofType(a.type())});
    return;
  }
  case OpKind::Select: {
    Value c = pickOr([](const TensorType& t) { return t.dtype == DType::Bool; },
                     [&] { return TensorType(DType::Bool, randomShape(0, opts_.maxRank)); });
    Value a = pickOr([&](const TensorType& t) { return t.shape == c.type().shape; },
                     [&] { return TensorType(randomDType(false), c.type().shape); });
    create(op, {c, a, secondOperand(a)});
    return;
  }
  case OpKind::Cast: {
    Value x = pickOr([](const TensorType&) { return true; }, [&] { return randomType(); });
    create(op, {x}, Attrs{{"dtype", randomDType(false)}});
    return;
  }
  case OpKind::Source:
  case OpKind::Shape:
  case OpKind::Reduce:
  case OpKind::Linalg:
  case OpKind::Assume:
  case OpKind::Collective:
    break;
  }
  throw Error(fmt::format("random graphs: no rule for elementwise op {}", opName(op).str()));
}

void GraphBuilder::addShape(Op op) {
  auto any = [](const TensorType&) { return true; };
  auto rankAtLeast = [](int64_t r) { return [r](const TensorType& t) { return t.rank() >= r; }; };
  switch (op) {
  case Op::BroadcastTo: {
    Value x =
        pickOr([](const TensorType& t) { return t.rank() <= 3; }, [&] { return randomType(); });
    std::vector<int64_t> shape;
    if (coin(0.3))
      shape.push_back(dim());
    for (int64_t d : x.type().shape)
      shape.push_back(d == 1 && coin() ? dim() : d);
    create(op, {x}, Attrs{{"shape", shape}});
    return;
  }
  case Op::Reshape: {
    Value x = pickOr(any, [&] { return randomType(); });
    std::vector<int64_t> shape(x.type().shape.begin(), x.type().shape.end());
    switch (uniform(0, 3)) {
    case 0:
      shape = {x.type().numel()};
      break;
    case 1:
      shape.insert(shape.begin() + uniform(0, static_cast<int64_t>(shape.size())), 1);
      break;
    case 2:
      if (shape.size() >= 2) {
        size_t i = static_cast<size_t>(uniform(0, static_cast<int64_t>(shape.size()) - 2));
        shape[i] *= shape[i + 1];
        shape.erase(shape.begin() + i + 1);
      }
      break;
    default:
      std::reverse(shape.begin(), shape.end());
      break;
    }
    create(op, {x}, Attrs{{"shape", shape}});
    return;
  }
  case Op::Transpose: {
    Value x = pickOr(any, [&] { return randomType(); });
    std::vector<int64_t> perm(x.type().rank());
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng_);
    create(op, {x}, Attrs{{"perm", perm}});
    return;
  }
  case Op::Slice: {
    Value x = pickOr(any, [&] { return randomType(); });
    std::vector<int64_t> start, stop, stride;
    for (int64_t d : x.type().shape) {
      int64_t a = uniform(0, d), b = uniform(0, d);
      if (opts_.bounded) // not empty
        a = uniform(0, d - 1), b = uniform(a + 1, d);
      start.push_back(std::min(a, b));
      stop.push_back(std::max(a, b));
      stride.push_back(uniform(1, 3));
    }
    Attrs attrs{{"start", start}, {"stop", stop}};
    if (coin())
      attrs.set("stride", stride);
    create(op, {x}, attrs);
    return;
  }
  case Op::Concat: {
    Value x = pickOr(rankAtLeast(1), [&] { return randomType(1); });
    int64_t axis = uniform(0, x.type().rank() - 1);
    llvm::SmallVector<Value, 4> operands{x};
    for (int64_t i = uniform(0, 2); i > 0; --i) {
      TensorType t = x.type();
      t.shape[axis] = dim();
      operands.push_back(ofType(t));
    }
    create(op, operands, Attrs{{"axis", axis}});
    return;
  }
  case Op::Diag: {
    Value x = pickOr([](const TensorType& t) { return t.rank() >= 1 && t.rank() <= 2; },
                     [&] { return randomType(1); });
    create(op, {x});
    return;
  }
  case Op::DiagPart:
  case Op::Triu:
  case Op::Tril: {
    Value x = pickOr(rankAtLeast(2), [&] { return randomType(2); });
    Attrs attrs;
    if (op != Op::DiagPart && coin())
      attrs.set("k", uniform(-2, 2));
    create(op, {x}, attrs);
    return;
  }
  GRAPHC_ALL_BUT_SHAPE_CASES:
    break;
  }
  throw Error(fmt::format("random graphs: no rule for shape op {}", opName(op).str()));
}

void GraphBuilder::addReduce(Op op) {
  Attrs probe{{"axes", std::vector<int64_t>{}}};
  // With `bounded`, a variance or an arg-reduction reduces an axis longer than 1
  // (else it is 0 everywhere).
  bool trivialIfShort = op == Op::Var || op == Op::Argmin || op == Op::Argmax;
  bool needsLongAxis = opts_.bounded && trivialIfShort;
  auto hasLongAxis = [](const TensorType& t) {
    return std::any_of(t.shape.begin(), t.shape.end(), [](int64_t d) { return d > 1; });
  };
  Value x = pickOr(
      [&](const TensorType& t) {
        return (!needsLongAxis || hasLongAxis(t)) && accepts(op, {t}, probe);
      },
      [&] {
        Shape shape = randomShape(needsLongAxis ? 1 : 0, opts_.maxRank);
        if (needsLongAxis && !hasLongAxis(TensorType(DType::F64, shape)))
          shape.back() = std::max<int64_t>(2, opts_.maxDim);
        return TensorType(coin() ? DType::F32 : DType::F64, shape);
      });
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < x.type().rank(); ++i)
    if (coin())
      axes.push_back(i);
  if (needsLongAxis && x.type().rank() > 0) {
    int64_t axis = someAxis(x.type());
    if (std::find(axes.begin(), axes.end(), axis) == axes.end())
      axes.insert(std::upper_bound(axes.begin(), axes.end(), axis), axis);
  }
  Attrs attrs{{"axes", axes}};
  if (coin())
    attrs.set("keepdims", true);
  create(op, {x}, attrs);
}

void GraphBuilder::addLinalg(Op op) {
  auto rows = [](const TensorType& t) { return t.shape[t.rank() - 2]; };
  auto cols = [](const TensorType& t) { return t.shape[t.rank() - 1]; };
  switch (op) {
  case Op::Matmul: {
    Value a = matrix(false);
    bool ta = coin(), tb = coin();
    int64_t k = ta ? rows(a.type()) : cols(a.type()), n = dim();
    Value b = ofType(withLastTwo(a.type(), tb ? n : k, tb ? k : n));
    Attrs attrs;
    attrs.set("transpose_a", ta).set("transpose_b", tb);
    create(op, {a, b}, attrs);
    return;
  }
  case Op::Solve:
  case Op::TriangularSolve: {
    Value a = matrix(true);
    int64_t n = rows(a.type()), r = dim();
    bool right = op == Op::TriangularSolve && coin();
    Value b = ofType(withLastTwo(a.type(), right ? r : n, right ? n : r));
    Attrs attrs;
    if (op == Op::TriangularSolve)
      attrs.set("lower", coin())
          .set("right_side", right)
          .set("transpose_a", coin())
          .set("unit_diagonal", coin());
    create(op, {a, b}, attrs);
    return;
  }
  case Op::Cholesky:
  case Op::Inverse:
  case Op::Lu:
  case Op::Det:
  case Op::Logdet: {
    Attrs attrs;
    if (op == Op::Cholesky)
      attrs.set("upper", coin());
    create(op, {matrix(true)}, attrs);
    return;
  }
  case Op::Qr:
    create(op, {matrix(false)});
    return;
  case Op::Syrk: {
    Attrs attrs;
    if (coin())
      attrs.set("transpose", true);
    create(op, {matrix(false)}, attrs);
    return;
  }
  case Op::Trace:
    create(op, {matrix(false, /*numericOk=*/true)});
    return;
  GRAPHC_ALL_BUT_LINALG_CASES:
    break;
  }
  throw Error(fmt::format("random graphs: no rule for linalg op {}", opName(op).str()));
}

void GraphBuilder::addOp(Op op) {
  OpKind kind = opInfo(op).kind;
  if (kind == OpKind::Source) {
    if (op == Op::Parameter) {
      if (g_.params().size() < opts_.maxParams)
        parameter(randomType());
      return;
    }
    TensorType t = randomType(op == Op::Iota  ? 1
                              : op == Op::Eye ? 2
                                              : 0,
                              op == Op::Iota || op == Op::Eye);
    while (op == Op::Constant && t.numel() > 16)
      t.shape.pop_back();
    source(op, t);
    return;
  }
  if (isElementwise(kind))
    return addElementwise(op, kind);
  if (kind == OpKind::Shape)
    return addShape(op);
  if (kind == OpKind::Reduce)
    return addReduce(op);
  if (kind == OpKind::Linalg)
    return addLinalg(op);
  if (kind == OpKind::Assume) {
    create(op, {matrix(true, /*numericOk=*/true)});
    return;
  }
  if (kind == OpKind::Collective) { // one rank: the identity; the sum, which has a derivative
    Value x = pickOr([](const TensorType& t) { return isNumeric(t.dtype); },
                     [&] { return randomType(0, /*numeric=*/true); });
    create(op, {x});
    return;
  }
  throw Error(fmt::format("random graphs: no rule for op {}", opName(op).str()));
}

void GraphBuilder::addOutputs() {
  if (pool_.empty())
    fresh(randomType());
  if (opts_.bounded) { // the newest values no node reads: most of the graph is live
    unsigned n = 0;
    for (auto it = pool_.rbegin(); it != pool_.rend() && n < opts_.maxOutputs; ++it)
      if (!used_.count({it->node, it->index}) && it->node->op() != Op::Parameter)
        g_.addOutput(*it), ++n;
    if (n == 0)
      g_.addOutput(pool_.back());
    return;
  }
  g_.addOutput(pool_.back());
  for (int64_t i = uniform(0, opts_.maxOutputs - 1); i > 0; --i)
    g_.addOutput(choose(pool_));
}

} // namespace

RandomGraphGenerator::RandomGraphGenerator(uint64_t seed, RandomGraphOptions options)
    : rng_(seed), options_(std::move(options)) {
  if (options_.ops.empty())
    for (const ir::OpInfo& info : ir::allOps())
      options_.ops.push_back(info.op);
}

std::unique_ptr<ir::Graph> RandomGraphGenerator::generate(const std::string& name) {
  auto g = std::make_unique<ir::Graph>(name);
  GraphBuilder b(*g, rng_, options_, counts_);
  for (unsigned i = 0; i < options_.numNodes; ++i)
    b.addOp(options_.ops[std::uniform_int_distribution<size_t>(0, options_.ops.size() - 1)(rng_)]);
  b.addOutputs();
  return g;
}

} // namespace graphc::testing
