//===- tests/gpu/LibraryBatchedTest.cpp - Batched LU and QR vs the CPU ----===//
//
// The LU-based ops (solve, lu, inverse, det, logdet) and qr of batches of small
// matrices, which LibraryContext runs through cuBLAS's batched routines
// (getrfBatched, getrsBatched, geqrfBatched and the householderQ helper kernel),
// against the CPU backend: batches of 1 (the cuSOLVER loop), 3, 64 and 512 at
// n = 1, 5, 32 and 100 in f32 and f64; solves and inverses of tiny matrices
// (SmallBatched's LU in registers, n <= 8) at every n it takes and the first it
// does not, one right-hand side or many; a singular item in the middle of a batch;
// and, disabled, the batched routines timed against the loop over cuSOLVER. One
// element type (and batch size) a test, so that sanitizer shards can split them.
//
//===----------------------------------------------------------------------===//
#include "LibraryTestUtil.h"

#include "runtime/cuda/SmallBatched.h"

#include <cstdio>

namespace graphc::testing {
namespace {

const int64_t kBatchSizes[] = {1, 3, 64, 512};
const int64_t kSizes[] = {1, 5, 32, 100};

/// Random rows x cols matrices with max(rows, cols) added to the diagonal:
/// well conditioned, and the pivots of f32 LU are clear winners (random ties of
/// the CPU's and the GPU's rounding would pick different rows).
Array shifted(DType dtype, int64_t batch, int64_t rows, int64_t cols, uint64_t seed) {
  std::vector<double> v = doubles(randn(DType::F64, {batch, rows, cols}, seed));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t d = 0; d < std::min(rows, cols); ++d)
      v[(b * rows + d) * cols + d] += std::max(rows, cols);
  return fromDoubles(dtype, v, {batch, rows, cols});
}

/// I + G / (2 sqrt(n)) for random G: determinants of order 1 at every n (a
/// shifted matrix's determinant overflows f32 at n = 100).
Array nearIdentity(DType dtype, int64_t batch, int64_t n, uint64_t seed) {
  std::vector<double> v = doubles(randn(DType::F64, {batch, n, n}, seed));
  for (double& x : v)
    x /= 2 * std::sqrt(double(n));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t d = 0; d < n; ++d)
      v[(b * n + d) * n + d] += 1.0;
  return fromDoubles(dtype, v, {batch, n, n});
}

std::string label(DType dt, int64_t batch, int64_t n) {
  return fmt::format("{} batch {} n={}", ir::dtypeName(dt).str(), batch, n);
}

/// One element type and batch size a test: small enough for compute-sanitizer's
/// shards (scripts/gpu-sanitize.sh), where the whole loop took minutes.
class BatchedOps : public ::testing::TestWithParam<std::tuple<DType, int64_t>> {};

TEST_P(BatchedOps, LuOpsMatchTheCpu) {
  GRAPHC_REQUIRE_GPU();
  auto [dt, batch] = GetParam();
  for (int64_t n : kSizes) {
    std::string what = label(dt, batch, n);
    Array a = shifted(dt, batch, n, n, 40);
    expectSameAsCpu(Op::Solve, {a, randn(dt, {batch, n, 3}, 41)}, {}, "solve " + what);
    expectSameAsCpu(Op::Inverse, {a}, {}, "inverse " + what);
    // f64 pivots are clear on plain random matrices too: pivoting really happens.
    Array general = dt == DType::F64 ? randn(dt, {batch, n, n}, 42) : a;
    expectSameAsCpu(Op::Lu, {general}, {}, "lu " + what);
    Array d = nearIdentity(dt, batch, n, 43);
    expectSameAsCpu(Op::Det, {d}, {}, "det " + what);
    expectSameAsCpu(Op::Logdet, {d}, {}, "logdet " + what);
  }
}

TEST_P(BatchedOps, QrMatchesTheCpu) {
  GRAPHC_REQUIRE_GPU();
  auto [dt, batch] = GetParam();
  for (int64_t n : kSizes)
    for (auto [rows, cols] : {std::pair{n, n}, {n + 7, n}, {n, n + 7}})
      expectSameAsCpu(Op::Qr, {shifted(dt, batch, rows, cols, 44)}, {},
                      fmt::format("qr {}x{} {}", rows, cols, label(dt, batch, n)));
}

INSTANTIATE_TEST_SUITE_P(BatchedLibrary, BatchedOps,
                         ::testing::Combine(::testing::ValuesIn(kFloats),
                                            ::testing::ValuesIn(kBatchSizes)),
                         [](const auto& info) {
                           return fmt::format("{}_batch{}",
                                              ir::dtypeName(std::get<0>(info.param)).str(),
                                              std::get<1>(info.param));
                         });

