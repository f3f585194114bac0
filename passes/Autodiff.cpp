//===- passes/Autodiff.cpp - The rule table and the derivative builder -----===//
//
// One entry per op, in the order of ir/Ops.def; a static_assert checks the order
// and that no op is missing. Sources, comparisons, logical ops, floor/ceil/round/
// sign and argmax/argmin have a zero derivative (jvpZero); the table is the place
// to read which op gets which rule.
//
//===----------------------------------------------------------------------===//
#include "passes/Autodiff.h"

#include "passes/Match.h"

#include <array>
#include <fmt/format.h>

namespace graphc::passes {

using ir::Attrs;
using ir::Op;
using ir::Value;
using namespace rules;

namespace {

constexpr DiffRule kRules[] = {
    {Op::Parameter, jvpZero, nullptr},
    {Op::Constant, jvpZero, nullptr},
    {Op::Full, jvpZero, nullptr},
    {Op::Iota, jvpZero, nullptr},
    {Op::Eye, jvpZero, nullptr},

    {Op::Neg, jvpLinear, transposeNeg},
    {Op::Abs, jvpUnary, nullptr},
    {Op::Sign, jvpZero, nullptr},
    {Op::Exp, jvpUnary, nullptr},
    {Op::Log, jvpUnary, nullptr},
    {Op::Log1p, jvpUnary, nullptr},
    {Op::Expm1, jvpUnary, nullptr},
    {Op::Sqrt, jvpUnary, nullptr},
    {Op::Rsqrt, jvpUnary, nullptr},
    {Op::Square, jvpUnary, nullptr},
    {Op::Reciprocal, jvpUnary, nullptr},
    {Op::Sin, jvpUnary, nullptr},
    {Op::Cos, jvpUnary, nullptr},
    {Op::Tanh, jvpUnary, nullptr},
    {Op::Sigmoid, jvpUnary, nullptr},
    {Op::Relu, jvpUnary, nullptr},
    {Op::Erf, jvpUnary, nullptr},
    {Op::Floor, jvpZero, nullptr},
    {Op::Ceil, jvpZero, nullptr},
    {Op::Round, jvpZero, nullptr},
    {Op::Not, jvpZero, nullptr},

    {Op::Add, jvpLinear, transposeAddSub},
    {Op::Sub, jvpLinear, transposeAddSub},
    {Op::Mul, jvpBinary, transposeMulDiv},
    {Op::Div, jvpBinary, transposeMulDiv},
    {Op::Pow, jvpBinary, nullptr},
    {Op::Maximum, jvpBinary, nullptr},
    {Op::Minimum, jvpBinary, nullptr},
    {Op::Atan2, jvpBinary, nullptr},
    {Op::Remainder, jvpBinary, nullptr},
    {Op::Eq, jvpZero, nullptr},
    {Op::Ne, jvpZero, nullptr},
    {Op::Lt, jvpZero, nullptr},
    {Op::Le, jvpZero, nullptr},
    {Op::Gt, jvpZero, nullptr},
    {Op::Ge, jvpZero, nullptr},
    {Op::And, jvpZero, nullptr},
    {Op::Or, jvpZero, nullptr},
    {Op::Select, jvpSelect, transposeSelect},
    {Op::Cast, jvpCast, transposeCast},

    {Op::BroadcastTo, jvpLinear, transposeShape},
    {Op::Reshape, jvpLinear, transposeShape},
    {Op::Transpose, jvpLinear, transposeShape},
    {Op::Slice, jvpLinear, transposeShape},
    {Op::Concat, jvpLinear, transposeShape},
    {Op::Diag, jvpLinear, transposeShape},
    {Op::DiagPart, jvpLinear, transposeShape},
    {Op::Triu, jvpLinear, transposeShape},
    {Op::Tril, jvpLinear, transposeShape},

    {Op::Sum, jvpLinear, transposeSumMean},
    {Op::Mean, jvpLinear, transposeSumMean},
    {Op::Var, jvpReduce, nullptr},
    {Op::Max, jvpReduce, nullptr},
    {Op::Min, jvpReduce, nullptr},
    {Op::Prod, jvpReduce, nullptr},
    {Op::Argmax, jvpZero, nullptr},
    {Op::Argmin, jvpZero, nullptr},

    {Op::Matmul, jvpMatmul, transposeMatmul},
    {Op::Solve, jvpSolve, transposeSolve},
    {Op::Cholesky, jvpCholesky, nullptr},
    {Op::TriangularSolve, jvpTriangularSolve, transposeTriangularSolve},
    {Op::Lu, jvpLu, nullptr},
    {Op::Qr, jvpQr, nullptr},
    {Op::Inverse, jvpInverse, nullptr},
    {Op::Det, jvpDet, nullptr},
    {Op::Logdet, jvpDet, nullptr},
    {Op::Trace, jvpLinear, transposeTrace},
    {Op::Syrk, jvpSyrk, nullptr},

    {Op::AssumeSpd, jvpLinear, transposeIdentity},
    {Op::AssumeSymmetric, jvpLinear, transposeIdentity},
    {Op::AssumeLower, jvpLinear, transposeIdentity},
    {Op::AssumeUpper, jvpLinear, transposeIdentity},
    {Op::AssumeDiagonal, jvpLinear, transposeIdentity},

    {Op::AllReduce, jvpAllReduce, transposeAllReduce},
};

constexpr Op kOps[] = {
#define GRAPHC_OP(Name, Spelling, NumOperands, NumResults, Kind, Schema) Op::Name,
#include "ir/Ops.def"
};
constexpr size_t kNumOps = std::size(kOps);

constexpr bool inOpOrder() {
  for (size_t i = 0; i < std::size(kRules); ++i)
    if (static_cast<size_t>(kRules[i].op) != i)
      return false;
  return std::size(kRules) == kNumOps;
}
static_assert(inOpOrder(), "kRules must have one entry per op of ir/Ops.def, in its order");

Attrs flags(std::initializer_list<std::pair<const char*, bool>> fs) {
  Attrs a;
  for (auto [name, on] : fs)
    a.set(name, on);
  return a;
}

} // namespace

void rules::notLinear(const LinearNode& n, const char* why) {
  throw Error(fmt::format("cannot transpose {}: {}", n.node.info().name.str(), why), n.node.loc());
}

const DiffRule& diffRule(Op op) {
  return kRules[static_cast<size_t>(op)];
}

Value DiffBuilder::apply(Op op, llvm::ArrayRef<Value> operands, const Attrs& attrs) {
  return g_.apply(op, operands, attrs, {}, loc_);
}

Value DiffBuilder::full(double value, const ir::TensorType& type) {
  return g_.apply(Op::Full, {}, Attrs{{"value", value}}, {type}, loc_);
}

Value DiffBuilder::neg(Value a) {
  return a ? apply(Op::Neg, {a}) : Value();
}

Value DiffBuilder::add(Value a, Value b) {
  if (!a || !b)
    return a ? a : b;
  return apply(Op::Add, {a, b});
}

Value DiffBuilder::sub(Value a, Value b) {
  if (!b)
    return a;
  if (!a)
    return neg(b);
  return apply(Op::Sub, {a, b});
}

Value DiffBuilder::mul(Value a, Value b) {
  return apply(Op::Mul, {a, b});
}

Value DiffBuilder::div(Value a, Value b) {
  return apply(Op::Div, {a, b});
}

Value DiffBuilder::select(Value cond, Value a, Value b) {
  if (!a && !b)
    return Value();
  const ir::TensorType& t = a ? a.type() : b.type();
  return apply(Op::Select, {cond, orZeros(a, t), orZeros(b, t)});
}

Value DiffBuilder::cast(Value a, ir::DType dtype) {
  if (a.type().dtype == dtype)
    return a;
  return apply(Op::Cast, {a}, Attrs{{"dtype", dtype}});
}

Value DiffBuilder::matmul(Value a, Value b, bool ta, bool tb) {
  return apply(Op::Matmul, {a, b}, flags({{"transpose_a", ta}, {"transpose_b", tb}}));
}

Value DiffBuilder::mT(Value a) {
  return apply(Op::Transpose, {a}, Attrs{{"perm", matrixSwap(a.type().rank())}});
}

Value DiffBuilder::triangularSolve(Value a, Value b, bool lower, bool rightSide, bool transposeA,
                                   bool unitDiagonal) {
  return apply(Op::TriangularSolve, {a, b},
               flags({{"lower", lower},
                      {"right_side", rightSide},
                      {"transpose_a", transposeA},
                      {"unit_diagonal", unitDiagonal}}));
}

Value DiffBuilder::tril(Value a, int64_t k) {
  return apply(Op::Tril, {a}, k ? Attrs{{"k", k}} : Attrs{});
}

Value DiffBuilder::triu(Value a, int64_t k) {
  return apply(Op::Triu, {a}, k ? Attrs{{"k", k}} : Attrs{});
}

Value DiffBuilder::diag(Value v) {
  return apply(Op::Diag, {v});
}

Value DiffBuilder::diagPart(Value a) {
  return apply(Op::DiagPart, {a});
}

Value DiffBuilder::reshape(Value a, llvm::ArrayRef<int64_t> shape) {
  if (llvm::ArrayRef<int64_t>(a.type().shape) == shape)
    return a;
  return apply(Op::Reshape, {a}, Attrs{{"shape", std::vector<int64_t>(shape)}});
}

Value DiffBuilder::broadcastTo(Value a, llvm::ArrayRef<int64_t> shape) {
  if (llvm::ArrayRef<int64_t>(a.type().shape) == shape)
    return a;
  return apply(Op::BroadcastTo, {a}, Attrs{{"shape", std::vector<int64_t>(shape)}});
}

Value DiffBuilder::slice(Value a, llvm::ArrayRef<int64_t> start, llvm::ArrayRef<int64_t> stop) {
  return apply(Op::Slice, {a},
               Attrs{{"start", std::vector<int64_t>(start)}, {"stop", std::vector<int64_t>(stop)}});
}

Value DiffBuilder::concat(llvm::ArrayRef<Value> parts, int64_t axis) {
  if (parts.size() == 1)
    return parts[0];
  return apply(Op::Concat, parts, Attrs{{"axis", axis}});
}

Value DiffBuilder::sumKeep(Value a, llvm::ArrayRef<int64_t> axes) {
  if (axes.empty())
    return a;
  return apply(Op::Sum, {a}, Attrs{{"axes", std::vector<int64_t>(axes)}, {"keepdims", true}});
}

Value DiffBuilder::unreduce(Value r, llvm::ArrayRef<int64_t> axes, llvm::ArrayRef<int64_t> shape) {
  ir::Shape kept(shape.begin(), shape.end());
  for (int64_t a : axes)
    kept[a] = 1;
  return broadcastTo(reshape(r, kept), shape);
}

Value DiffBuilder::sumTo(Value a, llvm::ArrayRef<int64_t> shape) {
  const ir::Shape& from = a.type().shape;
  size_t lead = from.size() - shape.size();
  std::vector<int64_t> axes;
  for (size_t i = 0; i < from.size(); ++i)
    if (i < lead || (shape[i - lead] == 1 && from[i] != 1))
      axes.push_back(static_cast<int64_t>(i));
  return reshape(sumKeep(a, axes), shape);
}

} // namespace graphc::passes
