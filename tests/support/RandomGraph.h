//===- tests/support/RandomGraph.h - Random valid graphs ---------*- C++ -*-===//
//
// Builds random, well-typed graphs over the whole op table (or a chosen subset) for
// property tests: print/parse round trips now, numeric equivalence of passes and
// backends later. Every graph it returns passes ir::verify. The generator throws
// graphc::Error when it meets an op it does not know, so a new op in ir/Ops.def
// fails the coverage test until the generator learns it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace graphc::testing {

/// Knobs of the random graph generator.
struct RandomGraphOptions {
  unsigned numNodes = 16;  ///< ops to draw per graph
  unsigned maxParams = 4;  ///< beyond this, fresh values come from full/constant/iota/eye
  unsigned maxOutputs = 3; ///< outputs are 1..maxOutputs values
  unsigned maxRank = 3;    ///< rank of fresh values (linalg adds at most one batch axis)
  int64_t maxDim = 4;      ///< dimensions of fresh values are in [1, maxDim]
  bool floatOnly = false;  ///< every dtype drawn is f32 or f64 (casts included)
  bool nameNodes = true;   ///< give some nodes (possibly clashing) names
  /// Keep values finite and non-trivial on inputs of magnitude [1, 2]
  /// (boundedInputs), and most nodes live: constants of that magnitude, few unit
  /// axes, non-empty slices, exp and divisors of floats through tanh (exp of
  /// [-1, 1]), the second operand of a binary op, compare or select another value
  /// than the first where the pool has one, iota, var and arg-reductions along axes
  /// longer than 1, operands often the newest value that fits, and the outputs the
  /// newest values nothing reads.
  bool bounded = false;
  std::vector<ir::Op> ops; ///< ops to draw from; empty means every op of the table
};

/// Generates random valid graphs from a seed; the same seed gives the same graphs.
class RandomGraphGenerator {
public:
  explicit RandomGraphGenerator(uint64_t seed, RandomGraphOptions options = {});

  /// A new random graph called `name`.
  std::unique_ptr<ir::Graph> generate(const std::string& name = "random");

  /// How many times each op was created so far (hash-consed repeats included).
  const std::map<ir::Op, unsigned>& opCounts() const { return counts_; }

private:
  std::mt19937_64 rng_;
  RandomGraphOptions options_;
  std::map<ir::Op, unsigned> counts_;
};

} // namespace graphc::testing