TEST(BatchedLibrary, TinySolvesMatchTheCpu) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : kFloats)
    for (int64_t n = 1; n <= cuda::kTinyLuMaxN + 1; ++n)
      for (int64_t batch : {1, 7, 1000})
        for (int64_t cols : {1, 3, 40}) {
          std::string what = fmt::format("{} cols={}", label(dt, batch, n), cols);
          // f64 pivots are clear on plain random matrices: pivoting really happens.
          Array a =
              dt == DType::F64 ? randn(dt, {batch, n, n}, 70 + n) : shifted(dt, batch, n, n, 70);
          expectSameAsCpu(Op::Solve, {a, randn(dt, {batch, n, cols}, 71)}, {}, "solve " + what,
                          /*capture=*/cols == 3);
          if (cols == 1)
            expectSameAsCpu(Op::Inverse, {a}, {}, "inverse " + what);
        }
}

/// A batch whose item `item` has column `column` zeroed: exactly singular with
/// U(column+1, column+1) = 0 after whatever pivoting the other columns cause.
Array withZeroColumn(DType dtype, int64_t batch, int64_t n, int64_t item, int64_t column) {
  std::vector<double> v = doubles(shifted(DType::F64, batch, n, n, 45));
  for (int64_t i = 0; i < n; ++i)
    v[(item * n + i) * n + column] = 0.0;
  return fromDoubles(dtype, v, {batch, n, n});
}

class SingularItem : public ::testing::TestWithParam<DType> {};

TEST_P(SingularItem, HasTheCpuMessage) {
  GRAPHC_REQUIRE_GPU();
  DType dt = GetParam();
  for (auto [batch, n, item, column] : {std::tuple<int64_t, int64_t, int64_t, int64_t>{3, 5, 1, 2},
                                        {1000, 4, 999, 0},
                                        {9, 8, 4, 7},
                                        {64, 32, 37, 20},
                                        {512, 100, 300, 99}}) {
    SCOPED_TRACE(label(dt, batch, n));
    Array a = withZeroColumn(dt, batch, n, item, column);
    std::string message = fmt::format("matrix is singular (batch item {}, U({},{}) = 0)", item,
                                      column + 1, column + 1);
    expectSameFailure(Op::Solve, {a, randn(dt, {batch, n, 2}, 46)}, {}, message);
    expectSameFailure(Op::Inverse, {a}, {}, message);
    // Not failures: det 0, logdet -inf, and LU factors of the singular item.
    expectSameAsCpu(Op::Det, {a}, {}, "det with a singular item");
    expectSameAsCpu(Op::Logdet, {a}, {}, "logdet with a singular item");
    expectSameAsCpu(Op::Lu, {a}, {}, "lu with a singular item");
  }
}

INSTANTIATE_TEST_SUITE_P(BatchedLibrary, SingularItem, ::testing::ValuesIn(kFloats),
                         [](const auto& info) { return ir::dtypeName(info.param).str(); });

TEST(BatchedLibrary, RunsInsideStreamCapture) {
  GRAPHC_REQUIRE_GPU();
  // The looped (batch 1) and the batched path of every LU and QR op.
  for (DType dt : kFloats)
    for (int64_t batch : {1, 64}) {
      Array a = shifted(dt, batch, 20, 20, 47);
      std::string what = fmt::format("captured {}", label(dt, batch, 20));
      expectSameAsCpu(Op::Solve, {a, randn(dt, {batch, 20, 3}, 48)}, {}, what, true);
      for (Op op : {Op::Lu, Op::Qr, Op::Inverse, Op::Det, Op::Logdet})
        expectSameAsCpu(op, {a}, {}, what, true);
    }
}

/// Milliseconds per solve of `batch` f64 n x n systems (8 right-hand sides), with
/// the batched routines or the loop over cuSOLVER.
double timeSolve(int64_t batch, int64_t n, bool batched) {
  LibraryContext& ctx = *Gpu::get().ctx;
  ctx.setBatchedFactorizations(batched);
  double ms = timeRun(Op::Solve,
                      {shifted(DType::F64, batch, n, n, 49), randn(DType::F64, {batch, n, 8}, 50)},
                      {}, batched ? 20 : 3);
  ctx.setBatchedFactorizations(true);
  return ms;
}

/// Run with --gtest_also_run_disabled_tests.
TEST(BatchedLibrary, DISABLED_TimingsBatchedAgainstLoop) {
  GRAPHC_REQUIRE_GPU();
  std::printf("f64 solve (LU), 8 right-hand sides, ms per run:\n");
  for (auto [batch, n] : {std::pair<int64_t, int64_t>{4096, 32}, {512, 128}})
    std::printf("  %5ld x %3ld  batched %8.3f  loop %8.3f\n", long(batch), long(n),
                timeSolve(batch, n, true), timeSolve(batch, n, false));
}

} // namespace
} // namespace graphc::testing
