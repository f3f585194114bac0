//===- tests/gpu/LibraryTestUtil.h - One-node graphs on the GPU and the CPU -*- C++ -*-===//
//
// What the library-call tests share: a one-node graph of a linear-algebra op run
// through one LibraryContext on pool buffers (runGpu, timeRun) and on the CPU
// backend (runCpu), the comparison of the two (expectSameAsCpu, expectSameFailure)
// and the random inputs they run on (randn, wellConditioned, spd, identityWith).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "GpuTestUtil.h"

#include "ir/Graph.h"
#include "runtime/Backends.h"
#include "runtime/core/Array.h"
#include "runtime/core/Backend.h"
#include "runtime/cuda/KernelCache.h"
#include "runtime/cuda/Library.h"
#include "runtime/cuda/Nvrtc.h"
#include "runtime/cuda/Pool.h"

#include <cmath>
#include <fmt/format.h>
#include <memory>
#include <optional>

namespace graphc::testing {

using cuda::DeviceBuffer;
using cuda::DevicePool;
using cuda::LibraryContext;
using ir::Op;
using Ints = std::vector<int64_t>;

/// Batch shapes every op runs over: unbatched, rank 3 and rank 4.
inline const Ints kBatches[] = {{}, {3}, {2, 2}};
inline const DType kFloats[] = {DType::F32, DType::F64};

inline Ints withMatrix(Ints batch, int64_t m, int64_t n) {
  batch.push_back(m);
  batch.push_back(n);
  return batch;
}

/// The stream and library context all tests share (made once, never destroyed,
/// so nothing touches CUDA during static destruction).
struct Gpu {
  cudaStream_t stream = nullptr;
  std::unique_ptr<LibraryContext> ctx;

  static Gpu& get() {
    static Gpu* gpu = [] {
      auto* g = new Gpu;
      GRAPHC_CUDA_CHECK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
      g->ctx = std::make_unique<LibraryContext>(0, g->stream);
      return g;
    }();
    return *gpu;
  }
};

/// A graph of one `op` node over one parameter per input.
struct OneNode {
  ir::Graph graph{"lib"};
  ir::Node* node = nullptr;

  OneNode(Op op, const std::vector<Array>& inputs, const ir::Attrs& attrs) {
    llvm::SmallVector<ir::Value, 2> params;
    for (size_t i = 0; i < inputs.size(); ++i)
      params.push_back(graph.addParameter(fmt::format("p{}", i), inputs[i].type()));
    node = graph.create(op, params, attrs);
    for (unsigned i = 0; i < node->numResults(); ++i)
      graph.addOutput(node->result(i));
  }
};

/// The CPU backend's results, or its error message.
struct CpuResult {
  std::vector<Array> outputs;
  std::string error;
};

inline CpuResult runCpu(const OneNode& g, const std::vector<Array>& inputs) {
  CpuResult r;
  try {
    r.outputs = getBackend("cpu").compile(g.graph)->run(inputs);
  } catch (const Error& e) {
    r.error = e.message();
  }
  return r;
}

/// The GPU's results and decoded failure.
struct GpuResult {
  std::vector<Array> outputs;
  std::optional<std::string> failure;
};

/// Runs `node` through the shared LibraryContext, with the results in `unread`
/// (LibraryContext::run) read by nothing. With `capture`, run() is recorded into a
/// CUDA graph (global capture mode, which rejects synchronizing and other unsafe
/// calls) that is then launched.
inline GpuResult runGpu(const ir::Node& node, const std::vector<Array>& inputs,
                        bool capture = false, unsigned unread = 0) {
  Gpu& gpu = Gpu::get();
  DevicePool& pool = DevicePool::forDevice(0);
  gpu.ctx->reserve(node);
  std::vector<DeviceBuffer> in, out;
  std::vector<const void*> inPtrs;
  std::vector<void*> outPtrs;
  for (const Array& a : inputs) {
    Array c = a.contiguous();
    in.emplace_back(pool, c.numel() * c.elementSize(), gpu.stream);
    GRAPHC_CUDA_CHECK(cudaMemcpyAsync(in.back().data(), c.rawData(), in.back().bytes(),
                                      cudaMemcpyHostToDevice, gpu.stream));
    inPtrs.push_back(in.back().data());
  }
  for (const ir::TensorType& t : node.types()) {
    out.emplace_back(pool, t.bytes(), gpu.stream);
    outPtrs.push_back(out.back().data());
  }
  int64_t count = LibraryContext::infoCount(node);
  DeviceBuffer info(pool, count * sizeof(int), gpu.stream);
  if (capture) {
    GRAPHC_CUDA_CHECK(cudaStreamSynchronize(gpu.stream));
    GRAPHC_CUDA_CHECK(cudaStreamBeginCapture(gpu.stream, cudaStreamCaptureModeGlobal));
    cudaGraph_t graph = nullptr;
    try {
      gpu.ctx->run(node, inPtrs, outPtrs, info.as<int>(), unread);
    } catch (...) {
      cudaStreamEndCapture(gpu.stream, &graph);
      throw;
    }
    GRAPHC_CUDA_CHECK(cudaStreamEndCapture(gpu.stream, &graph));
    cudaGraphExec_t exec = nullptr;
    GRAPHC_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    GRAPHC_CUDA_CHECK(cudaGraphLaunch(exec, gpu.stream));
    GRAPHC_CUDA_CHECK(cudaStreamSynchronize(gpu.stream));
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  } else {
    gpu.ctx->run(node, inPtrs, outPtrs, info.as<int>(), unread);
  }

  GpuResult r;
  for (size_t i = 0; i < out.size(); ++i) {
    const ir::TensorType& t = node.type(i);
    r.outputs.push_back(Array::empty(t.dtype, t.shape));
    GRAPHC_CUDA_CHECK(cudaMemcpyAsync(r.outputs.back().rawData(), out[i].data(), t.bytes(),
                                      cudaMemcpyDeviceToHost, gpu.stream));
  }
  std::vector<int> hostInfo(count);
  GRAPHC_CUDA_CHECK(cudaMemcpyAsync(hostInfo.data(), info.data(), count * sizeof(int),
                                    cudaMemcpyDeviceToHost, gpu.stream));
  GRAPHC_CUDA_CHECK(cudaStreamSynchronize(gpu.stream));
  r.failure = LibraryContext::failure(node, hostInfo.data());
  return r;
}

inline std::vector<double> doubles(const Array& a) {
  return visitDType(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> v = a.toVector<T>();
    return std::vector<double>(v.begin(), v.end());
  });
}

