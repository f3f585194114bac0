//===- tests/support/SpdBatch.h - Batches of partly indefinite solves -*- C++ -*-===//
//
// For the tests of the per-item LU fallback (runtime/core/Compile.h) on the cpu and
// cuda backends: a batch of solves with assume_spd whose matrices are SPD for most
// items and symmetric indefinite (but nonsingular) for the items a test names, so
// that the chosen Cholesky fails on those items alone; and each item's backward
// error |A x - b| computed by plain loops in f64. Also a proven SPD solve that is
// exactly singular for a rank-deficient input (Cholesky and LU both fail). And the
// Gram-formed solves of the Cholesky solve fusion (passes/CholeskySolves.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "runtime/core/Array.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace graphc::testing {

/// One item: `solve(assume_spd(a), b)` for a f64[n,n] and b f64[n,cols].
std::unique_ptr<ir::Graph> assumedSpdSolve(int64_t n, int64_t cols);

/// `solve(Y*Y' + 1e-300*I, b)` for Y f64[n,k] and b f64[n,1]: proven SPD, but for a
/// Y of exact entries and rank < n the computed matrix is exactly singular (the
/// 1e-300 rounds away), so that both its Cholesky and its LU fail.
std::unique_ptr<ir::Graph> tinyShiftGramSolve(int64_t n, int64_t k);

/// `solve(0.25 X'X + I, b)` for 40 X of f64[24,9], X'X through a transpose op: a
/// GramTransposed solve (passes::SpdMatrices).
extern const char* const kTransposedGramSolve;
/// `solve(X X' + I, b)` for 40 X of f64[9,24], returning X X' + I too: the solve
/// reads the matrix, not the factor.
extern const char* const kGramSolveMatrixReturned;

/// Inputs of assumedSpdSolve(n, cols) batched `batch` ways: item k's matrix is
/// X X' + n I (SPD) unless `indefinite` lists k, then R + R' with its first entry
/// made -1 - |a(0,0)| (symmetric, its first leading minor negative, nonsingular for
/// random R); right-hand sides ~ N(0, 1). Reproducible from `seed`.
std::vector<Array> partlyIndefiniteBatch(int64_t batch, int64_t n, int64_t cols,
                                         llvm::ArrayRef<int64_t> indefinite, uint64_t seed);

/// The normwise backward error of item k of a batched solve a x = b (host f64
/// arrays [batch, n, n], [batch, n, cols], [batch, n, cols]): max over entries of
/// |a x - b| / (|a| |x| + |b|), infinity norms, by loops; infinity for a NaN or Inf.
double backwardError(const Array& a, const Array& x, const Array& b, int64_t k);

} // namespace graphc::testing
