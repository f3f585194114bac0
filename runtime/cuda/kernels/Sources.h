//===- runtime/cuda/kernels/Sources.h - The library modules' CUDA C++ -*- C++ -*-===//
//
// The hand-written kernels live in the .cu files of this folder. The build embeds
// them (graphc_embed_cuda, runtime/cuda/kernels/Embed.cpp), one source per module,
// which runtime/cuda/CMakeLists.txt lists, and compiles each module with NVRTC for
// the prebuilt table (runtime/cuda/PrebuiltModules.h), so a kernel that does not
// compile fails the build.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace graphc::cuda::kernels {

/// SmallBatched's module (runtime/cuda/SmallBatched.h).
extern const char* const kSmallBatched;
/// ClusterQr's module (runtime/cuda/ClusterQr.h).
extern const char* const kClusterQr;
/// HelperKernels' module (runtime/cuda/HelperKernels.h).
extern const char* const kHelpers;

} // namespace graphc::cuda::kernels
