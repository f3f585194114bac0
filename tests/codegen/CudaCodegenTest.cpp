//===- tests/codegen/CudaCodegenTest.cpp - CUDA source without a GPU ------===//
//
// Every kernel of tests/codegen/KernelCases.h, f32 and f64: the generated source is
// the same on every emission and for a graph parsed again, it has the launch form
// and vectorization we expect (multi-stage kernels: one pass per stage; elementwise
// kernels of identity loads: one source for every size), and NVRTC
// compiles it for sm_90 (NVRTC needs no driver). Numeric agreement with the CPU is
// tests/gpu/CudaKernelTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "bench/Workloads.h"
#include "codegen/Cuda.h"
#include "passes/Masks.h"
#include "tests/codegen/KernelCases.h"

#if GRAPHC_HAS_CUDA
#include "runtime/cuda/Nvrtc.h"
#endif

#include <gtest/gtest.h>

#include <initializer_list>
#include <map>
#include <thread>

namespace graphc {
namespace {

using codegen::CudaKernel;
using testing::kernelCases;
using testing::kernelsOf;

/// The generated kernels of one case.
std::vector<CudaKernel> generate(const std::string& text, const std::string& name) {
  std::unique_ptr<ir::Graph> g = ir::parseGraph(text, name);
  int failed = 0;
  std::vector<codegen::Kernel> kernels = kernelsOf(*g, &failed);
  EXPECT_EQ(failed, 0) << name;
  std::vector<CudaKernel> out;
  for (size_t i = 0; i < kernels.size(); ++i)
    out.push_back(codegen::emitCuda(kernels[i], fmt::format("k{}", i)));
  return out;
}

/// The one kernel of multi-stage case `c` (testing::wholeKernel), or a failure.
std::vector<CudaKernel> generateMultiStage(const testing::MultiStageCase& c) {
  std::unique_ptr<ir::Graph> g = ir::parseGraph(c.text, c.name);
  auto k = testing::wholeKernel(*g);
  if (auto* why = std::get_if<std::string>(&k)) {
    ADD_FAILURE() << c.name << ": " << *why;
    return {};
  }
  const codegen::Kernel& kernel = std::get<codegen::Kernel>(k);
  EXPECT_EQ(kernel.stages(), c.stages) << c.name << "\n" << codegen::printKernel(kernel);
  return {codegen::emitCuda(kernel, "k0", codegen::CudaTarget::sm90())};
}

/// Expects NVRTC to compile each source for compute capability 9.0 (where the
/// build has CUDA).
void expectCompilesForSm90(std::initializer_list<std::string> sources) {
#if GRAPHC_HAS_CUDA
  cuda::CompileOptions options;
  options.computeCapability = 90;
  for (const std::string& source : sources)
    EXPECT_NO_THROW(cuda::compileCuda(source, "k.cu", options)) << source;
#else
  (void)sources;
#endif
}

/// How often `what` occurs in `text`.
size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

/// The kernels of case `name` in `dtype`.
std::vector<CudaKernel> generateCase(const std::string& name, const char* dtype) {
  for (const testing::KernelCase& c : kernelCases(dtype))
    if (c.name == name)
      return generate(c.text, c.name);
  ADD_FAILURE() << "no case " << name;
  return {};
}

TEST(CudaCodegen, EveryCaseIsDeterministic) {
  for (const char* dtype : {"f32", "f64"})
    for (const testing::KernelCase& c : kernelCases(dtype)) {
      std::vector<CudaKernel> a = generate(c.text, c.name), b = generate(c.text, c.name);
      ASSERT_FALSE(a.empty()) << c.name;
      ASSERT_EQ(a.size(), b.size()) << c.name;
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].source, b[i].source) << c.name;
        EXPECT_EQ(a[i].gridSize, b[i].gridSize);
        EXPECT_NE(a[i].source.find(fmt::format("extern \"C\" __global__ void __launch_bounds__(BS) "
                                               "k{}(",
                                               i)),
                  std::string::npos)
            << a[i].source;
      }
    }
}

TEST(CudaCodegen, ElementwiseChainsUse16ByteVectors) {
  std::string f32 = generateCase("w3_chain", "f32").at(0).source;
  EXPECT_NE(f32.find("gc_vec<f32, 4>"), std::string::npos) << f32;
  std::string f64 = generateCase("w3_chain", "f64").at(0).source;
  EXPECT_NE(f64.find("gc_vec<f64, 2>"), std::string::npos) << f64;
  // A broadcast load is not the identity: scalar loads with offsets from the point,
  // beside the vector loads of the identity ones (and in the scalar tail).
  CudaKernel bc = generateCase("broadcast_rows_cols", "f32").at(0);
  EXPECT_NE(bc.source.find("gc_vec<f32, 4> l0 = ((const gc_vec<f32, 4>*)in0)[q]"),
            std::string::npos)
      << bc.source;
  EXPECT_NE(bc.source.find("const bool aligned = (((u64)in0 | (u64)out0) & 15) == 0;"),
            std::string::npos)
      << bc.source;
  for (const char* load : {"in1[pu % 53]", "in2[pu / 53]", "in1[p % 53]", "in2[p / 53]"})
    EXPECT_NE(bc.source.find(load), std::string::npos) << load << "\n" << bc.source;
  EXPECT_EQ(bc.launch, CudaKernel::Launch::Elementwise);
  EXPECT_EQ(bc.source.find("typedef i64 idx"), std::string::npos);
}

