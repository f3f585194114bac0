//===- tests/autodiff/RuleGraphs.h - One graph family per derivative rule -*- C++ -*-===//
//
// Small f64 graphs that together use every differentiable op of ir/Ops.def, shared
// by the CPU rule tests (RulesTest.cpp) and the GPU ones (GpuRulesTest.cpp). Inputs
// an op needs in a domain (log of a positive number, cholesky of an SPD matrix) are
// built inside the graphs; each family's seed keeps x +- 2h off the jumps of
// sign, floor, ceil and round.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace graphc::testing {

/// A module of graphs exercising some rules, and the seed of its random inputs.
struct RuleFamily {
  std::string name;
  std::string module;
  uint64_t seed;
};

/// Every family.
const std::vector<RuleFamily>& ruleFamilies();

} // namespace graphc::testing
