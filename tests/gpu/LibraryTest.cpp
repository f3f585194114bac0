//===- tests/gpu/LibraryTest.cpp - cuBLAS/cuSOLVER library calls vs the CPU ===//
//
// Every linear-algebra op of runtime/cuda/Library.h runs as a one-node graph on
// the GPU (LibraryContext::reserve + run on pool buffers) and on the CPU backend,
// and the results must agree: f32 and f64, unbatched and batched, with every
// flag. The numeric failures must give the CPU's messages through failure(), and
// the device pool must report running out of memory and keep working.
//
//===----------------------------------------------------------------------===//
#include "LibraryTestUtil.h"

#include "runtime/cuda/HelperKernels.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>

namespace graphc::testing {
namespace {

TEST(Library, HelperKernelsCompileForSm90WithoutAGpu) {
  expectCompilesForSm90(cuda::HelperKernels::moduleSource());
}

TEST(Library, MatmulWithTransposeFlags) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : kFloats)
    for (const Ints& batch : kBatches)
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          int64_t m = 37, k = 29, n = 41;
          Array a = randn(dt, withMatrix(batch, ta ? k : m, ta ? m : k), 1);
          Array b = randn(dt, withMatrix(batch, tb ? n : k, tb ? k : n), 2);
          ir::Attrs attrs;
          attrs.set("transpose_a", ta).set("transpose_b", tb);
          expectSameAsCpu(Op::Matmul, {a, b}, attrs,
                          fmt::format("matmul ta={} tb={} {}", ta, tb, label(dt, batch)));
        }
  expectSameAsCpu(Op::Matmul, {Array::zeros(DType::F64, {2, 0}), Array::zeros(DType::F64, {0, 3})},
                  {}, "matmul over k = 0");
}

TEST(Library, SyrkIsFullSymmetric) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : kFloats)
    for (const Ints& batch : kBatches)
      for (bool trans : {false, true}) {
        int64_t n = 33, k = 20;
        Array x = randn(dt, withMatrix(batch, trans ? k : n, trans ? n : k), 3);
        ir::Attrs attrs;
        attrs.set("transpose", trans);
        expectSameAsCpu(Op::Syrk, {x}, attrs,
                        fmt::format("syrk transpose={} {}", trans, label(dt, batch)));
      }
  expectSameAsCpu(Op::Syrk, {randn(DType::F64, {300, 200}, 4)}, {}, "syrk 300x200");
  // Past the batched gemm's sizes: syrk per item, then the tiled mirror of each.
  expectSameAsCpu(Op::Syrk, {randn(DType::F32, {3, 290, 70}, 5)}, {}, "syrk 3 x 290x70");
}

TEST(Library, Solve) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : kFloats)
    for (const Ints& batch : kBatches)
      for (int64_t n : {5, 45}) {
        Array a = wellConditioned(dt, withMatrix(batch, n, n), 5);
        Array b = randn(dt, withMatrix(batch, n, 7), 6);
        expectSameAsCpu(Op::Solve, {a, b}, {}, fmt::format("solve n={} {}", n, label(dt, batch)));
      }
}

TEST(Library, CholeskyLowerAndUpper) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : kFloats)
    for (const Ints& batch : kBatches)
      for (int64_t n : {6, 64})
        for (bool upper : {false, true}) {
          ir::Attrs attrs;
          attrs.set("upper", upper);
          expectSameAsCpu(Op::Cholesky, {spd(dt, withMatrix(batch, n, n), 7)}, attrs,
                          fmt::format("cholesky n={} upper={} {}", n, upper, label(dt, batch)));
        }
}

