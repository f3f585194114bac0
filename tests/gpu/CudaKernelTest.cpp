//===- tests/gpu/CudaKernelTest.cpp - Generated kernels vs the CPU --------===//
//
// Every kernel of tests/codegen/KernelCases.h (f32 and f64), run by
// CudaFusedKernel on random inputs and compared with the CPU interpreter
// (runtime/cpu/FusedKernel.h) on the same inputs: integers, bools and argmax
// positions exactly, floats within a few ulp (CUDA's math functions are not the
// C library's). Also kernels of several reduction stages (whole layernorms,
// softmaxes; on their own grid and on a grid of two blocks), a 16M-element chain,
// in-place outputs, one var per row in every lane, softmax over rows with
// infinities and NaNs, the error word, and the kernel cache (memory, disk,
// corrupted disk entries, parallel compilation, one kernel for every size of a
// chain).
//
//===----------------------------------------------------------------------===//
#include "GpuTestUtil.h"

#include "bench/Workloads.h"

#include "runtime/cpu/FusedKernel.h"
#include "runtime/cuda/FusedKernel.h"
#include "runtime/cuda/HelperKernels.h"
#include "runtime/cuda/KernelCache.h"
#include "tests/codegen/ElementwiseReference.h"
#include "tests/codegen/KernelCases.h"
#include "tests/codegen/KernelInputs.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <unistd.h>

namespace graphc {
namespace {

using codegen::Kernel;
using cuda::CudaFusedKernel;
using cuda::KernelCache;
using testing::HostArray;
using testing::kernelCases;
using testing::kernelsOf;
using testing::randomArray;

/// An owning device buffer.
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) {
    GRAPHC_CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(bytes, 1)));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : p(std::exchange(o.p, nullptr)) {}
  ~DeviceBuffer() { cudaFree(p); }
};

/// Where outputs go: own buffers, or output 0 over the first input of its size;
/// or own buffers one element past a 16-byte boundary (the scalar paths of kernels
/// that access aligned buffers by vectors).
enum class Placement { Separate, InPlace, Misaligned };

/// Runs `gpu` on `inputs` and returns its outputs; output 0 over input `inPlaceOf`
/// where that is >= 0.
std::vector<HostArray> runOnGpu(const CudaFusedKernel& gpu, const std::vector<HostArray>& inputs,
                                Placement placement = Placement::Separate, int inPlaceOf = -1) {
  const Kernel& k = gpu.kernel();
  std::vector<HostArray> outputs;
  for (const codegen::KernelOutput& o : k.outputs)
    outputs.emplace_back(k.insts[o.inst].dtype, o.value.type().numel());
  std::vector<DeviceBuffer> deviceIn, deviceOut;
  std::vector<const void*> gpuIn;
  std::vector<void*> gpuOut;
  auto shifted = [&](void* p, ir::DType t) -> void* {
    size_t by = placement == Placement::Misaligned ? ir::dtypeSize(t) : 0;
    return static_cast<char*>(p) + by;
  };
  for (const HostArray& a : inputs) {
    deviceIn.emplace_back(a.bytes() + 16);
    gpuIn.push_back(shifted(deviceIn.back().p, a.dtype));
    GRAPHC_CUDA_CHECK(
        cudaMemcpy(const_cast<void*>(gpuIn.back()), a.data(), a.bytes(), cudaMemcpyHostToDevice));
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    deviceOut.emplace_back(outputs[o].bytes() + 16);
    gpuOut.push_back(o == 0 && inPlaceOf >= 0 ? const_cast<void*>(gpuIn[inPlaceOf])
                                              : shifted(deviceOut.back().p, outputs[o].dtype));
  }
  DeviceBuffer errorWord(sizeof(int));
  GRAPHC_CUDA_CHECK(cudaMemset(errorWord.p, 0, sizeof(int)));
  gpu.launch(gpuIn, gpuOut, static_cast<int*>(errorWord.p), nullptr);
  GRAPHC_CUDA_CHECK(cudaDeviceSynchronize());
  for (size_t o = 0; o < outputs.size(); ++o)
    GRAPHC_CUDA_CHECK(
        cudaMemcpy(outputs[o].data(), gpuOut[o], outputs[o].bytes(), cudaMemcpyDeviceToHost));
  return outputs;
}

/// Runs `k` on the CPU and the GPU on `inputs` and compares, NaN equal to NaN.
bool sameAsCpuOn(const Kernel& k, const std::vector<HostArray>& inputs, Placement placement,
                 int inPlaceOf) {
  // CPU
  std::vector<HostArray> want;
  for (const codegen::KernelOutput& o : k.outputs)
    want.emplace_back(k.insts[o.inst].dtype, o.value.type().numel());
  std::vector<const void*> cpuIn;
  std::vector<void*> cpuOut;
  std::vector<HostArray> cpuInputs = inputs; // an in-place output overwrites one
  for (HostArray& a : cpuInputs)
    cpuIn.push_back(a.data());
  for (size_t o = 0; o < want.size(); ++o)
    cpuOut.push_back(o == 0 && inPlaceOf >= 0 ? cpuInputs[inPlaceOf].data() : want[o].data());
  cpu::FusedKernel(k).run(cpuIn, cpuOut);
  if (inPlaceOf >= 0)
    std::memcpy(want[0].data(), cpuInputs[inPlaceOf].data(), want[0].bytes());

  CudaFusedKernel gpu(k);
  std::vector<HostArray> gots = runOnGpu(gpu, inputs, placement, inPlaceOf);
  bool same = true;
  for (size_t o = 0; o < want.size(); ++o) {
    const HostArray& got = gots[o];
    bool isFloat = ir::isFloat(got.dtype);
    bool f32 = got.dtype == ir::DType::F32;
    double rtol = !isFloat ? 0 : f32 ? 1e-5 : 1e-12, atol = !isFloat ? 0 : f32 ? 1e-6 : 1e-13;
    int reported = 0;
    for (int64_t i = 0; i < got.numel; ++i) {
      double g = got.at(i), w = want[o].at(i);
      bool ok = (std::isnan(g) && std::isnan(w)) || g == w ||
                std::abs(g - w) <= atol + rtol * std::abs(w);
      if (!ok && reported++ < 5)
        ADD_FAILURE() << "output " << o << " element " << i << ": gpu " << g << ", cpu " << w
                      << "\n"
                      << gpu.cuda().source;
      same = same && ok;
    }
  }
  return same;
}

