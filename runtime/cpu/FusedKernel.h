//===- runtime/cpu/FusedKernel.h - Running a kernel on the CPU --*- C++ -*-===//
//
// Internal to the cpu backend. Interprets a codegen::Kernel over blocks of points:
// each instruction runs as one typed loop over a block (a few thousand elements),
// so a group's intermediate values stay in the cache and its inputs and outputs
// cross memory once. A kernel with reductions walks the domain a chunk of segments
// at a time: for each stage, reduce the chunk and evaluate that stage's
// reduced-space instructions; then write the chunk's domain outputs while its data
// is still in the cache.
//
// By default a FusedKernel runs its kernel compiled to machine code
// (runtime/cpu/CompiledKernel.h); the interpreter is the reference the compiled
// kernels are tested against, and the fallback where LLVM cannot compile for the
// machine or for a kernel (one of more than 2000 instructions), and all there is in
// a build without the JIT (CMake's GRAPHC_CPU_JIT=OFF). GRAPHC_CPU_KERNELS=interpret or
// =compile forces either (compile: a JIT that cannot start is an error).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Kernel.h"
#include "runtime/cpu/Kernels.h"

#include <memory>
#include <vector>

namespace graphc::cpu {

class CompiledKernel;

/// Whether this build compiles fused kernels (CMake's GRAPHC_CPU_JIT, ON by
/// default); OFF, every kernel is interpreted and the binaries carry no JIT.
bool hasCompiledKernels();

/// How fused kernels run.
enum class KernelMode : uint8_t {
  Default,   ///< compiled, or interpreted (saying so once) where the JIT cannot start
  Compile,   ///< compiled; a JIT that cannot start is an error
  Interpret, ///< interpreted
};

/// The mode $GRAPHC_CPU_KERNELS selects: "compile", "interpret", else Default. Any
/// other value is an error that names it.
KernelMode kernelModeFromEnvironment();

/// A kernel ready to run on the CPU.
class FusedKernel {
public:
  explicit FusedKernel(codegen::Kernel kernel, KernelMode mode = kernelModeFromEnvironment());

  const codegen::Kernel& kernel() const { return k_; }
  /// The compiled form the kernel runs as, or nullptr where it is interpreted.
  const CompiledKernel* compiled() const { return compiled_.get(); }

  /// Runs the kernel: `inputs` are dense arrays of the kernel's input types,
  /// `outputs` dense buffers of its outputs' types. An output may be the buffer of
  /// an input of the same size (in place). Large kernels split their blocks (or
  /// chunks of segments) over the shared pool (runtime/cpu/ThreadPool.h).
  /// Thread-safe: all scratch is per call.
  void run(llvm::ArrayRef<const void*> inputs, llvm::ArrayRef<void*> outputs) const;

private:
  struct Scratch;
  /// Evaluates the instructions of `space` in `needed` at the `n` points from
  /// `start` (flat, in that space), reading segment values from chunk `firstSegment`.
  void evaluate(Scratch& sc, codegen::Space space, const std::vector<bool>& needed, int64_t start,
                int64_t n, int64_t firstSegment) const;
  /// Adds the `n` domain points from `start` to the reductions of `stage`; with
  /// `deviations`, their squared deviations from the mean to its var reductions.
  void accumulate(Scratch& sc, int stage, int64_t start, int64_t n, int64_t firstSegment,
                  bool deviations) const;
  void finishReductions(Scratch& sc, int stage, int64_t segments) const;
  void writeOutputs(Scratch& sc, codegen::Space space, int64_t start, int64_t n) const;
  Scratch newScratch(llvm::ArrayRef<const void*> inputs, llvm::ArrayRef<void*> outputs,
                     int64_t chunk) const;
  /// Reduces segments [first, first + count) stage by stage and writes their outputs.
  void runChunk(Scratch& sc, int64_t first, int64_t count) const;
  /// Throws the interpreter's error for max, min, mean, ... over empty segments.
  void failIfEmpty() const;

  codegen::Kernel k_;
  std::vector<Step> steps_; ///< per instruction, for ops and errors
  /// Per stage (from 1): the domain instructions its reductions read, and the
  /// reduced-space instructions computed once its reductions are done.
  std::vector<std::vector<bool>> forStage_, reducedAtStage_;
  std::vector<bool> varAtStage_;       ///< per stage: a var reduction sweeps it twice
  std::vector<bool> forDomainOutputs_; ///< domain instructions the domain outputs read
  bool hasDomainOutputs_ = false;
  ir::Shape segmentStrides_, positionStrides_; ///< domain point -> segment, position in it
  std::shared_ptr<const CompiledKernel> compiled_;
};

} // namespace graphc::cpu
