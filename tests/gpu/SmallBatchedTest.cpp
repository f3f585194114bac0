//===- tests/gpu/SmallBatchedTest.cpp - Batched small Cholesky and solves vs the CPU ===//
//
// Many small matrices at once (runtime/cuda/SmallBatched.h, reached through
// LibraryContext::run): Cholesky and triangular solves of random batches against
// the CPU backend in f32 and f64 at sizes around the warp and block boundaries,
// the failing item and leading minor (or zero diagonal) of a batch with one bad
// matrix, and the whole W5 graph on the cuda backend against the cpu backend.
//
//===----------------------------------------------------------------------===//
#include "LibraryTestUtil.h"

#include "bench/Workloads.h"
#include "ir/Parser.h"
#include "runtime/core/Compile.h"
#include "runtime/cuda/SmallBatched.h"
#include "support/Numeric.h"

#include <cstdio>

namespace graphc::testing {
namespace {

const int64_t kSizes[] = {1, 2, 7, 31, 32, 33, 64, 100, 128};

TEST(SmallBatched, CholeskyMatchesTheCpu) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : kFloats)
    for (int64_t n : kSizes)
      for (const Ints& batch : {Ints{}, Ints{5}, Ints{2, 3}})
        for (bool upper : {false, true}) {
          ir::Attrs attrs;
          attrs.set("upper", upper);
          expectSameAsCpu(Op::Cholesky, {spd(dt, withMatrix(batch, n, n), 50 + n)}, attrs,
                          fmt::format("cholesky n={} upper={} {}", n, upper, label(dt, batch)));
        }
  // Several blocks of several matrices each.
  expectSameAsCpu(Op::Cholesky, {spd(DType::F64, {1000, 32, 32}, 51)}, {}, "cholesky 1000 x 32");
}

TEST(SmallBatched, TriangularSolvesMatchTheCpu) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : kFloats)
    for (int64_t n : kSizes)
      for (int64_t cols : {1, 3})
        for (int flags = 0; flags < 16; ++flags) {
          bool lower = flags & 1, right = flags & 2, trans = flags & 4, unit = flags & 8;
          if (unit && n > 12) // random unit triangles are ill-conditioned
            continue;
          Ints batch = {4};
          Array a = wellConditioned(dt, withMatrix(batch, n, n), 52 + n);
          Array b =
              randn(dt, right ? withMatrix(batch, cols, n) : withMatrix(batch, n, cols), 53 + n);
          ir::Attrs attrs;
          attrs.set("lower", lower).set("right_side", right).set("transpose_a", trans);
          attrs.set("unit_diagonal", unit);
          expectSameAsCpu(Op::TriangularSolve, {a, b}, attrs,
                          fmt::format("triangular_solve n={} cols={} lower={} right={} trans={} "
                                      "unit={} {}",
                                      n, cols, lower, right, trans, unit, label(dt, batch)));
        }
}

TEST(SmallBatched, FailuresNameTheItemAndMinor) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : kFloats) {
    for (bool upper : {false, true}) {
      ir::Attrs attrs;
      attrs.set("upper", upper);
      expectSameFailure(Op::Cholesky, {identityWith(dt, {5}, 33, 3, 16, -1.0)}, attrs,
                        "matrix is not positive definite (batch item 3, leading minor 17)");
      expectSameFailure(Op::Cholesky, {identityWith(dt, {300}, 8, 299, 0, 0.0)}, attrs,
                        "matrix is not positive definite (batch item 299, leading minor 1)");
    }
    ir::Attrs lower;
    lower.set("lower", true);
    expectSameFailure(Op::TriangularSolve,
                      {identityWith(dt, {4}, 31, 2, 9, 0.0), randn(dt, {4, 31, 1}, 54)}, lower,
                      "matrix is singular (batch item 2, A(10,10) = 0)");
  }
}

TEST(SmallBatched, W5GraphMatchesTheCpuBackend) {
  GRAPHC_REQUIRE_GPU();
  for (auto [batch, n] : {std::pair<int64_t, int64_t>{64, 32}, {8, 128}, {16, 33}}) {
    SCOPED_TRACE(fmt::format("W5 {} x {}", batch, n));
    auto g = ir::parseGraph(bench::batchedSpdGraph(batch, n, "f64"));
    std::vector<Array> inputs = randomInputs(*g, 55);
    Array want = compile(*g, getBackend("cpu"))->run(inputs).at(0);
    Array got = compile(*g, getBackend("cuda"))->run(inputs).at(0);
    EXPECT_LE(relativeDifference(got, want), 1e-12);
  }
}

