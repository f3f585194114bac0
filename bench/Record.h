//===- bench/Record.h - Errors and JSON lines of the benchmarks -*- C++ -*-===//
//
// What bench/gpu.cpp and bench/cpu.cpp share: a case's seeded float64 inputs, the
// relative error of a result against a float64 reference, dtype conversion of
// inputs, and one JSON line per result in shared/WORKLOADS.md's format.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "runtime/core/Array.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <fmt/format.h>
#include <string>
#include <vector>

namespace graphc::bench {

/// The elements of an f32, f64 or i64 (argmax's) array as doubles.
inline std::vector<double> asDoubles(const Array& a) {
  if (a.dtype() == DType::F32) {
    std::vector<float> f = a.toVector<float>();
    return {f.begin(), f.end()};
  }
  if (a.dtype() == DType::I64) {
    std::vector<int64_t> i = a.toVector<int64_t>();
    return {i.begin(), i.end()};
  }
  return a.toVector<double>();
}

/// ||a - ref|| / ||ref||.
inline double relativeError(const Array& a, const Array& ref) {
  std::vector<double> r = asDoubles(ref), x = asDoubles(a);
  double num = 0, den = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    num += (x[i] - r[i]) * (x[i] - r[i]);
    den += r[i] * r[i];
  }
  return std::sqrt(num / den);
}

/// `a` (f64) converted to `dtype`.
inline Array convert(const Array& a, DType dtype) {
  if (dtype == DType::F64)
    return a;
  std::vector<double> v = a.toVector<double>();
  return Array::fromVector(std::vector<float>(v.begin(), v.end()), a.shape());
}

/// Standard normal f64 inputs for the parameters of `g` from `given.size()` on
/// (seeds 1, 2, ...), input i scaled by scales[i] when `scales` has it; `given`
/// first.
inline std::vector<Array> randomInputs(const ir::Graph& g, std::vector<Array> given,
                                       const std::vector<double>& scales = {}) {
  uint64_t seed = 1;
  for (size_t i = given.size(); i < g.params().size(); ++i) {
    Array a = Array::randomNormal(DType::F64, g.params()[i]->type().shape, seed++);
    std::vector<double> v = a.toVector<double>();
    for (double& x : v)
      x *= i < scales.size() ? scales[i] : 1.0;
    given.push_back(Array::fromVector(v, a.shape()));
  }
  return given;
}

/// Prints one JSON line of shared/WORKLOADS.md's format (today's UTC date), with
/// `extra` fields (", \"rel_err\": ...") before the closing brace.
inline void printRecord(const std::string& device, const std::string& workload,
                        const std::string& caseName, const std::string& system,
                        const std::string& variant, double ms, const std::string& extra) {
  char date[16];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  fmt::print("{{\"date\": \"{}\", \"device\": \"{}\", \"workload\": \"{}\", \"case\": \"{}\", "
             "\"system\": \"{}\", \"variant\": \"{}\", \"median_ms\": {:.4f}{}}}\n",
             date, device, workload, caseName, system, variant, ms, extra);
  std::fflush(stdout);
}

} // namespace graphc::bench
