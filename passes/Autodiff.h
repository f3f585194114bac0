//===- passes/Autodiff.h - The differentiation rules of every op -*- C++ -*-===//
//
// The one table of derivative rules (Autodiff.cpp), one entry per op of ir/Ops.def
// and in its order, used by the two autodiff transforms:
//
//   - linearize (passes/Linearize.h) calls an op's JVP rule: from the primal node,
//     its operands and results in the new graph and one tangent per operand, the
//     tangent of each result;
//   - transpose (passes/Transpose.h) calls an op's transpose rule on the nodes that
//     are linear in the differentiated inputs: from the cotangent of the result, the
//     cotangent of each linear operand.
//
// Reverse mode is transpose after linearize, so every differentiable op has a JVP
// rule and only the ops a JVP rule emits on tangents need transpose rules. A null
// ir::Value is a symbolic zero (a tangent or cotangent known to be zero). The rules
// themselves are in AutodiffElementwise.cpp, AutodiffShape.cpp and
// AutodiffLinalg.cpp; docs/autodiff.md gives each rule with its source.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

namespace graphc::passes {

using ValueList = llvm::SmallVector<ir::Value, 1>;

/// Builds derivative nodes in a graph, at one source location. Every builder takes
/// and returns values of the target graph; a null value stands for zero where the
/// doc comment says so.
class DiffBuilder {
public:
  DiffBuilder(ir::Graph& g, SourceLoc loc) : g_(g), loc_(std::move(loc)) {}

  ir::Graph& graph() { return g_; }
  ir::Value apply(ir::Op op, llvm::ArrayRef<ir::Value> operands, const ir::Attrs& attrs = {});
  /// A constant of `type` with every element `value`.
  ir::Value full(double value, const ir::TensorType& type);
  /// `value` in the type of `like`.
  ir::Value scalar(double value, ir::Value like) { return full(value, like.type()); }
  /// A zero of `type`: the value a symbolic zero stands for.
  ir::Value zeros(const ir::TensorType& type) { return full(0, type); }
  /// `v`, or zeros of `type` where `v` is a symbolic zero.
  ir::Value orZeros(ir::Value v, const ir::TensorType& type) { return v ? v : zeros(type); }

  ir::Value neg(ir::Value a);
  /// a + b, where either may be a symbolic zero (the result then too).
  ir::Value add(ir::Value a, ir::Value b);
  /// a - b, where either may be a symbolic zero.
  ir::Value sub(ir::Value a, ir::Value b);
  ir::Value mul(ir::Value a, ir::Value b);
  ir::Value div(ir::Value a, ir::Value b);
  /// a * c for a number c.
  ir::Value scale(ir::Value a, double c) { return mul(a, scalar(c, a)); }
  /// select(cond, a, b), where either branch may be a symbolic zero.
  ir::Value select(ir::Value cond, ir::Value a, ir::Value b);
  /// The cast of `a` to `dtype` (a itself when it has that dtype).
  ir::Value cast(ir::Value a, ir::DType dtype);

