//===- runtime/cuda/LibraryPlan.h - Shapes and workspace of library calls -*- C++ -*-===//
//
// Internal to runtime/cuda/Library*.cpp: the matrices of a library node's arrays,
// its route choices (passes/RoutePolicy.h), and the device workspace it needs. One
// function, plan(), sizes the workspace for LibraryContext::reserve() and cuts it
// into regions for run(), so run() can check that the reserved workspace is large
// enough.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "passes/RoutePolicy.h"
#include "runtime/cuda/BlockedSolve.h"

#include "llvm/ADT/ArrayRef.h"

#include <cusolverDn.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <type_traits>

namespace graphc::cuda::library {

/// The matrices of an array: batch count and the last two dimensions.
struct Matrices {
  int64_t batch, rows, cols;

  explicit Matrices(const ir::TensorType& t)
      : batch(ir::numElements(llvm::ArrayRef<int64_t>(t.shape).drop_back(2))),
        rows(t.shape[t.shape.size() - 2]), cols(t.shape.back()) {}
  int64_t size() const { return rows * cols; }
  /// Leading dimension of the column-major view (never 0).
  int ld() const { return static_cast<int>(std::max<int64_t>(cols, 1)); }
};

/// The route thresholds (passes/RoutePolicy.h).
const passes::RoutePolicy& policy();

/// True when LU and QR of `m` take cuBLAS's batched routines.
bool batchedFactorization(const Matrices& m);

/// A dimension as the int cuBLAS and cuSOLVER take.
int toInt(int64_t v);

/// A node's workspace cut into its regions (plan()).
struct Scratch {
  void* matrix;
  void* second;
  int* pivots;
  int* info;
  void** pointers;
  void* work;
  void* widened;
  double* partials;
  int lwork;
  size_t bytes; ///< total size, with alignment
};

/// Calls `f(std::type_identity<T>{})` for the float dtype `dtype`.
template <typename F> decltype(auto) visitFloat(ir::DType dtype, F&& f) {
  if (dtype == ir::DType::F32)
    return f(std::type_identity<float>{});
  return f(std::type_identity<double>{});
}

/// The column-major solve behind the row-major triangular_solve `n` when it goes by
/// blocks (BlockedSolve.h): op(A) X = B is X' op(A)' = B', and X op(A) = B is
/// op(A)' X' = B', where A read column-major is A' (its lower triangle is the upper
/// one there): the side flips, the transpose stays.
std::optional<BlockedSolve> blockedSolve(const ir::Node& n);

/// True when triangular solve `n` solves for one vector: one column, or one row on
/// the right side.
bool oneVector(const ir::Node& n);

/// How syrk `n` runs (passes::chooseSyrkRoute).
passes::SyrkRoute syrkRoute(const ir::Node& n);

/// True when the f32 call `n` runs in f64 on a device whose f64 tensor cores are
/// faster (`fastDouble`): gemm, syrk and blocked triangular solves, each dimension
/// at least policy().singleInDoubleMinN.
bool widens(const ir::Node& n, bool fastDouble);

/// The workspace of `n` (for f32 calls that widens(), in f64), cut into regions
/// from `base`; all null when `base` is null, with the total size in `bytes`.
Scratch plan(cusolverDnHandle_t solver, const ir::Node& n, void* base, bool fastDouble);

} // namespace graphc::cuda::library
