//===- bench/kernels_gpu.cpp - Generated CUDA kernels (W3, W4) ------------===//
//
// Usage: bench_kernels_gpu [--repeat R]
//
// Times the generated kernels of the elementwise chain W3 (16M f32) and layernorm
// W4 (8192 x 4096 f32) of shared/WORKLOADS.md on the GPU with CUDA events: every
// kernel step of the lowered program, launched back to back on one stream, R times
// after a warm-up; prints one JSON line per kernel and per workload (the median),
// with the bandwidth at the bytes the kernel must read and write.
//
//===----------------------------------------------------------------------===//
#include "bench/Workloads.h"
#include "ir/Parser.h"
#include "passes/MemoryPlan.h"
#include "runtime/cuda/Check.h"
#include "runtime/cuda/Device.h"
#include "runtime/cuda/FusedKernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>

using namespace graphc;

namespace {

float medianOf(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void run(const char* workload, const std::string& text, int repeats) {
  std::unique_ptr<ir::Graph> g = ir::parseGraph(text, workload);
  passes::Program program = passes::lowerToProgram(*g);
  // One device buffer per value (no slot reuse: the kernels are what is timed).
  std::map<std::pair<const ir::Node*, unsigned>, void*> buffers;
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  auto buffer = [&](ir::Value v) {
    void*& p = buffers[{v.node, v.index}];
    if (p)
      return p;
    size_t n = static_cast<size_t>(v.type().numel());
    GRAPHC_CUDA_CHECK(cudaMalloc(&p, n * sizeof(float)));
    if (v.node->kind() == ir::OpKind::Source) { // parameters random, `full` its value
      std::vector<float> host(n);
      for (float& x : host)
        x = v.node->op() == ir::Op::Full ? static_cast<float>(v.node->attrs().getFloat("value"))
                                         : normal(rng);
      GRAPHC_CUDA_CHECK(cudaMemcpy(p, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    }
    return p;
  };
  struct Launch {
    std::unique_ptr<cuda::CudaFusedKernel> kernel;
    std::vector<const void*> in;
    std::vector<void*> out;
    double bytes = 0;
  };
  std::vector<Launch> launches;
  for (const passes::Step& s : program.steps()) {
    auto k = codegen::buildKernel(s.nodes, s.outputs);
    Launch l;
    l.kernel = std::make_unique<cuda::CudaFusedKernel>(std::get<codegen::Kernel>(std::move(k)));
    for (ir::Value v : l.kernel->kernel().inputs) {
      l.in.push_back(buffer(v));
      l.bytes += static_cast<double>(v.type().numel()) * 4;
    }
    for (const codegen::KernelOutput& o : l.kernel->kernel().outputs) {
      l.out.push_back(buffer(o.value));
      l.bytes += static_cast<double>(o.value.type().numel()) * 4;
    }
    launches.push_back(std::move(l));
  }
  cudaEvent_t start, stop;
  GRAPHC_CUDA_CHECK(cudaEventCreate(&start));
  GRAPHC_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<std::vector<float>> each(launches.size());
  std::vector<float> total;
  for (int r = -1; r < repeats; ++r) { // r = -1: warm-up
    float sum = 0;
    for (size_t i = 0; i < launches.size(); ++i) {
      GRAPHC_CUDA_CHECK(cudaEventRecord(start));
      launches[i].kernel->launch(launches[i].in, launches[i].out, nullptr, nullptr);
      GRAPHC_CUDA_CHECK(cudaEventRecord(stop));
      GRAPHC_CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      GRAPHC_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      if (r >= 0)
        each[i].push_back(ms);
      sum += ms;
    }
    if (r >= 0)
      total.push_back(sum);
  }
  std::string device = cuda::deviceInfo().name;
  for (size_t i = 0; i < launches.size(); ++i) {
    float us = medianOf(each[i]) * 1000;
    const codegen::CudaKernel& ck = launches[i].kernel->cuda();
    fmt::print("{{\"device\": \"{}\", \"workload\": \"{}\", \"kernel\": {}, \"launch\": \"{}\", "
               "\"block\": {}, \"grid\": {}, \"median_us\": {:.1f}, \"gb_per_s\": {:.0f}}}\n",
               device, workload, i, codegen::launchName(ck.launch).str(), ck.blockSize, ck.gridSize,
               us, launches[i].bytes / (us * 1e3));
  }
  fmt::print("{{\"device\": \"{}\", \"workload\": \"{}\", \"kernels\": {}, \"median_us\": "
             "{:.1f}}}\n",
             device, workload, launches.size(), medianOf(total) * 1000);
  for (auto& [key, p] : buffers)
    cudaFree(p);
}

} // namespace

int main(int argc, char** argv) {
  int repeats = 50;
  for (int i = 1; i + 1 < argc; i += 2)
    if (!std::strcmp(argv[i], "--repeat"))
      repeats = std::atoi(argv[i + 1]);
  try {
    run("W3", bench::chainGraph(int64_t{1} << 24, "f32"), repeats);
    run("W4", bench::layernormGraph(8192, 4096, "f32"), repeats);
  } catch (const Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