inline Array fromDoubles(DType dtype, const std::vector<double>& v, llvm::ArrayRef<int64_t> shape) {
  return visitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return Array::fromVector<T>(std::vector<T>(v.begin(), v.end()), shape);
  });
}

/// Expects NVRTC to compile `source` for sm_90 (no GPU needed) with every name
/// expression lowered and no warning.
inline void expectCompilesForSm90(const cuda::ModuleSource& source) {
  cuda::CompileOptions options;
  options.computeCapability = 90;
  options.nameExpressions = source.nameExpressions;
  cuda::CompiledModule m = cuda::compileCuda(source.source, source.name, options);
  EXPECT_EQ(m.loweredNames.size(), source.nameExpressions.size());
  EXPECT_EQ(m.log.find("warning"), std::string::npos) << m.log;
}

/// Expects `got` to equal `want` within a relative tolerance (1e-10 for f64, 1e-4
/// for f32, of the largest magnitude of `want`); non-finite values must be equal.
inline void expectClose(const Array& got, const Array& want, const std::string& what) {
  ASSERT_EQ(got.type(), want.type()) << what;
  std::vector<double> g = doubles(got), w = doubles(want);
  double scale = 1.0;
  for (double x : w)
    if (std::isfinite(x))
      scale = std::max(scale, std::abs(x));
  double tol = (want.dtype() == DType::F32 ? 1e-4 : 1e-10) * scale;
  if (ir::isInteger(want.dtype()))
    tol = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    if (!std::isfinite(w[i])) {
      ASSERT_TRUE(g[i] == w[i] || (std::isnan(g[i]) && std::isnan(w[i])))
          << what << ": element " << i << " is " << g[i] << ", want " << w[i];
      continue;
    }
    ASSERT_LE(std::abs(g[i] - w[i]), tol)
        << what << ": element " << i << " is " << g[i] << ", want " << w[i];
  }
}

/// Runs `op` on both backends and expects the same results and no failure.
inline void expectSameAsCpu(Op op, const std::vector<Array>& inputs, const ir::Attrs& attrs,
                            const std::string& what, bool capture = false) {
  SCOPED_TRACE(what);
  OneNode g(op, inputs, attrs);
  CpuResult want = runCpu(g, inputs);
  ASSERT_EQ(want.error, "");
  GpuResult got = runGpu(*g.node, inputs, capture);
  EXPECT_EQ(got.failure, std::nullopt);
  ASSERT_EQ(got.outputs.size(), want.outputs.size());
  for (size_t i = 0; i < want.outputs.size(); ++i)
    expectClose(got.outputs[i], want.outputs[i], fmt::format("{} result {}", what, i));
}

