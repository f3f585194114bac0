//===- runtime/cuda/TinyLuKernels.h - Solves of tiny general matrices -*- C++ -*-===//
//
// The CUDA C++ of SmallBatched::luSolve()'s kernel, tinyLuSolve<T, N>: A X = B
// for a batch of general N x N matrices, N <= kTinyLuMaxN, a thread per
// right-hand side column factoring its matrix in registers. SmallBatched
// compiles it in its module.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace graphc::cuda {

/// The largest n that tinyLuSolve is instantiated for: its registers hold the
/// whole matrix (n^2 + n values), so larger n spill.
constexpr int kTinyLuMaxN = 8;

/// The kernel's source, to append to SmallBatched's module source.
const char* tinyLuKernelsSource();

} // namespace graphc::cuda
