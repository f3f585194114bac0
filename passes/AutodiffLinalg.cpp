//===- passes/AutodiffLinalg.cpp - Derivatives of the linear-algebra ops ---===//
//
// Matrix calculus, batched over leading axes like the ops (docs/autodiff.md has each
// rule with its source). The rules reuse the primal's results (a solve's solution,
// a factor) and write solves with a factor as triangular_solve, so that after the
// passes a derivative graph factors each matrix once. Ops that read one triangle of
// their matrix (cholesky, triangular_solve) are differentiated as computed: only
// that triangle's tangent counts.
//
//===----------------------------------------------------------------------===//
#include "passes/Autodiff.h"

#include <fmt/format.h>

namespace graphc::passes::rules {

using ir::Op;
using ir::Value;

namespace {

bool flag(const ir::Node& n, const char* name) {
  return n.attrs().flag(name);
}

/// Columns [lo, hi) of a batch of matrices.
Value columns(DiffBuilder& b, Value a, int64_t lo, int64_t hi) {
  const ir::Shape& s = a.type().shape;
  std::vector<int64_t> start(s.size(), 0), stop(s.begin(), s.end());
  start.back() = lo;
  stop.back() = hi;
  return b.slice(a, start, stop);
}

/// The tangents of Q and R for m >= n (or the square left block of a wide A).
std::pair<Value, Value> qrTall(DiffBuilder& b, Value q, Value r, Value da) {
  Value daRinv = b.triangularSolve(r, da, /*lower=*/false, /*rightSide=*/true, false);
  Value m = b.matmul(q, daRinv, /*ta=*/true);
  Value low = b.tril(m, -1);
  Value omega = b.sub(low, b.mT(low)); // skew-symmetric
  Value dq = b.add(b.matmul(q, b.sub(omega, m)), daRinv);
  Value dr = b.matmul(b.sub(m, omega), r);
  return {dq, dr};
}

} // namespace

ValueList jvpMatmul(DiffBuilder& b, const JvpNode& n) {
  bool ta = flag(n.node, "transpose_a"), tb = flag(n.node, "transpose_b");
  Value x = n.inputs[0], y = n.inputs[1], dx = n.dinputs[0], dy = n.dinputs[1];
  return {b.add(dx ? b.matmul(dx, y, ta, tb) : Value(), dy ? b.matmul(x, dy, ta, tb) : Value())};
}

ValueList jvpSyrk(DiffBuilder& b, const JvpNode& n) {
  bool t = flag(n.node, "transpose"); // x x' (or x' x)
  Value m = t ? b.matmul(n.dinputs[0], n.inputs[0], true, false)
              : b.matmul(n.dinputs[0], n.inputs[0], false, true);
  return {b.add(m, b.mT(m))};
}

ValueList jvpSolve(DiffBuilder& b, const JvpNode& n) {
  Value a = n.inputs[0], x = n.results[0], da = n.dinputs[0], dbv = n.dinputs[1];
  Value rhs = b.sub(dbv, da ? b.matmul(da, x) : Value());
  return {b.apply(Op::Solve, {a, rhs})};
}

ValueList jvpCholesky(DiffBuilder& b, const JvpNode& n) {
  bool upper = flag(n.node, "upper");
  Value f = n.results[0], da = n.dinputs[0];
  // The symmetric tangent of the triangle the factorization reads.
  Value das =
      upper ? b.add(b.triu(da), b.mT(b.triu(da, 1))) : b.add(b.tril(da), b.mT(b.tril(da, -1)));
  // Z = L^-1 dA L^-T, with L = f (lower) or f' (upper).
  Value w = b.triangularSolve(f, das, !upper, false, /*transposeA=*/upper);
  Value z = b.triangularSolve(f, w, !upper, /*rightSide=*/true, /*transposeA=*/!upper);
  // Phi(Z): the lower triangle with half the diagonal; dL = L Phi(Z).
  Value phi = b.sub(b.tril(z), b.scale(b.diag(b.diagPart(z)), 0.5));
  return {upper ? b.matmul(phi, f, /*ta=*/true) : b.matmul(f, phi)};
}

ValueList jvpTriangularSolve(DiffBuilder& b, const JvpNode& n) {
  bool lower = flag(n.node, "lower"), right = flag(n.node, "right_side");
  bool ta = flag(n.node, "transpose_a"), unit = flag(n.node, "unit_diagonal");
  Value a = n.inputs[0], x = n.results[0], da = n.dinputs[0];
  Value prod;
  if (da) { // only the triangle the solve reads
    Value dat = lower ? b.tril(da, unit ? -1 : 0) : b.triu(da, unit ? 1 : 0);
    prod = right ? b.matmul(x, dat, false, ta) : b.matmul(dat, x, ta, false);
  }
  Value rhs = b.sub(n.dinputs[1], prod);
  return {b.triangularSolve(a, rhs, lower, right, ta, unit)};
}

ValueList jvpLu(DiffBuilder& b, const JvpNode& n) {
  Value p = n.results[0], l = n.results[1], u = n.results[2];
  // F = L^-1 P' dA U^-1; dL = L tril(F, -1), dU = triu(F) U; P is locally constant.
  Value w = b.triangularSolve(l, b.matmul(p, n.dinputs[0], /*ta=*/true), true, false, false,
                              /*unitDiagonal=*/true);
  Value f = b.triangularSolve(u, w, /*lower=*/false, /*rightSide=*/true, false);
  return {Value(), b.matmul(l, b.tril(f, -1)), b.matmul(b.triu(f), u)};
}

ValueList jvpQr(DiffBuilder& b, const JvpNode& n) {
  Value a = n.inputs[0], q = n.results[0], r = n.results[1], da = n.dinputs[0];
  const ir::Shape& s = a.type().shape;
  int64_t m = s[s.size() - 2], cols = s.back();
  if (m >= cols) {
    auto [dq, dr] = qrTall(b, q, r, da);
    return {dq, dr};
  }
  // Wide: A = [X Y] with X square, Q R1 = qr(X) and R = [R1, Q' Y].
  auto [dq, dr1] = qrTall(b, q, columns(b, r, 0, m), columns(b, da, 0, m));
  Value y = columns(b, a, m, cols), dy = columns(b, da, m, cols);
  Value dr2 = b.add(b.matmul(dq, y, true), b.matmul(q, dy, true));
  return {dq, b.concat({dr1, dr2}, static_cast<int64_t>(s.size()) - 1)};
}

ValueList jvpInverse(DiffBuilder& b, const JvpNode& n) {
  Value y = n.results[0];
  return {b.neg(b.matmul(b.matmul(y, n.dinputs[0]), y))};
}

ValueList jvpDet(DiffBuilder& b, const JvpNode& n) {
  // d log|det A| = trace(A^-1 dA); d det A = det A * trace(A^-1 dA).
  Value t = b.apply(Op::Trace, {b.apply(Op::Solve, {n.inputs[0], n.dinputs[0]})});
  return {n.node.op() == Op::Det ? b.mul(n.results[0], t) : t};
}

ValueList transposeMatmul(DiffBuilder& b, const LinearNode& n, Value ct) {
  bool ta = flag(n.node, "transpose_a"), tb = flag(n.node, "transpose_b");
  if (n.linear[0] && n.linear[1])
    notLinear(n, "both operands depend on the linear inputs");
  if (n.linear[0]) {
    Value y = n.inputs[1];
    return {ta ? b.matmul(y, ct, tb, true) : b.matmul(ct, y, false, !tb), Value()};
  }
  Value x = n.inputs[0];
  return {Value(), tb ? b.matmul(ct, x, true, ta) : b.matmul(x, ct, !ta, false)};
}

ValueList transposeSolve(DiffBuilder& b, const LinearNode& n, Value ct) {
  if (n.linear[0])
    notLinear(n, "the matrix depends on the linear inputs");
  return {Value(), b.apply(Op::Solve, {b.mT(n.inputs[0]), ct})};
}

ValueList transposeTriangularSolve(DiffBuilder& b, const LinearNode& n, Value ct) {
  if (n.linear[0])
    notLinear(n, "the matrix depends on the linear inputs");
  return {Value(),
          b.triangularSolve(n.inputs[0], ct, flag(n.node, "lower"), flag(n.node, "right_side"),
                            !flag(n.node, "transpose_a"), flag(n.node, "unit_diagonal"))};
}

ValueList transposeTrace(DiffBuilder& b, const LinearNode& n, Value ct) {
  const ir::TensorType& t = n.node.operand(0).type();
  ir::Shape unit = ct.type().shape;
  unit.append({1, 1});
  Value eye = b.graph().apply(Op::Eye, {}, {}, {t});
  return {b.mul(b.broadcastTo(b.reshape(ct, unit), t.shape), eye)};
}

} // namespace graphc::passes::rules