/// Expects the CPU to fail with "op: message" and the GPU to report that message.
inline void expectSameFailure(Op op, const std::vector<Array>& inputs, const ir::Attrs& attrs,
                              const std::string& message) {
  OneNode g(op, inputs, attrs);
  CpuResult cpu = runCpu(g, inputs);
  EXPECT_EQ(cpu.error, fmt::format("{}: {}", ir::opName(op).str(), message));
  GpuResult gpu = runGpu(*g.node, inputs);
  EXPECT_EQ(gpu.failure, std::optional<std::string>(message));
}

inline Array randn(DType dtype, llvm::ArrayRef<int64_t> shape, uint64_t seed) {
  return Array::randomNormal(dtype, shape, seed);
}

/// Random square matrices plus n I: well conditioned, but pivoting still happens.
inline Array wellConditioned(DType dtype, const Ints& shape, uint64_t seed) {
  int64_t n = shape.back();
  std::vector<double> v = doubles(randn(DType::F64, shape, seed));
  for (size_t i = 0; i < v.size(); i += n * n)
    for (int64_t d = 0; d < n; ++d)
      v[i + d * n + d] += n;
  return fromDoubles(dtype, v, shape);
}

/// Symmetric positive definite matrices X X' + n I.
inline Array spd(DType dtype, const Ints& shape, uint64_t seed) {
  int64_t n = shape.back();
  std::vector<double> x = doubles(randn(DType::F64, shape, seed)), v(x.size());
  for (size_t b = 0; b < v.size(); b += n * n)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = i == j ? n : 0.0;
        for (int64_t k = 0; k < n; ++k)
          s += x[b + i * n + k] * x[b + j * n + k];
        v[b + i * n + j] = s;
      }
  return fromDoubles(dtype, v, shape);
}

/// Identity matrices, batch item `item` with `value` at (k,k).
inline Array identityWith(DType dtype, const Ints& batch, int64_t n, int64_t item, int64_t k,
                          double value) {
  Ints shape = withMatrix(batch, n, n);
  std::vector<double> v(ir::numElements(shape), 0.0);
  for (size_t b = 0; b < v.size(); b += n * n)
    for (int64_t d = 0; d < n; ++d)
      v[b + d * n + d] = 1.0;
  v[item * n * n + k * n + k] = value;
  return fromDoubles(dtype, v, shape);
}

inline std::string label(DType dt, const Ints& batch) {
  return fmt::format("{} batch {}", ir::dtypeName(dt).str(), ir::shapeString(batch));
}

/// Milliseconds per run() of `op` on device copies of `inputs` (after a warm-up).
inline double timeRun(Op op, const std::vector<Array>& inputs, const ir::Attrs& attrs,
                      int reps = 5) {
  OneNode g(op, inputs, attrs);
  Gpu& gpu = Gpu::get();
  DevicePool& pool = DevicePool::forDevice(0);
  gpu.ctx->reserve(*g.node);
  std::vector<DeviceBuffer> buffers;
  std::vector<const void*> in;
  std::vector<void*> out;
  for (const Array& a : inputs) {
    buffers.emplace_back(pool, a.type().bytes(), gpu.stream);
    GRAPHC_CUDA_CHECK(cudaMemcpyAsync(buffers.back().data(), a.rawData(), a.type().bytes(),
                                      cudaMemcpyHostToDevice, gpu.stream));
    in.push_back(buffers.back().data());
  }
  for (const ir::TensorType& t : g.node->types()) {
    buffers.emplace_back(pool, t.bytes(), gpu.stream);
    out.push_back(buffers.back().data());
  }
  DeviceBuffer info(pool, LibraryContext::infoCount(*g.node) * sizeof(int), gpu.stream);
  gpu.ctx->run(*g.node, in, out, info.as<int>());
  cudaEvent_t start, stop;
  GRAPHC_CUDA_CHECK(cudaEventCreate(&start));
  GRAPHC_CUDA_CHECK(cudaEventCreate(&stop));
  GRAPHC_CUDA_CHECK(cudaEventRecord(start, gpu.stream));
  for (int i = 0; i < reps; ++i)
    gpu.ctx->run(*g.node, in, out, info.as<int>());
  GRAPHC_CUDA_CHECK(cudaEventRecord(stop, gpu.stream));
  GRAPHC_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  GRAPHC_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / reps;
}

} // namespace graphc::testing
