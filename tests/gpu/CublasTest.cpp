//===- tests/gpu/CublasTest.cpp - One cuBLAS call against a host loop -----===//
#include "GpuTestUtil.h"

#include <cmath>
#include <memory>

using graphc::testing::DeviceArray;
using graphc::testing::randomVector;

namespace {

/// Owns a cuBLAS handle.
struct HandleDeleter {
  void operator()(cublasHandle_t h) const { cublasDestroy(h); }
};
using CublasHandle = std::unique_ptr<std::remove_pointer_t<cublasHandle_t>, HandleDeleter>;

CublasHandle makeHandle() {
  cublasHandle_t h = nullptr;
  GRAPHC_CUDA_CHECK(cublasCreate(&h));
  return CublasHandle(h);
}

} // namespace

TEST(Cublas, DgemmMatchesHostTripleLoop) {
  GRAPHC_REQUIRE_GPU();
  // Column-major C(m,n) = A(m,k) * B(k,n), sizes not multiples of any tile.
  const int m = 67, k = 45, n = 53;
  std::vector<double> a = randomVector(size_t(m) * k, 3), b = randomVector(size_t(k) * n, 4);
  std::vector<double> c(size_t(m) * n, 0.0);

  CublasHandle handle = makeHandle();
  DeviceArray da(a), db(b), dc(c);
  const double one = 1.0, zero = 0.0;
  GRAPHC_CUDA_CHECK(cublasDgemm(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, da.data(), m,
                                db.data(), k, &zero, dc.data(), m));
  std::vector<double> got = dc.toHost();

  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double want = 0;
      for (int p = 0; p < k; ++p)
        want += a[i + size_t(p) * m] * b[p + size_t(j) * k];
      ASSERT_NEAR(got[i + size_t(j) * m], want, 1e-12 * k) << "at (" << i << "," << j << ")";
    }
}

TEST(Cublas, FailingStatusThrowsNamingTheCall) {
  GRAPHC_REQUIRE_GPU();
  CublasHandle handle = makeHandle();
  const double one = 1.0;
  try {
    // m < 0 is an invalid argument.
    GRAPHC_CUDA_CHECK(cublasDgemm(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, -1, 1, 1, &one, nullptr,
                                  1, nullptr, 1, &one, nullptr, 1));
    FAIL() << "expected graphc::Error";
  } catch (const graphc::Error& e) {
    EXPECT_NE(e.message().find("cublasDgemm"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("CUBLAS_STATUS_INVALID_VALUE"), std::string::npos) << e.what();
  }
}
