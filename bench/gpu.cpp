//===- bench/gpu.cpp - graphc on the GPU: W1-W7 and the small op ----------===//
//
// Usage: bench_gpu [--repeat R] [--workloads W1,W1b,W2,W3,W4,W5,W6,W7,GP,small-op,sweep]
//                  [--only SUBSTRING]
//
// Compiles each workload of shared/WORKLOADS.md through the default pipeline on the
// "cuda" backend, with inputs already on the device, and prints one JSON line per
// case: the median host-timed run (each run ends with its one synchronization), the
// compile time of the executable (compile() before any upload, the CUDA context
// already made; kernels come from the disk cache when a previous process compiled
// them: run twice to see cold and warm), and the relative error against a float64
// run on the CPU. For the memory-bound cases (W3 at 16M, W4) a "floor" line
// follows: a device-to-device copy moving the bytes the case reads and writes,
// launched and timed the same way (a CUDA graph on a non-blocking stream).
// bench/peers.py prints the peers' lines for the same cases; bench/suite.py runs
// both and renders the tables. `sweep` (not run by default) is the shape sweep of
// bench/Sweep.h, whose peers are in bench/sweep.py. --only runs the cases whose
// name contains SUBSTRING.
//
//===----------------------------------------------------------------------===//
#include "bench/Record.h"
#include "bench/Sweep.h"
#include "bench/Workloads.h"
#include "examples/EnKF.h"
#include "examples/Timing.h"

#include "ir/Parser.h"
#include "passes/Derivative.h"
#include "runtime/core/Compile.h"
#include "runtime/cuda/Check.h"
#include "runtime/cuda/CudaBackend.h"
#include "runtime/cuda/Device.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>

using namespace graphc;

