//===- runtime/cuda/SpdSolveKernels.h - Fused small SPD solve kernels -*- C++ -*-===//
//
// The CUDA C++ of SmallBatched::choleskySolve()'s kernels, warpCholeskySolve
// (n <= 32) and blockCholeskySolve (n <= 128), which SmallBatched compiles in its
// module. The host mirrors their shared-memory layouts in SmallBatched.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace graphc::cuda {

/// The kernels' source, to append to SmallBatched's module source.
const char* spdSolveKernelsSource();

} // namespace graphc::cuda
