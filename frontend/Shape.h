//===- frontend/Shape.h - Data movement and reductions ----------*- C++ -*-===//
//
// Shape manipulation (broadcast_to, reshape, transpose, slice, concat, diagonals,
// triangles) and reductions over axes. Axes may be negative (counting from the
// end), as in NumPy; they are normalized before the node is made, so the IR only
// ever holds non-negative, sorted axes.
//
//   Tensor m  = mean(x, -1, /*keepdims=*/true);   // f32[8192,1]
//   Tensor xt = transpose(x);                     // swaps the last two axes
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/Tensor.h"

#include <initializer_list>
#include <vector>

namespace graphc {

/// A set of axes for a reduction: every axis (the default), one axis, or a list.
class Axes {
public:
  /// All axes.
  Axes() = default;
  /// One axis (negative counts from the end).
  Axes(int64_t axis) : axes_{axis}, all_(false) {}
  Axes(int axis) : Axes(static_cast<int64_t>(axis)) {}
  /// A list of axes, in any order.
  Axes(std::initializer_list<int64_t> axes) : axes_(axes), all_(false) {}
  Axes(std::vector<int64_t> axes) : axes_(std::move(axes)), all_(false) {}

  /// The sorted, non-negative axes for rank `rank`. Throws (naming `op` and the type
  /// `x`) for an axis out of range or repeated.
  std::vector<int64_t> normalize(int64_t rank, llvm::StringRef op, const TensorType& x,
                                 const SrcLoc& loc) const;

private:
  std::vector<int64_t> axes_;
  bool all_ = true;
};

/// Broadcasts `x` NumPy-style to `shape` (a no-op when the shape is already `shape`).
Tensor broadcast_to(const Tensor& x, llvm::ArrayRef<int64_t> shape, SrcLoc loc = SrcLoc::current());
/// The same elements in another shape; one entry may be -1 (inferred).
Tensor reshape(const Tensor& x, llvm::ArrayRef<int64_t> shape, SrcLoc loc = SrcLoc::current());
/// Permutes the axes: result axis i is `x`'s axis perm[i]. An empty perm swaps the last
/// two axes. Negative entries count from the end.
Tensor transpose(const Tensor& x, llvm::ArrayRef<int64_t> perm = {},
                 SrcLoc loc = SrcLoc::current());
/// Elements start[i] <= j < stop[i] with step stride[i] along every axis. Negative start
/// and stop count from the end of the axis; an empty stride means 1.
Tensor slice(const Tensor& x, llvm::ArrayRef<int64_t> start, llvm::ArrayRef<int64_t> stop,
             llvm::ArrayRef<int64_t> stride = {}, SrcLoc loc = SrcLoc::current());
/// Joins tensors along `axis` (negative counts from the end).
Tensor concat(const std::vector<Tensor>& xs, int64_t axis = 0, SrcLoc loc = SrcLoc::current());
/// Square matrices with `v`'s last axis on the diagonal.
Tensor diag(const Tensor& v, SrcLoc loc = SrcLoc::current());
/// The main diagonals of matrices.
Tensor diag_part(const Tensor& m, SrcLoc loc = SrcLoc::current());
/// Keeps elements on and above diagonal k (zeroes the rest).
Tensor triu(const Tensor& m, int64_t k = 0, SrcLoc loc = SrcLoc::current());
/// Keeps elements on and below diagonal k (zeroes the rest).
Tensor tril(const Tensor& m, int64_t k = 0, SrcLoc loc = SrcLoc::current());

// Reductions: name, ir::Op. argmax/argmin return i64 indices; var is the population
// variance (divisor: the count).
#define GRAPHC_FRONTEND_REDUCE_OPS(X)                                                              \
  X(sum, Sum)                                                                                      \
  X(mean, Mean)                                                                                    \
  X(var, Var)                                                                                      \
  X(max, Max)                                                                                      \
  X(min, Min)                                                                                      \
  X(prod, Prod)                                                                                    \
  X(argmax, Argmax)                                                                                \
  X(argmin, Argmin)

/// Applies a reduction over `axes`; with `keepdims` reduced axes stay with extent 1.
Tensor reduce(ir::Op op, const Tensor& x, const Axes& axes = {}, bool keepdims = false,
              SrcLoc loc = SrcLoc::current());

#define GRAPHC_DECLARE_REDUCE(name, Code)                                                          \
  /** Reduction `name` (ir op Code) over `axes` (default: all). */                                 \
  Tensor name(const Tensor& x, const Axes& axes = {}, bool keepdims = false,                       \
              SrcLoc loc = SrcLoc::current());
GRAPHC_FRONTEND_REDUCE_OPS(GRAPHC_DECLARE_REDUCE)
#undef GRAPHC_DECLARE_REDUCE

/// The reduction of `x` over the ranks of a sharded run: "sum", "max" or "min"
/// (docs/sharding.md). For a program written per rank (compiled with
/// Backend::compileRank); in a program of one rank it is `x`.
Tensor all_reduce(const Tensor& x, const std::string& reduction = "sum",
                  SrcLoc loc = SrcLoc::current());

} // namespace graphc
