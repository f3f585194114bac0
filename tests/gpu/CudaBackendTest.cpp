//===- tests/gpu/CudaBackendTest.cpp - The cuda backend against the cpu one ===//
//
// Whole programs on the GPU (fused kernels, library calls, host steps, planned
// slots) against the CPU backend on the same random inputs, f32 and f64: every
// example graph and fusion/lowering golden case, as written and through the
// default pipeline; sources computed inside kernels against cpu-unfused. Also:
// device-resident inputs and outputs, data movement on the device, the
// Cholesky-to-LU fallback on the GPU,
// solver failures and running out of GPU memory; constants the compiler folds have
// the bits the GPU computes unfolded; one rank of a sharded program.
//
//===----------------------------------------------------------------------===//
#include "GpuTestUtil.h"

#include "ir/Parser.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
#include "runtime/cuda/CudaBackend.h"
#include "runtime/cuda/PreparedProgram.h"
#include "support/FoldedOps.h"
#include "support/GraphFiles.h"
#include "support/Numeric.h"
#include "tests/codegen/KernelCases.h"

namespace graphc {
namespace {

/// The tolerance for `g`: f64 results to 1e-10; f32 ones differ by the GPU's math
/// functions (a few ulp) and the order of sums.
double toleranceFor(const ir::Graph& g) {
  for (const ir::Node* n : g.nodes())
    if (n->numResults() && n->type().dtype == ir::DType::F32)
      return 1e-4;
  return 1e-10;
}

void expectSameAsCpu(const ir::Graph& g, uint64_t seed, const std::string& passes) {
  SCOPED_TRACE("@" + g.name() + " passes=" + passes);
  double tol = toleranceFor(g);
  std::vector<Array> inputs = testing::randomInputs(g, seed);
  std::vector<Array> want = compile(g, getBackend("cpu"), {passes})->run(inputs);
  std::vector<Array> got = compile(g, getBackend("cuda"), {passes})->run(inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].device(), Device::Host);
    EXPECT_LE(testing::relativeDifference(got[i], want[i]), tol) << "output " << i;
  }
}

TEST(CudaBackend, ExampleAndGoldenGraphsMatchTheCpu) {
  GRAPHC_REQUIRE_GPU();
  std::vector<std::string> files = testing::kExampleGraphFiles;
  files.insert(files.end(), testing::kFusionGoldenFiles.begin(), testing::kFusionGoldenFiles.end());
  int graphs = 0;
  for (const std::string& file : files)
    for (bool f32 : {false, true}) {
      std::string text = testing::readSourceFile(file);
      for (auto& g : testing::graphsOf(f32 ? testing::toF32(text) : text, file)) {
        expectSameAsCpu(*g, 7 + graphs, "none");
        expectSameAsCpu(*g, 7 + graphs, "");
        ++graphs;
      }
    }
  EXPECT_GE(graphs, 40);
}

/// Reductions of few outputs, which the GPU splits in two or more kernels
/// (passes/SplitReductions.h), with prologues and epilogues, along leading and
/// trailing axes and all of them.
TEST(CudaBackend, SplitReductionsMatchTheCpu) {
  GRAPHC_REQUIRE_GPU();
  const char* graphs[] = {
      "graph @cols(%x: f32[65536,4]) {\n  %r = sum %x {axes=[0]}\n  return %r\n}",
      "graph @var(%x: f64[20000,64]) {\n  %r = var %x {axes=[0], keepdims}\n  return %r\n}",
      "graph @all(%x: f32[1048576]) {\n  %r = max %x {axes=[0]}\n  return %r\n}",
      "graph @rows(%x: f32[4,300000]) {\n  %r = mean %x {axes=[1]}\n  return %r\n}",
      "graph @mid(%x: f64[3,40000,5]) {\n  %r = sum %x {axes=[1]}\n  return %r\n}",
      R"(graph @colnorm(%x: f32[50000,8]) {
  %m = mean %x {axes=[0], keepdims}
  %v = var %x {axes=[0], keepdims}
  %s = sqrt %v
  %mb = broadcast_to %m {shape=[50000,8]}
  %sb = broadcast_to %s {shape=[50000,8]}
  %c = sub %x, %mb
  %r = div %c, %sb
  return %r
})",
      R"(graph @lse(%x: f32[100000,3]) {
  %m = max %x {axes=[0], keepdims}
  %mb = broadcast_to %m {shape=[100000,3]}
  %d = sub %x, %mb
  %e = exp %d
  %s = sum %e {axes=[0], keepdims}
  %l = log %s
  %r = add %l, %m
  return %r
})"};
  uint64_t seed = 90;
  for (const char* text : graphs)
    expectSameAsCpu(*ir::parseGraph(text), seed++, "");
}