/// Expects triangular_solve to match the CPU with every flag set (lower, right side,
/// transpose, unit diagonal): A from `triangle(unit)` (nullopt skips the set), random
/// right-hand sides of `r` columns (rows on the right side).
void expectEveryTriangularSolve(DType dt, const Ints& batch, int64_t n, int64_t r,
                                const std::function<std::optional<Array>(bool unit)>& triangle) {
  for (int flags = 0; flags < 16; ++flags) {
    bool lower = flags & 1, right = flags & 2, trans = flags & 4, unit = flags & 8;
    std::optional<Array> a = triangle(unit);
    if (!a)
      continue;
    Array b = randn(dt, right ? withMatrix(batch, r, n) : withMatrix(batch, n, r), 9);
    ir::Attrs attrs;
    attrs.set("lower", lower).set("right_side", right).set("transpose_a", trans);
    attrs.set("unit_diagonal", unit);
    expectSameAsCpu(Op::TriangularSolve, {*a, b}, attrs,
                    fmt::format("triangular_solve n={} lower={} right={} trans={} unit={} {}", n,
                                lower, right, trans, unit, label(dt, batch)));
  }
}

/// expectEveryTriangularSolve() on n x n triangles that stay well conditioned: the
/// triangles of SPD matrices, and (unbatched) a unit triangle with small off-diagonal
/// elements; with each count of right-hand sides in `counts`.
void expectEveryWellConditionedSolve(int64_t n, llvm::ArrayRef<Ints> batches,
                                     llvm::ArrayRef<int64_t> counts, uint64_t seed) {
  std::vector<double> unitTriangle = doubles(randn(DType::F64, {n, n}, seed));
  for (double& v : unitTriangle)
    v *= 0.3 / std::sqrt(double(n));
  for (DType dt : kFloats)
    for (const Ints& batch : batches) {
      Array spdTriangle = spd(dt, withMatrix(batch, n, n), seed + 1);
      for (int64_t r : counts)
        expectEveryTriangularSolve(dt, batch, n, r, [&](bool unit) -> std::optional<Array> {
          if (!unit)
            return spdTriangle;
          if (batch.empty())
            return fromDoubles(dt, unitTriangle, {n, n});
          return std::nullopt;
        });
    }
}

TEST(Library, TriangularSolveEveryFlag) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : kFloats)
    for (const Ints& batch : kBatches) {
      // A full matrix: the solve must read only the triangle the flags name.
      Array a = wellConditioned(dt, withMatrix(batch, 12, 12), 8);
      expectEveryTriangularSolve(dt, batch, 12, 5, [&](bool) { return a; });
    }
}

TEST(Library, OneVectorTriangularSolves) {
  GRAPHC_REQUIRE_GPU();
  // Above SmallBatched's sizes: one column (one row on the right side) takes
  // SmallBatched::solveVector, 5 blocks, the last of 44 rows.
  expectEveryWellConditionedSolve(300, kBatches, {1}, 14);
}

/// Triangles up to passes::RoutePolicy::panelSolveMaxN with more right-hand sides
/// than SmallBatched's small solve takes, or on the right side, go to
/// SmallBatched::panelSolve (RoutePolicy.PanelSolvesBelowTheBlockedOnesWhenOn; off
/// by default: GRAPHC_ROUTES=panelSolveMaxN=288 runs these through it, and
/// SmallBatched.PanelSolvesMatchTheCpu calls it directly): one panel, several with a
/// ragged last one, the largest in f64, 32 right-hand sides a block with a ragged
/// last block, batched.
TEST(Library, PanelTriangularSolves) {
  GRAPHC_REQUIRE_GPU();
  expectEveryWellConditionedSolve(20, kBatches, {70}, 42);
  expectEveryWellConditionedSolve(100, {Ints{}, Ints{2}}, {33}, 43);
  expectEveryWellConditionedSolve(288, {Ints{}}, {40}, 44);
}

TEST(Library, LuGivesLapacksFactors) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : kFloats)
    for (const Ints& batch : kBatches)
      for (int64_t n : {4, 20})
        expectSameAsCpu(Op::Lu, {randn(dt, withMatrix(batch, n, n), 10)}, {},
                        fmt::format("lu n={} {}", n, label(dt, batch)));
}

TEST(Library, ReducedQr) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : kFloats)
    for (const Ints& batch : kBatches)
      for (auto [m, n] : {std::pair<int64_t, int64_t>{9, 5}, {5, 9}, {16, 16}})
        expectSameAsCpu(Op::Qr, {randn(dt, withMatrix(batch, m, n), 11)}, {},
                        fmt::format("qr {}x{} {}", m, n, label(dt, batch)));
}

