//===- runtime/cuda/Nvrtc.h - Compile CUDA C++ at run time ------*- C++ -*-===//
//
// graphc generates CUDA C++ for fused kernels and compiles it with NVRTC. The
// result is a code image (CUBIN for the device's own architecture, or PTX when
// NVRTC cannot target that architecture and the driver must JIT it) that
// runtime/cuda/KernelLibrary.h loads. NVRTC needs no driver, so compiling works on
// machines without a GPU when the target is given explicitly.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <map>
#include <string>
#include <vector>

namespace graphc::cuda {

/// How to compile one translation unit.
struct CompileOptions {
  /// Target compute capability, e.g. 90; 0 means "the current device's".
  int computeCapability = 0;
  /// Produce PTX even when a CUBIN could be produced.
  bool forcePtx = false;
  /// Names to resolve to their mangled forms, e.g. "saxpy<double>" (see
  /// CompiledModule::loweredNames). extern "C" kernels need none.
  std::vector<std::string> nameExpressions;
  /// Extra NVRTC flags, e.g. "-DBLOCK=256".
  std::vector<std::string> flags;
};

/// The output of one NVRTC compilation.
struct CompiledModule {
  std::string image;        ///< CUBIN bytes or NUL-terminated PTX text
  bool isCubin = false;     ///< which of the two `image` holds
  std::string architecture; ///< the --gpu-architecture used, e.g. "sm_90"
  std::string log;          ///< NVRTC's log (warnings), possibly empty
  /// Mangled name of each CompileOptions::nameExpressions entry.
  std::map<std::string, std::string> loweredNames;
};

/// Compiles `source` (a whole CUDA C++ translation unit; `name` labels it in errors).
/// Throws graphc::Error on failure; a compile error's message holds NVRTC's log
/// followed by the numbered source.
CompiledModule compileCuda(llvm::StringRef source, llvm::StringRef name,
                           const CompileOptions& options = {});

/// The architectures this NVRTC can emit CUBIN for, as compute capabilities
/// (75, 80, ...), ascending.
std::vector<int> nvrtcSupportedArchitectures();

} // namespace graphc::cuda
