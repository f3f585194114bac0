//===- tests/autodiff/DerivativeCheck.h - Checking derivative graphs -*- C++ -*-===//
//
// The checks every autodiff test makes, on random inputs in f64:
//   - the JVP graph's tangents against central finite differences of the graph
//     (five points), with a tolerance derived from the step (truncation h^4,
//     rounding eps/h);
//   - the transposition identity <u, J v> == <J' u, v> between the JVP and VJP graphs;
//   - the primal outputs of both derivative graphs against the graph itself;
//   - the derivative graphs through the default pipeline against no passes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "runtime/core/Array.h"

#include <string>
#include <vector>

namespace graphc::testing {

/// What checkDerivatives measured, for messages and further checks.
struct DerivativeReport {
  double fdError = 0;        ///< max |jvp - fd| / (1 + max |fd|) over the outputs
  double fdTolerance = 0;    ///< the tolerance it was held to
  double transposeError = 0; ///< |<u, Jv> - <J'u, v>| / (|u| |Jv| + |J'u| |v|)
};

/// Options of checkDerivatives.
struct DerivativeCheckOptions {
  double step = 1e-4;                ///< finite-difference step (relative to 1)
  double fdTolerance = 0;            ///< 0: derived from the step
  double transposeTolerance = 1e-12; ///< for the transposition identity
  std::string backend = "cpu";       ///< where the derivative graphs run
  bool pipeline = true;              ///< also compare the optimized derivative graphs
};

/// Runs `g` on the CPU without passes.
std::vector<Array> runPlain(const ir::Graph& g, const std::vector<Array>& inputs);

/// Checks the derivatives of `g` with respect to its floating-point parameters on
/// random inputs from `seed` (or `inputs` when given), with gtest expectations.
DerivativeReport checkDerivatives(const ir::Graph& g, uint64_t seed,
                                  const DerivativeCheckOptions& options = {},
                                  std::vector<Array> inputs = {});

} // namespace graphc::testing
