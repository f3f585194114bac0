//===- bench/enkf_cpu.cpp - EnKF W1 on the CPU: graphc vs hand-written LAPACK ===//
//
// Usage: bench_enkf_cpu [D] [N] [--repeat R] [--optimized-only]
//
// Times the EnKF analysis update (examples/EnKF.h, d = D states, N = N members
// (default N = D), f64) on the CPU backend, as written (no passes: LU) and optimized
// (the default pipeline picks Cholesky, or Woodbury when N << D), against the same
// sequence of OpenBLAS/LAPACK calls written by hand in C++ (gemm, gemm, gesv / posv,
// gemm) where d = N. Prints one JSON line per variant (the format of
// shared/WORKLOADS.md) and each result's relative difference to the first variant's.
// --optimized-only skips the hand-written and unoptimized (LU) variants.
//
//===----------------------------------------------------------------------===//
#include "examples/EnKF.h"
#include "examples/Timing.h"
#include "runtime/Backends.h"

#include "runtime/core/Compile.h"

#include <cblas.h>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <lapacke.h>

using namespace graphc;

namespace {

/// Row-major d x N matrices in plain vectors.
using Matrix = std::vector<double>;

/// The update by hand (d = N = n): centre, two gemms, add the noise, solve (LU or
/// Cholesky), gemm.
Matrix handUpdate(const Matrix& xi, const Matrix& y, const Matrix& obs, int n, bool cholesky) {
  Matrix xc(xi), yc(y), d(n * n), s(n * n), cxy(n * n);
  for (int i = 0; i < n; ++i) {
    double mx = 0, my = 0;
    for (int j = 0; j < n; ++j)
      mx += xi[i * n + j], my += y[i * n + j];
    for (int j = 0; j < n; ++j) {
      xc[i * n + j] -= mx / n;
      yc[i * n + j] -= my / n;
      d[i * n + j] = obs[i] - y[i * n + j];
    }
  }
  double scale = 1.0 / (n - 1);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, scale, xc.data(), n, yc.data(), n,
              0.0, cxy.data(), n);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, scale, yc.data(), n, yc.data(), n,
              0.0, s.data(), n);
  for (int i = 0; i < n; ++i)
    s[i * n + i] += 0.1;
  int info;
  if (cholesky) {
    info = LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', n, n, s.data(), n, d.data(), n);
  } else {
    std::vector<lapack_int> piv(n);
    info = LAPACKE_dgesv(LAPACK_ROW_MAJOR, n, n, s.data(), n, piv.data(), d.data(), n);
  }
  if (info != 0)
    throw Error(fmt::format("hand-written solve failed: info {}", info));
  Matrix out(xi);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, cxy.data(), n, d.data(), n,
              1.0, out.data(), n);
  return out;
}

double relDiff(const Matrix& a, const Matrix& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i)
    num += (a[i] - b[i]) * (a[i] - b[i]), den += b[i] * b[i];
  return std::sqrt(num / den);
}

void report(const std::string& caseName, const char* system, const char* variant, double ms,
            double err) {
  fmt::print("{{\"device\": \"CPU ({} OpenBLAS threads)\", \"case\": \"{}\", \"system\": "
             "\"{}\", \"variant\": \"{}\", \"median_ms\": {:.1f}, \"rel_diff\": {:.1e}}}\n",
             openblas_get_num_threads(), caseName, system, variant, ms, err);
}

} // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  int repeats = 3;
  bool optimizedOnly = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--optimized-only"))
      optimizedOnly = true;
    else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc)
      repeats = std::max(1, std::atoi(argv[++i]));
    else
      sizes.push_back(std::atoi(argv[i]));
  }
  int d = sizes.empty() ? 3000 : sizes[0];
  int n = sizes.size() > 1 ? sizes[1] : d;
  std::string caseName =
      d == n ? fmt::format("enkf_d{}_f64", d) : fmt::format("enkf_d{}_n{}_f64", d, n);
  Array xi = Array::randomNormal(DType::F64, {d, n}, 1);
  Array y = Array::randomNormal(DType::F64, {d, n}, 2, 0.0, 10.0);
  Array obs = Array::randomNormal(DType::F64, {d, 1}, 3, 0.0, 10.0);

  Matrix ref;
  if (d == n && !optimizedOnly) {
    Matrix hxi = xi.toVector<double>(), hy = y.toVector<double>(), hobs = obs.toVector<double>();
    double lu = examples::medianMs(repeats, [&] { ref = handUpdate(hxi, hy, hobs, d, false); });
    report(caseName, "hand", "OpenBLAS/LAPACK gemm + gesv (LU)", lu, 0.0);
    Matrix chol;
    double ms = examples::medianMs(repeats, [&] { chol = handUpdate(hxi, hy, hobs, d, true); });
    report(caseName, "hand", "OpenBLAS/LAPACK gemm + posv (Cholesky)", ms, relDiff(chol, ref));
  }

  std::unique_ptr<ir::Graph> g = traceToGraph(examples::enkfUpdate,
                                              {{"xi", TensorType(DType::F64, {d, n})},
                                               {"y", TensorType(DType::F64, {d, n})},
                                               {"obs", TensorType(DType::F64, {d, 1})}},
                                              "enkf");
  for (const char* passes : {"none", ""}) {
    if (optimizedOnly && *passes)
      continue;
    auto exe = compile(*g, getBackend("cpu"), {passes});
    std::vector<Array> out;
    double ms = examples::medianMs(repeats, [&] { out = exe->run({xi, y, obs}); });
    Matrix got = out[0].toVector<double>();
    if (ref.empty())
      ref = got;
    report(caseName, "graphc", *passes ? "cpu, no passes (LU)" : "cpu, default pipeline", ms,
           relDiff(got, ref));
  }
  return 0;
}
