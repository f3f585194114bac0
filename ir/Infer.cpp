//===- ir/Infer.cpp - Shape and dtype rules of every op -------------------===//
#include "ir/Infer.h"

#include "ir/OpCases.h"
#include "support/Error.h"

#include <algorithm>
#include <fmt/format.h>

namespace graphc::ir {
namespace {

/// Builds the error for a broken rule: "op(operand types): message".
class Rule {
public:
  Rule(Op op, llvm::ArrayRef<TensorType> operands) : op_(op), operands_(operands) {}

  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) const {
    std::string types;
    for (const TensorType& t : operands_)
      types += (types.empty() ? "" : ", ") + t.str();
    throw Error(fmt::format("{}({}): {}", opName(op_).str(), types,
                            fmt::format(f, std::forward<Args>(args)...)));
  }

  /// Requires `cond`, else fails with the message.
  template <typename... Args>
  void require(bool cond, fmt::format_string<Args...> f, Args&&... args) const {
    if (!cond)
      fail(f, std::forward<Args>(args)...);
  }

private:
  Op op_;
  llvm::ArrayRef<TensorType> operands_;
};

bool needsFloat(Op op) {
  switch (op) {
  case Op::Exp:
  case Op::Log:
  case Op::Log1p:
  case Op::Expm1:
  case Op::Sqrt:
  case Op::Rsqrt:
  case Op::Reciprocal:
  case Op::Sin:
  case Op::Cos:
  case Op::Tanh:
  case Op::Sigmoid:
  case Op::Erf:
  case Op::Floor:
  case Op::Ceil:
  case Op::Round:
  case Op::Atan2:
  case Op::Mean:
  case Op::Var:
    return true;
  case Op::Neg:
  case Op::Abs:
  case Op::Sign:
  case Op::Square:
  case Op::Relu:
  case Op::Add:
  case Op::Sub:
  case Op::Mul:
  case Op::Div:
  case Op::Pow:
  case Op::Maximum:
  case Op::Minimum:
  case Op::Remainder:
  case Op::Sum:
  case Op::Max:
  case Op::Min:
  case Op::Prod:
  case Op::Argmax:
  case Op::Argmin:
  GRAPHC_SOURCE_CASES:
  GRAPHC_LOGICAL_CASES:
  GRAPHC_COMPARE_CASES:
  GRAPHC_SELECT_CASES:
  GRAPHC_CAST_CASES:
  GRAPHC_SHAPE_CASES:
  GRAPHC_LINALG_CASES:
  GRAPHC_ASSUME_CASES:
  GRAPHC_COLLECTIVE_CASES:
    return false;
  }
  ir::unknownOp();
}

/// All operands have one shape (broadcasting is explicit in the IR).
void requireSameShapes(const Rule& rule, llvm::ArrayRef<TensorType> ts) {
  for (const TensorType& t : ts)
    rule.require(t.shape == ts[0].shape,
                 "operand shapes differ; broadcast explicitly with broadcast_to");
}

/// A result type whose bytes fit in int64_t: a dense array of it has a size.
void requireBytesFit(const Rule& rule, const TensorType& t) {
  rule.require(checkedByteSize(t.dtype, t.shape).has_value(),
               "{} has too many elements (more than 2^63 bytes)", t.str());
}

/// A shape given as an attribute: no negative entries, a representable element count.
void requireValidShape(const Rule& rule, llvm::ArrayRef<int64_t> shape) {
  for (int64_t d : shape)
    rule.require(d >= 0, "negative dimension in shape {}", shapeString(shape));
  rule.require(checkedNumElements(shape).has_value(), "shape {} has too many elements",
               shapeString(shape));
}

void requireSameDType(const Rule& rule, const TensorType& a, const TensorType& b) {
  rule.require(a.dtype == b.dtype, "operand dtypes differ ({} vs {})", dtypeName(a.dtype).str(),
               dtypeName(b.dtype).str());
}

TensorType checkSource(Op op, const Rule& rule, const Attrs& attrs,
                       llvm::ArrayRef<TensorType> given) {
  rule.require(given.size() == 1, "a source op needs its result type (`: f64[2,3]`)");
  const TensorType& t = given[0];
  switch (op) {
  case Op::Constant: {
    size_t n = attrs.getFloats("value").size();
    rule.require(static_cast<int64_t>(n) == t.numel(),
                 "value has {} elements but the type {} has {}", n, t.str(), t.numel());
    break;
  }
  case Op::Iota: {
    int64_t axis = attrs.getInt("axis");
    rule.require(t.rank() >= 1 && axis >= 0 && axis < t.rank(), "axis {} is out of range for {}",
                 axis, t.str());
    rule.require(isNumeric(t.dtype), "iota needs a numeric type, not {}", t.str());
    break;
  }
  case Op::Eye:
    rule.require(t.rank() >= 2, "eye needs a type of rank >= 2, not {}", t.str());
    rule.require(isNumeric(t.dtype), "eye needs a numeric type, not {}", t.str());
    break;
  case Op::Parameter:
  case Op::Full:
  GRAPHC_ELEMENTWISE_CASES:
  GRAPHC_SHAPE_CASES:
  GRAPHC_REDUCE_CASES:
  GRAPHC_LINALG_CASES:
  GRAPHC_ASSUME_CASES:
  GRAPHC_COLLECTIVE_CASES:
    break;
  }
  for (int64_t d : t.shape)
    rule.require(d >= 0, "negative dimension in {}", t.str());
  requireBytesFit(rule, t);
  return t;
}

TensorType inferElementwise(Op op, OpKind kind, const Rule& rule, llvm::ArrayRef<TensorType> xs,
                            const Attrs& attrs) {
  requireSameShapes(rule, xs);
  const TensorType& x = xs[0];
  switch (kind) {
  case OpKind::Unary:
    rule.require(isNumeric(x.dtype), "needs a numeric operand");
    rule.require(!needsFloat(op) || isFloat(x.dtype), "needs a floating-point operand");
    return x;
  case OpKind::Binary:
    requireSameDType(rule, xs[0], xs[1]);
    rule.require(isNumeric(x.dtype), "needs numeric operands");
    rule.require(!needsFloat(op) || isFloat(x.dtype), "needs floating-point operands");
    return x;
  case OpKind::Compare:
    requireSameDType(rule, xs[0], xs[1]);
    rule.require(isNumeric(x.dtype) || op == Op::Eq || op == Op::Ne,
                 "ordering needs numeric operands");
    return TensorType(DType::Bool, x.shape);
  case OpKind::Logical:
    for (const TensorType& t : xs)
      rule.require(t.dtype == DType::Bool, "needs bool operands");
    return x;
  case OpKind::Select:
    rule.require(xs[0].dtype == DType::Bool, "the condition must be bool");
    requireSameDType(rule, xs[1], xs[2]);
    return xs[1];
  case OpKind::Cast:
    return TensorType(attrs.getDType("dtype"), x.shape);
  case OpKind::Source:
  case OpKind::Shape:
  case OpKind::Reduce:
  case OpKind::Linalg:
  case OpKind::Assume:
  case OpKind::Collective:
    break;
  }
  rule.fail("not an elementwise op");
}

TensorType inferShapeOp(Op op, const Rule& rule, llvm::ArrayRef<TensorType> xs,
                        const Attrs& attrs) {
  const TensorType& x = xs[0];
  switch (op) {
  case Op::BroadcastTo: {
    const auto& shape = attrs.getInts("shape");
    requireValidShape(rule, shape);
    auto b = broadcastShapes(x.shape, shape);
    rule.require(b && llvm::ArrayRef<int64_t>(*b) == llvm::ArrayRef<int64_t>(shape),
                 "cannot broadcast to {}", shapeString(shape));
    return TensorType(x.dtype, shape);
  }
  case Op::Reshape: {
    const auto& shape = attrs.getInts("shape");
    requireValidShape(rule, shape);
    rule.require(numElements(shape) == x.numel(), "cannot reshape {} elements to {}", x.numel(),
                 shapeString(shape));
    return TensorType(x.dtype, shape);
  }
  case Op::Transpose: {
    const auto& perm = attrs.getInts("perm");
    std::vector<int64_t> sorted(perm);
    std::sort(sorted.begin(), sorted.end());
    bool isPerm = static_cast<int64_t>(perm.size()) == x.rank();
    for (size_t i = 0; isPerm && i < sorted.size(); ++i)
      isPerm = sorted[i] == static_cast<int64_t>(i);
    rule.require(isPerm, "perm={} is not a permutation of {} axes", shapeString(perm), x.rank());
    Shape out;
    for (int64_t p : perm)
      out.push_back(x.shape[p]);
    return TensorType(x.dtype, out);
  }
  case Op::Slice: {
    const auto& start = attrs.getInts("start");
    const auto& stop = attrs.getInts("stop");
    std::vector<int64_t> stride = attrs.getInts("stride");
    if (stride.empty())
      stride.assign(x.rank(), 1);
    rule.require(static_cast<int64_t>(start.size()) == x.rank() &&
                     static_cast<int64_t>(stop.size()) == x.rank() &&
                     static_cast<int64_t>(stride.size()) == x.rank(),
                 "start, stop and stride need {} entries", x.rank());
    Shape out;
    for (int64_t i = 0; i < x.rank(); ++i) {
      rule.require(0 <= start[i] && start[i] <= stop[i] && stop[i] <= x.shape[i],
                   "axis {}: need 0 <= start <= stop <= {}, got {}:{}", i, x.shape[i], start[i],
                   stop[i]);
      rule.require(stride[i] >= 1, "axis {}: stride must be >= 1, got {}", i, stride[i]);
      out.push_back((stop[i] - start[i] + stride[i] - 1) / stride[i]);
    }
    return TensorType(x.dtype, out);
  }
  case Op::Concat: {
    int64_t axis = attrs.getInt("axis");
    rule.require(axis >= 0 && axis < x.rank(), "axis {} is out of range for rank {}", axis,
                 x.rank());
    TensorType out = x;
    out.shape[axis] = 0;
    for (const TensorType& t : xs) {
      requireSameDType(rule, x, t);
      rule.require(t.rank() == x.rank(), "operand ranks differ");
      for (int64_t i = 0; i < x.rank(); ++i)
        rule.require(i == axis || t.shape[i] == x.shape[i], "operand shapes differ outside axis {}",
                     axis);
      out.shape[axis] += t.shape[axis];
    }
    return out;
  }
  case Op::Diag: {
    rule.require(x.rank() >= 1, "needs a vector (rank >= 1)");
    TensorType out = x;
    out.shape.push_back(x.shape.back());
    return out;
  }
  case Op::DiagPart: {
    rule.require(x.rank() >= 2, "needs a matrix (rank >= 2)");
    TensorType out = x;
    out.shape.pop_back();
    out.shape.back() = std::min(x.shape[x.rank() - 2], x.shape[x.rank() - 1]);
    return out;
  }
  case Op::Triu:
  case Op::Tril:
    rule.require(x.rank() >= 2, "needs a matrix (rank >= 2)");
    return x;
  GRAPHC_ALL_BUT_SHAPE_CASES:
    break;
  }
  rule.fail("not a shape op");
}

TensorType inferReduce(Op op, const Rule& rule, const TensorType& x, const Attrs& attrs) {
  const auto& axes = attrs.getInts("axes");
  rule.require(isNumeric(x.dtype), "needs a numeric operand");
  rule.require(!needsFloat(op) || isFloat(x.dtype), "needs a floating-point operand");
  for (size_t i = 0; i < axes.size(); ++i) {
    rule.require(axes[i] >= 0 && axes[i] < x.rank(), "axis {} is out of range for rank {}", axes[i],
                 x.rank());
    rule.require(i == 0 || axes[i] > axes[i - 1], "axes={} must be strictly increasing",
                 shapeString(axes));
  }
  bool keep = attrs.flag("keepdims");
  Shape out;
  for (int64_t i = 0; i < x.rank(); ++i) {
    bool reduced = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (!reduced)
      out.push_back(x.shape[i]);
    else if (keep)
      out.push_back(1);
  }
  DType dt = (op == Op::Argmax || op == Op::Argmin) ? DType::I64 : x.dtype;
  return TensorType(dt, out);
}

/// Batch dimensions: all but the last two.
llvm::ArrayRef<int64_t> batchDims(const TensorType& t) {
  return llvm::ArrayRef<int64_t>(t.shape).drop_back(2);
}
int64_t rows(const TensorType& t) {
  return t.shape[t.rank() - 2];
}
int64_t cols(const TensorType& t) {
  return t.shape[t.rank() - 1];
}

TensorType withMatrix(const TensorType& like, int64_t m, int64_t n) {
  TensorType t(like.dtype, batchDims(like));
  t.shape.push_back(m);
  t.shape.push_back(n);
  return t;
}

TypeList inferLinalg(Op op, const Rule& rule, llvm::ArrayRef<TensorType> xs, const Attrs& attrs) {
  const TensorType& a = xs[0];
  rule.require(a.rank() >= 2, "needs matrices (rank >= 2)");
  if (op != Op::Trace)
    rule.require(isFloat(a.dtype), "needs floating-point matrices");
  if (xs.size() == 2) {
    const TensorType& b = xs[1];
    rule.require(b.rank() == a.rank(), "operand ranks differ");
    requireSameDType(rule, a, b);
    rule.require(batchDims(a) == batchDims(b), "batch dimensions differ");
  }
  bool square = rows(a) == cols(a);
  switch (op) {
  case Op::Matmul: {
    const TensorType& b = xs[1];
    bool ta = attrs.flag("transpose_a"), tb = attrs.flag("transpose_b");
    int64_t m = ta ? cols(a) : rows(a), ka = ta ? rows(a) : cols(a);
    int64_t kb = tb ? cols(b) : rows(b), n = tb ? rows(b) : cols(b);
    rule.require(ka == kb, "contracted dimensions differ ({} vs {})", ka, kb);
    return {withMatrix(a, m, n)};
  }
  case Op::Solve:
    rule.require(square, "the matrix must be square");
    rule.require(rows(xs[1]) == rows(a), "right-hand side has {} rows, the matrix {}", rows(xs[1]),
                 rows(a));
    return {xs[1]};
  case Op::TriangularSolve: {
    rule.require(square, "the matrix must be square");
    int64_t n = attrs.flag("right_side") ? cols(xs[1]) : rows(xs[1]);
    rule.require(n == rows(a), "right-hand side dimension {} does not match the matrix's {}", n,
                 rows(a));
    return {xs[1]};
  }
  case Op::Cholesky:
  case Op::Inverse:
    rule.require(square, "the matrix must be square");
    return {a};
  case Op::Lu:
    rule.require(square, "the matrix must be square");
    return {a, a, a};
  case Op::Qr: {
    int64_t k = std::min(rows(a), cols(a));
    return {withMatrix(a, rows(a), k), withMatrix(a, k, cols(a))};
  }
  case Op::Det:
  case Op::Logdet:
    rule.require(square, "the matrix must be square");
    return {TensorType(a.dtype, batchDims(a))};
  case Op::Trace:
    rule.require(isNumeric(a.dtype), "needs a numeric matrix");
    return {TensorType(a.dtype, batchDims(a))};
  case Op::Syrk: {
    int64_t n = attrs.flag("transpose") ? cols(a) : rows(a);
    return {withMatrix(a, n, n)};
  }
  GRAPHC_ALL_BUT_LINALG_CASES:
    break;
  }
  rule.fail("not a linear-algebra op");
}

/// assume_*: the identity on square numeric matrices.
TensorType inferAssume(const Rule& rule, const TensorType& a) {
  rule.require(a.rank() >= 2, "needs matrices (rank >= 2)");
  rule.require(isNumeric(a.dtype), "needs a numeric matrix");
  rule.require(rows(a) == cols(a), "the matrix must be square");
  return a;
}

TensorType inferCollective(const Rule& rule, const TensorType& x, const Attrs& attrs) {
  rule.require(isNumeric(x.dtype), "needs a numeric operand");
  const std::string& reduction = attrs.getStr("reduction");
  rule.require(reduction.empty() || reduction == "sum" || reduction == "max" || reduction == "min",
               "reduction must be \"sum\", \"max\" or \"min\", not \"{}\"", reduction);
  return x;
}

} // namespace

