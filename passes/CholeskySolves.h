//===- passes/CholeskySolves.h - Factor and solve in one step ---*- C++ -*-===//
//
// On the GPU a solve with a small SPD matrix runs fastest as one kernel that
// factors A and solves with both triangles, A and B read once and X written once
// (runtime/cuda/SmallBatched.h). fuseCholeskySolves finds, in a lowered program
// before its memory plan, three consecutive library steps
//
//   L = cholesky(A); Y = triangular_solve(L, B) {lower}; X = triangular_solve(L, Y) {lower,
//   transpose_a}
//
// whose L and Y nothing else reads, and makes them one CholeskySolve step (A, B) -> X.
// Where A = scale G + shift I comes from a fused kernel that only this solve reads,
// over a Gram matrix G = X X' (or X'X) that a library step computes for that kernel
// alone, the step forms A from X itself and absorbs those two steps too. Legality:
// the values absorbed are read by nothing else (the program's steps and the graph's
// outputs counted); the target decides whether its kernel takes the matrices' size
// and right-hand sides (`fits`). The memory planner then gives X a buffer of its
// own: library-like steps never write over their inputs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/Program.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstddef>
#include <cstdint>

namespace graphc::passes {

/// True when the target's fused kernel takes matrices `a` with `cols` right-hand
/// sides of `elementSize`-byte elements.
using FitsCholeskySolve =
    llvm::function_ref<bool(const SpdMatrices& a, int64_t cols, size_t elementSize)>;

/// Fuses the Cholesky solves of `p` (unplanned) that `fits` takes, as above; returns
/// how many steps it made.
int fuseCholeskySolves(Program& p, FitsCholeskySolve fits);

} // namespace graphc::passes
