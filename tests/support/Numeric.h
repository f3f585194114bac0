//===- tests/support/Numeric.h - Random inputs and comparisons ---*- C++ -*-===//
//
// Shared by the suites that compare two ways of running a graph (optimized and not,
// fused and not, GPU and CPU): random inputs for a graph's parameters, and a
// relative difference of two outputs that treats NaN as equal to NaN; the special
// floating-point values edge-case tests start from.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "runtime/core/Array.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace graphc::testing {

/// The elements of an array, converted to double, in C order.
std::vector<double> asDoubles(const Array& x);

/// IEEE 754's special values of T (float, double) and a few ordinary ones: +-0,
/// +-inf, NaN, +-the smallest subnormal, a subnormal near the smallest normal
/// (min / 3), +-the smallest normal, +-the largest finite value, +-1, 0.5.
template <typename T> std::vector<T> specialValues() {
  using L = std::numeric_limits<T>;
  return {T(0),
          -T(0),
          L::infinity(),
          -L::infinity(),
          L::quiet_NaN(),
          L::denorm_min(),
          -L::denorm_min(),
          L::min() / 3,
          L::min(),
          -L::min(),
          L::max(),
          -L::max(),
          T(1),
          T(-1),
          T(0.5)};
}

/// Random inputs for `g`, reproducible from `seed`: floats ~ N(0, 1) with n*I added
/// to square matrices (so solves are well posed), integers in [-5, 5] without 0,
/// random booleans.
std::vector<Array> randomInputs(const ir::Graph& g, uint64_t seed);

/// Random inputs for graphs of RandomGraphOptions::bounded, reproducible from `seed`:
/// floats of magnitude in [1, 2] with random signs, integers in [-5, 5] without 0,
/// random booleans.
std::vector<Array> boundedInputs(const ir::Graph& g, uint64_t seed);

/// True when `a` says little about the computation that made it: it is empty, or
/// holds an infinity or a NaN, or is zero (false) everywhere.
bool degenerate(const Array& a);

/// max |x - y| / (1 + max |y|), NaNs equal to NaNs; infinity when the shapes, or
/// where NaNs are, differ.
double relativeDifference(const Array& x, const Array& y);

} // namespace graphc::testing
