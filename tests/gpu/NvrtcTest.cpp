//===- tests/gpu/NvrtcTest.cpp - Run-time compilation and launch ----------===//
//
// Compiling needs only NVRTC (no driver), so the Compile* tests run everywhere;
// Launch* tests need a device and skip without one.
//
//===----------------------------------------------------------------------===//
#include "GpuTestUtil.h"

#include "runtime/cuda/KernelLibrary.h"
#include "runtime/cuda/Nvrtc.h"

#include <cmath>

using namespace graphc::cuda;
using graphc::testing::DeviceArray;
using graphc::testing::randomVector;

namespace {

const char* kAxpySource = R"(
template <typename T>
__global__ void axpy(long n, T a, const T* x, T* y) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}
)";

CompileOptions axpyOptions(int computeCapability = 0) {
  CompileOptions options;
  options.computeCapability = computeCapability;
  options.nameExpressions = {"axpy<double>"};
  return options;
}

} // namespace

TEST(Nvrtc, CompilesCubinForAnExplicitArchitecture) {
  CompiledModule m = compileCuda(kAxpySource, "axpy.cu", axpyOptions(90));
  EXPECT_TRUE(m.isCubin);
  EXPECT_EQ(m.architecture, "sm_90");
  ASSERT_GE(m.image.size(), 4u);
  EXPECT_EQ(m.image.substr(0, 4), "\x7f"
                                  "ELF");
  EXPECT_NE(m.loweredNames.at("axpy<double>").find("axpy"), std::string::npos);
}

TEST(Nvrtc, CompilesPtxWhenAsked) {
  CompileOptions options = axpyOptions(90);
  options.forcePtx = true;
  CompiledModule m = compileCuda(kAxpySource, "axpy.cu", options);
  EXPECT_FALSE(m.isCubin);
  EXPECT_EQ(m.architecture, "compute_90");
  EXPECT_NE(m.image.find(".entry"), std::string::npos);
}

TEST(Nvrtc, CompileErrorShowsLogAndSource) {
  CompileOptions options;
  options.computeCapability = 90;
  try {
    compileCuda("__global__ void k() { undeclared_thing = 1; }\n", "bad.cu", options);
    FAIL() << "expected graphc::Error";
  } catch (const graphc::Error& e) {
    const std::string& msg = e.message();
    EXPECT_NE(msg.find("bad.cu"), std::string::npos) << msg;
    EXPECT_NE(msg.find("undeclared_thing\" is undefined"), std::string::npos) << msg;
    EXPECT_NE(msg.find("   1 | __global__ void k()"), std::string::npos) << msg;
  }
}

TEST(Nvrtc, LaunchAxpyMatchesHostLoop) {
  GRAPHC_REQUIRE_GPU();
  const long n = 100003; // not a multiple of the block size
  const double a = 0.75;
  std::vector<double> x = randomVector(n, 1), y = randomVector(n, 2);

  CompiledModule m = compileCuda(kAxpySource, "axpy.cu", axpyOptions());
  KernelLibrary library(m);
  Kernel kernel = library.kernel(m.loweredNames.at("axpy<double>"));

  DeviceArray dx(x), dy(y);
  double* px = dx.data();
  double* py = dy.data();
  long count = n;
  double alpha = a;
  kernel.launch(LaunchConfig::linear(n), {&count, &alpha, &px, &py});
  GRAPHC_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<double> got = dy.toHost();

  // The device contracts a*x+y into one FMA: allow rounding of the product.
  for (long i = 0; i < n; ++i)
    ASSERT_NEAR(got[i], a * x[i] + y[i], 1e-15 * (std::abs(a * x[i]) + std::abs(y[i])))
        << "at " << i;
}

TEST(Nvrtc, UnknownKernelNameThrows) {
  GRAPHC_REQUIRE_GPU();
  KernelLibrary library(compileCuda(kAxpySource, "axpy.cu", axpyOptions()));
  EXPECT_THROW(library.kernel("no_such_kernel"), graphc::Error);
}
