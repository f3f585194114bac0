//===- examples/batched.cpp - Many small SPD solves, prepared and deferred -===//
//
// Usage: batched [BATCH [N]] [--backend cpu|cuda|auto] [--deferred K]
//
// The W5 workload: per item S = X X'/(2n) + 0.1 I (X n x 2n) and z = solve(S, b).
// The function is written for one item and traced once; compile() batches it
// (CompileOptions::batch: a leading axis over the whole graph) and prepares it, so
// the compiler sees a batch of SPD systems and picks a batched Cholesky. The
// prepared program then runs into outputs made once (nothing allocated per run),
// and K deferred runs wait once. Every item of the result is checked against the
// one-item graph on the cpu backend.
//
//===----------------------------------------------------------------------===//
#include "examples/Main.h"
#include "examples/Timing.h"

#include "frontend/Graphc.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"

#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

using namespace graphc;

namespace {

/// One item: the solve of an SPD system formed from X.
Tensor spdSolve(Tensor x, Tensor b) {
  int64_t n = x.shape()[0];
  Tensor s = matmul(x, x, {.transpose_b = true}) / double(2 * n) + 0.1 * eye(n, DType::F64);
  return solve(s, b);
}

/// Item `i` of the batched array `a`.
Array item(const Array& a, int64_t i) {
  llvm::ArrayRef<int64_t> shape = a.shape().drop_front();
  int64_t size = ir::numElements(shape);
  std::vector<double> all = a.toVector<double>();
  return Array::fromVector(
      std::vector<double>(all.begin() + i * size, all.begin() + (i + 1) * size), shape);
}

int run(int argc, char** argv) {
  int64_t batch = 4096, n = 32;
  int deferred = 100;
  std::string backend = "auto";
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--backend") && i + 1 < argc)
      backend = argv[++i];
    else if (!std::strcmp(argv[i], "--deferred") && i + 1 < argc)
      deferred = std::max(1, std::atoi(argv[++i]));
    else if (std::atoll(argv[i]) > 0)
      sizes.push_back(std::atoll(argv[i]));
    else {
      fmt::print(stderr, "usage: batched [BATCH [N]] [--backend cpu|cuda|auto] [--deferred K]\n");
      return 2;
    }
  }
  if (!sizes.empty())
    batch = sizes[0];
  if (sizes.size() > 1)
    n = sizes[1];

  // Written and traced for one item; compiled for the whole batch.
  std::unique_ptr<ir::Graph> one = traceToGraph(
      spdSolve, {{"x", TensorType(DType::F64, {n, 2 * n})}, {"b", TensorType(DType::F64, {n, 1})}},
      "spd_solve");
  Backend& target = getBackend(backend);
  std::unique_ptr<Executable> exe;
  double compileMs = examples::timeMs([&] { exe = compile(*one, target, {.batch = batch}); });
  fmt::print("{} SPD solves of {}x{} f64 on {}: prepared in {:.1f} ms\n", batch, n, n,
             exe->backendName().str(), compileMs);

  // Inputs uploaded and outputs made once, in the memory the backend's runs take.
  Array x = Array::randomNormal(DType::F64, {batch, n, 2 * n}, 1);
  Array b = Array::randomNormal(DType::F64, {batch, n, 1}, 2);
  std::vector<Array> in = {exe->toDevice(x), exe->toDevice(b)};
  std::vector<Array> out = {exe->newOutput(0)};
  exe->run(in, out); // the first run (on cuda it also captures the CUDA graph)
  double ms = examples::medianMs(20, [&] { exe->run(in, out); });
  fmt::print("one call: {:.3f} ms\n", ms);

  // K deferred calls into outputs of their own, one wait.
  std::vector<std::vector<Array>> outs(deferred, std::vector<Array>{exe->newOutput(0)});
  double total = examples::timeMs([&] {
    for (const std::vector<Array>& o : outs)
      exe->enqueue(in, o);
    exe->finish();
  });
  fmt::print("{} deferred calls: {:.3f} ms each\n", deferred, total / deferred);

  // Each item against the one-item graph on the cpu.
  auto reference = compile(*one, getBackend("cpu"));
  Array z = exe->toHost(out[0]), last = exe->toHost(outs.back()[0]);
  double worst = 0;
  for (int64_t i = 0; i < batch; i += std::max<int64_t>(1, batch / 64)) {
    std::vector<double> want = reference->run({item(x, i), item(b, i)})[0].toVector<double>();
    std::vector<double> got = item(z, i).toVector<double>(),
                        again = item(last, i).toVector<double>();
    for (size_t k = 0; k < want.size(); ++k)
      worst = std::max({worst, std::abs(got[k] - want[k]), std::abs(again[k] - want[k])});
  }
  fmt::print("largest difference to the one-item graph on the cpu: {:.2e}\n", worst);
  return examples::verdict("batched", worst < 1e-9, 1e-9);
}

} // namespace

int main(int argc, char** argv) {
  return examples::exampleMain("batched", run, argc, argv);
}