TEST(Library, Inverse) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : kFloats)
    for (const Ints& batch : kBatches)
      expectSameAsCpu(Op::Inverse, {wellConditioned(dt, withMatrix(batch, 30, 30), 12)}, {},
                      fmt::format("inverse {}", label(dt, batch)));
}

TEST(Library, DetAndLogdet) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : kFloats)
    for (const Ints& batch : kBatches)
      for (Op op : {Op::Det, Op::Logdet})
        expectSameAsCpu(op, {randn(dt, withMatrix(batch, 12, 12), 13)}, {},
                        fmt::format("{} {}", ir::opName(op).str(), label(dt, batch)));
  // Singular: det 0, logdet -inf (values, not failures).
  Array singular = identityWith(DType::F64, {2}, 4, 1, 2, 0.0);
  expectSameAsCpu(Op::Det, {singular}, {}, "det of a singular matrix");
  expectSameAsCpu(Op::Logdet, {singular}, {}, "logdet of a singular matrix");
}

TEST(Library, TraceOfEveryNumericType) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : {DType::F32, DType::F64, DType::I32, DType::I64})
    for (const Ints& batch : kBatches)
      for (auto [m, n] : {std::pair<int64_t, int64_t>{6, 6}, {5, 7}, {7, 5}})
        expectSameAsCpu(Op::Trace,
                        {Array::randomUniform(dt, withMatrix(batch, m, n), 14, -100, 100)}, {},
                        fmt::format("trace {}x{} {}", m, n, label(dt, batch)));
}

TEST(Library, CholeskyFailureHasTheCpuMessage) {
  GRAPHC_REQUIRE_GPU();
  // Batched (potrfBatched) and unbatched (potrf), both triangles.
  for (bool upper : {false, true}) {
    ir::Attrs attrs;
    attrs.set("upper", upper);
    expectSameFailure(Op::Cholesky, {identityWith(DType::F64, {3}, 5, 2, 2, -1.0)}, attrs,
                      "matrix is not positive definite (batch item 2, leading minor 3)");
    expectSameFailure(Op::Cholesky, {identityWith(DType::F32, {}, 5, 0, 0, -1.0)}, attrs,
                      "matrix is not positive definite (batch item 0, leading minor 1)");
  }
}

TEST(Library, SingularFailuresHaveTheCpuMessage) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : kFloats) {
    Array a = identityWith(dt, {2}, 6, 1, 3, 0.0);
    expectSameFailure(Op::Solve, {a, randn(dt, {2, 6, 2}, 15)}, {},
                      "matrix is singular (batch item 1, U(4,4) = 0)");
    expectSameFailure(Op::Inverse, {a}, {}, "matrix is singular (batch item 1, U(4,4) = 0)");
    expectSameFailure(Op::TriangularSolve, {a, randn(dt, {2, 6, 2}, 16)}, {},
                      "matrix is singular (batch item 1, A(4,4) = 0)");
    // The panel solve's routes: rows on the right side, and 40 columns of 100 rows.
    ir::Attrs right;
    right.set("right_side", true);
    expectSameFailure(Op::TriangularSolve, {a, randn(dt, {2, 40, 6}, 19)}, right,
                      "matrix is singular (batch item 1, A(4,4) = 0)");
    expectSameFailure(Op::TriangularSolve,
                      {identityWith(dt, {2}, 100, 0, 60, 0.0), randn(dt, {2, 100, 40}, 20)}, {},
                      "matrix is singular (batch item 0, A(61,61) = 0)");
  }
  // A singular matrix that pivoting has to discover: two equal rows.
  Array dup = randn(DType::F64, {4, 4}, 17);
  std::vector<double> v = doubles(dup);
  std::copy(v.begin(), v.begin() + 4, v.begin() + 8);
  std::vector<Array> inputs = {fromDoubles(DType::F64, v, {4, 4}), randn(DType::F64, {4, 1}, 18)};
  OneNode g(Op::Solve, inputs, {});
  CpuResult cpu = runCpu(g, inputs);
  GpuResult gpu = runGpu(*g.node, inputs);
  ASSERT_TRUE(gpu.failure.has_value());
  EXPECT_EQ(cpu.error, "solve: " + *gpu.failure);
}

