//===- examples/layernorm.cpp - Layer normalization (W4) ------------------===//
//
// Usage: layernorm [ROWS COLS] [--backend cpu|cuda|auto]
//
// out = (x - mean(x)) / sqrt(var(x) + 1e-5) * g + b over the last axis, in f32, with
// the DSL's eager-looking style: the expression records a graph and evaluates when
// the result is read; the second evaluation on new data reuses the compiled program.
// A few rows are checked against float64 loops.
//
//===----------------------------------------------------------------------===//
#include "examples/Main.h"
#include "examples/Timing.h"
#include "frontend/Graphc.h"

#include <cmath>
#include <fmt/format.h>

using namespace graphc;

namespace {

Tensor layernorm(const Tensor& x, const Tensor& g, const Tensor& b) {
  Tensor xc = x - mean(x, -1, true);
  Tensor var = mean(square(xc), -1, true);
  return xc * rsqrt(var + 1e-5) * g + b;
}

int run(int argc, char** argv) {
  int64_t rows = 1024, cols = 1024;
  setDefaultBackend(examples::parseSizesAndBackend(argc, argv, rows, cols));
  fmt::print("layernorm {}x{} f32 on backend {}\n", rows, cols, defaultBackend().name().str());

  Array g = Array::randomNormal(DType::F32, {cols}, 2);
  Array b = Array::randomNormal(DType::F32, {cols}, 3);
  Array x;
  Tensor out;
  double firstMs = examples::timeMs([&] {
    x = Array::randomNormal(DType::F32, {rows, cols}, 1);
    out = layernorm(Tensor(x), Tensor(g), Tensor(b)).eval();
  });
  size_t before = ProgramCache::global().compileCount();
  double ms =
      examples::medianMs(5, [&] { out = layernorm(Tensor(x), Tensor(g), Tensor(b)).eval(); });
  fmt::print("first evaluation (compiles): {:.2f} ms; median of 5 more: {:.3f} ms; "
             "compilations during those: {}\n",
             firstMs, ms, ProgramCache::global().compileCount() - before);

  // Check the first and last rows in float64.
  double worst = 0;
  for (int64_t r : {int64_t(0), rows - 1}) {
    double m = 0, v = 0;
    for (int64_t j = 0; j < cols; ++j)
      m += x.getDouble({r, j}) / cols;
    for (int64_t j = 0; j < cols; ++j)
      v += std::pow(x.getDouble({r, j}) - m, 2) / cols;
    for (int64_t j = 0; j < cols; ++j) {
      double want =
          (x.getDouble({r, j}) - m) / std::sqrt(v + 1e-5) * g.getDouble({j}) + b.getDouble({j});
      worst = std::max(worst, std::abs(out.array().getDouble({r, j}) - want));
    }
  }
  fmt::print("max abs error against float64 loops (2 rows): {:.2e}\n", worst);
  return examples::verdict("layernorm", worst < 1e-3, 1e-3);
}

} // namespace

int main(int argc, char** argv) {
  return examples::exampleMain("layernorm", run, argc, argv);
}
