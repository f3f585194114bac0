//===- tests/gpu/ClusterQrTest.cpp - QR in one cluster of blocks vs LAPACK ===//
//
// The cluster QR kernel (runtime/cuda/ClusterQr.h) against the CPU backend's
// LAPACK (dgeqrf + dorgqr, so R's signs are LAPACK's): square, tall and wide
// shapes from 1 x 1 to 512 rows, each cluster size, f32 and f64, batches; zero
// columns (tau = 0), a zero matrix, magnitudes near overflow and underflow (the
// scaled norms), and NaN propagation (Q's NaNs where LAPACK's). Every shape is
// checked to take the kernel.
// The kernel is forced (LibraryContext::QrRoute::Cluster) where the route policy
// would pick cuSOLVER; LibraryTest and LibraryBatchedTest cover the default route.
// Every panel width gives the same bits. Disabled: the kernel timed against
// cuBLAS and cuSOLVER, and by panel width.
//
//===----------------------------------------------------------------------===//
#include "LibraryTestUtil.h"

#include "runtime/cuda/HelperKernels.h"

#include <bit>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>

namespace graphc::testing {
namespace {

TEST(ClusterQr, CompilesForSm90WithoutWarnings) {
  expectCompilesForSm90(cuda::ClusterQr::moduleSource());
}

/// The cluster size the kernel takes m x n with (0: it does not).
int clusterSize(int64_t m, int64_t n, DType dtype) {
  return cuda::HelperKernels::forCurrentDevice().qr().ctas(m, n, ir::dtypeSize(dtype));
}

/// Forces `route` for the scope.
struct Route {
  explicit Route(LibraryContext::QrRoute r) { Gpu::get().ctx->setQrRoute(r); }
  ~Route() { Gpu::get().ctx->setQrRoute(LibraryContext::QrRoute::Auto); }
};

const std::pair<int64_t, int64_t> kShapes[] = {
    {1, 1},     {5, 3},     {3, 5},    {32, 32},   {33, 17},   {17, 33},   {64, 64},   {100, 107},
    {107, 100}, {128, 128}, {200, 64}, {256, 256}, {257, 100}, {300, 300}, {512, 128}, {64, 512}};

/// One test a shape, so that a sanitizer run can take the small ones alone.
class ClusterQrShape : public ::testing::TestWithParam<std::pair<int64_t, int64_t>> {};

TEST_P(ClusterQrShape, MatchesLapack) {
  GRAPHC_REQUIRE_GPU();
  Route cluster(LibraryContext::QrRoute::Cluster);
  auto [m, n] = GetParam();
  for (DType dt : kFloats)
    for (int64_t batch : {1, 3}) {
      std::string what = fmt::format("qr {} x {} x {} {}", batch, m, n, ir::dtypeName(dt).str());
      EXPECT_GT(clusterSize(m, n, dt), 0) << what;
      Ints shape = batch == 1 ? Ints{m, n} : Ints{batch, m, n};
      expectSameAsCpu(Op::Qr, {randn(dt, shape, 60 + m + n)}, {}, what);
    }
}

INSTANTIATE_TEST_SUITE_P(ClusterQr, ClusterQrShape, ::testing::ValuesIn(kShapes),
                         [](const auto& info) {
                           return fmt::format("{}x{}", info.param.first, info.param.second);
                         });

// R alone (Q unread: the cluster kernel forms no Q, cuSOLVER runs no orgqr) has
// the bits of R beside Q, on both routes, f32 (in f64 where the route widens) and
// f64, batched.
TEST(ClusterQr, RAloneHasTheBitsOfRBesideQ) {
  GRAPHC_REQUIRE_GPU();
  using QrRoute = LibraryContext::QrRoute;
  for (QrRoute route : {QrRoute::Cluster, QrRoute::Library}) {
    Route forced(route);
    for (auto [m, n] : {std::pair<int64_t, int64_t>{5, 3}, {3, 5}, {64, 64}, {300, 200}})
      for (DType dt : kFloats)
        for (int64_t batch : {1, 3}) {
          std::string what = fmt::format("qr {} x {} x {} {}, route {}", batch, m, n,
                                         ir::dtypeName(dt).str(), int(route));
          Ints shape = batch == 1 ? Ints{m, n} : Ints{batch, m, n};
          std::vector<Array> in = {randn(dt, shape, 7 + m * n)};
          OneNode g(Op::Qr, in, {});
          GpuResult both = runGpu(*g.node, in), rOnly = runGpu(*g.node, in, false, /*unread=*/1);
          ASSERT_FALSE(both.failure || rOnly.failure) << what;
          EXPECT_EQ(doubles(rOnly.outputs[1]), doubles(both.outputs[1])) << what;
          expectClose(rOnly.outputs[1], runCpu(g, in).outputs[1], what);
        }
  }
}

TEST(ClusterQr, TakesEveryClusterSize) {
  GRAPHC_REQUIRE_GPU();
  std::set<int> sizes;
  for (auto [m, n] : kShapes)
    sizes.insert(clusterSize(m, n, DType::F64));
  EXPECT_EQ(sizes, (std::set<int>{1, 2, 4, 8}));
}

/// `a` with `scale` times its entries and the columns in `zero` set to 0.
Array edited(const Array& a, double scale, std::initializer_list<int64_t> zero) {
  int64_t n = a.type().shape.back();
  std::vector<double> v = doubles(a);
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] *= scale;
    for (int64_t c : zero)
      if (int64_t(i) % n == c)
        v[i] = 0;
  }
  return fromDoubles(a.dtype(), v, a.type().shape);
}