/// Runs `k` on the CPU and the GPU on the same random inputs and compares.
/// Returns false (after reporting) when some element differs.
bool expectSameAsCpu(const Kernel& k, const std::string& what, uint64_t seed,
                     Placement placement = Placement::Separate) {
  SCOPED_TRACE(what);
  std::mt19937_64 rng(seed);
  std::vector<HostArray> inputs;
  for (const ir::Value& v : k.inputs) {
    const ir::Node& n = *v.node;
    char kind = n.op() == ir::Op::Parameter      ? testing::inputKind(n.attrs().getStr("name"))
                : n.kind() == ir::OpKind::Source ? 'p' // constants (eps): positive
                                                 : testing::inputKind(n.name());
    inputs.push_back(randomArray(v.type(), kind, rng));
  }
  int inPlaceOf = -1;
  if (placement == Placement::InPlace)
    for (size_t i = 0; i < k.inputs.size() && inPlaceOf < 0; ++i)
      if (k.inputs[i].type().numel() == k.outputs[0].value.type().numel() &&
          ir::dtypeSize(k.inputs[i].type().dtype) ==
              ir::dtypeSize(k.insts[k.outputs[0].inst].dtype))
        inPlaceOf = static_cast<int>(i);
  if (placement == Placement::InPlace && inPlaceOf < 0) {
    ADD_FAILURE() << "no input to write output 0 over";
    return false;
  }
  return sameAsCpuOn(k, inputs, placement, inPlaceOf);
}

/// Parses `text`; the graph lives to the end of the tests (kernels point into it).
const ir::Graph& parsed(const std::string& text, const std::string& name) {
  static std::vector<std::unique_ptr<ir::Graph>> graphs;
  graphs.push_back(ir::parseGraph(text, name));
  return *graphs.back();
}

/// The kernels of every case in `dtype`, with their names.
std::vector<std::pair<std::string, Kernel>> allKernels(const char* dtype) {
  std::vector<std::pair<std::string, Kernel>> out;
  for (const testing::KernelCase& c : kernelCases(dtype)) {
    int failed = 0;
    std::vector<Kernel> kernels = kernelsOf(parsed(c.text, c.name), &failed);
    EXPECT_EQ(failed, 0) << c.name;
    for (size_t i = 0; i < kernels.size(); ++i)
      out.emplace_back(fmt::format("{} {} kernel {}", c.name, dtype, i), std::move(kernels[i]));
  }
  return out;
}

/// The kernels of `text`.
std::vector<Kernel> kernelsOfText(const std::string& text) {
  return kernelsOf(parsed(text, "test.gir"));
}

/// A fresh folder for a disk cache.
std::string tempCacheDir() {
  static int count = 0;
  std::string dir = fmt::format("{}/graphc-cache-test-{}-{}",
                                std::filesystem::temp_directory_path().string(), getpid(), count++);
  std::filesystem::remove_all(dir);
  return dir;
}

/// W3's chain over `n` f32 elements.
std::string chain(int64_t n) {
  return bench::chainGraph(n, "f32");
}

TEST(CudaKernel, EveryCaseMatchesTheCpu) {
  GRAPHC_REQUIRE_GPU();
  for (const char* dtype : {"f32", "f64"}) {
    auto kernels = allKernels(dtype);
    // Compile them all in parallel first; each CudaFusedKernel is then a memory hit.
    std::vector<codegen::CudaKernel> sources;
    for (const auto& [name, k] : kernels)
      sources.push_back(codegen::emitCuda(k, "graphc_kernel", cuda::currentTarget()));
    KernelCache::global().compileAll(sources);
    int failed = 0;
    for (size_t i = 0; i < kernels.size(); ++i)
      failed += !expectSameAsCpu(kernels[i].second, kernels[i].first, 100 + i);
    EXPECT_EQ(failed, 0) << "of " << kernels.size() << " " << dtype << " kernels";
  }
}

