//===- tests/gpu/SmallBatchedTest.cpp - Batched small Cholesky and solves vs the CPU ===//
//
// Many small matrices at once (runtime/cuda/SmallBatched.h, reached through
// LibraryContext::run or called directly): Cholesky, triangular solves, the fused
// SPD solve, Gram matrices and X'X of tall matrices of random batches against the
// CPU backend (or a host loop) in f32 and f64 at sizes around the warp and block boundaries, also
// captured in CUDA graphs; the failing item and leading minor (or zero diagonal)
// of a batch with one bad matrix; the whole W5 graph on the cuda backend against
// the cpu backend; and, without a GPU, NVRTC compiling the kernels for sm_90.
//
//===----------------------------------------------------------------------===//
#include "LibraryTestUtil.h"

#include "bench/Workloads.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "passes/PassManager.h"
#include "passes/RoutePolicy.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
#include "runtime/cuda/KernelCache.h"
#include "runtime/cuda/PreparedProgram.h"
#include "runtime/cuda/SmallBatched.h"
#include "support/Numeric.h"
#include "support/SpdBatch.h"

#include <cmath>
#include <cstdio>
#include <cublas_v2.h>

namespace graphc::testing {
namespace {

const int64_t kSizes[] = {1, 2, 7, 31, 32, 33, 64, 100, 128};

/// The kernels, made once and never destroyed (like Gpu).
const cuda::SmallBatched& kernels() {
  static auto* k = new cuda::SmallBatched();
  return *k;
}

/// f(T{}) for the floating-point type of `dtype`.
template <typename F> void withFloat(DType dtype, F&& f) {
  if (dtype == DType::F32)
    f(float{});
  else
    f(double{});
}

/// A device copy of `a` on the shared stream.
DeviceBuffer upload(const Array& a) {
  Gpu& gpu = Gpu::get();
  Array c = a.contiguous();
  DeviceBuffer d(DevicePool::forDevice(0), c.type().bytes(), gpu.stream);
  GRAPHC_CUDA_CHECK(
      cudaMemcpyAsync(d.data(), c.rawData(), d.bytes(), cudaMemcpyHostToDevice, gpu.stream));
  return d;
}

/// A host copy of the `dtype` array `shape` in `d` (synchronizes).
Array download(const DeviceBuffer& d, DType dtype, llvm::ArrayRef<int64_t> shape) {
  Gpu& gpu = Gpu::get();
  Array a = Array::empty(dtype, shape);
  GRAPHC_CUDA_CHECK(
      cudaMemcpyAsync(a.rawData(), d.data(), a.type().bytes(), cudaMemcpyDeviceToHost, gpu.stream));
  GRAPHC_CUDA_CHECK(cudaStreamSynchronize(gpu.stream));
  return a;
}

/// Runs `enqueue` on the shared stream, or with `capture` records it into a CUDA
/// graph (global mode: a synchronizing or allocating call fails the capture) and
/// launches that.
template <typename F> void enqueueOnce(bool capture, F&& enqueue) {
  cudaStream_t stream = Gpu::get().stream;
  if (!capture)
    return enqueue();
  cudaGraph_t graph = nullptr;
  GRAPHC_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  enqueue();
  GRAPHC_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  GRAPHC_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  GRAPHC_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  GRAPHC_CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

/// The CPU backend's result of one `op` node.
Array onCpu(Op op, const std::vector<Array>& inputs, const ir::Attrs& attrs) {
  OneNode g(op, inputs, attrs);
  CpuResult r = runCpu(g, inputs);
  EXPECT_EQ(r.error, "");
  return r.outputs.at(0);
}

/// X = A^-1 B on the CPU backend as the executor runs it today: cholesky, then
/// the two triangular solves.
Array cpuCholeskySolve(const Array& a, const Array& b) {
  ir::Attrs lower, lowerT;
  lower.set("lower", true);
  lowerT.set("lower", true).set("transpose_a", true);
  Array l = onCpu(Op::Cholesky, {a}, {});
  return onCpu(Op::TriangularSolve, {l, onCpu(Op::TriangularSolve, {l, b}, lower)}, lowerT);
}

/// choleskySolve() of the batches `a` (batch x n x n) and `b` (batch x n x cols).
struct CholeskySolveResult {
  Array x;
  std::vector<int> info;
};

/// `a` holds the matrices, or with a Gram `form` their factors.
CholeskySolveResult choleskySolveOnGpu(const Array& a, const Array& b, bool capture,
                                       cuda::SpdMatrices form = {}) {
  int64_t batch = a.shape()[0], cols = b.shape()[2];
  if (form.form == cuda::SpdMatrices::Matrix)
    form.n = a.shape()[1];
  cudaStream_t stream = Gpu::get().stream;
  DeviceBuffer da = upload(a), db = upload(b), dx = upload(Array::zeros(b.dtype(), b.shape()));
  DeviceBuffer info = upload(Array::full(DType::I32, {batch}, -1));
  withFloat(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    enqueueOnce(capture, [&] {
      kernels().choleskySolve(batch, form, cols, da.as<const T>(), db.as<const T>(), dx.as<T>(),
                              info.as<int>(), stream);
    });
  });
  return {download(dx, b.dtype(), b.shape()),
          download(info, DType::I32, {batch}).toVector<int32_t>()};
}

/// The largest n that choleskySolve() takes with `cols` right-hand sides.
int64_t largestCholeskySolve(DType dt, int64_t cols) {
  int64_t n = 1;
  while (kernels().fitsCholeskySolve({cuda::SpdMatrices::Matrix, n + 1}, cols, ir::dtypeSize(dt)))
    ++n;
  return n;
}

/// X X' of the batch `x` (batch x rows x k) by a plain host loop.
Array hostGram(const Array& x) {
  int64_t batch = x.shape()[0], rows = x.shape()[1], k = x.shape()[2];
  std::vector<double> v = doubles(x), s(batch * rows * rows);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < rows; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += v[(b * rows + i) * k + p] * v[(b * rows + j) * k + p];
        s[(b * rows + i) * rows + j] = sum;
      }
  return fromDoubles(x.dtype(), s, {batch, rows, rows});
}

Array gramOnGpu(const Array& x, bool capture) {
  int64_t batch = x.shape()[0], rows = x.shape()[1], k = x.shape()[2];
  cudaStream_t stream = Gpu::get().stream;
  DeviceBuffer dx = upload(x), ds = upload(Array::zeros(x.dtype(), {batch, rows, rows}));
  withFloat(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    enqueueOnce(capture,
                [&] { kernels().gram(batch, rows, k, dx.as<const T>(), ds.as<T>(), stream); });
  });
  return download(ds, x.dtype(), {batch, rows, rows});
}

