//===- frontend/Linalg.cpp - Linear algebra -------------------------------===//
#include "frontend/Linalg.h"

#include "frontend/Shape.h"
#include "frontend/Trace.h"
#include "ir/Infer.h"

#include <fmt/format.h>

namespace graphc {
namespace {

/// The two operands of a matrix op with their batch axes broadcast to a common shape.
/// Errors name the op and both operand types.
std::vector<Tensor> broadcastBatch(ir::Op op, const Tensor& a, const Tensor& b, const SrcLoc& loc) {
  auto fail = [&](const char* message) {
    throw Error(fmt::format("{}({}, {}): {}", ir::opName(op).str(), a.type().str(), b.type().str(),
                            message),
                toSourceLoc(loc));
  };
  if (a.rank() < 2 || b.rank() < 2)
    fail("needs matrices (rank >= 2)");
  llvm::ArrayRef<int64_t> batchA = llvm::ArrayRef<int64_t>(a.shape()).drop_back(2);
  llvm::ArrayRef<int64_t> batchB = llvm::ArrayRef<int64_t>(b.shape()).drop_back(2);
  if (batchA == batchB)
    return {a, b};
  std::optional<Shape> batch = ir::broadcastShapes(batchA, batchB);
  if (!batch)
    fail("batch dimensions do not broadcast");
  auto expand = [&](const Tensor& x) {
    Shape shape = *batch;
    shape.append(x.shape().end() - 2, x.shape().end());
    return broadcast_to(x, shape, loc);
  };
  return {expand(a), expand(b)};
}

} // namespace

Tensor matmul(const Tensor& a, const Tensor& b, MatmulOptions options, SrcLoc loc) {
  ir::Attrs attrs;
  attrs.set("transpose_a", options.transpose_a);
  attrs.set("transpose_b", options.transpose_b);
  return detail::emit1(ir::Op::Matmul, broadcastBatch(ir::Op::Matmul, a, b, loc), attrs, loc);
}

Tensor solve(const Tensor& a, const Tensor& b, SrcLoc loc) {
  return detail::emit1(ir::Op::Solve, broadcastBatch(ir::Op::Solve, a, b, loc), {}, loc);
}

Tensor cholesky(const Tensor& a, bool upper, SrcLoc loc) {
  ir::Attrs attrs;
  attrs.set("upper", upper);
  return detail::emit1(ir::Op::Cholesky, {a}, attrs, loc);
}

Tensor triangular_solve(const Tensor& a, const Tensor& b, TriangularSolveOptions options,
                        SrcLoc loc) {
  ir::Attrs attrs;
  attrs.set("lower", options.lower);
  attrs.set("right_side", options.right_side);
  attrs.set("transpose_a", options.transpose_a);
  attrs.set("unit_diagonal", options.unit_diagonal);
  return detail::emit1(ir::Op::TriangularSolve, broadcastBatch(ir::Op::TriangularSolve, a, b, loc),
                       attrs, loc);
}

LuResult lu(const Tensor& a, SrcLoc loc) {
  std::vector<Tensor> r = detail::emit(ir::Op::Lu, {a}, {}, loc);
  return {r[0], r[1], r[2]};
}

QrResult qr(const Tensor& a, SrcLoc loc) {
  std::vector<Tensor> r = detail::emit(ir::Op::Qr, {a}, {}, loc);
  return {r[0], r[1]};
}

Tensor inverse(const Tensor& a, SrcLoc loc) {
  return detail::emit1(ir::Op::Inverse, {a}, {}, loc);
}

Tensor det(const Tensor& a, SrcLoc loc) {
  return detail::emit1(ir::Op::Det, {a}, {}, loc);
}

Tensor logdet(const Tensor& a, SrcLoc loc) {
  return detail::emit1(ir::Op::Logdet, {a}, {}, loc);
}

Tensor trace(const Tensor& a, SrcLoc loc) {
  return detail::emit1(ir::Op::Trace, {a}, {}, loc);
}

Tensor syrk(const Tensor& x, bool transpose, SrcLoc loc) {
  ir::Attrs attrs;
  attrs.set("transpose", transpose);
  return detail::emit1(ir::Op::Syrk, {x}, attrs, loc);
}

Tensor assume_spd(const Tensor& a, SrcLoc loc) {
  return detail::emit1(ir::Op::AssumeSpd, {a}, {}, loc);
}

Tensor assume_symmetric(const Tensor& a, SrcLoc loc) {
  return detail::emit1(ir::Op::AssumeSymmetric, {a}, {}, loc);
}

Tensor assume_lower(const Tensor& a, SrcLoc loc) {
  return detail::emit1(ir::Op::AssumeLower, {a}, {}, loc);
}

Tensor assume_upper(const Tensor& a, SrcLoc loc) {
  return detail::emit1(ir::Op::AssumeUpper, {a}, {}, loc);
}

Tensor assume_diagonal(const Tensor& a, SrcLoc loc) {
  return detail::emit1(ir::Op::AssumeDiagonal, {a}, {}, loc);
}

} // namespace graphc