/// A kernel that reads no point's coordinates takes its loop count as a parameter:
/// W3's chain at three sizes has one source (one compile, one cache entry) and a
/// grid and N of its own.
TEST(CudaCodegen, ElementwiseSizesAreAParameter) {
  std::vector<CudaKernel> chains;
  for (int64_t n : {3, 1024, 1 << 20})
    chains.push_back(generate(bench::chainGraph(n, "f32"), "chain").at(0));
  for (const CudaKernel& k : chains) {
    EXPECT_EQ(k.source, chains[0].source);
    EXPECT_EQ(k.source.find("constexpr idx N"), std::string::npos) << k.source;
  }
  EXPECT_NE(chains[0].source.find(", idx N)"), std::string::npos) << chains[0].source;
  EXPECT_NE(chains[0].source.find("(idx)(i64)row[4]"), std::string::npos) << chains[0].source;
  EXPECT_EQ(chains[0].size, 3);
  EXPECT_EQ(chains[1].size, 1024);
  EXPECT_EQ(chains[2].size, 1 << 20);
  EXPECT_EQ(chains[0].gridSize, 1u);
  EXPECT_EQ(chains[2].gridSize, (1u << 20) / 4 / 256);
}

/// A value read transposed goes through shared memory by 32 x 32 tiles: the
/// staged load's tile is read along its contiguous axis and taken transposed; the
/// other loads read directly. As many tiles along both axes go by mirrored pairs of
/// tiles; a batch axis numbers the tiles too; an axis too short to tile is read
/// directly.
TEST(CudaCodegen, TransposedLoadsGoByTilesThroughSharedMemory) {
  for (const char* dtype : {"f32", "f64"}) {
    CudaKernel edges = generateCase("transpose_edges", dtype).at(0);
    EXPECT_NE(edges.source.find(fmt::format("__shared__ {} s", dtype)), std::string::npos)
        << edges.source;
    EXPECT_NE(edges.source.find("][x] = in"), std::string::npos) << edges.source;
    EXPECT_NE(edges.source.find("[x][y + k];"), std::string::npos) << edges.source;
    EXPECT_NE(edges.source.find("if (r < 37 && c < 53)"), std::string::npos) << edges.source;
    EXPECT_NE(edges.source.find("mirror ? j : i"), std::string::npos) << edges.source;
    EXPECT_EQ(edges.gridSize, 2u * 3u); // 3 pairs of 2 slots, the diagonal's second idle
  }
  CudaKernel self = generateCase("transpose_self", "f32").at(0);
  EXPECT_EQ(occurrences(self.source, "__shared__"), 2u) << self.source; // x' and y'
  CudaKernel batched = generateCase("transpose_batched", "f64").at(0);  // 2 x 3 tiles
  EXPECT_NE(batched.source.find("const idx b = tile / PER_BATCH;"), std::string::npos)
      << batched.source;
  EXPECT_EQ(batched.source.find("mirror"), std::string::npos) << batched.source;
  EXPECT_EQ(batched.gridSize, 3u * 2u * 3u);
  CudaKernel outer = generateCase("transpose_outer_axes", "f64").at(0);
  EXPECT_NE(outer.source.find("__shared__"), std::string::npos) << outer.source;
  CudaKernel shortAxis = generateCase("transpose_short_axis", "f32").at(0);
  EXPECT_EQ(shortAxis.source.find("__shared__"), std::string::npos) << shortAxis.source;
}