TEST(CudaKernel, EveryElementwiseOpMatchesAnF64Reference) {
  GRAPHC_REQUIRE_GPU();
  std::vector<testing::ElementwiseCase> cases = testing::elementwiseCases(4099);
  std::vector<codegen::CudaKernel> sources;
  for (const testing::ElementwiseCase& c : cases)
    sources.push_back(codegen::emitCuda(c.kernel, "graphc_kernel", cuda::currentTarget()));
  KernelCache::global().compileAll(sources);
  for (const testing::ElementwiseCase& c : cases) {
    std::vector<HostArray> inputs = testing::elementwiseInputs(c);
    CudaFusedKernel gpu(c.kernel);
    EXPECT_EQ(testing::checkElementwise(c, inputs, runOnGpu(gpu, inputs)[0], "gpu"), 0)
        << gpu.cuda().source;
  }
  EXPECT_GE(cases.size(), 130u);
}

/// The one kernel of multi-stage case `c` (the graph lives to the end of the tests).
Kernel multiStageKernel(const testing::MultiStageCase& c) {
  auto k = testing::wholeKernel(parsed(c.text, c.name));
  if (auto* why = std::get_if<std::string>(&k))
    throw Error(c.name + ": " + *why);
  return std::get<Kernel>(std::move(k));
}

TEST(CudaKernel, MultiStageKernelsMatchTheCpu) {
  GRAPHC_REQUIRE_GPU();
  for (const char* dtype : {"f32", "f64"}) {
    std::vector<std::pair<std::string, Kernel>> kernels;
    for (const testing::MultiStageCase& c : testing::multiStageCases(dtype)) {
      kernels.emplace_back(fmt::format("{} {}", c.name, dtype), multiStageKernel(c));
      EXPECT_EQ(kernels.back().second.stages(), c.stages) << c.name;
    }
    std::vector<codegen::CudaKernel> sources;
    for (const auto& [name, k] : kernels)
      sources.push_back(codegen::emitCuda(k, "graphc_kernel", cuda::currentTarget()));
    KernelCache::global().compileAll(sources);
    int failed = 0;
    for (size_t i = 0; i < kernels.size(); ++i)
      failed += !expectSameAsCpu(kernels[i].second, kernels[i].first, 500 + i);
    EXPECT_EQ(failed, 0) << "of " << kernels.size() << " " << dtype << " kernels";
  }
  // The domain output over the input every stage reads.
  for (const testing::MultiStageCase& c : testing::multiStageCases("f32")) {
    if (c.name == "layernorm_5000" || c.name == "layernorm_1000" ||
        c.name == "softmax_short_rows" || c.name == "softmax_50257") {
      EXPECT_TRUE(
          expectSameAsCpu(multiStageKernel(c), c.name + " in place", 11, Placement::InPlace));
    }
  }
}

TEST(CudaKernel, SoftmaxOverRowsWithInfinitiesAndNaNs) {
  GRAPHC_REQUIRE_GPU();
  // Softmax with its max and sum as outputs, and logsumexp, over rows of every launch
  // form (the GPU sums exp(x - max) in the max's pass where a block reads the rows
  // from memory, f64 50257 points, and in the load where shared memory holds them,
  // by vectors over 600 rows of 32001 f32; the CPU after it): random rows, rising
  // rows, rows with -inf first, an all -inf row, a NaN, a +inf, two +inf, every 9 rows.
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::mt19937_64 rng(23);
  std::normal_distribution<double> normal(0, 3);
  const std::pair<int64_t, int64_t> shapes[] = {{9, 5},    {9, 70},    {9, 1500},
                                                {9, 3000}, {9, 50257}, {600, 32001}};
  for (const char* dtype : {"f32", "f64"})
    for (auto [rows, cols] : shapes) {
      std::string text = testing::softmaxText(rows, cols);
      text.replace(text.find("return %y"), 9, "return %y, %s, %m");
      HostArray x(*ir::parseDType(dtype), rows * cols);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < cols; ++j) {
          int64_t kind = r % 9;
          double v = kind == 1 ? -10 + 20.0 * j / cols : normal(rng);
          if ((kind == 2 && j < cols / 2) || kind == 3 || (kind == 6 && j % 3 == 0))
            v = -inf;
          x.set(r * cols + j, v);
        }
      for (int64_t r = 0; r + 9 <= rows; r += 9) {
        x.set((r + 4) * cols + cols / 3, std::nan(""));
        x.set((r + 5) * cols + cols / 2, inf);
        x.set((r + 8) * cols, inf);
        x.set((r + 8) * cols + cols - 1, inf);
      }
      for (const std::string& graph : {text, testing::logSumExpText(rows, cols)}) {
        SCOPED_TRACE(fmt::format("{} {}\n{}", dtype, cols, graph));
        Kernel k = multiStageKernel({"softmax_sums", testing::withType(graph, dtype), 1, ""});
        EXPECT_TRUE(sameAsCpuOn(k, {x}, Placement::Separate, -1));
      }
    }
}

TEST(CudaKernel, LongRowsAreCachedInSharedMemory) {
  GRAPHC_REQUIRE_GPU();
  // Rows of 50257 f32 (201040 bytes) fit the 227 KB a block of an H100 or H200 may
  // use: there the kernel loads each row once, into shared memory.
  codegen::CudaTarget target = cuda::currentTarget();
  for (const testing::MultiStageCase& c : testing::multiStageCases("f32")) {
    if (c.name == "softmax_50257") {
      CudaFusedKernel gpu(multiStageKernel(c));
      if (target.sharedBytes >= codegen::CudaTarget::sm90().sharedBytes) {
        EXPECT_EQ(gpu.cuda().sharedBytes, 201040);
      }
      EXPECT_TRUE(expectSameAsCpu(gpu.kernel(), c.name, 17));
    }
  }
}