/// Milliseconds per call of `enqueue` on the shared stream, over 20 calls after one.
template <typename F> double msPerCall(F&& enqueue) {
  cudaStream_t stream = Gpu::get().stream;
  cudaEvent_t start, stop;
  GRAPHC_CUDA_CHECK(cudaEventCreate(&start));
  GRAPHC_CUDA_CHECK(cudaEventCreate(&stop));
  enqueue();
  GRAPHC_CUDA_CHECK(cudaEventRecord(start, stream));
  for (int i = 0; i < 20; ++i)
    enqueue();
  GRAPHC_CUDA_CHECK(cudaEventRecord(stop, stream));
  GRAPHC_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  GRAPHC_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / 20;
}

TEST(SmallBatched, KernelsCompileForSm90WithoutAGpu) {
  expectCompilesForSm90(cuda::SmallBatched::moduleSource());
}

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

/// SmallBatched::panelSolve called directly (whatever the route policy says), in
/// place (x = b), every flag, f32 and f64, a batch of 3: one panel (n = 20), several
/// with a ragged last one (100) and the largest f64 triangle (288), 70 right-hand
/// sides (two blocks of 32 and a ragged one), also captured in a CUDA graph.
TEST(SmallBatched, PanelSolvesMatchTheCpu) {
  GRAPHC_REQUIRE_GPU();
  const int64_t rhs = 70;
  const Ints batch = {3};
  for (DType dt : kFloats)
    for (int64_t n : {20, 100, 288}) {
      // SPD matrices' triangles, and unit triangles with small off-diagonal
      // elements: both well conditioned.
      Array spdTriangles = spd(dt, withMatrix(batch, n, n), 70 + n);
      std::vector<double> small = doubles(randn(DType::F64, withMatrix(batch, n, n), 71 + n));
      for (double& v : small)
        v *= 0.3 / std::sqrt(double(n));
      Array unitTriangles = fromDoubles(dt, small, withMatrix(batch, n, n));
      for (int flags = 0; flags < 16; ++flags) {
        bool lower = flags & 1, right = flags & 2, trans = flags & 4, unit = flags & 8;
        const Array& a = unit ? unitTriangles : spdTriangles;
        Array b = randn(dt, right ? withMatrix(batch, rhs, n) : withMatrix(batch, n, rhs), 72 + n);
        ir::Attrs attrs;
        attrs.set("lower", lower).set("right_side", right).set("transpose_a", trans);
        attrs.set("unit_diagonal", unit);
        std::string what = fmt::format("panel solve n={} lower={} right={} trans={} unit={} {}", n,
                                       lower, right, trans, unit, label(dt, batch));
        Array want = onCpu(Op::TriangularSolve, {a, b}, attrs);
        DeviceBuffer da = upload(a), dx = upload(b);
        withFloat(dt, [&](auto zero) {
          using T = decltype(zero);
          enqueueOnce(flags % 2 == 1, [&] {
            kernels().panelSolve(3, right ? rhs : n, right ? n : rhs,
                                 static_cast<const T*>(da.data()), static_cast<const T*>(dx.data()),
                                 static_cast<T*>(dx.data()), {lower, trans, unit}, right,
                                 Gpu::get().stream);
          });
        });
        expectClose(download(dx, dt, b.shape()), want, what);
      }
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

TEST(SmallBatched, CholeskySolveMatchesTheCpu) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : kFloats)
    for (int64_t cols : {1, 2, 3, 8, 15, 16, 19}) {
      std::vector<int64_t> sizes(std::begin(kSizes), std::end(kSizes));
      sizes.push_back(largestCholeskySolve(dt, cols));
      for (int64_t n : sizes) {
        if (!kernels().fitsCholeskySolve({cuda::SpdMatrices::Matrix, n}, cols, ir::dtypeSize(dt)))
          continue;
        std::string what = fmt::format("cholesky solve n={} cols={} {}", n, cols, label(dt, {5}));
        SCOPED_TRACE(what);
        Array a = spd(dt, {5, n, n}, 60 + n), b = randn(dt, {5, n, cols}, 61 + cols);
        CholeskySolveResult got = choleskySolveOnGpu(a, b, /*capture=*/cols % 2 == 0);
        EXPECT_EQ(got.info, std::vector<int>(5, 0));
        expectClose(got.x, cpuCholeskySolve(a, b), what);
      }
    }
  EXPECT_FALSE(kernels().fitsCholeskySolve({cuda::SpdMatrices::Matrix, 129}, 1, sizeof(double)));
  // Several blocks of several matrices each, the last block part full.
  Array a = spd(DType::F64, {1001, 32, 32}, 62), b = randn(DType::F64, {1001, 32, 1}, 63);
  CholeskySolveResult got = choleskySolveOnGpu(a, b, false);
  EXPECT_EQ(got.info, std::vector<int>(1001, 0));
  expectClose(got.x, cpuCholeskySolve(a, b), "cholesky solve 1001 x 32");
}

