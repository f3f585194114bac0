//===- passes/Centering.h - Uncentered covariances made centered -*- C++ -*-===//
//
// The centering identity. For X [..., m, n] and Y [..., p, n] with the row means
// mx = mean(X, -1) and my = mean(Y, -1),
//
//   X*Y' - n * mx*my'  ==  Xc*Yc',   Xc = X - mx*1', Yc = Y - my*1'
//
// and likewise X'*Y - n * mx'*my with the column means (X [..., n, m]): in general
// op(X)*op(Y) minus n times the outer product of the means over the contracted axis.
// The pass finds an add or sub whose two sides hold, through add, sub, neg and
// uniform scalings, the product c*op(X)*op(Y) and the outer product -c*n*mx*my' (a
// matmul of two mean vectors, or the elementwise product of a broadcast column and a
// broadcast row, with scalars on either factor), and rebuilds it as c*op(Xc)*op(Yc)
// plus its other terms. `(y*y' - N*my*my') / (N - 1)` becomes `Yc*Yc' / (N - 1)`.
// A sum over the axis counts as n times the mean: `X*Y' - sx*sy'/n` with the row
// sums sx, sy is the same centered product.
//
// Legality: the identity is exact for every X and Y; it needs no structure facts,
// only that the means are over the contracted axis of the product (of X and of Y
// themselves), that n is that axis's length and that the coefficients are c and -c*n
// (to the rounding of the dtype's literals). With X = Y the result is a Gram matrix:
// the structure analysis proves it PSD, lower-linalg makes it a syrk and a solve
// with it plus a positive diagonal a Cholesky. The centered form is also the accurate
// one: the uncentered one subtracts two numbers of the size n*mean^2 to get one of
// the size n*spread^2.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/PassManager.h"

namespace graphc::passes {

/// The center pass. Counts "centered" (products rebuilt from centered data).
std::unique_ptr<ir::Graph> centerCovariances(const ir::Graph& g, PassStats& stats);

} // namespace graphc::passes