/// Runs `k` with its own grid and with `grid` blocks (each block then walks several
/// segments, reusing its shared memory) on the same inputs; true when every output
/// is bitwise the same.
bool sameWithGrid(const Kernel& k, unsigned grid, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<DeviceBuffer> in;
  std::vector<const void*> inPtrs;
  for (const ir::Value& v : k.inputs) {
    HostArray a = randomArray(v.type(), 'x', rng);
    in.emplace_back(a.bytes());
    GRAPHC_CUDA_CHECK(cudaMemcpy(in.back().p, a.data(), a.bytes(), cudaMemcpyHostToDevice));
    inPtrs.push_back(in.back().p);
  }
  CudaFusedKernel gpu(k);
  std::vector<std::vector<char>> results[2];
  for (int run = 0; run < 2; ++run) {
    std::vector<DeviceBuffer> out;
    std::vector<void*> outPtrs;
    std::vector<size_t> bytes;
    for (const codegen::KernelOutput& o : k.outputs) {
      bytes.push_back(o.value.type().numel() * ir::dtypeSize(k.insts[o.inst].dtype));
      out.emplace_back(bytes.back());
      GRAPHC_CUDA_CHECK(cudaMemset(out.back().p, 0xff, bytes.back()));
      outPtrs.push_back(out.back().p);
    }
    if (run == 0) {
      gpu.launch(inPtrs, outPtrs, nullptr, nullptr);
    } else {
      cuda::KernelLaunch l = gpu.launchOf(inPtrs, outPtrs, nullptr);
      l.config.grid = dim3(grid);
      l.enqueue(nullptr);
    }
    GRAPHC_CUDA_CHECK(cudaDeviceSynchronize());
    for (size_t o = 0; o < out.size(); ++o) {
      results[run].emplace_back(bytes[o]);
      GRAPHC_CUDA_CHECK(
          cudaMemcpy(results[run].back().data(), out[o].p, bytes[o], cudaMemcpyDeviceToHost));
    }
  }
  return results[0] == results[1];
}

TEST(CudaKernel, MultiStageKernelsOnASmallGrid) {
  GRAPHC_REQUIRE_GPU();
  for (const char* dtype : {"f32", "f64"})
    for (const testing::MultiStageCase& c : testing::multiStageCases(dtype)) {
      Kernel k = multiStageKernel(c);
      EXPECT_TRUE(sameWithGrid(k, 2, 600)) << c.name << " " << dtype;
    }
}

TEST(CudaKernel, ChainOf16MElements) {
  GRAPHC_REQUIRE_GPU();
  std::vector<Kernel> kernels = kernelsOfText(chain(int64_t{1} << 24));
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_TRUE(expectSameAsCpu(kernels[0], "chain 16M", 7));
  EXPECT_NE(codegen::emitCuda(kernels[0], "k").source.find("gc_vec<f32, 4>"), std::string::npos);
}

/// A layernorm moving more than the L2 holds goes by 16-byte vectors where its
/// buffers are aligned, a point at a time where not: the same results as the CPU.
TEST(CudaKernel, WideLayernorm) {
  GRAPHC_REQUIRE_GPU();
  std::vector<Kernel> kernels = kernelsOfText(bench::layernormGraph(5000, 4096, "f32"));
  ASSERT_EQ(kernels.size(), 1u);
  ASSERT_NE(codegen::emitCuda(kernels[0], "k").source.find("float4"), std::string::npos);
  EXPECT_TRUE(expectSameAsCpu(kernels[0], "layernorm 5000 x 4096", 13));
  EXPECT_TRUE(expectSameAsCpu(kernels[0], "misaligned", 14, Placement::Misaligned));
  // f64: two points per vector; elementwise chains, vectorized and not (n odd).
  for (const Kernel& k : kernelsOfText(bench::layernormGraph(1100, 8192, "f64")))
    for (Placement at : {Placement::Separate, Placement::Misaligned})
      EXPECT_TRUE(expectSameAsCpu(k, "layernorm f64", 15, at));
  for (int64_t n : {4096, 1001})
    for (const Kernel& k : kernelsOfText(chain(n)))
      EXPECT_TRUE(
          expectSameAsCpu(k, fmt::format("chain {} misaligned", n), 16, Placement::Misaligned));
}

/// A graph of one kernel, and what to call it.
struct TextCase {
  std::string text;
  const char* what;
};

/// Each case's kernel against the CPU in each placement of `at`, with seeds from
/// `seed` on, once its source for this device has the form `form` checks.
void expectEachSameAsCpu(std::initializer_list<TextCase> cases, std::initializer_list<Placement> at,
                         uint64_t seed,
                         const std::function<bool(const codegen::CudaKernel&)>& form) {
  for (const TextCase& c : cases) {
    std::vector<Kernel> kernels = kernelsOfText(c.text);
    ASSERT_EQ(kernels.size(), 1u) << c.what;
    codegen::CudaKernel source = codegen::emitCuda(kernels[0], "k", cuda::currentTarget());
    ASSERT_TRUE(form(source)) << c.what << "\n" << source.source;
    for (Placement placement : at)
      EXPECT_TRUE(expectSameAsCpu(kernels[0], c.what, ++seed, placement));
  }
}