/// Sources the fused kernels compute at their index (a batched eye, iotas, fulls
/// through broadcasts, reshapes and reductions, and W5 over 64 matrices) against
/// cpu-unfused, which materializes them: a wrong index gives a wrong diagonal.
TEST(CudaBackend, ComputedSourcesMatchTheUnfusedCpu) {
  GRAPHC_REQUIRE_GPU();
  for (const char* dtype : {"f64", "f32"}) {
    std::vector<testing::KernelCase> cases = testing::computedSourceCases(dtype);
    cases.push_back({"w5", bench::batchedSpdGraph(64, 32, dtype)});
    for (const testing::KernelCase& c : cases) {
      SCOPED_TRACE(c.name + " " + dtype);
      std::unique_ptr<ir::Graph> g = ir::parseGraph(c.text, c.name);
      std::vector<Array> inputs = testing::randomInputs(*g, 5);
      std::vector<Array> want = compile(*g, getBackend("cpu-unfused"), {"none"})->run(inputs);
      std::vector<Array> got = compile(*g, getBackend("cuda"), {"none"})->run(inputs);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i)
        EXPECT_LE(testing::relativeDifference(got[i], want[i]), toleranceFor(*g)) << "output " << i;
    }
  }
}

/// Every unary and binary op the constant folder folds (IEEE 754 fixes its result)
/// gives the bits the GPU computes for it unfolded, on edge values (signed zeros,
/// infinities, NaN, subnormals, negative operands of sqrt and remainder):
/// tests/support/FoldedOps.h. abs(-0.0) is +0.0 among them.
TEST(CudaBackend, FoldedConstantsHaveTheBitsOfTheGpu) {
  GRAPHC_REQUIRE_GPU();
  testing::FoldComparison c = testing::compareFoldsWith("cuda");
  for (const std::string& m : c.mismatches)
    ADD_FAILURE() << m;
  EXPECT_EQ(c.folded.size(), 36U); // 18 ops in f32 and f64 (tests/passes/ConstantFoldTest.cpp)
}

/// Sources the caller or a lone data-movement step reads are made once per
/// executable (fills and identities by a kernel, others on the host and copied), in
/// a program that calls no library: its lanes make no cuBLAS or cuSOLVER handles.
TEST(CudaBackend, ProgramConstantsMatchTheCpu) {
  GRAPHC_REQUIRE_GPU();
  for (const char* dtype : {"f64", "f32"}) {
    std::string text = fmt::format(R"(
graph @consts(%x: {0}[3,5]) {{
  %e = eye : {0}[5,5]
  %f = full {{value=2.5}} : {0}[3,5]
  %i = iota {{axis=1}} : {0}[3,5]
  %t = transpose %i {{perm=[1,0]}}
  %y = add %x, %f
  return %e, %f, %t, %y
}})",
                                   dtype);
    for (const char* passes : {"", "none"})
      expectSameAsCpu(*ir::parseGraph(text), 7, passes);
  }
}

TEST(CudaBackend, DeviceInputsGiveDeviceOutputs) {
  GRAPHC_REQUIRE_GPU();
  auto g = ir::parseGraph(testing::readSourceFile("examples/enkf_small.gir"));
  std::vector<Array> inputs = testing::randomInputs(*g, 3), device;
  for (const Array& a : inputs)
    device.push_back(cuda::toDevice(a));
  auto exe = compile(*g, getBackend("cuda"));
  Array want = compile(*g, getBackend("cpu"))->run(inputs)[0];
  for (int repeat = 0; repeat < 3; ++repeat) { // the program runs again and again
    Array got = exe->run(device)[0];
    ASSERT_EQ(got.device(), Device::Cuda);
    EXPECT_LE(testing::relativeDifference(cuda::toHost(got), want), 1e-10);
  }
  EXPECT_EQ(exe->fallbacks(), 0);
}

