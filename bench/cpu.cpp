//===- bench/cpu.cpp - graphc on the CPU: the shape sweep -----------------===//
//
// Usage: bench_cpu [--repeat R] [--only SUBSTRING]
//
// The shape sweep (bench/Sweep.h) at the CPU's sizes (sweepCases(true)) on the
// "cpu" backend: each case compiled through the default pipeline, inputs drawn as
// bench_gpu draws them (standard normal f64, converted to the case's dtype), one
// warm-up run into outputs allocated once, then the median of R runs (200 for runs
// under a millisecond). One JSON line per case (shared/WORKLOADS.md's format, with
// compile_ms and rel_err): the error is against the case's float64 graph run as
// written (no passes) on "cpu-unfused", the node-by-node reference backend. The
// thread count is the backend's (GRAPHC_NUM_THREADS, or every CPU); bench/sweep.py
// --cpu runs NumPy on the same cases, and scripts/sweep-cpu.sh runs both with the
// same threads.
//
//===----------------------------------------------------------------------===//
#include "bench/Record.h"
#include "bench/Sweep.h"
#include "examples/Timing.h"

#include "ir/Parser.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
#include "runtime/cpu/ThreadPool.h"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <fstream>

using namespace graphc;

namespace {

/// "<model name> (<n> CPUs)" from /proc/cpuinfo, as bench/sweep.py's cpu_device().
std::string cpuDevice() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model;
  int count = 0;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      if (model.empty())
        model = line.substr(line.find(':') + 2);
      ++count;
    }
  return fmt::format("{} ({} CPUs)", model.empty() ? "CPU" : model, count);
}

void runCase(const bench::SweepCase& c, int repeats, const std::string& device) {
  auto graph = ir::parseGraph(c.graph(c, c.dtype));
  auto graph64 = ir::parseGraph(c.graph(c, "f64"));
  std::vector<Array> inputs64 = bench::randomInputs(*graph64, {});
  Array reference = compile(*graph64, getBackend("cpu-unfused"), {"none"})->run(inputs64)[0];
  std::unique_ptr<OptimizedExecutable> exe;
  double compileMs = examples::timeMs([&] { exe = compile(*graph, getBackend("cpu")); });
  std::vector<Array> inputs;
  for (size_t i = 0; i < inputs64.size(); ++i)
    inputs.push_back(bench::convert(inputs64[i], graph->params()[i]->type().dtype));
  std::vector<Array> outs;
  for (const ir::TensorType& t : exe->signature().outputTypes)
    outs.push_back(Array::empty(t.dtype, t.shape));
  auto timed = [&] { exe->run(inputs, outs); };
  double first = examples::timeMs(timed); // the warm-up
  double ms = examples::medianMs(first < 1.0 ? std::max(repeats, 200) : repeats, timed);
  bench::printRecord(device, "sweep", c.name, "graphc",
                     fmt::format("cpu, prepared run into outputs, {} threads",
                                 cpu::ThreadPool::global().threads()),
                     ms,
                     fmt::format(", \"compile_ms\": {:.1f}, \"rel_err\": {:.2e}", compileMs,
                                 bench::relativeError(outs[0], reference)));
}

} // namespace

int main(int argc, char** argv) {
  int repeats = 10;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--repeat"))
      repeats = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--only"))
      only = argv[i + 1];
  }
  std::string device = cpuDevice();
  for (const bench::SweepCase& c : bench::sweepCases(/*cpu=*/true)) {
    if (c.name.find(only) == std::string::npos)
      continue;
    try {
      runCase(c, repeats, device);
    } catch (const Error& e) { // the next case may still run
      fmt::print(stderr, "error: {}: {}\n", c.name, e.what());
    }
  }
  return 0;
}