/// Broadcasts and reductions with that parameter: the row count of a row and
/// column broadcast, or of a layernorm, changes the parameter, not the source; an
/// inner extent changes the source; a kernel reading coordinates (an eye) keeps
/// its shape in the source.
TEST(CudaCodegen, LeadingExtentsAreAParameter) {
  auto bias = [](int64_t rows, int64_t cols) {
    return fmt::format(R"(graph @bias(%x: f32[{0},{1}], %b: f32[{1}], %c: f32[{0},1]) {{
  %bb = broadcast_to %b {{shape=[{0},{1}]}}
  %cb = broadcast_to %c {{shape=[{0},{1}]}}
  %y = mul %x, %bb
  %z = add %y, %cb
  return %z
}})",
                       rows, cols);
  };
  CudaKernel few = generate(bias(3, 53), "bias").at(0),
             many = generate(bias(700, 53), "bias").at(0);
  EXPECT_EQ(few.source, many.source);
  EXPECT_NE(few.source.find("in2[p / 53]"), std::string::npos) << few.source;
  EXPECT_EQ(few.size, 3 * 53);
  EXPECT_EQ(many.size, 700 * 53);
  EXPECT_NE(generate(bias(3, 54), "bias").at(0).source, few.source);

  // (Up to 64 MB: W4's 8192 rows stream past the L2, a source of their own.)
  std::vector<CudaKernel> ln = generate(bench::layernormGraph(64, 4096, "f32"), "layernorm"),
                          ln2 = generate(bench::layernormGraph(1000, 4096, "f32"), "layernorm");
  ASSERT_EQ(ln.size(), ln2.size());
  for (size_t i = 0; i < ln.size(); ++i) {
    EXPECT_EQ(ln[i].source, ln2[i].source);
    EXPECT_EQ(ln[i].size, ln[i].launch == CudaKernel::Launch::Elementwise ? 64 * 4096 : 64);
  }
  EXPECT_NE(ln[0].source.find(", idx S)"), std::string::npos) << ln[0].source;
  EXPECT_EQ(ln[0].source.find("constexpr idx S"), std::string::npos) << ln[0].source;
  EXPECT_NE(generate(bench::layernormGraph(64, 2048, "f32"), "layernorm").at(0).source,
            ln[0].source);

  CudaKernel eye = generate(R"(graph @shift(%a: f64[40,40]) {
  %i = eye : f64[40,40]
  %y = add %a, %i
  return %y
})",
                            "shift")
                       .at(0);
  EXPECT_EQ(eye.size, -1);
  EXPECT_NE(eye.source.find("constexpr idx N = 1600;"), std::string::npos) << eye.source;
}

TEST(CudaCodegen, ReductionLaunchForms) {
  using L = CudaKernel::Launch;
  std::map<std::string, L> want = {
      {"sum_rows", L::WarpPerSegment},
      {"sum_short_rows", L::ThreadPerSegment},
      {"sum_long_rows", L::BlockPerSegment},
      {"sum_columns", L::ThreadPerSegment},
      {"sum_middle", L::ThreadPerSegment},
      {"sum_all", L::BlockPerSegment},
      {"sum_very_long_rows", L::BlockPerSegment},
  };
  for (const auto& [name, launch] : want) {
    CudaKernel k = generateCase(name, "f32").at(0);
    EXPECT_EQ(codegen::launchName(k.launch), codegen::launchName(launch)) << name;
    if (launch == L::BlockPerSegment) {
      EXPECT_NE(k.source.find("__syncthreads()"), std::string::npos);
    }
  }
  EXPECT_EQ(generateCase("sum_very_long_rows", "f32").at(0).blockSize, 1024u);
  // Layernorm: mean and variance (one kernel of two stages, or the mean in a kernel
  // of its own), then normalization in a last pass, a block per row.
  std::vector<CudaKernel> ln = generateCase("layernorm_long_rows", "f32");
  ASSERT_FALSE(ln.empty());
  EXPECT_EQ(ln.back().launch, L::BlockPerSegment);
}

TEST(CudaCodegen, RowsReadInSeveralPassesAreLoadedOnce) {
  // W4's layernorm: three passes over each row of x (mean, variance, output). A
  // lane's 16 points of a 4096-point row stay in registers: x is read once.
  std::vector<CudaKernel> ks = generate(bench::layernormGraph(64, 4096, "f32"), "layernorm");
  ASSERT_EQ(ks.size(), 1u);
  const std::string& src = ks[0].source;
  EXPECT_NE(src.find("f32 c0[16];"), std::string::npos) << src;
  EXPECT_EQ(occurrences(src, "in0["), 1u) << src;
  // Rows too long for registers are read in each pass.
  EXPECT_EQ(generate(bench::layernormGraph(4, 65536, "f32"), "wide").at(0).source.find("c0["),
            std::string::npos);
  // Past the L2's size (W4 itself, 268 MB moved) rows and outputs go by 16 bytes
  // where the buffers are aligned, one point otherwise; below it (the 2 MB above)
  // one point at a time. Plain loads and stores: no cache hints.
  EXPECT_EQ(src.find("float4"), std::string::npos) << src;
  std::string w4 = generate(bench::layernormGraph(8192, 4096, "f32"), "w4").at(0).source;
  EXPECT_NE(w4.find("= ((const float4*)(in0 + s * L))["), std::string::npos) << w4;
  EXPECT_NE(w4.find("((float4*)(out0 + s * L))["), std::string::npos) << w4;
  EXPECT_NE(w4.find("= ((const float4*)in1)["), std::string::npos) << w4; // g, by vectors
  EXPECT_NE(w4.find("c0[u] = in0["), std::string::npos) << w4;
  EXPECT_NE(w4.find("out0[p] = "), std::string::npos) << w4;
  for (const char* hint : {"__ldcs", "__stcs", "__ldg"})
    EXPECT_EQ(w4.find(hint), std::string::npos) << hint;
  std::string f64 = generate(bench::layernormGraph(2048, 8192, "f64"), "f64").at(0).source;
  EXPECT_NE(f64.find("= ((const double2*)(in0 + s * L))["), std::string::npos) << f64;
  expectCompilesForSm90({w4, f64});
}