/// scale X X' + shift I (or scale X'X + shift I) of the batch `x` on the host.
Array hostShiftedGram(const Array& x, bool transposed, double scale, double shift) {
  int64_t batch = x.shape()[0], rows = x.shape()[1], k = x.shape()[2];
  Array f = x;
  if (transposed) { // the gram of the rows of X'
    std::vector<double> v = doubles(x), t(v.size());
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < k; ++j)
          t[(b * k + j) * rows + i] = v[(b * rows + i) * k + j];
    f = fromDoubles(x.dtype(), t, {batch, k, rows});
  }
  std::vector<double> g = doubles(hostGram(f));
  int64_t n = f.shape()[1];
  for (int64_t i = 0; i < batch * n * n; ++i)
    g[i] = scale * g[i] + ((i % (n * n)) % (n + 1) == 0 ? shift : 0.0);
  return fromDoubles(x.dtype(), g, {batch, n, n});
}

TEST(SmallBatched, GramCholeskySolveMatchesTheCpu) {
  GRAPHC_REQUIRE_GPU();
  using Form = cuda::SpdMatrices;
  for (DType dt : kFloats)
    for (int64_t n : {1, 3, 4, 5, 8, 13, 16, 17, 31, 32, 33, 50, 64, 65, 100, 128})
      for (int64_t k : {1, 7, 16, 33, 64, 256})
        for (bool transposed : {false, true}) {
          int64_t cols = 1 + (n + k) % 3;
          std::string what = fmt::format("gram cholesky solve n={} k={} transposed={} cols={} {}",
                                         n, k, transposed, cols, label(dt, {7}));
          SCOPED_TRACE(what);
          Form form{transposed ? Form::GramTransposed : Form::Gram, n, k, 1.0 / k, 0.5};
          Array x = randn(dt, transposed ? Ints{7, k, n} : Ints{7, n, k}, 68 + n + k);
          Array b = randn(dt, {7, n, cols}, 69);
          CholeskySolveResult got = choleskySolveOnGpu(x, b, /*capture=*/k % 2 == 0, form);
          EXPECT_EQ(got.info, std::vector<int>(7, 0));
          Array a = hostShiftedGram(x, transposed, form.scale, form.shift);
          expectClose(got.x, cpuCholeskySolve(a, b), what);
        }
  // The W5 shape over several blocks, the last part full; then a scale that makes
  // every item indefinite at its first minor.
  Form form{Form::Gram, 32, 64, 1.0 / 64, 0.1};
  Array x = randn(DType::F64, {1001, 32, 64}, 70), b = randn(DType::F64, {1001, 32, 1}, 71);
  CholeskySolveResult got = choleskySolveOnGpu(x, b, false, form);
  EXPECT_EQ(got.info, std::vector<int>(1001, 0));
  expectClose(got.x, cpuCholeskySolve(hostShiftedGram(x, false, 1.0 / 64, 0.1), b), "W5 shape");
  form.scale = -1;
  EXPECT_EQ(choleskySolveOnGpu(x, b, false, form).info, std::vector<int>(1001, 1));
  // A matrix a block: W5's larger shape, with 16 right-hand sides.
  form = {Form::Gram, 128, 256, 1.0 / 256, 0.1};
  x = randn(DType::F64, {130, 128, 256}, 72), b = randn(DType::F64, {130, 128, 16}, 73);
  got = choleskySolveOnGpu(x, b, true, form);
  EXPECT_EQ(got.info, std::vector<int>(130, 0));
  expectClose(got.x, cpuCholeskySolve(hostShiftedGram(x, false, 1.0 / 256, 0.1), b), "128 x 256");
}