  /// op(a) * op(b), op the transpose where the flag is set.
  ir::Value matmul(ir::Value a, ir::Value b, bool ta = false, bool tb = false);
  /// The transpose of the last two axes.
  ir::Value mT(ir::Value a);
  ir::Value triangularSolve(ir::Value a, ir::Value b, bool lower, bool rightSide, bool transposeA,
                            bool unitDiagonal = false);
  ir::Value tril(ir::Value a, int64_t k = 0);
  ir::Value triu(ir::Value a, int64_t k = 0);
  ir::Value diag(ir::Value v);
  ir::Value diagPart(ir::Value a);
  ir::Value reshape(ir::Value a, llvm::ArrayRef<int64_t> shape);
  ir::Value broadcastTo(ir::Value a, llvm::ArrayRef<int64_t> shape);
  ir::Value slice(ir::Value a, llvm::ArrayRef<int64_t> start, llvm::ArrayRef<int64_t> stop);
  ir::Value concat(llvm::ArrayRef<ir::Value> parts, int64_t axis);
  /// sum over `axes`, keeping them as unit axes.
  ir::Value sumKeep(ir::Value a, llvm::ArrayRef<int64_t> axes);
  /// A reduction's result (of the reduction over `axes`, keepdims or not) with its
  /// reduced axes back as unit axes, broadcast to `shape`.
  ir::Value unreduce(ir::Value r, llvm::ArrayRef<int64_t> axes, llvm::ArrayRef<int64_t> shape);
  /// The sum of `a` down to `shape`: the adjoint of broadcast_to(x, a.shape) for x of
  /// that shape.
  ir::Value sumTo(ir::Value a, llvm::ArrayRef<int64_t> shape);

private:
  ir::Graph& g_;
  SourceLoc loc_;
};

/// A primal node seen by a JVP rule, everything in the new graph.
struct JvpNode {
  const ir::Node& node;              ///< the node in the graph being differentiated
  llvm::ArrayRef<ir::Value> inputs;  ///< its operands
  llvm::ArrayRef<ir::Value> results; ///< its results
  llvm::ArrayRef<ir::Value> dinputs; ///< the operands' tangents (null: zero)
};

/// A node that is linear in some operands, seen by a transpose rule. `inputs` holds
/// the non-linear operands in the new graph and null for the linear ones.
struct LinearNode {
  const ir::Node& node;
  llvm::ArrayRef<ir::Value> inputs;
  llvm::ArrayRef<bool> linear; ///< per operand: does it depend on the linear inputs
};

/// The tangents of a node's results (null: zero).
using JvpRule = ValueList (*)(DiffBuilder&, const JvpNode&);
/// The cotangents of a linear node's operands from its result's cotangent `ct`
/// (null where an operand is not linear or gets nothing). Throws graphc::Error when
/// the node is not linear in the operands marked linear.
using TransposeRule = ValueList (*)(DiffBuilder&, const LinearNode&, ir::Value ct);

/// The rules of one op. A null transpose rule marks an op that is not linear in any
/// operand.
struct DiffRule {
  ir::Op op;
  JvpRule jvp;
  TransposeRule transpose;
};

/// The rules of `op`.
const DiffRule& diffRule(ir::Op op);

/// True when values of `t` carry tangents (floating point).
inline bool isDifferentiable(const ir::TensorType& t) {
  return ir::isFloat(t.dtype);
}

/// The rules themselves, grouped by op class (AutodiffElementwise.cpp,
/// AutodiffShape.cpp, AutodiffLinalg.cpp); referenced only by the table.
namespace rules {
/// Throws the error of a node that is not linear in the operands marked linear.
[[noreturn]] void notLinear(const LinearNode& n, const char* why);

ValueList jvpZero(DiffBuilder&, const JvpNode&);
ValueList jvpUnary(DiffBuilder&, const JvpNode&);
ValueList jvpBinary(DiffBuilder&, const JvpNode&);
ValueList jvpSelect(DiffBuilder&, const JvpNode&);
ValueList jvpCast(DiffBuilder&, const JvpNode&);
ValueList transposeNeg(DiffBuilder&, const LinearNode&, ir::Value);
ValueList transposeAddSub(DiffBuilder&, const LinearNode&, ir::Value);
ValueList transposeMulDiv(DiffBuilder&, const LinearNode&, ir::Value);
ValueList transposeSelect(DiffBuilder&, const LinearNode&, ir::Value);
ValueList transposeCast(DiffBuilder&, const LinearNode&, ir::Value);

/// The same op applied to the tangents: the JVP of every op linear in all operands.
ValueList jvpLinear(DiffBuilder&, const JvpNode&);
ValueList jvpReduce(DiffBuilder&, const JvpNode&);
ValueList transposeShape(DiffBuilder&, const LinearNode&, ir::Value);
ValueList transposeSumMean(DiffBuilder&, const LinearNode&, ir::Value);
ValueList transposeIdentity(DiffBuilder&, const LinearNode&, ir::Value);
ValueList jvpAllReduce(DiffBuilder&, const JvpNode&);
ValueList transposeAllReduce(DiffBuilder&, const LinearNode&, ir::Value);

ValueList jvpMatmul(DiffBuilder&, const JvpNode&);
ValueList jvpSyrk(DiffBuilder&, const JvpNode&);
ValueList jvpSolve(DiffBuilder&, const JvpNode&);
ValueList jvpCholesky(DiffBuilder&, const JvpNode&);
ValueList jvpTriangularSolve(DiffBuilder&, const JvpNode&);
ValueList jvpLu(DiffBuilder&, const JvpNode&);
ValueList jvpQr(DiffBuilder&, const JvpNode&);
ValueList jvpInverse(DiffBuilder&, const JvpNode&);
ValueList jvpDet(DiffBuilder&, const JvpNode&);
ValueList transposeMatmul(DiffBuilder&, const LinearNode&, ir::Value);
ValueList transposeSolve(DiffBuilder&, const LinearNode&, ir::Value);
ValueList transposeTriangularSolve(DiffBuilder&, const LinearNode&, ir::Value);
ValueList transposeTrace(DiffBuilder&, const LinearNode&, ir::Value);
} // namespace rules

} // namespace graphc::passes
