//===- passes/Match.h - Small pattern predicates shared by passes -*- C++ -*-===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <vector>

namespace graphc::passes {

/// True when `perm` is 0, 1, ..., n-1.
bool isIdentityPerm(const std::vector<int64_t>& perm);
/// True when `perm` swaps the last two axes and keeps the batch axes in place.
bool swapsMatrixAxes(const std::vector<int64_t>& perm);
/// The permutation of `rank` axes that swaps the last two.
std::vector<int64_t> matrixSwap(int64_t rank);
/// True when broadcasting `from` to `to` leaves each matrix (the last two axes) as it
/// is, adding or widening batch axes only.
bool broadcastKeepsMatrices(const ir::TensorType& from, const ir::TensorType& to);
/// Where `v` is transpose(x) swapping the last two axes: x, with `flipped` set.
/// Otherwise `v` itself, with `flipped` cleared.
ir::Value peelMatrixTranspose(ir::Value v, bool& flipped);
/// A Gram matrix: X*X' (transposed = false) or X'*X (transposed = true).
struct Gram {
  ir::Value factor; ///< X
  bool transposed;
  /// The inner dimension k: the rank bound of the product.
  int64_t rank() const;
};
/// Where `n` is syrk(X), or matmul(X, X) with exactly one side transposed (by a
/// flag or a transpose op): X and which product.
std::optional<Gram> matchGram(const ir::Node& n);

/// A matrix scale * G + shift * I, G a Gram matrix.
struct ShiftedGram {
  Gram gram;
  ir::Value product; ///< G
  double scale, shift;
};
/// Where `v` is built from one Gram matrix G (matchGram), identities (`eye`) and
/// uniform scalars by add, sub, mul, div and neg, and comes to scale * G + shift * I:
/// those pieces. Every node on the way from `v` to G, `v` included, must satisfy
/// `within` (a caller keeps the match inside one step); the matrices have `v`'s
/// type, scalars may be broadcast.
std::optional<ShiftedGram> matchShiftedGram(ir::Value v,
                                            llvm::function_ref<bool(const ir::Node&)> within);

/// `v` as scale * base plus column vectors broadcast along the last axis (each an
/// [..., n, 1] value broadcast to v's [..., n, m]), seen through add, sub, neg and
/// uniform scalings: `obs - y` is -1 * y + obs*1'. `base` is absent when `v` is made
/// of broadcast columns only.
struct ColumnOffsets {
  std::optional<ir::Value> base;
  double scale = 0;
  std::vector<std::pair<double, ir::Value>> columns; ///< (coefficient, column vector)
};
/// The form above, or nullopt when `v` has two different bases.
std::optional<ColumnOffsets> matchColumnOffsets(ir::Value v);

/// The value every element of `v` has, when known at compile time (a `full`, a
/// uniform `constant`, or one seen through broadcast_to / reshape / transpose).
std::optional<double> uniformValue(ir::Value v);

/// Peels uniform scalings off `v` (mul by a known uniform value on either side, div
/// by a non-zero one, neg), multiplying them into `scale`: v = scale * result.
ir::Value peelUniformScale(ir::Value v, double& scale);

/// A term c * leaf of a linear combination.
struct LinearTerm {
  double coefficient;
  ir::Value leaf;
};
/// `v` times `scale` as a sum of terms, seen through add, sub, neg and uniform
/// scalings (peelUniformScale); a value that is none of those is a leaf, uniform
/// values included. Appends to `terms`; false when more than `maxTerms` would be needed.
bool collectLinearTerms(ir::Value v, double scale, std::vector<LinearTerm>& terms,
                        size_t maxTerms = 16);

} // namespace graphc::passes