/// Many right-hand sides go in column chunks (passes/RoutePolicy.h), each unit
/// factoring its matrix again: every chunk, the last one part full, solves right,
/// and a failing item is reported by all of its chunks alike.
TEST(SmallBatched, CholeskySolveOfManyColumnsInChunks) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : kFloats)
    for (int64_t n : {5, 16, 32, 40, 64, 128})
      for (int64_t cols : {33, 1000, 4099}) {
        ASSERT_GT(passes::chooseSolveColumnChunks(passes::RoutePolicy::gpu(), 2, cols, n <= 32), 1);
        std::string what = fmt::format("cholesky solve n={} cols={} {}", n, cols, label(dt, {2}));
        SCOPED_TRACE(what);
        Array a = spd(dt, {2, n, n}, 70 + n), b = randn(dt, {2, n, cols}, 71 + cols);
        CholeskySolveResult got = choleskySolveOnGpu(a, b, /*capture=*/cols == 1000);
        EXPECT_EQ(got.info, std::vector<int>(2, 0));
        expectClose(got.x, cpuCholeskySolve(a, b), what);
      }
  for (int64_t n : {16, 100}) {
    Array b = randn(DType::F64, {5, n, 1000}, 72);
    CholeskySolveResult got =
        choleskySolveOnGpu(identityWith(DType::F64, {5}, n, 3, 7, -1.0), b, false);
    EXPECT_EQ(got.info, (std::vector<int>{0, 0, 0, 8, 0})) << "n = " << n;
  }
}

TEST(SmallBatched, CholeskySolveNamesTheFailingMinor) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : kFloats)
    for (auto [n, k, value] : {std::tuple<int64_t, int64_t, double>{33, 16, -1.0},
                               {8, 0, 0.0},
                               {32, 31, std::nan("")},
                               {100, 99, 0.0},
                               {128, 64, -2.0}}) {
      SCOPED_TRACE(fmt::format("n={} A({},{}) = {} {}", n, k, k, value, label(dt, {5})));
      // Identity matrices but item 3: its leading minor k + 1 is not positive
      // definite. The items beside it in its block still solve to B.
      Array b = randn(dt, {5, n, 2}, 64);
      CholeskySolveResult got = choleskySolveOnGpu(identityWith(dt, {5}, n, 3, k, value), b, false);
      EXPECT_EQ(got.info, (std::vector<int>{0, 0, 0, static_cast<int>(k) + 1, 0}));
      std::vector<double> x = doubles(got.x), want = doubles(b);
      for (int64_t i = 0; i < 5 * n * 2; ++i) {
        if (i / (n * 2) != 3) {
          ASSERT_EQ(x[i], want[i]) << "element " << i;
        }
      }
    }
}

