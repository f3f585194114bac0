//===- examples/Timing.h - Median wall time of repeated runs ----*- C++ -*-===//
//
// Tiny helpers for the examples: time a callable a few times and report the median;
// read the common command line `[SIZE SIZE] [--backend NAME]`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace graphc::examples {

/// Milliseconds one call of `f` takes.
template <typename F> double timeMs(F&& f) {
  auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

/// The median over `repeats` calls of `f`, in milliseconds.
template <typename F> double medianMs(int repeats, F&& f) {
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i)
    ms.push_back(timeMs(f));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

/// Reads `[A B] [--backend NAME]`: sets `a` and `b` when two sizes are given and
/// returns the backend name ("auto" by default).
inline std::string parseSizesAndBackend(int argc, char** argv, int64_t& a, int64_t& b) {
  std::string backend = "auto";
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--backend") && i + 1 < argc)
      backend = argv[++i];
    else
      sizes.push_back(std::atoll(argv[i]));
  }
  if (sizes.size() == 2)
    a = sizes[0], b = sizes[1];
  return backend;
}

} // namespace graphc::examples