/// Wide rows of a length that is no multiple of a vector (RowPlan::peeled): each
/// row's runs start at its first aligned point, the points around them go one to a
/// lane. In registers (row normalization over 4097 and 513 points, f32 and f64) and
/// in shared memory (softmax over 16385 and 32001), aligned and not.
TEST(CudaKernel, PeeledWideRows) {
  GRAPHC_REQUIRE_GPU();
  using testing::withType;
  expectEachSameAsCpu(
      {{withType(testing::rowNormText(2100, 4097), "f32"), "rownorm f32 x 4097"},
       {withType(testing::rowNormText(1100, 4097), "f64"), "rownorm f64 x 4097"},
       {withType(testing::rowNormText(33000, 513), "f32"), "rownorm f32 x 513"},
       {withType(testing::softmaxText(1100, 16385), "f32"), "softmax f32 x 16385"},
       {withType(testing::softmaxText(600, 32001), "f32"), "softmax f32 x 32001"}},
      {Placement::Separate, Placement::Misaligned}, 40,
      [](const codegen::CudaKernel& k) { return k.source.find("jp < L") != std::string::npos; });
}

/// Rows in shared memory that leave no room for a second block on an SM: a block an
/// SM walks the rows, each lane copying its runs of the next row into their slots as
/// the output pass frees them, or after the row where it has reduced outputs only.
/// Peeled and not, f32 and f64, with var's second pass; outputs apart, over the
/// input, and misaligned (a point at a time, nothing ahead). Each case moves more
/// than kWideBytes (64 MB; codegen/CudaEmitter.h): under it rows go a point at a
/// time and copy nothing ahead.
TEST(CudaKernel, NextRowsCopiedAheadIntoSharedMemory) {
  GRAPHC_REQUIRE_GPU();
  using testing::withType;
  auto ahead = [](const codegen::CudaKernel& k) {
    return k.source.find("gc_copy_async") != std::string::npos && k.gridSize < 300;
  };
  expectEachSameAsCpu({{withType(testing::softmaxText(600, 32001), "f32"), "softmax f32 x 32001"},
                       {withType(testing::rowNormText(300, 56000), "f32"), "rownorm f32 x 56000"},
                       {withType(testing::softmaxText(600, 16385), "f64"), "softmax f64 x 16385"}},
                      {Placement::Separate, Placement::InPlace, Placement::Misaligned}, 60, ahead);
  expectEachSameAsCpu(
      {{withType(testing::reducedOnlyText(600, 30001), "f32"), "max, sum and var f32 x 30001"}},
      {Placement::Separate, Placement::Misaligned}, 61, ahead);
}

/// Over rows that go by vectors into shared memory, the first stage's reductions take
/// the points as they are loaded, a peeled row's point before its runs last: argmax
/// over rows full of ties still gives the first position of the largest value (or
/// of the first NaN), as the CPU does.
TEST(CudaKernel, ArgmaxOfRowsLoadedIntoSharedMemoryKeepsTheFirstTie) {
  GRAPHC_REQUIRE_GPU();
  const int64_t rows = 1100, cols = 16385;
  std::string text = testing::softmaxText(rows, cols);
  text.replace(text.find("  %mb = "), 0, "  %i = argmax %x {axes=[1], keepdims}\n");
  text.replace(text.find("return %y"), 9, "return %y, %i");
  std::vector<Kernel> kernels = kernelsOfText(testing::withType(text, "f32"));
  ASSERT_EQ(kernels.size(), 1u);
  codegen::CudaKernel source = codegen::emitCuda(kernels[0], "k", codegen::CudaTarget::sm90());
  ASSERT_GT(source.sharedBytes, 0) << source.source;
  ASSERT_NE(source.source.find("jp < L"), std::string::npos) << source.source;
  std::mt19937_64 rng(45);
  std::uniform_int_distribution<int> small(0, 3);
  HostArray x(ir::DType::F32, rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j)
      x.set(r * cols + j, r % 5 == 0 ? 1.0 : small(rng)); // every fifth row one tie
  x.set(7 * cols + 5000, std::nan(""));
  x.set(7 * cols + 100, std::nan(""));
  for (Placement at : {Placement::Separate, Placement::Misaligned})
    EXPECT_TRUE(sameAsCpuOn(kernels[0], {x}, at, -1));
}

/// A var broadcast back over its rows is one value per row: lanes merging unequal
/// counts (gc_merge rounds differently in each order) end with the same bits.
/// 1000 columns: a warp per row, moments merged; 3000: a block per row, two passes
/// over the rows cached in registers.
TEST(CudaKernel, VarianceIsOneValuePerRow) {
  GRAPHC_REQUIRE_GPU();
  for (int64_t cols : {1000, 3000}) {
    SCOPED_TRACE(cols);
    std::string text = fmt::format(R"(graph @v(%x: f64[64,{0}]) {{
  %v = var %x {{axes=[1], keepdims}}
  %vb = broadcast_to %v {{shape=[64,{0}]}}
  %zero = sub %x, %x
  %out = add %vb, %zero
  return %out
}})",
                                   cols);
    std::vector<Kernel> kernels = kernelsOfText(text);
    ASSERT_EQ(kernels.size(), 1u);
    ASSERT_TRUE(expectSameAsCpu(kernels[0], "var over rows", 17));
    // Each lane's points nearly equal, the lanes' far apart: the merges make the
    // variance, so their rounding shows in it.
    std::mt19937_64 rng(18);
    std::uniform_real_distribution<double> noise(-1e-3, 1e-3);
    std::vector<HostArray> inputs = {HostArray(ir::DType::F64, 64 * cols)};
    for (int64_t i = 0; i < 64 * cols; ++i)
      static_cast<double*>(inputs[0].data())[i] = static_cast<double>(i % cols % 32) + noise(rng);
    HostArray out = runOnGpu(CudaFusedKernel(kernels[0]), inputs)[0];
    for (int64_t r = 0; r < 64; ++r)
      for (int64_t c = 1; c < cols; ++c)
        ASSERT_EQ(out.at(r * cols + c), out.at(r * cols)) << "row " << r << " column " << c;
  }
}

