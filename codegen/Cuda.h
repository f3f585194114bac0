//===- codegen/Cuda.h - CUDA C++ for a kernel -------------------*- C++ -*-===//
//
// Prints a codegen::Kernel as one CUDA C++ translation unit with one
// `extern "C" __global__` function, which runtime/cuda compiles with NVRTC. The
// kernel computes what the CPU interpreter (runtime/cpu/FusedKernel.h) computes,
// with the op semantics of docs/ops.md. The same Kernel always gives
// byte-identical source (a kernel-cache key). Inner extents are baked in as
// constants; the leading one is a parameter where it can be (the count of the
// kernel's loop: N points, or S segments of a reduction), so that one source
// serves every batch or row count of a shape.
//
// Parameters: `const T* __restrict__ in0, ...` (Kernel::inputs), `T* out0, ...`
// (Kernel::outputs), then `int* error` when CudaKernel::hasErrorWord, then the loop
// count (`idx N` or `idx S`) when CudaKernel::size >= 0. Outputs carry
// no __restrict__: an output may be the buffer of an input of the same size (in
// place). The kernel reads every element it writes before writing it and never
// reads it again, so the inputs' read-only loads stay valid.
//
// Launch forms:
//   Elementwise       a grid-stride loop over the domain; when every load is the
//                     identity map, 16-byte vector loads and stores (float4, double2)
//                     with a scalar loop for the tail or for unaligned buffers.
//                     A kernel reading a value transposed (a load contiguous along
//                     an outer axis, strided along the last) goes by 32 x 32 tiles
//                     instead: such loads are staged through shared memory, read
//                     along their contiguous axis; with as many tiles along both
//                     axes, mirrored tiles run in turn, so x + x' reads x once
//                     from memory (CudaEmitter.h, kTile).
//   BlockPerSegment   contiguous long segments: a block reduces one segment (warp
//   WarpPerSegment    shuffles, then shared memory), or a warp a shorter one; the
//                     reduced-space instructions run once per segment, and a last
//                     pass over the segment writes the domain outputs.
//   ThreadPerSegment  non-contiguous (or very short) segments: one thread loops over
//                     a segment; neighbouring threads read neighbouring segments.
// With several reduction stages (layernorm: the mean, then the variance) each form
// makes one pass over the segment per stage, before the pass that writes the domain
// outputs. A block or warp reading its segment in several passes loads it once: into
// its lanes' registers where a lane's share is a few points, else (a block per
// segment) into shared memory where CudaTarget allows the row; otherwise each pass
// reads it again.
// Every loop strides over its work, so any grid size is correct; the block size is
// a compile-time constant of the source and must be CudaKernel::blockSize.
//
// Numerics. Floating-point sums, means and products accumulate in double (as the
// CPU does), combined in a fixed tree: results are the same run to run. var keeps
// each lane's count and sums of deviations from its first point (no division per
// point), then merges lanes' centered moments pairwise (Chan, Golub and LeVeque;
// halves of equal count without a division): the CPU's two passes in double to
// about 1e-16 relative, so f32 results agree but for rare roundings. max, min,
// argmax and argmin carry (value, position) pairs, so NaN wins and ties keep the
// first position, exactly as the CPU. Integer arithmetic wraps (done in unsigned).
// The source is compiled without FMA contraction (runtime/cuda/KernelCache.h), so
// each op rounds as on the CPU; the math library functions (exp, tanh, ...) are
// CUDA's, within a few ulp of the CPU's. Integer division or remainder by zero and
// negative integer powers, errors on the CPU, give 0 and store the failing
// instruction's number + 1 into `*error` (the first one wins); cudaErrorMessage
// turns it into the CPU's message.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Kernel.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace graphc::codegen {

/// A generated CUDA kernel and how to launch it.
struct CudaKernel {
  /// How the work is spread over threads.
  enum class Launch : uint8_t {
    Elementwise,      ///< one thread per point (or per vector of points)
    BlockPerSegment,  ///< one block per reduction segment
    WarpPerSegment,   ///< one warp per reduction segment
    ThreadPerSegment, ///< one thread per reduction segment
  };
  /// The extern "C" kernel taking one run's buffers as parameters. Beside it,
  /// runsName() computes several runs in one launch: it takes a table with a row of
  /// parameter values (pointers) per run and runs row y in blocks with blockIdx.y = y.
  std::string name;
  std::string source; ///< a whole translation unit
  Launch launch = Launch::Elementwise;
  unsigned blockSize = 256; ///< threads per block: the source assumes exactly this
  unsigned gridSize = 1;    ///< blocks to launch (the loops cover any count)
  /// The kernel takes a trailing `int* error` parameter (integer div, remainder or
  /// pow); it must point at a device int that is 0 before the launch.
  bool hasErrorWord = false;
  /// >= 0: the kernel's last parameter is its loop count (an `idx`: the points of
  /// an elementwise kernel, the segments of a reduction), and this is the value for
  /// this kernel's shape. Kernels that read no point's coordinates (no iota or eye
  /// among their sources) have one source for every leading extent.
  int64_t size = -1;
  /// Bytes of dynamic shared memory per block (rows cached in shared memory); over
  /// 48 KB the kernel needs cudaFuncAttributeMaxDynamicSharedMemorySize.
  int64_t sharedBytes = 0;
};

/// What the device lets a kernel use.
struct CudaTarget {
  /// The most shared memory one block may use, static and dynamic
  /// (cudaDevAttrMaxSharedMemoryPerBlockOptin); 0: rows are never cached there.
  int64_t sharedBytes = 0;
  /// The device's multiprocessors; 0: unknown (every kernel then launches a block
  /// per segment or per share of its points).
  int64_t multiprocessors = 0;

  /// An H100's or H200's (compute capability 9.0): 227 KB of shared memory a block,
  /// 132 multiprocessors.
  static CudaTarget sm90() { return {232448, 132}; }
};

/// The name of `k`'s kernel that runs several runs in one launch: "<name>_runs".
std::string runsName(const CudaKernel& k);

/// The CUDA kernel named `name` that computes `k` on `target`. Deterministic: the
/// same Kernel, name and target give byte-identical source. Throws graphc::Error
/// for an op a kernel cannot contain.
CudaKernel emitCuda(const Kernel& k, llvm::StringRef name, const CudaTarget& target = {});

/// The CPU backend's message for error code `code` (> 0) stored by a kernel of `k`,
/// e.g. "div (%q): integer division by zero".
std::string cudaErrorMessage(const Kernel& k, int code);

/// The name of a launch form, e.g. "block-per-segment".
llvm::StringRef launchName(CudaKernel::Launch launch);

} // namespace graphc::codegen