TEST(ClusterQr, ZeroColumnsAndExtremeMagnitudes) {
  GRAPHC_REQUIRE_GPU();
  Route cluster(LibraryContext::QrRoute::Cluster);
  for (auto [m, n] : {std::pair<int64_t, int64_t>{40, 40}, {256, 256}, {70, 300}}) {
    Array a = randn(DType::F64, {m, n}, 70);
    expectSameAsCpu(Op::Qr, {edited(a, 1, {0, 5, n - 1})}, {}, "zero columns");
    expectSameAsCpu(Op::Qr, {edited(a, 0, {})}, {}, "zero matrix");
    expectSameAsCpu(Op::Qr, {edited(a, 1e200, {})}, {}, "entries near 1e200");
    expectSameAsCpu(Op::Qr, {edited(a, 1e-200, {})}, {}, "entries near 1e-200");
    expectSameAsCpu(Op::Qr, {edited(randn(DType::F32, {m, n}, 71), 1e25, {3})}, {},
                    "f32 entries near 1e25");
  }
}

// A NaN at (row, col) of an n x n matrix: two blocks and four panels at 64,
// four blocks with R streamed at 128 (and Q formed unmasked through the finite
// panels after column 40's, masked from it on).
TEST(ClusterQr, NanPropagates) {
  GRAPHC_REQUIRE_GPU();
  Route cluster(LibraryContext::QrRoute::Cluster);
  for (auto [n, row, col] :
       {std::tuple<int64_t, int64_t, int64_t>{64, 10, 3}, {128, 10, 3}, {128, 100, 40}}) {
    std::string what = fmt::format("{} x {}, NaN at ({}, {})", n, n, row, col);
    std::vector<double> v = doubles(randn(DType::F64, {n, n}, 72));
    v[row * n + col] = std::nan("");
    std::vector<Array> in = {fromDoubles(DType::F64, v, {n, n})};
    OneNode g(Op::Qr, in, {});
    GpuResult got = runGpu(*g.node, in);
    ASSERT_FALSE(got.failure) << what;
    // Column `col` is NaN from its reflector on, and every column after it
    // through the reflector; the columns before it are finite.
    std::vector<double> r = doubles(got.outputs[1]);
    EXPECT_TRUE(std::isnan(r[col * n + col])) << what;
    EXPECT_TRUE(std::isnan(r[col * n + n - 1])) << what;
    EXPECT_TRUE(std::isfinite(r[0 * n + col - 1])) << what;
    // Q's NaNs where LAPACK's unblocked dorg2r puts them.
    std::vector<double> q = doubles(got.outputs[0]), want = doubles(runCpu(g, in).outputs[0]);
    ASSERT_EQ(q.size(), want.size());
    size_t differ = 0;
    for (size_t i = 0; i < q.size(); ++i)
      differ += std::isnan(q[i]) != std::isnan(want[i]);
    EXPECT_EQ(differ, 0u) << what;
  }
}

TEST(ClusterQr, RunsInsideStreamCapture) {
  GRAPHC_REQUIRE_GPU();
  Route cluster(LibraryContext::QrRoute::Cluster);
  expectSameAsCpu(Op::Qr, {randn(DType::F64, {2, 256, 256}, 73)}, {}, "captured", true);
}