/// S = Y*Y' + 1e-300*I is proven SPD but numerically singular: the Cholesky the
/// compiler chose fails on the GPU, the run falls back to LU, which reports the
/// singular matrix (as on the CPU).
TEST(CudaBackend, FailedCholeskyFallsBackToLu) {
  GRAPHC_REQUIRE_GPU();
  auto g = ir::parseGraph(R"(
graph @singular(%y: f64[4,2], %b: f64[4,1]) {
  %g = matmul %y, %y {transpose_b}
  %e = eye : f64[4,4]
  %t = full {value=1e-300} : f64[4,4]
  %r = mul %e, %t
  %s = add %g, %r
  %x = solve %s, %b
  return %x
})");
  auto exe = compile(*g, getBackend("cuda"));
  Array y = Array::fromVector<double>({1, 0, 0, 1, 1, 1, 2, 0}, {4, 2});
  Array b = Array::fromVector<double>({1, 2, 3, 4}, {4, 1});
  try {
    exe->run({y, b});
    FAIL() << "expected the LU fallback to report a singular matrix";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("singular"), std::string::npos) << e.message();
  }
  EXPECT_EQ(exe->fallbacks(), 1);
}

/// Batched SPD solves (X*X'/k + 0.5*I) at sizes where the Cholesky and its two
/// solves become one shared-memory kernel (n <= 96) and where they stay three library
/// calls, f32 and f64, one and several right-hand sides: all match the CPU.
TEST(CudaBackend, BatchedSpdSolvesMatchTheCpu) {
  GRAPHC_REQUIRE_GPU();
  for (const char* dtype : {"f64", "f32"})
    for (int64_t n : {1, 8, 33, 96, 97})
      for (int64_t cols : {1, 3}) {
        std::string text = fmt::format(R"(
graph @spd(%x: {0}[16,{1},{2}], %b: {0}[16,{1},{3}]) {{
  %g = matmul %x, %x {{transpose_b}}
  %e = eye : {0}[16,{1},{1}]
  %h = full {{value=0.5}} : {0}[16,{1},{1}]
  %r = mul %e, %h
  %s = add %g, %r
  %z = solve %s, %b
  return %z
}})",
                                       dtype, n, 2 * n, cols);
        expectSameAsCpu(*ir::parseGraph(text), 11 + n + cols, "");
      }
}

TEST(CudaBackend, OneRankOfAShardedProgramMatchesTheCpuAndMoreAreRefused) {
  GRAPHC_REQUIRE_GPU();
  GRAPHC_REQUIRE_NCCL();
  // Ridge regression with its rows split (docs/sharding.md): X'X and X'y are
  // all_reduce steps, NCCL all-reduces over one rank.
  std::unique_ptr<ir::Graph> g = ir::parseGraph(R"(graph @ridge(%x: f64[41,3], %y: f64[41,1]) {
  %g = syrk %x {transpose}
  %xy = matmul %x, %y {transpose_a}
  %i = eye : f64[3,3]
  %s = add %g, %i
  %w = solve %s, %xy
  %r = matmul %x, %w
  return %w, %r
}
)");
  std::vector<Array> in = testing::randomInputs(*g, 4);
  std::vector<Array> want = compile(*g, getBackend("cpu"))->run(in);
  std::vector<Array> got =
      compile(*g, getBackend("cuda"), {.ranks = 1, .splitAxes = {0, 0}})->run(in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_LE(testing::relativeDifference(got[i], want[i]), 1e-10) << "output " << i;
  try {
    compile(*g, getBackend("cuda"), {.ranks = 2, .splitAxes = {0, 0}});
    ADD_FAILURE() << "two ranks compiled on the GPU";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "the cuda backend runs one rank per process so far (2 asked): its "
                           "executables use GPU 0 alone");
  }
}

