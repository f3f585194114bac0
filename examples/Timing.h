//===- examples/Timing.h - Median wall time of repeated runs ----*- C++ -*-===//
//
// A tiny helper for the examples: time a callable a few times, report the median.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <chrono>
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

} // namespace graphc::examples