/// The one kernel of `text` (as a multi-stage case), generated for `target`.
CudaKernel wholeKernelFor(const std::string& text, codegen::CudaTarget target) {
  std::unique_ptr<ir::Graph> g = ir::parseGraph(text, "rows");
  auto k = testing::wholeKernel(*g);
  if (auto* why = std::get_if<std::string>(&k))
    throw Error(*why);
  return codegen::emitCuda(std::get<codegen::Kernel>(k), "k", target);
}

TEST(CudaCodegen, LongRowsAreCachedInSharedMemoryWhereTheyFit) {
  using testing::withType;
  const codegen::CudaTarget sm90 = codegen::CudaTarget::sm90();
  // Softmax over rows of 50257 f32 (201028 bytes, padded to 16): loaded once into
  // shared memory, the max taking each point as it is loaded; the sum and the output
  // pass read shared memory.
  std::string softmax = withType(testing::softmaxText(8, 50257), "f32");
  CudaKernel k = wholeKernelFor(softmax, sm90);
  EXPECT_EQ(k.sharedBytes, 201040);
  EXPECT_NE(k.source.find("extern __shared__ __align__(16) unsigned char gc_rows[];"),
            std::string::npos)
      << k.source;
  EXPECT_EQ(occurrences(k.source, "in0["), 1u) << k.source;
  EXPECT_EQ(occurrences(k.source, "c0[j]"), 4u) << k.source; // stored, taken, sum, output
  // No target, or one too small for the row: each pass reads memory, the max and
  // the sum in one (an online sum), then the output pass.
  for (codegen::CudaTarget small : {codegen::CudaTarget{}, codegen::CudaTarget{100 << 10}}) {
    CudaKernel plain = wholeKernelFor(softmax, small);
    EXPECT_EQ(plain.sharedBytes, 0);
    EXPECT_EQ(plain.source.find("gc_rows"), std::string::npos);
    EXPECT_EQ(occurrences(plain.source, "in0["), 2u) << plain.source;
    EXPECT_EQ(occurrences(plain.source, "gc_online_push(a"), 1u) << plain.source;
  }
  EXPECT_EQ(k.source.find("gc_online_push"), std::string::npos) << k.source;
  // The limit holds the row and each reduction's 1 KB for combining warps (two here).
  EXPECT_EQ(wholeKernelFor(softmax, codegen::CudaTarget{201040 + 2048}).sharedBytes, 201040);
  EXPECT_EQ(wholeKernelFor(softmax, codegen::CudaTarget{201040 + 2047}).sharedBytes, 0);
  // Two cached inputs, each row at its own 16-byte aligned offset.
  CudaKernel two = wholeKernelFor(withType(testing::twoRowsText(5, 20001), "f32"), sm90);
  EXPECT_EQ(two.sharedBytes, 2 * 80016);
  EXPECT_NE(two.source.find("(f32*)(gc_rows + 80016)"), std::string::npos) << two.source;
  // f64 rows of 30001 points (240 KB) do not fit: registers cannot hold them either.
  CudaKernel wide = wholeKernelFor(withType(testing::threeStageText(3, 30001), "f64"), sm90);
  EXPECT_EQ(wide.sharedBytes, 0);
  // logsumexp: the max and the sum of exp(x - max) in one pass over memory.
  std::string lse = withType(testing::logSumExpText(8, 50257), "f32");
  // Rows of a warp keep their passes: a softmax over rows of 1500 (47 points a lane,
  // too many for its registers) reads each row three times.
  CudaKernel warpRows = wholeKernelFor(withType(testing::softmaxText(9, 1500), "f32"), sm90);
  EXPECT_EQ(warpRows.launch, CudaKernel::Launch::WarpPerSegment);
  EXPECT_EQ(occurrences(warpRows.source, "gc_online_push"), 0u) << warpRows.source;
  EXPECT_EQ(occurrences(warpRows.source, "in0["), 3u) << warpRows.source;
  CudaKernel lseKernel = wholeKernelFor(lse, sm90);
  EXPECT_EQ(lseKernel.sharedBytes, 0);
  EXPECT_EQ(occurrences(lseKernel.source, "in0["), 1u) << lseKernel.source;
  EXPECT_EQ(occurrences(lseKernel.source, "gc_online_push(a"), 1u) << lseKernel.source;
  // Rows a lane holds in registers stay there.
  EXPECT_EQ(wholeKernelFor(withType(testing::softmaxText(8, 4096), "f32"), sm90).sharedBytes, 0);
  expectCompilesForSm90({k.source, two.source, lseKernel.source, warpRows.source});
}

