//===- passes/Structure.h - Matrix structure analysis -----------*- C++ -*-===//
//
// Infers, for every value of a graph, the structure that follows from how it was
// built: symmetric, positive (semi)definite, triangular, diagonal, identity,
// low-rank (a Gram matrix X*X' of rank <= k) and low-rank-plus-positive-diagonal,
// and elementwise sign facts (positive, non-negative, uniform) that the matrix
// rules need (`0.1*I`, `diag(exp(v))`, `X*X'/(N-1)`).
//
// The analysis is sound, not complete: a property is claimed only when it follows
// from the graph. A parameter is a plain matrix unless the user asserts structure
// with an assume_* op (assume_spd, assume_symmetric, assume_lower, assume_upper,
// assume_diagonal), whose fact is taken on trust.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace graphc::passes {

/// Facts about one value. Matrix facts hold for every matrix of a batch (the last
/// two axes) and are only set on square matrices; element facts hold for every element.
struct Structure {
  enum Prop : uint16_t {
    Symmetric = 1 << 0,
    PSD = 1 << 1,               ///< symmetric positive semidefinite
    SPD = 1 << 2,               ///< symmetric positive definite
    Lower = 1 << 3,             ///< lower triangular
    Upper = 1 << 4,             ///< upper triangular
    Diagonal = 1 << 5,          ///< off-diagonal entries are zero
    Identity = 1 << 6,          ///< the identity matrix
    Positive = 1 << 7,          ///< every element > 0
    NonNegative = 1 << 8,       ///< every element >= 0
    Uniform = 1 << 9,           ///< every element has the same value
    PositiveDiagonal = 1 << 10, ///< diagonal entries > 0 (e.g. a Cholesky factor)
  };

  uint16_t props = 0;
  /// When > 0: the matrix is PSD of rank <= lowRank (a scaled Gram matrix X*X').
  int64_t lowRank = 0;
  /// When > 0: the matrix is a PSD part of rank <= this plus a positive diagonal.
  int64_t lowRankPlusDiagonal = 0;

  bool has(uint16_t p) const { return (props & p) == p; }
  friend bool operator==(const Structure& a, const Structure& b) {
    return a.props == b.props && a.lowRank == b.lowRank &&
           a.lowRankPlusDiagonal == b.lowRankPlusDiagonal;
  }
};

/// "spd, lowrank(4)+diag" — the facts in text, "" when there are none.
std::string structureString(const Structure& s);

/// The structure of every value of a graph, indexed by node id and result index.
class StructureMap {
public:
  /// Analyzes `g` in one forward walk.
  explicit StructureMap(const ir::Graph& g);

  const Structure& operator[](ir::Value v) const { return at(*v.node, v.index); }
  /// The facts of result `i` of node `n`.
  const Structure& at(const ir::Node& n, unsigned i = 0) const { return facts_[n.id()][i]; }

private:
  std::vector<std::vector<Structure>> facts_;
};

/// The text of `g` with each node's facts as a trailing comment (`// spd`).
std::string printWithStructure(const ir::Graph& g);

} // namespace graphc::passes