TEST(SmallBatched, GramMatchesAHostLoop) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : kFloats)
    for (int64_t rows : {1, 2, 3, 7, 31, 32, 33, 64, 100, 127, 128})
      for (int64_t k : {1, 5, 32, 33, 64, 256}) {
        std::string what = fmt::format("gram {} x {} {}", rows, k, label(dt, {3}));
        SCOPED_TRACE(what);
        Array x = randn(dt, {3, rows, k}, 65 + rows + k);
        expectClose(gramOnGpu(x, /*capture=*/k % 2 == 0), hostGram(x), what);
      }
  Array x = randn(DType::F64, {999, 32, 64}, 66);
  expectClose(gramOnGpu(x, false), hostGram(x), "gram 999 x 32 x 64");
}

TEST(SmallBatched, BatchedSyrkMatchesTheCpu) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : kFloats)
    for (int64_t rows : {1, 7, 16, 17, 33, 129})
      for (bool transpose : {false, true}) {
        ir::Attrs attrs;
        attrs.set("transpose", transpose);
        Array x = randn(dt, transpose ? Ints{4, 2 * rows, rows} : Ints{4, rows, 2 * rows}, 67);
        expectSameAsCpu(
            Op::Syrk, {x}, attrs,
            fmt::format("syrk rows={} transpose={} {}", rows, transpose, label(dt, {4})),
            /*capture=*/true);
      }
}

