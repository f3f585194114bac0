//===- tests/tools/BackendChoiceTest.cpp - graphc's backends and version --===//
//
// `graphc --version` lists every backend of the build and whether it runs here;
// `graphc run --backend cuda` runs on the GPU where there is one (its checksums
// agree with the cpu run's) and otherwise says that the build has the backend but
// the machine cannot run it, before reading the input; `--backend auto` prints
// which backend it chose and why; GRAPHC_LOG=routes names the routine each library
// step runs through. Whether a device is present is asked of the CUDA runtime
// here, not of graphc.
//
//===----------------------------------------------------------------------===//
#include "RunTool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#if GRAPHC_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

using namespace graphc::testing;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

namespace {

const std::string kEnkf = sourcePath("examples/enkf.gir");

#if GRAPHC_HAS_CUDA
constexpr bool kBuiltWithCuda = true;
#else
constexpr bool kBuiltWithCuda = false;
#endif

/// True when the CUDA runtime finds a device.
bool devicePresent() {
#if GRAPHC_HAS_CUDA
  int count = 0;
  bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cudaGetLastError();
  return ok;
#else
  return false;
#endif
}

} // namespace

TEST(GraphcVersion, PrintsTheVersionAndEachBackend) {
  ToolResult r = runGraphc({"--version"});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_THAT(r.out, StartsWith("graphc " GRAPHC_VERSION "\nbackends:\n"));
  EXPECT_THAT(r.out, HasSubstr("\n  cpu "));
  EXPECT_THAT(r.out, HasSubstr("\n  cpu-unfused "));
  EXPECT_EQ(r.out.find("\n  cuda ") != std::string::npos, kBuiltWithCuda) << r.out;
  EXPECT_EQ(r.out.find("cannot run here") != std::string::npos, kBuiltWithCuda && !devicePresent())
      << r.out;
  EXPECT_THAT(runGraphc({"--help"}).out, HasSubstr("graphc --version"));
}

TEST(GraphcRun, CudaRunsOnTheGpuOrSaysWhyNot) {
  if (devicePresent()) {
    ToolResult cpu = runGraphc({"run", kEnkf, "--random-inputs", "--backend", "cpu"});
    ToolResult gpu = runGraphc({"run", kEnkf, "--random-inputs", "--backend", "cuda"});
    ASSERT_EQ(gpu.exitCode, 0) << gpu.describe();
    EXPECT_THAT(gpu.out, HasSubstr("@enkf on cuda: "));
    std::vector<double> want = outputSums(cpu.out), got = outputSums(gpu.out);
    ASSERT_FALSE(want.empty()) << cpu.out;
    ASSERT_EQ(got.size(), want.size()) << gpu.out;
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-9 * (1 + std::abs(want[i]))) << "output " << i;
    return;
  }
  // The backend is checked before the input is read: the file does not exist.
  ToolResult r = runGraphc({"run", "/nonexistent.gir", "--backend", "cuda"});
  EXPECT_EQ(r.exitCode, 1) << r.describe();
  EXPECT_THAT(r.err, HasSubstr(kBuiltWithCuda ? "backend 'cuda': this build has the CUDA "
                                                "backend, but this machine cannot run it: "
                                              : "backend 'cuda': this build has no CUDA backend"))
      << r.describe();
  EXPECT_THAT(r.err, Not(HasSubstr("nonexistent"))) << r.describe();
}

TEST(GraphcRun, AutoSaysWhichBackendItChose) {
  ToolResult r = runGraphc({"run", kEnkf, "--random-inputs"});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  if (devicePresent()) {
    EXPECT_THAT(r.out, StartsWith("backend auto: cuda (NVIDIA")) << r.out;
    EXPECT_THAT(r.out, HasSubstr("@enkf on cuda: "));
  } else {
    EXPECT_THAT(r.out, StartsWith(kBuiltWithCuda
                                      ? "backend auto: cpu (the CUDA backend cannot run on this "
                                        "machine: "
                                      : "backend auto: cpu (this build has no CUDA backend)\n"))
        << r.out;
    EXPECT_THAT(r.out, HasSubstr("@enkf on cpu: "));
  }
  ToolResult named = runGraphc({"run", kEnkf, "--random-inputs", "--backend", "cpu-unfused"});
  ASSERT_EQ(named.exitCode, 0) << named.describe();
  EXPECT_THAT(named.out, StartsWith("@enkf on cpu-unfused: ")) << "no auto line when named";
  EXPECT_EQ(outputSums(named.out).size(), outputSums(r.out).size());
}

TEST(GraphcRun, RouteLogNamesTheRoutineOfEachLibraryStepAndWhy) {
  if (!devicePresent())
    GTEST_SKIP() << "no CUDA device";
  // One step of each kind, as written (no passes), at shapes whose routes differ.
  const std::string graph =
      R"(graph @routes(%x: f64[64,32,8], %s: f64[3,3], %t: f64[3,2], %m: f64[512,512],
               %u: f64[100,100], %b: f64[100,40]) {
  %g = syrk %x
  %e = eye : f64[64,32,32]
  %a = add %g, %e
  %l = cholesky %a
  %z = solve %s, %t
  %q:2 = qr %m
  %y = triangular_solve %u, %b {lower}
  return %l, %z, %q#1, %y
}
)";
  setenv("GRAPHC_LOG", "routes", 1);
  ToolResult r = runGraphc(
      {"run", "-", "--random-inputs", "--backend", "cuda", "--passes", "none", "--repeat", "3"},
      graph);
  unsetenv("GRAPHC_LOG");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  for (const char* line :
       {"[graphc] route: syrk of f64[64,32,8]: cuBLAS gemm, then the mirror (order 32 <= "
        "gemmSyrkMaxN 256)\n",
        "[graphc] route: cholesky of f64[64,32,32]: SmallBatched's Cholesky kernel (order 32 <= "
        "smallCholeskyMaxN 96)\n",
        "[graphc] route: solve of f64[3,3], f64[3,2]: SmallBatched's LU in registers (order 3 <= "
        "8)\n",
        "[graphc] route: qr of f64[512,512]: cuSOLVER geqrf and orgqr per item (the cluster kernel "
        "does not take it)\n",
        "[graphc] route: triangular_solve of f64[100,100], f64[100,40]: cuBLAS trsm (order 100 > "
        "panelSolveMaxN 0)\n"}) {
    size_t at = r.err.find(line);
    EXPECT_NE(at, std::string::npos) << line << " in\n" << r.err;
    EXPECT_EQ(r.err.find(line, at + 1), std::string::npos) << "once, not every run: " << line;
  }
}