/// A var over rows a block caches (in registers or shared memory) takes two passes
/// over the cache, the mean and then the squared deviations from it: plain sums,
/// no moments merged. Uncached rows keep the one-pass moments.
TEST(CudaCodegen, VarOverCachedRowsTakesTwoPasses) {
  using testing::withType;
  const codegen::CudaTarget sm90 = codegen::CudaTarget::sm90();
  struct Case {
    int64_t cols;
    const char* dtype;
    int64_t sharedBytes; // of the cached row; -1: not cached
  };
  // 4097 f32: 9 points a lane in registers; 16385: 64 KB of shared memory; 56000
  // f32: 224000 bytes, which fit; 56000 f64 do not.
  for (Case c : {Case{4097, "f32", 0}, Case{16385, "f32", 65552}, Case{16385, "f64", 131088},
                 Case{56000, "f32", 224000}, Case{56000, "f64", -1}}) {
    SCOPED_TRACE(fmt::format("{} {}", c.cols, c.dtype));
    CudaKernel k = wholeKernelFor(withType(testing::rowNormText(4, c.cols), c.dtype), sm90);
    bool cached = c.sharedBytes >= 0;
    EXPECT_EQ(k.sharedBytes, std::max<int64_t>(c.sharedBytes, 0));
    EXPECT_EQ(k.source.find("gc_moments") == std::string::npos, cached) << k.source;
    EXPECT_EQ(occurrences(k.source, "in0["), cached ? 1u : 2u) << k.source;
    EXPECT_EQ(k.source.find("const f64 m") != std::string::npos, cached) << k.source;
  }
  // Columns (not contiguous segments): moments.
  std::string columns = R"(graph @cn(%x: f32[300,64]) {
  %v = var %x {axes=[0], keepdims}
  %vb = broadcast_to %v {shape=[300,64]}
  %y = div %x, %vb
  return %y
})";
  EXPECT_NE(wholeKernelFor(columns, sm90).source.find("gc_moments"), std::string::npos);
  expectCompilesForSm90(
      {wholeKernelFor(withType(testing::rowNormText(4, 4097), "f32"), sm90).source,
       wholeKernelFor(withType(testing::rowNormText(4, 16385), "f32"), sm90).source});
}

