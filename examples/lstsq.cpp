//===- examples/lstsq.cpp - Least squares through QR ----------------------===//
//
// Usage: lstsq [M N] [--backend cpu|cuda|auto]
//
// The least-squares solution of A x ~= b for a tall A (M x N): A = Q R, x = R^-1 Q' b,
// jit-compiled. Checks the normal equations A'(A x - b) = 0 relative to |A'| |b|.
//
//===----------------------------------------------------------------------===//
#include "examples/Main.h"
#include "examples/Timing.h"
#include "frontend/Graphc.h"

#include <fmt/format.h>

using namespace graphc;

namespace {

Tensor lstsq(const Tensor& a, const Tensor& b) {
  auto [q, r] = qr(a);
  return triangular_solve(r, matmul(q, b, {.transpose_a = true}), {.lower = false});
}

int run(int argc, char** argv) {
  int64_t m = 2000, n = 500;
  setDefaultBackend(examples::parseSizesAndBackend(argc, argv, m, n));
  fmt::print("least squares via QR, A: f64[{},{}], on backend {}\n", m, n,
             defaultBackend().name().str());

  Array a = Array::randomNormal(DType::F64, {m, n}, 1);
  Array b = Array::randomNormal(DType::F64, {m, 1}, 2);
  auto solver = jit(lstsq, "lstsq", {"a", "b"});
  Tensor x = solver(a, b);

  Tensor A(a), B(b);
  Tensor grad = matmul(A, matmul(A, x) - B, {.transpose_a = true});
  double scale =
      sqrt(sum(square(A))).array().getDouble({}) * sqrt(sum(square(B))).array().getDouble({});
  double rel = max(abs(grad)).array().getDouble({}) / scale;
  fmt::print("normal equations |A'(Ax - b)|_max / (|A| |b|) = {:.2e}\n", rel);
  return examples::verdict("lstsq", rel < 1e-10, 1e-10);
}

} // namespace

int main(int argc, char** argv) {
  return examples::exampleMain("lstsq", run, argc, argv);
}