TEST(CudaBackend, DataMovementRunsOnTheDevice) {
  GRAPHC_REQUIRE_GPU();
  // Each data-movement op alone (a group of its own; a batch of matrix transposes
  // over several tiles through the tiled kernel), in three element sizes, and
  // between fused kernels: every step on the device, the results the cpu's. triu
  // and tril are selects on the GPU (passes/Masks.h), so theirs are kernels.
  const char* ops = R"(
graph @moves(%x: {0}[3,4,5], %y: {0}[3,2,5], %v: {0}[2,6], %z: {0}[2,37,70]) {{
  %t = transpose %x {{perm=[2,0,1]}}
  %b = transpose %z {{perm=[0,2,1]}}
  %s = slice %x {{start=[1,0,1], stop=[3,4,5], stride=[1,2,3]}}
  %c = concat %x, %y, %x {{axis=1}}
  %d = diag %v
  %p = diag_part %x
  %u = triu %x {{k=1}}
  %l = tril %x {{k=-1}}
  return %t, %b, %s, %c, %d, %p, %u, %l
}})";
  const char* mixed = R"(
graph @mixed(%x: f64[6,8], %w: f64[8,6]) {
  %e = exp %x
  %s = slice %e {start=[1,2], stop=[5,8], stride=[2,1]}
  %t = transpose %s {perm=[1,0]}
  %w2 = slice %w {start=[2,0], stop=[8,2], stride=[1,1]}
  %m = mul %t, %w2
  %u = triu %m {k=0}
  %n = neg %u
  return %n
})";
  for (const char* dtype : {"f64", "f32", "i32"}) {
    auto g = ir::parseGraph(fmt::format(fmt::runtime(ops), dtype));
    EXPECT_EQ(cuda::PreparedProgram(*g).hows(), "Move Move Move Move Move Move Kernel Kernel");
    expectSameAsCpu(*g, 17, "none");
  }
  auto g = ir::parseGraph(mixed);
  std::string hows = cuda::PreparedProgram(*g).hows();
  EXPECT_EQ(hows.find("Host"), std::string::npos) << hows;
  EXPECT_NE(hows.find("Move"), std::string::npos) << hows;
  expectSameAsCpu(*g, 18, "none");
  expectSameAsCpu(*g, 18, "");
}

TEST(CudaBackend, OutOfMemoryIsAClearErrorAndTheBackendGoesOn) {
  GRAPHC_REQUIRE_GPU();
  // A 400000 x 400000 f64 intermediate: 1.28 TB (its max, since a sum of the
  // product would be a dot product of sums: passes/MatmulChains.h).
  auto g = ir::parseGraph(R"(
graph @huge(%x: f64[400000,1], %y: f64[1,400000]) {
  %p = matmul %x, %y
  %s = max %p {axes=[0,1]}
  return %s
})");
  std::vector<Array> inputs = testing::randomInputs(*g, 1);
  try {
    compile(*g, getBackend("cuda"))->run(inputs);
    FAIL() << "expected an out-of-memory error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("GPU out of memory"), std::string::npos) << e.message();
  }
  auto small = ir::parseGraph(testing::readSourceFile("examples/enkf_small.gir"));
  expectSameAsCpu(*small, 5, "");
}

/// A constant that cannot be allocated fails the compile with the pool's error after
/// another constant was made: the made one goes back on the lane's stream before the
/// lane dies (a failing executable once freed its constants on a destroyed stream,
/// and the process crashed), and the backend goes on.
TEST(CudaBackend, ConstantsThatCannotBeMadeFailCleanly) {
  GRAPHC_REQUIRE_GPU();
  auto g = ir::parseGraph(R"(
graph @constants(%x: f64[3,3]) {
  %e = eye : f64[3,3]
  %y = add %x, %e
  %f = full {value=2.5} : f64[400000,400000]
  return %e, %f, %y
})");
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      compile(*g, getBackend("cuda"));
      FAIL() << "expected an out-of-memory error";
    } catch (const Error& e) {
      EXPECT_NE(e.message().find("GPU out of memory"), std::string::npos) << e.message();
    }
  }
  auto small = ir::parseGraph(testing::readSourceFile("examples/enkf_small.gir"));
  expectSameAsCpu(*small, 5, "");
}

} // namespace
} // namespace graphc