/// Rows that go by 16-byte vectors stay in registers up to 32 registers a lane (32
/// f32 points), also where the runs do not tile the row; the rest keep 16 points.
TEST(CudaCodegen, RowsByVectorsStayInRegistersUpTo32Registers) {
  using testing::withType;
  const codegen::CudaTarget sm90 = codegen::CudaTarget::sm90();
  auto softmax = [&](int64_t rows, int64_t cols, const char* dtype) {
    return wholeKernelFor(withType(testing::softmaxText(rows, cols), dtype), sm90);
  };
  // 2048 rows of 32768 f32 (268 MB each way): 8 vectors a lane of 1024.
  CudaKernel even = softmax(2048, 32768, "f32");
  EXPECT_EQ(even.sharedBytes, 0);
  EXPECT_NE(even.source.find("f32 c0[32];"), std::string::npos) << even.source;
  EXPECT_NE(even.source.find("= ((const float4*)(in0 + s * L))["), std::string::npos);
  EXPECT_EQ(even.source.find("const int nr"), std::string::npos) << even.source;
  // Rows of 32000: 8000 vectors, the last lanes' eighth past the row's end. A lane
  // counts its runs in the row once, and each point tests its run's place, past the
  // 7 runs every lane has (a constant once unrolled).
  CudaKernel ragged = softmax(2048, 32000, "f32");
  EXPECT_EQ(ragged.sharedBytes, 0);
  EXPECT_NE(ragged.source.find("f32 c0[32];"), std::string::npos) << ragged.source;
  EXPECT_EQ(occurrences(ragged.source, "const int nr = L / 4 > (idx)threadIdx.x ? "), 1u)
      << ragged.source;
  EXPECT_EQ(occurrences(ragged.source, "if (v < 7 || v < nr)"), 2u) << ragged.source; // load, store
  EXPECT_EQ(occurrences(ragged.source, "if (u / 4 < 7 || u / 4 < nr)"), 2u)
      << ragged.source; // 2 stages
  EXPECT_EQ(occurrences(ragged.source, "if (v < nr)"), 0u) << ragged.source;
  // No vectors in a small kernel: 16 points a lane at most, so its rows go to shared
  // memory; f64 rows of 32768 take 64 registers a lane, too many.
  CudaKernel small = softmax(8, 32768, "f32");
  EXPECT_GT(small.sharedBytes, 0) << small.source;
  EXPECT_EQ(small.source.find("float4"), std::string::npos) << small.source;
  // A row of 32001 is peeled: 8000 vectors from its first aligned point, the other
  // point one to a lane. 33 registers a lane are too many: shared memory holds it,
  // its runs 16 bytes in, its first points before them.
  CudaKernel odd = softmax(2048, 32001, "f32");
  EXPECT_EQ(odd.sharedBytes, (32001 * 4 + 15) / 16 * 16 + 16);
  EXPECT_NE(odd.source.find("f32* const c0 = (f32*)(gc_rows + 0) + 4 - h;"), std::string::npos)
      << odd.source;
  // Its block leaves no room for another on the SM: a block an SM walks the rows. The
  // first row's runs are copied into their slots before the loop, each next row's as
  // the output pass frees them; the lane's point outside the runs goes in q0, and the
  // output pass stores the current row's from there before the next row's comes.
  EXPECT_EQ(odd.gridSize, 132u);
  const std::string copy = "gc_copy_async(((float4*)(gc_rows + 0) + 1) + (idx)threadIdx.x + v * "
                           "BS, (const float4*)(in0 + sn * L + hn) + (idx)threadIdx.x + v * BS);";
  EXPECT_EQ(occurrences(odd.source, copy), 2u) << odd.source;
  EXPECT_EQ(occurrences(odd.source, "if (more && (v < 7 || v < nrn)) {"), 1u) << odd.source;
  size_t wait = odd.source.find("gc_copy_wait();");
  ASSERT_NE(wait, std::string::npos) << odd.source;
  EXPECT_NE(odd.source.find("const float4 t0 = ((float4*)(gc_rows + 0) + 1)[(idx)threadIdx.x + v "
                            "* BS];",
                            wait),
            std::string::npos)
      << odd.source;
  EXPECT_NE(odd.source.find("c0[jp] = q0;"), std::string::npos) << odd.source;
  size_t peel = odd.source.find("const f32 v0 = q0;");
  ASSERT_NE(peel, std::string::npos) << odd.source;
  EXPECT_LT(peel, odd.source.find("q0 = in0[sn * L + jpn];", peel)) << odd.source;
  // Without domain outputs, the next row is copied in after the row's last barrier.
  CudaKernel reduced = wholeKernelFor(withType(testing::reducedOnlyText(2048, 32001), "f32"),
                                      codegen::CudaTarget::sm90());
  size_t after = reduced.source.find("out2[s] = v");
  ASSERT_NE(after, std::string::npos) << reduced.source;
  EXPECT_NE(reduced.source.find(copy, after), std::string::npos) << reduced.source;
#if GRAPHC_HAS_CUDA
  cuda::CompileOptions options;
  options.computeCapability = 90;
  EXPECT_NO_THROW(cuda::compileCuda(reduced.source, "reduced.cu", options));
#endif
  // Rows of 4097 are 1024 vectors and a peeled point: 256 lanes of 17 registers, as
  // rows of 4096 take 256 lanes of 16. A softmax's rows of 16385 at 1024 lanes would
  // take 17 too, one past kCachedPointsPerLane: shared memory holds them.
  CudaKernel norm4097 = wholeKernelFor(withType(testing::rowNormText(2048, 4097), "f32"),
                                       codegen::CudaTarget::sm90());
  EXPECT_EQ(norm4097.blockSize, 256);
  EXPECT_NE(norm4097.source.find("f32 c0[17];"), std::string::npos) << norm4097.source;
  EXPECT_NE(norm4097.source.find("c0[16] = in0[s * L + jp];"), std::string::npos)
      << norm4097.source;
  EXPECT_NE(norm4097.source.find("((float4*)(out0 + s * L + h))["), std::string::npos)
      << norm4097.source;
  CudaKernel odd16385 = softmax(2048, 16385, "f32");
  EXPECT_EQ(odd16385.sharedBytes, (16385 * 4 + 15) / 16 * 16 + 16);
  EXPECT_NE(odd16385.source.find("((float4*)(c0 + h))["), std::string::npos) << odd16385.source;
  // Two such rows fit an SM's shared memory: no row ahead, a block a row.
  EXPECT_EQ(odd16385.source.find("gc_copy"), std::string::npos) << odd16385.source;
  EXPECT_EQ(odd16385.gridSize, 2048u);
  // Without the device's multiprocessors, nothing ahead either.
  EXPECT_EQ(wholeKernelFor(withType(testing::softmaxText(2048, 32001), "f32"),
                           codegen::CudaTarget{sm90.sharedBytes})
                .source.find("gc_copy"),
            std::string::npos);
  // Rows in shared memory come by vectors too. The max takes each vector as it
  // arrives, before its combine's barrier; the later passes read the lane's own runs.
  CudaKernel shared = softmax(2048, 56000, "f32");
  EXPECT_EQ(shared.sharedBytes, 224000);
  size_t load = shared.source.find(
      "const float4 t0 = ((float4*)(gc_rows + 0))[(idx)threadIdx.x + v * BS];\n");
  ASSERT_NE(load, std::string::npos) << shared.source;
  std::string beforeBarrier =
      shared.source.substr(load, shared.source.find("__syncthreads();", load) - load);
  EXPECT_NE(beforeBarrier.find("const f32 v1 = ((const f32*)&t0)[e];\n"
                               "            a2 = gc_extreme<true>(a2, (f32)v1);"),
            std::string::npos)
      << shared.source;
  EXPECT_NE(beforeBarrier.find("w2[threadIdx.x / 32] = a2;"), std::string::npos) << shared.source;
  // The sum's pass and the output pass read the lane's own runs by vectors.
  EXPECT_EQ(occurrences(shared.source,
                        "const float4 t0 = ((const float4*)c0)[(idx)threadIdx.x + v * BS];"),
            2u)
      << shared.source;
  // Blocks of 1024 threads keep 16 points a lane but for a softmax-like kernel over
  // rows shared memory would hold once an SM: not rows of 20000 points, not a var.
  EXPECT_GT(softmax(2048, 20000, "f32").sharedBytes, 0);
  CudaKernel norm = wholeKernelFor(withType(testing::rowNormText(2048, 32768), "f32"),
                                   codegen::CudaTarget::sm90());
  EXPECT_EQ(norm.source.find("c0[32]"), std::string::npos) << norm.source;
  CudaKernel f64 = softmax(1024, 32768, "f64");
  EXPECT_EQ(f64.source.find("c0["), std::string::npos) << f64.source;
  // f64 rows of 8000 at 512 lanes: 8 vectors of two a lane, 16 points.
  CudaKernel f64Ragged = softmax(2048, 8000, "f64");
  EXPECT_NE(f64Ragged.source.find("f64 c0[16];"), std::string::npos) << f64Ragged.source;
  EXPECT_NE(f64Ragged.source.find("if (u / 2 < 7 || u / 2 < nr)"), std::string::npos)
      << f64Ragged.source;
  expectCompilesForSm90({ragged.source, f64Ragged.source, shared.source, odd.source,
                         norm4097.source, odd16385.source});
}

