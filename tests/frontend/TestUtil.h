//===- tests/frontend/TestUtil.h - Helpers for the frontend tests -*- C++ -*-===//
//
// Random input arrays and float64 reference comparisons for the DSL tests. The
// references are plain loops written in the tests; these helpers only generate data
// and compare.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/Graphc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

namespace graphc::testing {

/// The backend the numeric suites run on: GRAPHC_TEST_BACKEND, else "cpu" (ctest's
/// `cuda.*` tests, label gpu, set it to "cuda").
inline std::string testBackend() {
  const char* env = std::getenv("GRAPHC_TEST_BACKEND");
  return env && *env ? env : "cpu";
}

/// Why testBackend() cannot run on this machine (a build's backend without its
/// device); empty when it can, or when the build has no backend of that name (then
/// setDefaultBackend() fails the test, naming it).
inline std::string testBackendUnavailable() {
  for (const BackendInfo& b : knownBackends())
    if (b.name == testBackend())
      return b.unavailable;
  return "";
}

/// SetUp() of a numeric suite: skips where testBackend() cannot run, else makes it
/// the DSL's backend.
#define GRAPHC_USE_TEST_BACKEND()                                                                  \
  do {                                                                                             \
    if (std::string why = ::graphc::testing::testBackendUnavailable(); !why.empty())               \
      GTEST_SKIP() << "backend " << ::graphc::testing::testBackend() << ": " << why;               \
    setDefaultBackend(::graphc::testing::testBackend());                                           \
  } while (0)

/// A random normal array of `dtype` and `shape`.
inline Array randn(DType dtype, llvm::ArrayRef<int64_t> shape, uint64_t seed) {
  return Array::randomNormal(dtype, shape, seed);
}

/// The elements of `a` in C order as doubles.
inline std::vector<double> toDoubles(const Array& a) {
  std::vector<double> out;
  Array c = a.contiguous();
  visitDType(c.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (T x : c.toVector<T>())
      out.push_back(static_cast<double>(x));
  });
  return out;
}

/// Expects `got` to match the float64 reference `want` elementwise within
/// `tol * (1 + |want|)`.
inline void expectClose(const Array& got, const std::vector<double>& want, double tol,
                        const char* what = "") {
  std::vector<double> g = toDoubles(got);
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < g.size(); ++i)
    ASSERT_NEAR(g[i], want[i], tol * (1 + std::abs(want[i]))) << what << " at element " << i;
}

/// The tolerance for results computed in `dtype`.
inline double tolFor(DType dtype) {
  return dtype == DType::F32 ? 1e-4 : 1e-10;
}

} // namespace graphc::testing