/// The kernel's Q and R of `a` (batch x m x n, on the host) with panels of at most
/// `widest` columns, and its milliseconds per run over `reps` runs after the first.
template <typename T>
std::pair<std::vector<T>, double> kernelQr(const Array& a, int widest, int reps = 0,
                                           bool withQ = true, bool mayStream = true) {
  const ir::Shape& shape = a.type().shape;
  int64_t m = shape[shape.size() - 2], n = shape.back(), k = std::min(m, n);
  int64_t batch = a.type().numel() / (m * n);
  Gpu& gpu = Gpu::get();
  cuda::DevicePool& pool = cuda::DevicePool::forDevice(0);
  const cuda::ClusterQr& qr = cuda::HelperKernels::forCurrentDevice().qr();
  DeviceBuffer in(pool, a.type().bytes(), gpu.stream);
  DeviceBuffer out(pool, batch * (m * k + k * n) * sizeof(T), gpu.stream);
  GRAPHC_CUDA_CHECK(cudaMemcpyAsync(in.data(), a.rawData(), a.type().bytes(),
                                    cudaMemcpyHostToDevice, gpu.stream));
  auto run = [&] {
    qr.qr(batch, m, n, in.as<T>(), withQ ? out.as<T>() : nullptr, out.as<T>() + batch * m * k,
          gpu.stream, widest, mayStream);
  };
  run();
  cudaEvent_t start, stop;
  GRAPHC_CUDA_CHECK(cudaEventCreate(&start));
  GRAPHC_CUDA_CHECK(cudaEventCreate(&stop));
  GRAPHC_CUDA_CHECK(cudaEventRecord(start, gpu.stream));
  for (int i = 0; i < reps; ++i)
    run();
  GRAPHC_CUDA_CHECK(cudaEventRecord(stop, gpu.stream));
  std::vector<T> host(batch * (m * k + k * n));
  GRAPHC_CUDA_CHECK(cudaMemcpyAsync(host.data(), out.data(), host.size() * sizeof(T),
                                    cudaMemcpyDeviceToHost, gpu.stream));
  GRAPHC_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  GRAPHC_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return {host, reps ? ms / reps : 0.0};
}

