// The example of README.md. The test package.consumer builds it against an
// installed graphc, runs it and compares its output with README.md's.
#include <graphc/frontend/Graphc.h>

#include <fmt/format.h>

using namespace graphc;

// Ridge regression, written plainly: w = (X'X + 0.1 I)^-1 X'y.
Tensor ridge(Tensor x, Tensor y) {
  Tensor gram = matmul(transpose(x), x) + 0.1 * eye(x.dim(1));
  return solve(gram, matmul(transpose(x), y));
}

int main() {
  // Eager-looking: an expression is recorded, then compiled and run when read.
  Tensor a(Array::fromVector<double>({1, 2, 3, 4}, {2, 2}));
  fmt::print("a * 2 + 1 =\n{}\n", (a * 2.0 + 1.0).array());

  // jit traces ridge once per input signature, compiles it and runs it.
  auto fit = jit(ridge, "ridge");
  Array x = Array::randomNormal(DType::F64, {200, 3}, /*seed=*/1);
  Tensor noise(Array::randomNormal(DType::F64, {200, 1}, /*seed=*/2));
  Tensor w0(Array::fromVector<double>({1.0, -2.0, 0.5}, {3, 1}));
  Array y = (matmul(Tensor(x), w0) + 0.01 * noise).array();
  fmt::print("w =\n{}\n", fit(x, y).array());
  fit(x, y); // the same shapes: runs the compiled program, no tracing
  fmt::print("on {}: {} programs compiled\n", defaultBackend().name().str(),
             ProgramCache::global().compileCount());

  // What jit compiled: the traced graph after the passes, in graphc's text format
  // (what `graphc opt` prints). X'X + 0.1 I is proven SPD: the solve is a Cholesky.
  auto graph =
      traceToGraph(ridge, {{"x", {DType::F64, {200, 3}}}, {"y", {DType::F64, {200, 1}}}}, "ridge");
  fmt::print("{}", ir::printGraph(*passes::runPipeline(*graph, passes::defaultPipeline())));
}
