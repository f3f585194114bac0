//===- runtime/cuda/TallGramKernels.h - X'X of tall, narrow matrices -*- C++ -*-===//
//
// The CUDA C++ of SmallBatched::tallGram()'s kernels: C = X'X for row-major X of
// many rows and at most kTallGramMaxN columns, where cuBLAS's syrk and gemm leave
// most of the GPU idle (one 16 x 16 result to reduce over a million rows). The rows
// are cut into runs, one block a run, each block summing its run's N x N partial in
// f64; a second kernel adds the partials in a fixed order. SmallBatched compiles
// them in its module.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace graphc::cuda {

/// The most columns tallGram takes.
constexpr int kTallGramMaxN = 32;

/// The kernels' source, to append to SmallBatched's module source.
const char* tallGramKernelsSource();

} // namespace graphc::cuda
