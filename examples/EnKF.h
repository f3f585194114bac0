//===- examples/EnKF.h - The ensemble Kalman filter update ------*- C++ -*-===//
//
// The EnKF analysis update of DESIGN.md (W1 in WORKLOADS.md), written with the DSL
// as a user would: a plain solve, no hints. The compiler is left to see that
// C_yy + R is symmetric positive definite. Shared by examples/enkf.cpp and the test
// that checks examples/enkf.gir is what this function traces.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/Graphc.h"

namespace graphc::examples {

/// The analysis ensemble xi + C_xy (C_yy + 0.1 I)^-1 (obs - y) for a forecast ensemble
/// `xi` (d x N), its predicted observations `y` (d x N) and the observation `obs`
/// (d x 1).
inline Tensor enkfUpdate(const Tensor& xi, const Tensor& y, const Tensor& obs) {
  double n = static_cast<double>(xi.dim(1));
  Tensor xc = xi - mean(xi, 1, true);
  Tensor yc = y - mean(y, 1, true);
  Tensor cxy = matmul(xc, yc, {.transpose_b = true}) / (n - 1);
  Tensor cyy = matmul(yc, yc, {.transpose_b = true}) / (n - 1);
  Tensor r = 0.1 * eye(y.dim(0), y.dtype());
  // One statement per step: C++ leaves the order of evaluating arguments open, and
  // the order nodes are recorded in is part of the graph's structure.
  Tensor s = cyy + r;
  Tensor innovation = obs - y;
  Tensor z = solve(s, innovation);
  return xi + matmul(cxy, z);
}

/// The same update as the report first wrote it (W1b in WORKLOADS.md): uncentered
/// covariances `(a*b' - N*mean(a)*mean(b)') / (N - 1)`, and R = 0.1 I added to the
/// right-hand side too (so d = N). The compiler's centering pass (passes/Centering.h)
/// turns it into the centered form, whose C_yy + R it can prove SPD.
inline Tensor enkfOrigUpdate(const Tensor& xi, const Tensor& y, const Tensor& obs) {
  double n = static_cast<double>(xi.dim(1));
  Tensor mx = mean(xi, 1, true);
  Tensor my = mean(y, 1, true);
  Tensor pxy = matmul(xi, y, {.transpose_b = true});
  Tensor oxy = n * matmul(mx, my, {.transpose_b = true});
  Tensor cxy = (pxy - oxy) / (n - 1);
  Tensor pyy = matmul(y, y, {.transpose_b = true});
  Tensor oyy = n * matmul(my, my, {.transpose_b = true});
  Tensor cyy = (pyy - oyy) / (n - 1);
  Tensor r = 0.1 * eye(y.dim(0), y.dtype());
  Tensor s = cyy + r;
  Tensor innovation = obs - y;
  Tensor rhs = innovation + r;
  Tensor z = solve(s, rhs);
  return xi + matmul(cxy, z);
}

/// The size examples/enkf.gir is traced at (d = N).
inline constexpr int64_t kEnkfGirSize = 6;

/// The EnKF graph for d states and n ensemble members.
inline std::unique_ptr<ir::Graph> traceEnkf(int64_t d, int64_t n, DType dtype) {
  return traceToGraph(enkfUpdate,
                      {{"xi", TensorType(dtype, {d, n})},
                       {"y", TensorType(dtype, {d, n})},
                       {"obs", TensorType(dtype, {d, 1})}},
                      "enkf");
}

/// The EnKF graph at size d = N = `n`, as checked in (examples/enkf.gir).
inline std::unique_ptr<ir::Graph> traceEnkf(int64_t n, DType dtype = DType::F64) {
  return traceEnkf(n, n, dtype);
}

/// The uncentered EnKF graph (enkfOrigUpdate) at d = N = `n`, as checked in
/// (examples/enkf_orig.gir).
inline std::unique_ptr<ir::Graph> traceEnkfOrig(int64_t n, DType dtype = DType::F64) {
  return traceToGraph(enkfOrigUpdate,
                      {{"xi", TensorType(dtype, {n, n})},
                       {"y", TensorType(dtype, {n, n})},
                       {"obs", TensorType(dtype, {n, 1})}},
                      "enkf_orig");
}

} // namespace graphc::examples