/// Row normalization, (x - mean) / std, over rows a block caches: in registers
/// (4097 points, a ragged share a lane) and in shared memory (16385; 56000 f32,
/// 224000 bytes), where var takes two passes over the cache; and over rows no
/// cache holds (56000 f64: one-pass moments). Against the CPU kernel, and on rows
/// of mean 1000 and spread 1 in f32 against a two-pass loop in double.
TEST(CudaKernel, RowNormalizationOverLongRows) {
  GRAPHC_REQUIRE_GPU();
  for (int64_t cols : {4097, 16385, 56000})
    for (const char* dtype : {"f32", "f64"}) {
      std::vector<Kernel> kernels =
          kernelsOfText(testing::withType(testing::rowNormText(6, cols), dtype));
      ASSERT_EQ(kernels.size(), 1u);
      EXPECT_TRUE(expectSameAsCpu(kernels[0], fmt::format("rows of {} {}", cols, dtype), 19));
    }
  for (int64_t cols : {4097, 16385, 56000}) {
    SCOPED_TRACE(cols);
    std::vector<Kernel> kernels =
        kernelsOfText(testing::withType(testing::rowNormText(3, cols), "f32"));
    ASSERT_EQ(kernels.size(), 1u);
    std::mt19937_64 rng(20);
    std::normal_distribution<float> normal(1000.0f, 1.0f);
    std::vector<HostArray> inputs = {HostArray(ir::DType::F32, 3 * cols)};
    float* x = static_cast<float*>(inputs[0].data());
    for (int64_t i = 0; i < 3 * cols; ++i)
      x[i] = normal(rng);
    HostArray out = runOnGpu(CudaFusedKernel(kernels[0]), inputs)[0];
    for (int64_t r = 0; r < 3; ++r) {
      double mean = 0, squares = 0;
      for (int64_t c = 0; c < cols; ++c)
        mean += x[r * cols + c];
      mean /= static_cast<double>(cols);
      for (int64_t c = 0; c < cols; ++c)
        squares += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
      double sd = std::sqrt(squares / static_cast<double>(cols));
      for (int64_t c = 0; c < cols; ++c)
        ASSERT_NEAR(out.at(r * cols + c), (x[r * cols + c] - mean) / sd, 2e-3)
            << "row " << r << " column " << c;
    }
  }
}

TEST(CudaKernel, OutputsInPlace) {
  GRAPHC_REQUIRE_GPU();
  // Elementwise, vectorized and not (n odd: a scalar tail).
  for (int64_t n : {4096, 1001})
    for (const Kernel& k : kernelsOfText(chain(n)))
      EXPECT_TRUE(expectSameAsCpu(k, fmt::format("chain {} in place", n), 8, Placement::InPlace));
  // A domain output over the reduction's input; a reduced output over a reduced input.
  for (const char* text : {R"(graph @ln(%x: f32[67,3000]) {
  %m = mean %x {axes=[1], keepdims}
  %mb = broadcast_to %m {shape=[67,3000]}
  %d = sub %x, %mb
  %q = square %d
  %v = mean %q {axes=[1], keepdims}
  %vb = broadcast_to %v {shape=[67,3000]}
  %y = div %d, %vb
  return %y
})",
                           R"(graph @red(%x: f64[67,300], %m: f64[67,1]) {
  %mb = broadcast_to %m {shape=[67,300]}
  %d = sub %x, %mb
  %s = sum %d {axes=[1], keepdims}
  return %s
})",
                           R"(graph @col(%x: f64[300,67], %m: f64[1,67]) {
  %mb = broadcast_to %m {shape=[300,67]}
  %d = sub %x, %mb
  %s = max %d {axes=[0], keepdims}
  %sb = broadcast_to %s {shape=[300,67]}
  %y = sub %d, %sb
  return %y
})"}) {
    std::vector<Kernel> kernels = kernelsOfText(text);
    EXPECT_TRUE(expectSameAsCpu(kernels.back(), "in place", 9, Placement::InPlace)) << text;
  }
}

