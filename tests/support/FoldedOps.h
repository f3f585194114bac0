//===- tests/support/FoldedOps.h - Folded constants against a backend -*- C++ -*-===//
//
// The constant folder (passes/Canonicalize.cpp) and the backends must give one op
// the same bits. compareFoldsWith() takes every unary and binary elementwise op in
// f32 and f64 over edge values (+-0, +-inf, NaN, the smallest and largest
// subnormals, the smallest normal, the largest finite value, negative operands for
// sqrt, log and remainder, and a few ordinary numbers; every pair of them for the
// binary ops), folds the op on uniform constants, and runs the same op on parameters
// (nothing to fold) on a backend. Shared by the cpu suite (tests/passes) and the
// cuda suite (tests/gpu).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace graphc::testing {

/// What compareFoldsWith() found.
struct FoldComparison {
  /// The ops that folded on every edge value, as "abs f32" (others may fold where
  /// an identity applies: pow(x, 1) is x).
  std::vector<std::string> folded;
  /// One line per folded value whose bits differ from the backend's result (any
  /// NaN matches any NaN), e.g. "abs f32 (-0): folded 0x00000000, cuda 0x80000000".
  std::vector<std::string> mismatches;
};

/// Folds every unary and binary elementwise op on the edge values in f32 and f64
/// and compares each folded constant with what backend `backend` computes for the
/// op unfolded (see the file comment).
FoldComparison compareFoldsWith(llvm::StringRef backend);

} // namespace graphc::testing