TEST(Library, LargeMatrices) {
  GRAPHC_REQUIRE_GPU();
  // Sizes where cuSOLVER and the transposes take their blocked paths.
  const int64_t n = 1000;
  Array a = spd(DType::F64, {n, n}, 23), b = randn(DType::F64, {n, 50}, 24);
  expectSameAsCpu(Op::Cholesky, {a}, {}, "cholesky 1000");
  expectSameAsCpu(Op::Solve, {a, b}, {}, "solve 1000");
  expectSameAsCpu(Op::Syrk, {randn(DType::F64, {n, 300}, 25)}, {}, "syrk 1000x300");
  expectSameAsCpu(Op::Qr, {randn(DType::F64, {n, 200}, 26)}, {}, "qr 1000x200");
  // Large triangles, every side, triangle and transpose (unit diagonals of random
  // triangles are ill-conditioned, so those stay at the small sizes above).
  for (int flags = 0; flags < 8; ++flags) {
    bool lower = flags & 1, right = flags & 2, trans = flags & 4;
    Array t = spd(DType::F64, {n, n}, 27);
    Array rhs = randn(DType::F64, right ? Ints{70, n} : Ints{n, 70}, 28);
    ir::Attrs attrs;
    attrs.set("lower", lower).set("right_side", right).set("transpose_a", trans);
    expectSameAsCpu(
        Op::TriangularSolve, {t, rhs}, attrs,
        fmt::format("triangular_solve 1000 lower={} right={} trans={}", lower, right, trans));
  }
}

TEST(Library, LargeTriangularSolvesByBlocks) {
  GRAPHC_REQUIRE_GPU();
  // Large enough for BlockedSolve.h (n >= 1024, two or more right-hand sides: a few
  // and many), with a last diagonal block of 1100 - 4 * 256 = 76 rows, on either
  // side; and one vector (SmallBatched::solveVector, 18 blocks).
  expectEveryWellConditionedSolve(1100, {Ints{}, Ints{2}}, {1, 5, 300}, 40);
  // A small triangle with thousands of right-hand sides: one block, one gemm.
  expectEveryWellConditionedSolve(100, {Ints{}}, {5000}, 41);
}

/// On sm_90, large f32 gemm, syrk and blocked triangular solves run in f64: each
/// element is the f64 result rounded to f32 (plain f32 gemms over k = 1100 miss by
/// many units in the last place). With the option off they run in f32.
TEST(Library, LargeSingleRunsInDouble) {
  GRAPHC_REQUIRE_GPU();
  LibraryContext& ctx = *Gpu::get().ctx;
  if (!ctx.singleInDouble())
    GTEST_SKIP() << "f32 runs in f64 on sm_90 only";
  const int64_t n = 1100;
  Array a = randn(DType::F32, {n, n}, 50), b = randn(DType::F32, {n, n}, 51);
  Array t = spd(DType::F32, {n, n}, 52);
  ir::Attrs lower, transpose;
  lower.set("lower", true);
  transpose.set("transpose", true);
  struct Case {
    Op op;
    std::vector<Array> inputs;
    ir::Attrs attrs;
  };
  for (const Case& c : {Case{Op::Matmul, {a, b}, {}}, Case{Op::Syrk, {a}, transpose},
                        Case{Op::TriangularSolve, {t, b}, lower}}) {
    std::string what = ir::opName(c.op).str();
    std::vector<Array> wide;
    for (const Array& x : c.inputs)
      wide.push_back(fromDoubles(DType::F64, doubles(x), x.shape()));
    CpuResult want = runCpu(OneNode(c.op, wide, c.attrs), wide);
    ASSERT_EQ(want.error, "") << what;
    std::vector<double> exact = doubles(want.outputs[0]);
    double scale = 0;
    for (double x : exact)
      scale = std::max(scale, std::abs(x));
    std::vector<double> got =
        doubles(runGpu(*OneNode(c.op, c.inputs, c.attrs).node, c.inputs).outputs[0]);
    for (size_t i = 0; i < exact.size(); ++i)
      ASSERT_LE(std::abs(got[i] - exact[i]), 0x1p-24 * std::abs(exact[i]) + 1e-12 * scale)
          << what << ": element " << i;
    ctx.setSingleInDouble(false);
    expectSameAsCpu(c.op, c.inputs, c.attrs, what + " in f32");
    ctx.setSingleInDouble(true);
  }
}