TEST(CudaKernel, IntegerDivisionByZeroSetsTheErrorWord) {
  GRAPHC_REQUIRE_GPU();
  Kernel k = kernelsOfText("graph @d(%a: i32[300], %b: i32[300]) {\n  %q = div %a, %b\n"
                           "  return %q\n}")
                 .at(0);
  CudaFusedKernel gpu(k);
  ASSERT_TRUE(gpu.hasErrorWord());
  std::vector<int32_t> a(300, 5), b(300, 1);
  b[123] = 0;
  DeviceBuffer da(1200), db(1200), dq(1200), word(sizeof(int));
  GRAPHC_CUDA_CHECK(cudaMemcpy(da.p, a.data(), 1200, cudaMemcpyHostToDevice));
  GRAPHC_CUDA_CHECK(cudaMemcpy(db.p, b.data(), 1200, cudaMemcpyHostToDevice));
  GRAPHC_CUDA_CHECK(cudaMemset(word.p, 0, sizeof(int)));
  gpu.launch({da.p, db.p}, {dq.p}, static_cast<int*>(word.p), nullptr);
  int code = 0;
  GRAPHC_CUDA_CHECK(cudaMemcpy(&code, word.p, sizeof code, cudaMemcpyDeviceToHost));
  try {
    gpu.throwIfFailed(code);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "div (%q): integer division by zero");
  }
  GRAPHC_CUDA_CHECK(cudaMemset(word.p, 0, sizeof(int)));
  b[123] = 1;
  GRAPHC_CUDA_CHECK(cudaMemcpy(db.p, b.data(), 1200, cudaMemcpyHostToDevice));
  gpu.launch({da.p, db.p}, {dq.p}, static_cast<int*>(word.p), nullptr);
  GRAPHC_CUDA_CHECK(cudaMemcpy(&code, word.p, sizeof code, cudaMemcpyDeviceToHost));
  EXPECT_EQ(code, 0);
}

TEST(CudaKernel, EmptyReductionFailsLikeTheCpu) {
  GRAPHC_REQUIRE_GPU();
  Kernel k = kernelsOfText("graph @e(%x: f32[3,0]) {\n  %m = max %x {axes=[1]}\n"
                           "  return %m\n}")
                 .at(0);
  CudaFusedKernel gpu(k);
  DeviceBuffer out(12);
  try {
    gpu.launch({nullptr}, {out.p}, nullptr, nullptr);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "max (%m): reduction over zero elements (axes [1] of f32[3,0])");
  }
}

TEST(KernelCache, SecondGetIsAMemoryHitAndANewCacheReadsTheDisk) {
  GRAPHC_REQUIRE_GPU();
  KernelCache::Options options;
  options.diskDir = tempCacheDir();
  Kernel k = kernelsOfText(chain(1000)).at(0);
  codegen::CudaKernel source = codegen::emitCuda(k, "graphc_kernel", cuda::currentTarget());
  KernelCache cache(options);
  ASSERT_EQ(cache.diskDir(), *options.diskDir);
  auto first = cache.get(source);
  auto second = cache.get(source);
  EXPECT_EQ(first, second);
  EXPECT_EQ(cache.stats().compiled, 1u);
  EXPECT_EQ(cache.stats().memoryHits, 1u);
  EXPECT_TRUE(std::filesystem::exists(cache.diskPath(source)));

  KernelCache fresh(options);
  auto fromDisk = fresh.get(source);
  EXPECT_EQ(fresh.stats().diskHits, 1u);
  EXPECT_EQ(fresh.stats().compiled, 0u);
  EXPECT_EQ(fromDisk->module.image, first->module.image);
  cache.clearMemory();
  cache.get(source);
  EXPECT_EQ(cache.stats().diskHits, 1u);
  // The kernel from the disk runs.
  EXPECT_TRUE(expectSameAsCpu(k, "chain from disk", 3));
  std::filesystem::remove_all(*options.diskDir);
}

/// Elementwise kernels of identity loads take their size as a parameter: W3's chain
/// at three sizes compiles once, and each size gives the CPU's results.
TEST(KernelCache, OneKernelServesEveryChainSize) {
  GRAPHC_REQUIRE_GPU();
  KernelCache::Options options;
  options.diskDir = tempCacheDir();
  KernelCache cache(options);
  for (int64_t n : {3, 1000, 5001}) {
    Kernel k = kernelsOfText(chain(n)).at(0);
    CudaFusedKernel kernel(k, cache);
    EXPECT_EQ(kernel.cuda().size, n);
    EXPECT_TRUE(expectSameAsCpu(k, fmt::format("chain {}", n), 12));
  }
  EXPECT_EQ(cache.stats().compiled, 1u);
  EXPECT_EQ(cache.stats().memoryHits, 2u);
  std::filesystem::remove_all(*options.diskDir);
}

TEST(KernelCache, OneKernelServesEveryRowCount) {
  GRAPHC_REQUIRE_GPU();
  KernelCache::Options options;
  options.diskDir = tempCacheDir();
  KernelCache cache(options);
  // A row and column broadcast, then a layernorm (reductions over rows), each at
  // three row counts: the count is the kernels' last parameter.
  auto bias = [](int64_t rows) {
    return fmt::format(R"(graph @bias(%x: f64[{0},37], %b: f64[37], %c: f64[{0},1]) {{
  %bb = broadcast_to %b {{shape=[{0},37]}}
  %cb = broadcast_to %c {{shape=[{0},37]}}
  %y = mul %x, %bb
  %z = add %y, %cb
  return %z
}})",
                       rows);
  };
  size_t kernels = 0;
  for (int64_t rows : {1, 5, 300}) {
    std::vector<Kernel> ks = kernelsOfText(bias(rows));
    for (const Kernel& k : kernelsOfText(bench::layernormGraph(rows + 1, 200, "f32")))
      ks.push_back(k);
    for (size_t i = 0; i < ks.size(); ++i) {
      CudaFusedKernel kernel(ks[i], cache);
      EXPECT_GE(kernel.cuda().size, 0) << kernel.cuda().source;
      EXPECT_TRUE(expectSameAsCpu(ks[i], fmt::format("kernel {} of {} rows", i, rows), 13 + i));
    }
    kernels = ks.size();
  }
  // A single row drops the row axis from the broadcast's offsets: a source of its own.
  EXPECT_EQ(cache.stats().compiled, kernels + 1);
  EXPECT_EQ(cache.stats().memoryHits, 3 * kernels - cache.stats().compiled);
  std::filesystem::remove_all(*options.diskDir);
}

