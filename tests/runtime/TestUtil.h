//===- tests/runtime/TestUtil.h - Helpers for the runtime tests -*- C++ -*-===//
//
// runOp builds a one-node graph (one parameter per operand) with ir::Graph::create,
// compiles it on the cpu backend, runs it and records the op, so that the suite can
// check that every op of ir/Ops.def ran at least once. The other helpers give the
// tests an independent view of the data: elements as doubles, N-d index loops,
// a reference matrix product, and closeness checks with a dtype-aware tolerance.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "runtime/Backends.h"
#include "runtime/core/Array.h"
#include "runtime/core/Backend.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <vector>

namespace graphc::testing {

/// The ops that runOp has run in this process.
std::set<ir::Op>& opsRun();

/// Runs `op` on `operands` with `attrs` on the cpu backend; `resultTypes` is needed
/// for source ops. Returns every result.
std::vector<Array> runOp(ir::Op op, const std::vector<Array>& operands, const ir::Attrs& attrs = {},
                         const std::vector<ir::TensorType>& resultTypes = {});
/// runOp for single-result ops.
Array runOp1(ir::Op op, const std::vector<Array>& operands, const ir::Attrs& attrs = {},
             const std::vector<ir::TensorType>& resultTypes = {});

/// The elements in C order, converted to double.
std::vector<double> doubles(const Array& a);

/// Calls f(index) for every index of `shape` in C order.
void forEachIndex(llvm::ArrayRef<int64_t> shape,
                  const std::function<void(llvm::ArrayRef<int64_t>)>& f);

/// Absolute tolerance for results of magnitude about `scale` computed in `dtype`.
double tolerance(DType dtype, double scale = 1.0);

/// Expects |got - want| <= tol elementwise, naming the first mismatch.
void expectClose(const std::vector<double>& got, const std::vector<double>& want, double tol,
                 const std::string& what);

/// Reference row-major product of [m,k] and [k,n] double matrices.
std::vector<double> matmulRef(const std::vector<double>& a, const std::vector<double>& b, int64_t m,
                              int64_t k, int64_t n);
/// Reference transpose of a row-major [m,n] double matrix.
std::vector<double> transposeRef(const std::vector<double>& a, int64_t m, int64_t n);
/// Matrix `b` (of `size` elements) of the row-major batch `all`.
std::vector<double> batchItem(const std::vector<double>& all, int64_t b, int64_t size);

/// A seeded normal random array, converted to `dtype`.
Array randn(DType dtype, llvm::ArrayRef<int64_t> shape, uint64_t seed);
/// Well-conditioned square matrices [..., n, n]: random + n * I.
Array wellConditioned(DType dtype, llvm::ArrayRef<int64_t> shape, uint64_t seed);
/// Symmetric positive definite matrices [..., n, n]: M * M' + n * I.
Array spd(DType dtype, llvm::ArrayRef<int64_t> shape, uint64_t seed);

/// The float dtypes, for typed loops.
inline constexpr DType kFloatTypes[] = {DType::F32, DType::F64};

} // namespace graphc::testing