/// X'X of tall matrices by runs of rows (tallGram): every width it is instantiated
/// around, runs that end mid-stage, more rows than 1024 blocks of 1024 take, a
/// batch; exactly symmetric, and captured in a graph.
TEST(SmallBatched, TallGramMatchesTheCpu) {
  GRAPHC_REQUIRE_GPU();
  ir::Attrs attrs;
  attrs.set("transpose", true);
  for (DType dt : kFloats)
    for (int64_t n : {1, 5, 8, 9, 16, 17, 31, 32})
      for (auto [rows, batch] : {std::pair<int64_t, Ints>{4096, {}},
                                 {4097, {3}},
                                 {100003, {}},
                                 {dt == DType::F64 ? 1500001 : 4099, {}}}) {
        std::string what = fmt::format("tall gram {} x {} {}", rows, n, label(dt, batch));
        Array x = randn(dt, withMatrix(batch, rows, n), 68 + n);
        expectSameAsCpu(Op::Syrk, {x}, attrs, what, /*capture=*/n == 9);
        OneNode g(Op::Syrk, {x}, attrs);
        std::vector<double> c = doubles(runGpu(*g.node, {x}).outputs.at(0));
        for (size_t b = 0; b < c.size(); b += n * n)
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < i; ++j)
              ASSERT_EQ(c[b + i * n + j], c[b + j * n + i]) << what << " (" << i << "," << j << ")";
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

TEST(SmallBatched, SolveFormsItsMatrixFromTheGramFactor) {
  GRAPHC_REQUIRE_GPU();
  // W5 in f64 and f32, X'X through a transpose, and S also returned (then S is
  // computed and the solve reads it).
  const char* transposed = testing::kTransposedGramSolve;
  const char* alsoS = testing::kGramSolveMatrixReturned;
  const std::string formed = "CholeskySolve";
  for (auto [text, hows] :
       {std::pair<std::string, std::string>{bench::batchedSpdGraph(300, 32, "f64"), formed},
        {bench::batchedSpdGraph(300, 32, "f32"), formed},
        {bench::batchedSpdGraph(300, 5, "f64"), formed},
        {bench::batchedSpdGraph(40, 100, "f64"), formed},
        {bench::batchedSpdGraph(40, 128, "f32"), formed},
        {transposed, formed},
        {alsoS, "Library Kernel CholeskySolve"}}) {
    auto g = ir::parseGraph(text);
    SCOPED_TRACE(ir::printGraph(*g));
    EXPECT_EQ(cuda::PreparedProgram(*passes::runPipeline(*g, passes::defaultPipeline())).hows(),
              hows);
    std::vector<Array> inputs = randomInputs(*g, 56);
    std::vector<Array> want = compile(*g, getBackend("cpu"))->run(inputs);
    std::vector<Array> got = compile(*g, getBackend("cuda"))->run(inputs);
    bool f32 = g->params().front()->type().dtype == DType::F32;
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_LE(relativeDifference(got[i], want[i]), f32 ? 1e-4 : 1e-12) << "output " << i;
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

/// Milliseconds per call of the fused SPD solve against the three steps it
/// replaces (LibraryContext's cholesky and two triangular solves, one right-hand
/// side), of gram against the strided gemm it replaces, and of the solve forming
/// its matrices from X, at the W5 sizes.
TEST(SmallBatched, DISABLED_FusedTimings) {
  GRAPHC_REQUIRE_GPU();
  cudaStream_t stream = Gpu::get().stream;
  ir::Attrs lower, lowerT;
  lower.set("lower", true);
  lowerT.set("lower", true).set("transpose_a", true);
  std::printf("fused: batch n | cholesky+trsv+trsv_t  cholesky_solve | gemm(n x 2n)  gram [ms]\n");
  for (auto [batch, n] :
       {std::pair<int64_t, int64_t>{4096, 32}, {512, 128}, {65536, 4}, {16384, 16}, {1024, 64}}) {
    Array a = spd(DType::F64, {batch, n, n}, 44), b = randn(DType::F64, {batch, n, 1}, 45);
    Array x = randn(DType::F64, {batch, n, 2 * n}, 46);
    double steps = timeRun(Op::Cholesky, {a}, {}, 20) +
                   timeRun(Op::TriangularSolve, {a, b}, lower, 20) +
                   timeRun(Op::TriangularSolve, {a, b}, lowerT, 20);
    DeviceBuffer da = upload(a), db = upload(b), dx = upload(b), dxx = upload(x);
    DeviceBuffer ds = upload(a), info = upload(Array::zeros(DType::I32, {batch}));
    double fused = msPerCall([&] {
      kernels().choleskySolve(batch, {cuda::SpdMatrices::Matrix, n}, 1, da.as<const double>(),
                              db.as<const double>(), dx.as<double>(), info.as<int>(), stream);
    });
    const double one = 1, zero = 0;
    const double* px = dxx.as<const double>();
    int rows = static_cast<int>(n), k = static_cast<int>(2 * n);
    double gemm = msPerCall([&] {
      GRAPHC_CUDA_CHECK(cublasDgemmStridedBatched(
          Gpu::get().ctx->cublas(), CUBLAS_OP_T, CUBLAS_OP_N, rows, rows, k, &one, px, k, rows * k,
          px, k, rows * k, &zero, ds.as<double>(), rows, rows * rows, static_cast<int>(batch)));
    });
    double gram = msPerCall([&] { kernels().gram(batch, n, 2 * n, px, ds.as<double>(), stream); });
    // X X' / (2n) + 0.1 I formed inside the solve, where it fits.
    cuda::SpdMatrices shifted{cuda::SpdMatrices::Gram, n, 2 * n, 0.5 / n, 0.1};
    double gramSolve = kernels().fitsCholeskySolve(shifted, 1, sizeof(double)) ? msPerCall([&] {
      kernels().choleskySolve(batch, shifted, 1, px, db.as<const double>(), dx.as<double>(),
                              info.as<int>(), stream);
    })
                                                                               : -1;
    std::printf("fused: %ld %ld | %.4f %.4f | %.4f %.4f | gram+solve %.4f\n", long(batch), long(n),
                steps, fused, gemm, gram, gramSolve);
  }
}

/// Milliseconds per launch of the kernels with `threads` per matrix, for tuning.
TEST(SmallBatched, DISABLED_ThreadsPerMatrix) {
  GRAPHC_REQUIRE_GPU();
  cudaStream_t stream = Gpu::get().stream;
  DevicePool& pool = DevicePool::forDevice(0);
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
        std::printf("cholesky: %ld %ld %d %.4f\n", long(batch), long(n), threads, msPerCall([&] {
                      kernels().cholesky(batch, n, pa, pl, false, pi, stream, threads);
                    }));
    }
    for (int threads : {4, 8, 16, 32, 64, 128, 256})
      if (threads <= std::max<int64_t>(n, 4))
        std::printf("trsv: %ld %ld %d %.4f %.4f\n", long(batch), long(n), threads, msPerCall([&] {
                      kernels().triangularSolve(batch, n, 1, pa, px, py, {}, pi, stream, threads);
                    }),
                    msPerCall([&] {
                      kernels().triangularSolve(batch, n, 1, pa, px, py, {true, true, false}, pi,
                                                stream, threads);
                    }));
  }
}

} // namespace
} // namespace graphc::testing
