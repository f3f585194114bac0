//===- passes/Masks.h - Triangular masks as elementwise selects -*- C++ -*-===//
//
// triu and tril are data movement to the fusion pass (a kernel of their own), but
// they only zero the elements on one side of a diagonal: an elementwise select on
// the element's row and column. This pass writes them so, with iota sources that a
// kernel computes in registers,
//
//   tril x {k}   ->   select(le(sub(iota {axis=c}, iota {axis=r}), full k), x, full 0)
//
// (r and c the last two axes; triu with ge), so that a mask fuses with the values
// around it: W6's antisymmetric tril(C, -1) - tril(C, -1)' is one kernel with its
// consumers, not a step that writes the masked matrix. The values are the same: the
// elements masked out are +0, as triu and tril write them, NaNs included. The GPU
// backend runs it before splitting reductions; it comes after the passes that read
// the masks as structure (triangular factors), which see triu and tril.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/PassManager.h"

namespace graphc::passes {

/// The masks pass. Counts "masks".
std::unique_ptr<ir::Graph> masksAsSelects(const ir::Graph& g, PassStats& stats);

} // namespace graphc::passes