TEST(Library, EveryOpRunsInsideStreamCapture) {
  GRAPHC_REQUIRE_GPU();
  // No synchronization, no allocation, nothing a CUDA graph cannot hold.
  for (DType dt : kFloats) {
    Ints sq = {2, 24, 24};
    Array a = wellConditioned(dt, sq, 20), b = randn(dt, {2, 24, 3}, 21);
    ir::Attrs lower;
    lower.set("lower", true);
    for (Op op : {Op::Solve, Op::TriangularSolve})
      expectSameAsCpu(op, {a, b}, op == Op::Solve ? ir::Attrs{} : lower,
                      fmt::format("captured {}", ir::opName(op).str()), true);
    for (Op op : {Op::Lu, Op::Qr, Op::Inverse, Op::Det, Op::Logdet, Op::Trace, Op::Syrk})
      expectSameAsCpu(op, {a}, {}, fmt::format("captured {}", ir::opName(op).str()), true);
    expectSameAsCpu(Op::Matmul, {a, a}, {}, "captured matmul", true);
    for (const Ints& shape : {Ints{24, 24}, sq})
      expectSameAsCpu(Op::Cholesky, {spd(dt, shape, 22)}, {}, "captured cholesky", true);
  }
}

TEST(Library, RunWithoutReserveThrows) {
  GRAPHC_REQUIRE_GPU();
  Array a = wellConditioned(DType::F64, {70, 70}, 19);
  OneNode g(Op::Inverse, {a}, {});
  cudaStream_t stream = Gpu::get().stream;
  LibraryContext fresh(0, stream); // nothing reserved yet
  DevicePool& pool = DevicePool::forDevice(0);
  DeviceBuffer in(pool, a.type().bytes(), stream), out(pool, a.type().bytes(), stream);
  DeviceBuffer info(pool, sizeof(int), stream);
  GRAPHC_CUDA_CHECK(
      cudaMemcpyAsync(in.data(), a.rawData(), a.type().bytes(), cudaMemcpyHostToDevice, stream));
  try {
    fresh.run(*g.node, {in.data()}, {out.data()}, info.as<int>());
    FAIL() << "expected graphc::Error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("reserve was not called"), std::string::npos) << e.what();
  }
  fresh.reserve(*g.node);
  EXPECT_GE(fresh.workspaceBytes(), size_t(70 * 70 * 8));
  fresh.run(*g.node, {in.data()}, {out.data()}, info.as<int>());
  std::vector<double> x(70 * 70), want = doubles(a);
  GRAPHC_CUDA_CHECK(
      cudaMemcpyAsync(x.data(), out.data(), x.size() * 8, cudaMemcpyDeviceToHost, stream));
  GRAPHC_CUDA_CHECK(cudaStreamSynchronize(stream));
  double worst = 0; // |A X - I|, A well conditioned
  for (int i = 0; i < 70; ++i)
    for (int j = 0; j < 70; ++j) {
      double s = -double(i == j);
      for (int k = 0; k < 70; ++k)
        s += want[i * 70 + k] * x[k * 70 + j];
      worst = std::max(worst, std::abs(s));
    }
  EXPECT_LT(worst, 1e-12);
}

