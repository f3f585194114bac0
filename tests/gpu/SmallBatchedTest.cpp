//===- tests/gpu/SmallBatchedTest.cpp - Batched small Cholesky and solves vs the CPU ===//
//
// Many small matrices at once (runtime/cuda/SmallBatched.h, reached through
// LibraryContext::run): Cholesky and triangular solves of random SPD batches
// against the CPU backend in f32 and f64 at the sizes around the warp and block
// boundaries, the failing item and leading minor of a batch with one non-SPD
// matrix, and the whole W5 graph on the cuda backend against the cpu backend.
//
//===----------------------------------------------------------------------===//
#include "LibraryTestUtil.h"

#include <cstdio>

namespace graphc::testing {
namespace {

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

} // namespace
} // namespace graphc::testing
