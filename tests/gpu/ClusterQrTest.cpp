//===- tests/gpu/ClusterQrTest.cpp - QR in one cluster of blocks vs LAPACK ===//
//
// The cluster QR kernel (runtime/cuda/ClusterQr.h) against the CPU backend's
// LAPACK (dgeqrf + dorgqr, so R's signs are LAPACK's): square, tall and wide
// shapes from 1 x 1 to 512 rows, each cluster size, f32 and f64, batches; zero
// columns (tau = 0), a zero matrix, magnitudes near overflow and underflow (the
// scaled norms), and NaN propagation. Every shape is checked to take the kernel.
// The kernel is forced (LibraryContext::QrRoute::Cluster) where the route policy
// would pick cuSOLVER; LibraryTest and LibraryBatchedTest cover the default route.
// Disabled: the kernel timed against cuBLAS and cuSOLVER.
//
//===----------------------------------------------------------------------===//
#include "LibraryTestUtil.h"

#include "runtime/cuda/HelperKernels.h"

#include <cstdio>
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

TEST(ClusterQr, MatchesLapack) {
  GRAPHC_REQUIRE_GPU();
  Route cluster(LibraryContext::QrRoute::Cluster);
  for (DType dt : kFloats)
    for (auto [m, n] : kShapes)
      for (int64_t batch : {1, 3}) {
        std::string what = fmt::format("qr {} x {} x {} {}", batch, m, n, ir::dtypeName(dt).str());
        EXPECT_GT(clusterSize(m, n, dt), 0) << what;
        Ints shape = batch == 1 ? Ints{m, n} : Ints{batch, m, n};
        expectSameAsCpu(Op::Qr, {randn(dt, shape, 60 + m + n)}, {}, what);
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

TEST(ClusterQr, NanPropagates) {
  GRAPHC_REQUIRE_GPU();
  Route cluster(LibraryContext::QrRoute::Cluster);
  std::vector<double> v = doubles(randn(DType::F64, {64, 64}, 72));
  v[10 * 64 + 3] = std::nan("");
  OneNode g(Op::Qr, {fromDoubles(DType::F64, v, {64, 64})}, {});
  GpuResult got = runGpu(*g.node, {fromDoubles(DType::F64, v, {64, 64})});
  // Column 3 is NaN from its reflector on, and every column after it through the
  // reflector; the columns before it are finite.
  std::vector<double> r = doubles(got.outputs[1]);
  EXPECT_TRUE(std::isnan(r[3 * 64 + 3]));
  EXPECT_TRUE(std::isnan(r[3 * 64 + 63]));
  EXPECT_TRUE(std::isfinite(r[0 * 64 + 2]));
}

TEST(ClusterQr, RunsInsideStreamCapture) {
  GRAPHC_REQUIRE_GPU();
  Route cluster(LibraryContext::QrRoute::Cluster);
  expectSameAsCpu(Op::Qr, {randn(DType::F64, {2, 256, 256}, 73)}, {}, "captured", true);
}

/// Milliseconds per QR of `batch` f64 m x n matrices on `route`.
double timeQr(int64_t batch, int64_t m, int64_t n, LibraryContext::QrRoute route) {
  Route forced(route);
  Ints shape = batch == 1 ? Ints{m, n} : Ints{batch, m, n};
  return timeRun(Op::Qr, {randn(DType::F64, shape, 74)}, {}, 20);
}

/// Run with --gtest_also_run_disabled_tests.
TEST(ClusterQr, DISABLED_TimingsAgainstCusolver) {
  GRAPHC_REQUIRE_GPU();
  using QrRoute = LibraryContext::QrRoute;
  std::printf("f64 qr (Q and R), ms per run:\n");
  for (auto [batch, m, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 256, 256},
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
}

} // namespace
} // namespace graphc::testing