TEST(KernelCache, CorruptedDiskEntryIsIgnoredAndRewritten) {
  GRAPHC_REQUIRE_GPU();
  KernelCache::Options options;
  options.diskDir = tempCacheDir();
  codegen::CudaKernel source = codegen::emitCuda(kernelsOfText(chain(999)).at(0), "k");
  std::string path;
  {
    KernelCache cache(options);
    cache.get(source);
    path = cache.diskPath(source);
  }
  for (int damage = 0; damage < 2; ++damage) {
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(bytes.size(), 100u);
    if (damage == 0)
      bytes[bytes.size() / 2] ^= 0x5a; // a flipped byte
    else
      bytes.resize(bytes.size() / 3); // a torn write
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    KernelCache cache(options);
    cache.get(source);
    EXPECT_EQ(cache.stats().diskHits, 0u);
    EXPECT_EQ(cache.stats().compiled, 1u);
    KernelCache again(options); // the entry was rewritten
    again.get(source);
    EXPECT_EQ(again.stats().diskHits, 1u);
  }
  std::filesystem::remove_all(*options.diskDir);
}

TEST(KernelCache, UnwritableFolderDisablesTheDiskCache) {
  GRAPHC_REQUIRE_GPU();
  KernelCache::Options options;
  options.diskDir = "/proc/graphc-cannot-write-here";
  KernelCache cache(options);
  EXPECT_EQ(cache.diskDir(), "");
  cache.get(codegen::emitCuda(kernelsOfText(chain(998)).at(0), "k"));
  EXPECT_EQ(cache.stats().compiled, 1u);
}

TEST(KernelCache, DefaultFolderFollowsTheEnvironment) {
  GRAPHC_REQUIRE_GPU();
  std::string saved[3];
  const char* names[3] = {"GRAPHC_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  for (int i = 0; i < 3; ++i)
    saved[i] = std::getenv(names[i]) ? std::getenv(names[i]) : "";
  setenv("HOME", "/home/u", 1);
  unsetenv("GRAPHC_CACHE_DIR");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(KernelCache::defaultDiskDir(), "/home/u/.cache/graphc/kernels");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(KernelCache::defaultDiskDir(), "/xdg/graphc/kernels");
  setenv("GRAPHC_CACHE_DIR", "/mine", 1);
  EXPECT_EQ(KernelCache::defaultDiskDir(), "/mine");
  for (int i = 0; i < 3; ++i)
    if (saved[i].empty())
      unsetenv(names[i]);
    else
      setenv(names[i], saved[i].c_str(), 1);
}

TEST(KernelCache, CompileAllCompilesEachKernelOnce) {
  GRAPHC_REQUIRE_GPU();
  KernelCache::Options options;
  options.diskDir = "";
  KernelCache cache(options);
  std::vector<codegen::CudaKernel> sources;
  for (const char* text : {"graph @a(%x: f64[100]) {\n  %y = exp %x\n  return %y\n}",
                           "graph @b(%x: f64[100]) {\n  %y = sin %x\n  return %y\n}",
                           "graph @c(%x: f64[10,10]) {\n  %y = sum %x {axes=[1]}\n  return %y\n}"})
    sources.push_back(codegen::emitCuda(kernelsOfText(text).at(0), "k"));
  sources.push_back(sources[0]); // a duplicate: compiled once
  // With the library's modules, as a prepared program compiles them (they come
  // from the build's prebuilt table where it holds this device's architecture).
  std::vector<cuda::ModuleSource> modules = cuda::HelperKernels::moduleSources();
  const size_t compiled = 3 + modules.size();
  auto loaded = cache.compileAll(sources, modules);
  ASSERT_EQ(loaded.size(), 4u);
  EXPECT_EQ(loaded[0], loaded[3]);
  for (const auto& l : loaded)
    EXPECT_NE(l, nullptr);
  EXPECT_EQ(cache.stats().compiled + cache.stats().prebuilt, compiled);
  EXPECT_EQ(cache.stats().memoryHits, 1u);
  for (const cuda::ModuleSource& m : modules)
    EXPECT_NE(cache.getModule(m), nullptr);
  EXPECT_EQ(cache.stats().compiled + cache.stats().prebuilt, compiled);
  EXPECT_EQ(cache.stats().memoryHits, 1 + modules.size());
}

TEST(KernelCache, CompileErrorsShowTheGeneratedSource) {
  GRAPHC_REQUIRE_GPU();
  KernelCache::Options options;
  options.diskDir = "";
  KernelCache cache(options);
  codegen::CudaKernel bad;
  bad.name = "broken";
  bad.source = "extern \"C\" __global__ void broken() { undeclared = 1; }\n";
  for (int attempt = 0; attempt < 2; ++attempt) { // a failed key is retried
    try {
      cache.get(bad);
      FAIL() << "expected a compile error";
    } catch (const Error& e) {
      EXPECT_NE(e.message().find("undeclared"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("   1 | extern \"C\""), std::string::npos) << e.message();
    }
  }
}

} // namespace
} // namespace graphc