std::optional<Shape> broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void checkAttrs(Op op, const Attrs& attrs) {
  const OpInfo& info = opInfo(op);
  for (const Attr& a : attrs.entries()) {
    const AttrSpec* spec = findAttrSpec(op, a.name);
    if (!spec)
      throw Error(fmt::format("{}: unknown attribute '{}'", info.name.str(), a.name));
    if (spec->kind != kindOf(a.value))
      throw Error(fmt::format("{}: attribute '{}' must be of kind {}, got {}", info.name.str(),
                              a.name, attrKindName(spec->kind).str(),
                              attrKindName(kindOf(a.value)).str()));
  }
  for (const AttrSpec& spec : info.attrs)
    if (!spec.optional && spec.kind != AttrKind::Bool && !attrs.has(spec.name))
      throw Error(fmt::format("{}: missing attribute '{}' ({})", info.name.str(), spec.name.str(),
                              attrKindName(spec.kind).str()));
}

TypeList inferTypes(Op op, llvm::ArrayRef<TensorType> operands, const Attrs& attrs,
                    llvm::ArrayRef<TensorType> given) {
  const OpInfo& info = opInfo(op);
  Rule rule(op, operands);
  if (info.numOperands >= 0)
    rule.require(static_cast<int>(operands.size()) == info.numOperands,
                 "expects {} operand(s), got {}", info.numOperands, operands.size());
  else
    rule.require(!operands.empty(), "expects at least one operand");
  checkAttrs(op, attrs);

  TypeList out;
  switch (info.kind) {
  case OpKind::Source:
    out = {checkSource(op, rule, attrs, given)};
    return out;
  case OpKind::Shape:
    out = {inferShapeOp(op, rule, operands, attrs)};
    break;
  case OpKind::Reduce:
    out = {inferReduce(op, rule, operands[0], attrs)};
    break;
  case OpKind::Linalg:
    out = inferLinalg(op, rule, operands, attrs);
    break;
  case OpKind::Assume:
    out = {inferAssume(rule, operands[0])};
    break;
  case OpKind::Collective:
    out = {inferCollective(rule, operands[0], attrs)};
    break;
  case OpKind::Unary:
  case OpKind::Logical:
  case OpKind::Binary:
  case OpKind::Compare:
  case OpKind::Select:
  case OpKind::Cast:
    out = {inferElementwise(op, info.kind, rule, operands, attrs)};
    break;
  }
  for (const TensorType& t : out)
    requireBytesFit(rule, t);
  if (!given.empty()) {
    rule.require(given.size() == out.size(), "has {} result(s), {} type(s) given", out.size(),
                 given.size());
    for (size_t i = 0; i < out.size(); ++i)
      rule.require(given[i] == out[i], "result type is {}, but {} was given", out[i].str(),
                   given[i].str());
  }
  return out;
}

} // namespace graphc::ir