/// Milliseconds per run of the W5 library steps at the sizes that pick the
/// kernels (run with --gtest_also_run_disabled_tests).
TEST(SmallBatched, DISABLED_Timings) {
  GRAPHC_REQUIRE_GPU();
  ir::Attrs lower, lowerT, none;
  lower.set("lower", true);
  lowerT.set("lower", true).set("transpose_a", true);
  std::printf("timing: batch n cholesky trsv trsv_t syrk(n x 2n) [ms]\n");
  for (auto [batch, n] : {std::pair<int64_t, int64_t>{65536, 4},
                          {16384, 16},
                          {4096, 32},
                          {2048, 48},
                          {1024, 64},
                          {512, 96},
                          {512, 128},
                          {64, 128},
                          {8, 32},
                          {8, 128},
                          {1, 128}}) {
    Array a = spd(DType::F64, {batch, n, n}, 40), b = randn(DType::F64, {batch, n, 1}, 41);
    Array x = randn(DType::F64, {batch, n, 2 * n}, 42);
    std::printf("timing: %ld %ld %.4f %.4f %.4f %.4f\n", long(batch), long(n),
                timeRun(Op::Cholesky, {a}, none, 20),
                timeRun(Op::TriangularSolve, {a, b}, lower, 20),
                timeRun(Op::TriangularSolve, {a, b}, lowerT, 20), timeRun(Op::Syrk, {x}, none, 20));
  }
}

/// Milliseconds per launch of the kernels with `threads` per matrix, for tuning.
TEST(SmallBatched, DISABLED_ThreadsPerMatrix) {
  GRAPHC_REQUIRE_GPU();
  cuda::SmallBatched kernels;
  cudaStream_t stream = Gpu::get().stream;
  DevicePool& pool = DevicePool::forDevice(0);
  cudaEvent_t start, stop;
  GRAPHC_CUDA_CHECK(cudaEventCreate(&start));
  GRAPHC_CUDA_CHECK(cudaEventCreate(&stop));
  auto time = [&](auto&& enqueue) {
    enqueue();
    GRAPHC_CUDA_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < 20; ++i)
      enqueue();
    GRAPHC_CUDA_CHECK(cudaEventRecord(stop, stream));
    GRAPHC_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    GRAPHC_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms / 20;
  };
  for (auto [batch, n] : {std::pair<int64_t, int64_t>{65536, 4},
                          {16384, 16},
                          {4096, 32},
                          {2048, 48},
                          {1024, 64},
                          {512, 96},
                          {512, 128},
                          {8, 128}}) {
    DeviceBuffer a(pool, batch * n * n * 8, stream), l(pool, batch * n * n * 8, stream);
    DeviceBuffer x(pool, batch * n * 8, stream), info(pool, batch * 4, stream);
    Array spdA = spd(DType::F64, {batch, n, n}, 43);
    GRAPHC_CUDA_CHECK(
        cudaMemcpyAsync(a.data(), spdA.rawData(), a.bytes(), cudaMemcpyHostToDevice, stream));
    GRAPHC_CUDA_CHECK(cudaMemsetAsync(x.data(), 0, x.bytes(), stream));
    const double *pa = a.as<double>(), *px = x.as<double>();
    double *pl = l.as<double>(), *py = x.as<double>();
    int* pi = info.as<int>();
    for (int64_t groups : {1, 2, 4, 8}) {
      int threads = static_cast<int>(n * groups);
      if (threads <= 1024)
        std::printf("cholesky: %ld %ld %d %.4f\n", long(batch), long(n), threads,
                    time([&] { kernels.cholesky(batch, n, pa, pl, false, pi, stream, threads); }));
    }
    for (int threads : {4, 8, 16, 32, 64, 128, 256})
      if (threads <= std::max<int64_t>(n, 4))
        std::printf("trsv: %ld %ld %d %.4f %.4f\n", long(batch), long(n), threads, time([&] {
                      kernels.triangularSolve(batch, n, 1, pa, px, py, {}, pi, stream, threads);
                    }),
                    time([&] {
                      kernels.triangularSolve(batch, n, 1, pa, px, py, {true, true, false}, pi,
                                              stream, threads);
                    }));
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}

} // namespace
} // namespace graphc::testing
