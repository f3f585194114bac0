//===- tests/support/SpdBatch.cpp - Batches of partly indefinite solves ---===//
#include "support/SpdBatch.h"

#include "ir/Parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace graphc::testing {

std::unique_ptr<ir::Graph> assumedSpdSolve(int64_t n, int64_t cols) {
  return ir::parseGraph(fmt::format(R"(graph @assumed(%a: f64[{0},{0}], %b: f64[{0},{1}]) {{
  %s = assume_spd %a
  %x = solve %s, %b
  return %x
}}
)",
                                    n, cols));
}

const char* const kTransposedGramSolve = R"(
graph @t(%x: f64[40,24,9], %b: f64[40,9,2]) {
  %xt = transpose %x {perm=[0,2,1]}
  %g = matmul %xt, %x
  %c = full {value=0.25} : f64[40,9,9]
  %gc = mul %c, %g
  %eye = eye : f64[40,9,9]
  %s = add %gc, %eye
  %z = solve %s, %b
  return %z
})";

const char* const kGramSolveMatrixReturned = R"(
graph @t(%x: f64[40,9,24], %b: f64[40,9,2]) {
  %g = matmul %x, %x {transpose_b}
  %eye = eye : f64[40,9,9]
  %s = add %g, %eye
  %z = solve %s, %b
  return %z, %s
})";

std::unique_ptr<ir::Graph> tinyShiftGramSolve(int64_t n, int64_t k) {
  return ir::parseGraph(fmt::format(R"(graph @fallback(%y: f64[{0},{1}], %b: f64[{0},1]) {{
  %g = matmul %y, %y {{transpose_b}}
  %i = eye : f64[{0},{0}]
  %c = full {{value=1e-300}} : f64[{0},{0}]
  %ci = mul %i, %c
  %s = add %g, %ci
  %x = solve %s, %b
  return %x
}}
)",
                                    n, k));
}

std::vector<Array> partlyIndefiniteBatch(int64_t batch, int64_t n, int64_t cols,
                                         llvm::ArrayRef<int64_t> indefinite, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> a(batch * n * n), b(batch * n * cols);
  for (int64_t k = 0; k < batch; ++k) {
    double* m = a.data() + k * n * n;
    std::vector<double> r(n * n);
    for (double& x : r)
      x = normal(rng);
    bool spd = std::find(indefinite.begin(), indefinite.end(), k) == indefinite.end();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double v = 0;
        if (spd) {
          for (int64_t l = 0; l < n; ++l)
            v += r[i * n + l] * r[j * n + l];
          v += i == j ? static_cast<double>(n) : 0.0;
        } else {
          v = r[i * n + j] + r[j * n + i];
        }
        m[i * n + j] = v;
      }
    if (!spd)
      m[0] = -1 - std::abs(m[0]);
  }
  for (double& x : b)
    x = normal(rng);
  return {Array::fromVector(a, {batch, n, n}), Array::fromVector(b, {batch, n, cols})};
}

double backwardError(const Array& a, const Array& x, const Array& b, int64_t k) {
  int64_t n = a.shape()[1], cols = x.shape()[2];
  Array ac = a.contiguous(), xc = x.contiguous(), bc = b.contiguous();
  const double* m = ac.data<double>() + k * n * n;
  const double* xs = xc.data<double>() + k * n * cols;
  const double* bs = bc.data<double>() + k * n * cols;
  double normA = 0, normX = 0, normB = 0, residual = 0;
  for (int64_t i = 0; i < n; ++i) {
    double row = 0;
    for (int64_t j = 0; j < n; ++j)
      row += std::abs(m[i * n + j]);
    normA = std::max(normA, row);
  }
  for (int64_t c = 0; c < cols; ++c) {
    double nx = 0, nb = 0, nr = 0;
    for (int64_t i = 0; i < n; ++i) {
      double r = -bs[i * cols + c];
      for (int64_t j = 0; j < n; ++j)
        r += m[i * n + j] * xs[j * cols + c];
      if (!std::isfinite(r))
        return std::numeric_limits<double>::infinity();
      nr = std::max(nr, std::abs(r));
      nx = std::max(nx, std::abs(xs[i * cols + c]));
      nb = std::max(nb, std::abs(bs[i * cols + c]));
    }
    normX = std::max(normX, nx);
    normB = std::max(normB, nb);
    residual = std::max(residual, nr);
  }
  return residual / (normA * normX + normB);
}

} // namespace graphc::testing