TEST(CudaCodegen, MultiStageKernels) {
  for (const char* dtype : {"f32", "f64"})
    for (const testing::MultiStageCase& c : testing::multiStageCases(dtype)) {
      std::vector<CudaKernel> a = generateMultiStage(c), b = generateMultiStage(c);
      ASSERT_EQ(a.size(), 1u) << c.name;
      ASSERT_EQ(b.size(), 1u) << c.name;
      EXPECT_EQ(a[0].source, b[0].source) << c.name;
      EXPECT_EQ(codegen::launchName(a[0].launch), c.launch) << c.name;
      // One pass per stage, then one for the domain outputs; where a lane's points
      // are cached in registers, a first loop loads them, and where in shared memory,
      // the first stage's pass does. Where a block's points are not cached, a
      // softmax's max and sum share a pass (an online sum).
      const std::string& src = a[0].source;
      auto count = [&](const std::string& what) { return occurrences(src, what); };
      bool shared = count("gc_rows") > 0;
      bool cached = count("[u] = in") + count("[j] = in") > 0 || shared;
      size_t online = count("gc_online_push(a");
      bool block = a[0].launch == CudaKernel::Launch::BlockPerSegment;
      EXPECT_EQ(online, block && !cached && c.name.find("softmax") != std::string::npos ? 1u : 0u)
          << src;
      size_t passes = static_cast<size_t>(c.stages) + 1 - online;
      EXPECT_EQ(count("for (idx j =") + count("for (idx j0 =") + count("for (int u =") -
                    (cached && !shared ? 1 : 0),
                passes)
          << src;
      if (a[0].launch == CudaKernel::Launch::BlockPerSegment) {
        // Each stage's combine and the end of the segment.
        EXPECT_EQ(count("__syncthreads()"), passes) << src;
      }
    }
}

