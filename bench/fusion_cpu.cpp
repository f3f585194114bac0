//===- bench/fusion_cpu.cpp - Fused vs unfused on the CPU (W3, W4) --------===//
//
// Usage: bench_fusion_cpu [--repeat R] [--chain N] [--rows R --cols C]
//
// Runs the elementwise chain W3 (relu(x*w + b) * sigmoid(x) + tanh(x - b), f32,
// n = 16M by default) and layernorm W4 (8192 x 4096 f32) of shared/WORKLOADS.md on
// the "cpu" backend (fused kernels over the lowered program) and "cpu-unfused" (one
// loop and one new array per op). Prints one JSON line per run: the median time,
// the bytes the lowered program's steps read and write per output element (the
// traffic when nothing stays cached between steps, from passes/Program.h), the
// achieved bandwidth at that traffic, and the error against a float64 run.
//
//===----------------------------------------------------------------------===//
#include "bench/Workloads.h"
#include "examples/Timing.h"

#include "ir/Parser.h"
#include "passes/MemoryPlan.h"
#include "runtime/Backends.h"
#include "runtime/core/Backend.h"

#include <cmath>
#include <cstring>
#include <ctime>
#include <fmt/format.h>

using namespace graphc;

namespace {

/// ||a - ref|| / ||ref|| with `a` in f32 and `ref` in f64.
double relativeError(const Array& a, const Array& ref) {
  std::vector<float> x = a.toVector<float>();
  std::vector<double> r = ref.toVector<double>();
  double num = 0, den = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    num += (x[i] - r[i]) * (x[i] - r[i]);
    den += r[i] * r[i];
  }
  return std::sqrt(num / den);
}

/// The traffic of `g`'s lowered program per output element, fused or one op a step.
double bytesPerElement(const ir::Graph& g, bool fuse) {
  passes::FusionPartition partition =
      fuse ? passes::partitionForFusion(g)
           : passes::partitionForFusion(g, [](const passes::FusionOption&) { return 0.0; });
  passes::Program p(g, partition);
  return static_cast<double>(p.stats().trafficBytes) /
         static_cast<double>(g.outputs().front().type().numel());
}

void runWorkload(const char* workload, const char* caseName, const std::string& f32Text,
                 const std::string& f64Text, int repeats) {
  std::unique_ptr<ir::Graph> g = ir::parseGraph(f32Text, caseName);
  std::unique_ptr<ir::Graph> g64 = ir::parseGraph(f64Text, caseName);
  std::vector<Array> inputs, inputs64;
  uint64_t seed = 1;
  for (const ir::Node* p : g64->params()) {
    inputs64.push_back(Array::randomNormal(ir::DType::F64, p->type().shape, seed++));
    std::vector<double> v = inputs64.back().toVector<double>();
    inputs.push_back(Array::fromVector(std::vector<float>(v.begin(), v.end()), p->type().shape));
  }
  Array reference = getBackend("cpu-unfused").compile(*g64)->run(inputs64)[0];
  char date[16];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  for (bool fuse : {true, false}) {
    auto exe = getBackend(fuse ? "cpu" : "cpu-unfused").compile(*g);
    Array out = exe->run(inputs)[0]; // warm-up
    double ms = examples::medianMs(repeats, [&] { out = exe->run(inputs)[0]; });
    double bytes = bytesPerElement(*g, fuse);
    double gbs = bytes * static_cast<double>(out.numel()) / (ms * 1e6);
    fmt::print(
        "{{\"date\": \"{}\", \"device\": \"CPU (2 cores)\", \"workload\": \"{}\", "
        "\"case\": \"{}\", \"system\": \"graphc\", \"variant\": \"{}\", \"median_ms\": "
        "{:.3f}, \"bytes_per_element\": {:.1f}, \"gb_per_s\": {:.2f}, \"rel_err\": {:.2e}}}\n",
        date, workload, caseName, fuse ? "cpu fused" : "cpu unfused", ms, bytes, gbs,
        relativeError(out, reference));
  }
}

} // namespace

int main(int argc, char** argv) {
  int repeats = 5;
  int64_t n = int64_t{1} << 24, rows = 8192, cols = 4096;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--repeat"))
      repeats = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--chain"))
      n = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--rows"))
      rows = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--cols"))
      cols = std::atoll(argv[i + 1]);
  }
  try {
    runWorkload("W3", n == (int64_t{1} << 24) ? "chain_16m_f32" : "chain_f32",
                bench::chainGraph(n, "f32"), bench::chainGraph(n, "f64"), repeats);
    runWorkload("W4", rows == 8192 && cols == 4096 ? "layernorm_8192x4096_f32" : "layernorm_f32",
                bench::layernormGraph(rows, cols, "f32"), bench::layernormGraph(rows, cols, "f64"),
                repeats);
  } catch (const Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
