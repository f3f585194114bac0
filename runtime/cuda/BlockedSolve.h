//===- runtime/cuda/BlockedSolve.h - Large triangular solves by blocks -*- C++ -*-===//
//
// cuBLAS's trsm runs far below its gemm rate on large triangles: at n = 3000 with
// 3000 right-hand sides it takes 2.0 ms in f64 on an H200, where a gemm of the
// same shape takes 0.96 ms. solveByBlocks() moves the work into gemm: a kernel
// inverts T's diagonal blocks (kSolveBlock rows each, all at once), and the solve
// recurses on halves of T; with T on the right and op(T) upper,
//
//   X1 = B1 op(T11)^-1 (recursing), B2 -= X1 op(T)12, X2 = B2 op(T22)^-1,
//
// (on the left, and for lower triangles, the mirror images) down to single blocks,
// where X_j = B_j op(T_jj)^-1 is one gemm with the inverse (B updated in the
// workspace, X_j written into the result). The large updates are gemms of K up to
// n / 2, which run at nearly the gemm rate: 0.82 ms at n = 3000 (CHANGELOG.md, 3655259).
// Inverting a block by substitution and multiplying by the inverse is as accurate
// as substitution in practice for the well-conditioned diagonal blocks of a
// Cholesky factor; the solve is not meant for the badly conditioned triangles for
// which trsm's forward errors are better.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace graphc::cuda {

class SmallBatched;

/// The rows of T's diagonal blocks.
constexpr int64_t kSolveBlock = 256;

/// A triangular solve in column-major terms, as cuBLAS's trsm names it: op(T) X = B
/// (T on the left, m x m) or X op(T) = B (on the right, n x n), B and X m x n with
/// leading dimension m, T with leading dimension its size.
struct BlockedSolve {
  bool left = false;      ///< T on the left
  int64_t m = 0, n = 0;   ///< B's rows and columns
  bool upper = false;     ///< T's upper triangle is read (else its lower)
  bool transpose = false; ///< op(T) = T'
  bool unit = false;      ///< T's diagonal taken as ones

  /// T's size.
  int64_t size() const { return left ? m : n; }
};

/// True when `s` goes through solveByBlocks() rather than cuBLAS's trsm
/// (passes::preferBlockedSolve, and sizes that fit cuBLAS's int).
bool solvesByBlocks(const BlockedSolve& s);

/// The T elements of workspace solveByBlocks() needs for `s`.
int64_t blockedSolveWorkspace(const BlockedSolve& s);

/// Writes X to `x` (B is `b`, not modified), enqueued on `blas`'s stream (which
/// must be `stream`): no allocation, no synchronization. `workspace` holds
/// blockedSolveWorkspace(s) elements: the inverses and B as it is updated, so that
/// each block of X is written once, straight into `x`. A zero on T's diagonal
/// gives infinities or NaNs, not an error: the caller checks the diagonal.
template <typename T>
void solveByBlocks(cublasHandle_t blas, const SmallBatched& small, cudaStream_t stream,
                   const BlockedSolve& s, const T* t, const T* b, T* x, T* workspace);

} // namespace graphc::cuda