TEST(CudaCodegen, IntegerDivisionHasAnErrorWord) {
  int withError = 0;
  for (const CudaKernel& k : generateCase("integer_ops_i32", "f32"))
    if (k.hasErrorWord) {
      ++withError;
      EXPECT_NE(k.source.find("int* __restrict__ error"), std::string::npos) << k.source;
    }
  EXPECT_EQ(withError, 3); // div, remainder, pow
  EXPECT_FALSE(generateCase("w3_chain", "f32").at(0).hasErrorWord);
  std::unique_ptr<ir::Graph> g = ir::parseGraph(
      "graph @d(%a: i32[4], %b: i32[4]) {\n  %q = div %a, %b\n  return %q\n}", "d.gir");
  codegen::Kernel kernel = kernelsOf(*g).at(0);
  EXPECT_EQ(codegen::cudaErrorMessage(kernel, 3), "div (%q): integer division by zero");
}

TEST(CudaCodegen, IntegerConstantsConvertAsOnTheCpu) {
  // NaN as 0 and values past the range saturated (ir::scalar::toInteger), not
  // left to a C conversion in the kernel, which would be undefined.
  std::vector<CudaKernel> k = generate(R"(graph @c(%a: i32[4], %b: i64[4]) {
  %nan = constant {value=[nan]} : i32[]
  %n = broadcast_to %nan {shape=[4]} : i32[4]
  %big = full {value=3e9} : i32[4]
  %least = full {value=-1e300} : i64[4]
  %x = add %a, %n : i32[4]
  %y = add %x, %big : i32[4]
  %z = add %b, %least : i64[4]
  return %y, %z
})",
                                       "c.gir");
  std::string all;
  for (const CudaKernel& kernel : k)
    all += kernel.source;
  EXPECT_NE(all.find("(i32)0x0ULL"), std::string::npos) << all;
  EXPECT_NE(all.find("(i32)0x7fffffffULL"), std::string::npos) << all;
  EXPECT_NE(all.find("(i64)0x8000000000000000ULL"), std::string::npos) << all;
  EXPECT_EQ(all.find("__longlong_as_double"), std::string::npos) << all;
  for (const CudaKernel& kernel : k)
    expectCompilesForSm90({kernel.source});
}

/// W6's antisymmetric part as the GPU lowers it: the mask a select on iota sources
/// (passes/Masks.h) and the small transpose inside the row reduction, in one kernel
/// that reads its input across rows; NVRTC compiles it.
TEST(CudaCodegen, MaskedTransposeInARowReductionIsOneKernel) {
  auto g = ir::parseGraph(R"(graph @anti(%c: f64[256,256]) {
  %l = tril %c {k=-1}
  %t = transpose %l {perm=[1,0]}
  %o = sub %l, %t
  %p = sub %o, %c
  %s = sum %p {axes=[1]}
  return %s
})");
  passes::PassStats stats;
  std::unique_ptr<ir::Graph> masked = passes::masksAsSelects(*g, stats);
  int failed = 0;
  std::vector<codegen::Kernel> kernels = kernelsOf(*masked, &failed);
  EXPECT_EQ(failed, 0);
  ASSERT_EQ(kernels.size(), 1u);
  CudaKernel k = codegen::emitCuda(kernels[0], "k0");
  EXPECT_NE(k.source.find(" * 256]"), std::string::npos) << k.source; // read across rows
  expectCompilesForSm90({k.source});
}

#if GRAPHC_HAS_CUDA
TEST(CudaCodegen, NvrtcCompilesEveryKernelForSm90) {
  std::vector<CudaKernel> all;
  for (const char* dtype : {"f32", "f64"})
    for (const testing::KernelCase& c : kernelCases(dtype))
      for (CudaKernel& k : generate(c.text, c.name)) {
        k.name = fmt::format("{}_{}_{}", c.name, dtype, all.size());
        all.push_back(k);
      }
  for (const char* dtype : {"f32", "f64"})
    for (const testing::MultiStageCase& c : testing::multiStageCases(dtype))
      for (CudaKernel& k : generateMultiStage(c)) {
        k.name = fmt::format("{}_{}_{}", c.name, dtype, all.size());
        all.push_back(k);
      }
  // NVRTC is thread-safe across programs: compile on every core.
  std::vector<std::string> errors(all.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < all.size();) {
      cuda::CompileOptions options;
      options.computeCapability = 90;
      options.flags = {"--fmad=false"};
      try {
        cuda::CompiledModule m = cuda::compileCuda(all[i].source, all[i].name + ".cu", options);
        if (m.log.find("warning") != std::string::npos)
          errors[i] = "warnings: " + m.log;
      } catch (const Error& e) {
        errors[i] = e.message();
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < std::max(2u, std::thread::hardware_concurrency()); ++t)
    threads.emplace_back(work);
  work();
  for (std::thread& t : threads)
    t.join();
  for (size_t i = 0; i < all.size(); ++i)
    EXPECT_EQ(errors[i], "") << all[i].name;
}
#endif

} // namespace
} // namespace graphc