/// Timings at the EnKF size of DESIGN.md (run with --gtest_also_run_disabled_tests).
TEST(Library, DISABLED_TimingsAtEnkfSize) {
  GRAPHC_REQUIRE_GPU();
  const int64_t n = 3000;
  Array a = wellConditioned(DType::F64, {n, n}, 30), b = randn(DType::F64, {n, n}, 31);
  ir::Attrs tb, upper, rightT;
  tb.set("transpose_b", true);
  upper.set("lower", true);
  rightT.set("lower", true).set("right_side", true).set("transpose_a", true);
  // SPD X X' + n I and its Cholesky factor, made by the CPU backend (BLAS).
  std::vector<double> sv = doubles(runCpu(OneNode(Op::Syrk, {b}, {}), {b}).outputs.at(0));
  for (int64_t i = 0; i < n; ++i)
    sv[i * n + i] += n;
  Array spdA = fromDoubles(DType::F64, sv, {n, n});
  Array l = runCpu(OneNode(Op::Cholesky, {spdA}, {}), {spdA}).outputs.at(0);
  std::printf("f64 n=%ld, ms per run:\n", long(n));
  std::printf("  matmul         %8.3f\n", timeRun(Op::Matmul, {a, b}, {}));
  std::printf("  matmul X*X'    %8.3f\n", timeRun(Op::Matmul, {a, a}, tb));
  std::printf("  syrk X*X'      %8.3f\n", timeRun(Op::Syrk, {a}, {}));
  ir::Attrs transpose, ta;
  transpose.set("transpose", true);
  ta.set("transpose_a", true);
  std::printf("  syrk X'*X      %8.3f\n", timeRun(Op::Syrk, {a}, transpose));
  Array v = randn(DType::F64, {n, 1}, 32);
  std::printf("  matmul X'*v    %8.3f\n", timeRun(Op::Matmul, {a, v}, ta));
  std::printf("  triangular, one column %8.3f\n", timeRun(Op::TriangularSolve, {l, v}, upper));
  for (int64_t cols : {8, 32, 256}) {
    Array few = randn(DType::F64, {n, cols}, 33);
    std::printf("  triangular, %ld columns %8.3f\n", long(cols),
                timeRun(Op::TriangularSolve, {l, few}, upper));
  }
  std::printf("  cholesky       %8.3f\n", timeRun(Op::Cholesky, {spdA}, {}));
  std::printf("  triangular     %8.3f\n", timeRun(Op::TriangularSolve, {l, b}, upper));
  std::printf("  triangular X L' = B %8.3f\n", timeRun(Op::TriangularSolve, {l, b}, rightT));
  std::printf("  solve (LU)     %8.3f\n", timeRun(Op::Solve, {a, b}, {}));
  std::printf("  inverse        %8.3f\n", timeRun(Op::Inverse, {a}, {}));
  std::printf("  qr             %8.3f\n", timeRun(Op::Qr, {a}, {}));
  std::printf("  logdet         %8.3f\n", timeRun(Op::Logdet, {a}, {}));
}

TEST(DevicePool, OutOfMemoryIsAClearErrorAndThePoolStillWorks) {
  GRAPHC_REQUIRE_GPU();
  DevicePool& pool = DevicePool::forDevice(0);
  cudaStream_t stream = Gpu::get().stream;
  const size_t tenTB = size_t(10) << 40;
  try {
    pool.allocate(tenTB, stream);
    FAIL() << "expected graphc::Error";
  } catch (const Error& e) {
    EXPECT_EQ(
        e.message().rfind(fmt::format("GPU out of memory: cannot allocate {} bytes (", tenTB), 0),
        0u)
        << e.what();
    EXPECT_NE(e.message().find(" bytes free of "), std::string::npos) << e.what();
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(pool.allocate(0, stream), nullptr);
  {
    DeviceBuffer b(pool, 1 << 20, stream);
    ASSERT_NE(b.data(), nullptr);
    GRAPHC_CUDA_CHECK(cudaMemsetAsync(b.data(), 0, b.bytes(), stream));
    DeviceBuffer moved = std::move(b);
    EXPECT_EQ(b.data(), nullptr); // NOLINT(bugprone-use-after-move): the moved-from state
    EXPECT_EQ(moved.bytes(), size_t(1) << 20);
  }
  GRAPHC_CUDA_CHECK(cudaStreamSynchronize(stream));
  // Freed memory stays in the pool: the same request is served again.
  void* p = pool.allocate(1 << 20, stream);
  EXPECT_NE(p, nullptr);
  pool.release(p, stream);
  GRAPHC_CUDA_CHECK(cudaStreamSynchronize(stream));
}

} // namespace
} // namespace graphc::testing