/// The device's multiprocessors.
int64_t multiprocessors() {
  int device = 0, count = 0;
  GRAPHC_CUDA_CHECK(cudaGetDevice(&device));
  GRAPHC_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

/// Whether the kernel streams R for `batch` m x n f64 matrices.
bool streamed(int64_t batch, int64_t m, int64_t n) {
  return passes::qrClusterStreamed(passes::RoutePolicy::gpu(), batch, m,
                                   clusterSize(m, n, DType::F64), multiprocessors());
}

/// The number of elements whose bits differ.
size_t bitsDiffer(const std::vector<double>& a, const std::vector<double>& b) {
  size_t differ = a.size() != b.size();
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    differ += std::bit_cast<uint64_t>(a[i]) != std::bit_cast<uint64_t>(b[i]);
  return differ;
}

/// Whether the kernel accumulates Q's rows for `batch` m x n matrices of `dt`
/// with panels of at most `widest` columns (passes::qrClusterQByRows).
bool qByRows(int64_t batch, int64_t m, int64_t n, DType dt, int widest = 0) {
  int device = 0, shared = 0;
  GRAPHC_CUDA_CHECK(cudaGetDevice(&device));
  GRAPHC_CUDA_CHECK(
      cudaDeviceGetAttribute(&shared, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  size_t size = ir::dtypeSize(dt);
  passes::QrCluster s = cuda::HelperKernels::forCurrentDevice().qr().shape(m, n, size, widest);
  return passes::qrClusterQByRows(passes::RoutePolicy::gpu(), batch, m, n, s.ctas, s.panel, size,
                                  size_t(shared), multiprocessors());
}

// Each column of R, and each column or row of Q, receives the reflectors in the
// unblocked algorithm's order whatever the panels, so every width gives the
// same bits where Q is formed the same way (by rows where they fit beside the
// panels: at 256 x 256 f64, panels of 32 columns leave no room for them).
TEST(ClusterQr, PanelWidthChangesNoBit) {
  GRAPHC_REQUIRE_GPU();
  for (DType dt : kFloats)
    for (auto [m, n] : {std::pair<int64_t, int64_t>{256, 256}, {100, 107}, {300, 70}, {64, 512}}) {
      Array a = randn(dt, {2, m, n}, 80 + m);
      auto qr = [&](int widest) {
        if (dt == DType::F32) {
          auto [v, ms] = kernelQr<float>(a, widest);
          return std::vector<double>(v.begin(), v.end());
        }
        return kernelQr<double>(a, widest).first;
      };
      std::map<bool, std::pair<int, std::vector<double>>> first; // by qByRows
      for (int panel : {32, 16, 8, 4})
        if (panel * ir::dtypeSize(dt) >= 32) {
          bool rows = qByRows(2, m, n, dt, panel);
          std::vector<double> got = qr(panel);
          auto it = first.try_emplace(rows, panel, got).first;
          EXPECT_EQ(bitsDiffer(got, it->second.second), 0u)
              << m << " x " << n << " " << ir::dtypeName(dt).str() << ", panels of " << panel
              << " against " << it->second.first << (rows ? ", Q by rows" : "");
        }
      if (dt == DType::F64 && m == 256)
        EXPECT_EQ(first.size(), 2u) << "both ways of forming Q compared";
    }
}

// Streamed R applies each reflector to each column in the order of the
// barriers' panels: the same bits for R, with and without Q, and for Q where it
// is formed from the panels after R in both (not by rows); Q by rows within
// rounding of Q formed after R.
TEST(ClusterQr, StreamedHasTheBitsOfBarriers) {
  GRAPHC_REQUIRE_GPU();
  for (auto [m, n] : {std::pair<int64_t, int64_t>{65, 65},
                      {100, 107},
                      {128, 128},
                      {224, 224},
                      {256, 256},
                      {300, 70},
                      {257, 100},
                      {512, 128},
                      {96, 400}})
    for (int64_t batch : {1, 2}) {
      std::string what = fmt::format("{} x {} x {}", batch, m, n);
      ASSERT_TRUE(streamed(batch, m, n)) << what;
      Array a = randn(DType::F64, {batch, m, n}, 90 + m + n);
      const bool rows = qByRows(batch, m, n, DType::F64);
      const size_t qs = batch * m * std::min(m, n);
      for (bool withQ : {true, false}) {
        std::vector<double> on = kernelQr<double>(a, 0, 0, withQ, true).first;
        std::vector<double> off = kernelQr<double>(a, 0, 0, withQ, false).first;
        ASSERT_EQ(on.size(), off.size()) << what;
        size_t from = withQ && rows ? qs : 0; // R only
        EXPECT_EQ(bitsDiffer(std::vector<double>(on.begin() + from, on.end()),
                             std::vector<double>(off.begin() + from, off.end())),
                  0u)
            << what << (withQ ? ", with Q" : ", R alone");
        double most = 0;
        for (size_t i = 0; i < from; ++i)
          most = std::max(most, std::abs(on[i] - off[i]));
        EXPECT_LE(most, 1e-13 * double(m)) << what << ", Q by rows against Q after R";
      }
    }
}

// Batches whose blocks outnumber the multiprocessors factor R with barriers
// (passes::qrClusterStreamed) and form Q after R: LAPACK's results, and each
// matrix the bits of its QR alone in that kernel.
TEST(ClusterQr, BatchesBeyondABlockAMultiprocessor) {
  GRAPHC_REQUIRE_GPU();
  Route cluster(LibraryContext::QrRoute::Cluster);
  for (auto [m, n] : {std::pair<int64_t, int64_t>{128, 128}, {100, 107}, {256, 64}}) {
    int64_t batch = multiprocessors() / clusterSize(m, n, DType::F64) + 1;
    std::string what = fmt::format("{} x {} x {}", batch, m, n);
    ASSERT_FALSE(streamed(batch, m, n)) << what;
    ASSERT_TRUE(streamed(1, m, n)) << what;
    Array a = randn(DType::F64, {batch, m, n}, 95 + m);
    expectSameAsCpu(Op::Qr, {a}, {}, what);
    std::vector<double> all = kernelQr<double>(a, 0).first;
    std::vector<double> values = doubles(a);
    Array item =
        fromDoubles(DType::F64, std::vector<double>(values.end() - m * n, values.end()), {1, m, n});
    std::vector<double> one = kernelQr<double>(item, 0, 0, true, /*mayStream=*/false).first;
    // kernelQr's output: every Q, then every R.
    int64_t k = std::min(m, n), qs = batch * m * k;
    std::vector<double> lastQ(all.begin() + qs - m * k, all.begin() + qs);
    std::vector<double> lastR(all.end() - k * n, all.end());
    EXPECT_EQ(bitsDiffer(lastQ, std::vector<double>(one.begin(), one.begin() + m * k)), 0u)
        << what << ", Q";
    EXPECT_EQ(bitsDiffer(lastR, std::vector<double>(one.begin() + m * k, one.end())), 0u)
        << what << ", R";
  }
}

/// Run with --gtest_also_run_disabled_tests.
TEST(ClusterQr, DISABLED_TimingsStreamedAgainstBarriers) {
  GRAPHC_REQUIRE_GPU();
  std::printf("f64 cluster qr, ms per run, R streamed / with barriers (Q and R; R alone):\n");
  for (auto [batch, m, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 256, 256},
                             {1, 224, 224},
                             {1, 192, 192},
                             {1, 128, 128},
                             {1, 96, 96},
                             {1, 512, 128},
                             {1, 256, 128},
                             {1, 300, 300},
                             {2, 256, 256},
                             {8, 256, 256},
                             {16, 256, 256},
                             {33, 128, 128},
                             {64, 128, 128}}) {
    Array a = randn(DType::F64, {batch, m, n}, 96);
    auto ms = [&](bool withQ, bool mayStream) {
      return kernelQr<double>(a, 0, 20, withQ, mayStream).second;
    };
    std::printf("  %3ld x %3ld x %3ld  streamed %d  Q and R %7.4f / %7.4f  R %7.4f / %7.4f\n",
                long(batch), long(m), long(n), int(streamed(batch, m, n)), ms(true, true),
                ms(true, false), ms(false, true), ms(false, false));
  }
}

/// Run with --gtest_also_run_disabled_tests.
TEST(ClusterQr, DISABLED_TimingsOfPanelWidths) {
  GRAPHC_REQUIRE_GPU();
  std::printf("f64 cluster qr (Q and R), ms per run by the widest panel:\n");
  for (auto [batch, m, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 256, 256},
                             {1, 256, 16},
                             {1, 256, 32},
                             {1, 256, 64},
                             {1, 256, 128},
                             {1, 128, 128},
                             {1, 512, 128},
                             {1, 300, 300},
                             {8, 256, 256},
                             {100, 128, 128},
                             {1000, 32, 32}}) {
    Array a = randn(DType::F64, batch == 1 ? Ints{m, n} : Ints{batch, m, n}, 81);
    std::printf("  %5ld x %3ld x %3ld", long(batch), long(m), long(n));
    for (int widest : {4, 8, 16, 32}) {
      passes::QrCluster s =
          cuda::HelperKernels::forCurrentDevice().qr().shape(m, n, sizeof(double), widest);
      std::printf("  %d/%2d %7.4f (R %7.4f)", s.ctas, s.panel,
                  kernelQr<double>(a, widest, 20).second,
                  kernelQr<double>(a, widest, 20, false).second);
    }
    std::printf("\n");
  }
}

/// Milliseconds per QR of `batch` m x n matrices of `dt` on `route`.
double timeQr(int64_t batch, int64_t m, int64_t n, LibraryContext::QrRoute route,
              DType dt = DType::F64) {
  Route forced(route);
  Ints shape = batch == 1 ? Ints{m, n} : Ints{batch, m, n};
  return timeRun(Op::Qr, {randn(dt, shape, 74)}, {}, 20);
}

/// Run with --gtest_also_run_disabled_tests.
TEST(ClusterQr, DISABLED_TimingsAgainstCusolver) {
  GRAPHC_REQUIRE_GPU();
  using QrRoute = LibraryContext::QrRoute;
  std::printf("f64 qr (Q and R), ms per run:\n");
  for (auto [batch, m, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 256, 256},
                             {1, 224, 224},
                             {1, 192, 192},
                             {1, 160, 160},
                             {1, 128, 128},
                             {1, 64, 64},
                             {1, 32, 32},
                             {1, 512, 128},
                             {1, 512, 64},
                             {1, 256, 128},
                             {1, 128, 256},
                             {1, 300, 300},
                             {2, 256, 256},
                             {2, 300, 300},
                             {8, 256, 256},
                             {64, 64, 64},
                             {512, 32, 32},
                             {4096, 8, 8},
                             {4096, 16, 16},
                             {1024, 24, 24},
                             {100000, 4, 4},
                             {64, 128, 128}})
    std::printf("  %6ld x %3ld x %3ld  cluster(%d) %8.4f  library %8.4f  auto %8.4f\n", long(batch),
                long(m), long(n), clusterSize(m, n, DType::F64),
                timeQr(batch, m, n, QrRoute::Cluster), timeQr(batch, m, n, QrRoute::Library),
                timeQr(batch, m, n, QrRoute::Auto));
  std::printf("f32 qr (Q and R) of one matrix, ms per run:\n");
  for (auto [m, n] : {std::pair<int64_t, int64_t>{256, 256},
                      {224, 224},
                      {192, 192},
                      {160, 160},
                      {128, 128},
                      {256, 128},
                      {192, 96},
                      {128, 256}})
    std::printf("  %3ld x %3ld  cluster(%d) %8.4f  library %8.4f\n", long(m), long(n),
                clusterSize(m, n, DType::F32), timeQr(1, m, n, QrRoute::Cluster, DType::F32),
                timeQr(1, m, n, QrRoute::Library, DType::F32));
}

} // namespace
} // namespace graphc::testing