namespace {

using bench::convert;
using bench::relativeError;

struct Case {
  const char* workload;
  std::string name;
  std::unique_ptr<ir::Graph> graph, graph64; ///< the case, and its f64 twin for the reference
  std::vector<double> scales;                ///< per input: the standard deviation
  int deferred = 0;                 ///< > 0: time this many enqueued runs and one finish(), per run
  bool memoryBound = false;         ///< also time the copy floor
  std::vector<Array> inputs64 = {}; ///< given f64 inputs; random (by `scales`) when empty
  size_t checked = 0;               ///< the output whose error is reported
};

/// One JSON line of shared/WORKLOADS.md's format, with `extra` fields before the
/// closing brace.
void printRecord(const Case& c, const std::string& system, const std::string& variant, double ms,
                 const std::string& extra) {
  bench::printRecord(cuda::deviceInfo().name, c.workload, c.name, system, variant, ms, extra);
}

/// The median host-timed copy of (read + written bytes) / 2 between two device
/// buffers, launched as graphc launches a run (a CUDA graph on a non-blocking
/// stream) and synchronized: what moving the case's bytes costs at the least.
double copyFloorMs(const OptimizedExecutable& exe, int calls) {
  int64_t bytes = 0;
  for (const ir::TensorType& t : exe.signature().paramTypes)
    bytes += t.bytes();
  for (const ir::TensorType& t : exe.signature().outputTypes)
    bytes += t.bytes();
  int64_t floats = bytes / 2 / 4;
  Array from = cuda::emptyOnDevice(DType::F32, {floats}),
        to = cuda::emptyOnDevice(DType::F32, {floats});
  cudaStream_t stream;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  GRAPHC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  GRAPHC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  GRAPHC_CUDA_CHECK(
      cudaMemcpyAsync(to.rawData(), from.rawData(), floats * 4, cudaMemcpyDeviceToDevice, stream));
  GRAPHC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  GRAPHC_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  auto copy = [&] {
    GRAPHC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    GRAPHC_CUDA_CHECK(cudaStreamSynchronize(stream));
  };
  copy();
  double ms = examples::medianMs(calls, copy);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  return ms;
}

void runCase(const Case& c, int repeats) {
  std::vector<Array> inputs64 = bench::randomInputs(*c.graph64, c.inputs64, c.scales);
  Array reference = compile(*c.graph64, getBackend("cpu"))->run(inputs64)[c.checked];
  cuda::emptyOnDevice(DType::F32, {1}); // the CUDA context, before the timed compile
  std::unique_ptr<OptimizedExecutable> exe;
  double compileMs = examples::timeMs([&] { exe = compile(*c.graph, getBackend("cuda")); });
  std::vector<Array> device;
  for (size_t i = 0; i < inputs64.size(); ++i)
    device.push_back(cuda::toDevice(convert(inputs64[i], c.graph->params()[i]->type().dtype)));
  // Runs into device outputs allocated once: the prepared program's fast path.
  std::vector<Array> outs;
  for (const ir::TensorType& t : exe->signature().outputTypes)
    outs.push_back(cuda::emptyOnDevice(t.dtype, t.shape));
  exe->run(device, outs); // warm-up (and the CUDA graph's capture)
  // Deferred runs write outputs of their own, as independent calls would.
  std::vector<std::vector<Array>> deferredOuts(c.deferred);
  for (std::vector<Array>& o : deferredOuts)
    for (const Array& a : outs)
      o.push_back(cuda::emptyOnDevice(a.dtype(), a.shape()));
  auto timed = [&] {
    if (c.deferred == 0)
      return exe->run(device, outs);
    for (const std::vector<Array>& o : deferredOuts)
      exe->enqueue(device, o);
    exe->finish();
  };
  // Sub-millisecond calls repeat 2000 times: their median needs a warm host.
  int calls = examples::timeMs(timed) < 1.0 ? std::max(repeats, 2000) : repeats;
  double ms = examples::medianMs(calls, timed) / std::max(c.deferred, 1);
  if (c.deferred)
    outs = deferredOuts.back();
  printRecord(c, "graphc",
              c.deferred ? fmt::format("{} enqueued runs, one finish", c.deferred)
                         : "prepared run into device outputs",
              ms,
              fmt::format(", \"compile_ms\": {:.1f}, \"rel_err\": {:.2e}", compileMs,
                          relativeError(cuda::toHost(outs[c.checked]), reference)));
  if (c.memoryBound)
    printRecord(c, "floor", "copy of the same bytes, a CUDA graph", copyFloorMs(*exe, calls), "");
}

/// 0.05 * randn(n, n) + diag(1 + j/n), W6's matrix.
Array qrInput(int64_t n) {
  std::vector<double> v = Array::randomNormal(DType::F64, {n, n}, 1).toVector<double>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      v[i * n + j] = 0.05 * v[i * n + j] + (i == j ? 1.0 + static_cast<double>(j) / n : 0.0);
  return Array::fromVector(v, {n, n});
}

/// W6 (the JVP and VJP of the QR loss, per call and deferred) and W7 (the gradient
/// of the Gaussian NLL): derivative graphs (passes/Derivative.h) of Workloads.h's
/// functions; the error is the tangent's or the gradient's.
void autodiffCases(std::vector<Case>& out, bool w6, bool w7) {
  using passes::DerivativeMode;
  auto derived = [](const std::string& text, DerivativeMode mode) {
    return passes::derivative(*ir::parseGraph(text), mode, {0});
  };
  for (int deferred : {0, 100})
    for (auto [mode, name] :
         {std::pair{DerivativeMode::Jvp, "jvp"}, std::pair{DerivativeMode::Grad, "vjp"}}) {
      if (!w6)
        break;
      std::string g = bench::qrLossGraph(256);
      out.push_back({"W6",
                     fmt::format("qr256_f64_{}{}", name, deferred ? "_deferred_k100" : ""),
                     derived(g, mode),
                     derived(g, mode),
                     {},
                     deferred,
                     false,
                     {qrInput(256)},
                     1});
    }
  for (auto [d, k] : {std::pair<int64_t, int64_t>{8192, 128}, {2048, 2048}}) {
    if (!w7)
      break;
    std::string g = bench::gaussNllGraph(d, k, 512);
    out.push_back({"W7",
                   fmt::format("gauss_nll_grad_d{}_k{}_f64", d, k),
                   derived(g, DerivativeMode::Grad),
                   derived(g, DerivativeMode::Grad),
                   {1.0 / std::sqrt(static_cast<double>(k)), 1.0},
                   0,
                   false,
                   {},
                   1});
  }
}

/// True when the comma-separated `list` names workload `w`.
bool selected(const std::string& list, const char* w) {
  std::string padded = "," + list + ",";
  return padded.find("," + std::string(w) + ",") != std::string::npos;
}

std::vector<Case> cases(const std::string& workloads) {
  std::vector<Case> out;
  auto enkf = [&](const char* w, std::string name, int64_t d, int64_t n, DType dtype) {
    out.push_back({w,
                   std::move(name),
                   examples::traceEnkf(d, n, dtype),
                   examples::traceEnkf(d, n, DType::F64),
                   {1.0, 10.0, 10.0}});
  };
  auto text = [&](const char* w, std::string name, const std::string& f32, const std::string& f64) {
    out.push_back({w, std::move(name), ir::parseGraph(f32), ir::parseGraph(f64), {}});
  };
  if (selected(workloads, "W1")) {
    enkf("W1", "enkf_d3000_f64", 3000, 3000, DType::F64);
    enkf("W1", "enkf_d3000_f32", 3000, 3000, DType::F32);
  }
  if (selected(workloads, "W1b")) // the uncentered form the report first wrote
    out.push_back({"W1b",
                   "enkf_orig_d3000_f64",
                   examples::traceEnkfOrig(3000, DType::F64),
                   examples::traceEnkfOrig(3000, DType::F64),
                   {1.0, 10.0, 10.0}});
  if (selected(workloads, "W2"))
    enkf("W2", "enkf_d16384_n128_f64", 16384, 128, DType::F64);
  if (selected(workloads, "W3")) {
    for (auto [name, n] : {std::pair{"chain_1024_f32_sync", int64_t{1024}},
                           std::pair{"chain_1m_f32", int64_t{1} << 20},
                           std::pair{"chain_16m_f32", int64_t{1} << 24}})
      text("W3", name, bench::chainGraph(n, "f32"), bench::chainGraph(n, "f64"));
    out.back().memoryBound = true; // at 16M
    text("W3", "chain_1024_f32_deferred_k100", bench::chainGraph(1024, "f32"),
         bench::chainGraph(1024, "f64"));
    out.back().deferred = 100;
  }
  if (selected(workloads, "W4")) {
    text("W4", "layernorm_8192x4096_f32", bench::layernormGraph(8192, 4096, "f32"),
         bench::layernormGraph(8192, 4096, "f64"));
    out.back().memoryBound = true;
  }
  if (selected(workloads, "small-op"))
    text("small-op", "small_op_1024_f32", bench::addGraph(1024, "f32"),
         bench::addGraph(1024, "f64"));
  if (selected(workloads, "W5"))
    for (auto [batch, n] : {std::pair<int64_t, int64_t>{4096, 32}, {512, 128}}) {
      std::string g = bench::batchedSpdGraph(batch, n, "f64");
      text("W5", fmt::format("batched_spd_{}x{}_f64", batch, n), g, g);
    }
  if (selected(workloads, "GP")) {
    std::string g = bench::gpLmlGraph(4096, "f64");
    text("GP", "gp_lml_n4096_f64", g, g);
  }
  autodiffCases(out, selected(workloads, "W6"), selected(workloads, "W7"));
  if (selected(workloads, "sweep"))
    for (const bench::SweepCase& c : bench::sweepCases()) {
      text("sweep", c.name, c.graph(c, c.dtype), c.graph(c, "f64"));
      out.back().memoryBound = c.memoryBound;
    }
  return out;
}

} // namespace

int main(int argc, char** argv) {
  int repeats = 20;
  std::string workloads = "W1,W1b,W2,W3,W4,W5,W6,W7,GP,small-op", only;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--repeat"))
      repeats = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--workloads"))
      workloads = argv[i + 1];
    else if (!std::strcmp(argv[i], "--only"))
      only = argv[i + 1];
  }
  try {
    for (const Case& c : cases(workloads)) {
      if (c.name.find(only) == std::string::npos)
        continue;
      try {
        runCase(c, repeats);
      } catch (const Error& e) { // the next case may still run
        fmt::print(stderr, "error: {}: {}\n", c.name, e.what());
      }
    }
  } catch (const Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
