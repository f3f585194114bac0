//===- runtime/cpu/CompiledKernel.h - A kernel as machine code --*- C++ -*-===//
//
// Internal to the cpu backend. A codegen::Kernel compiled for the host
// (codegen/Llvm.h, runtime/cpu/HostJit.h) and the driver that runs its loop
// functions: stage by stage, accumulate (and for var: means, deviations), then
// finish over the reduced space; then the domain outputs; then the reduced outputs
// are copied from their values.
//
// Threads. Each loop's outer axis is split over the threads. Where the domain's
// outer axis is reduced (a sum of everything, a sum over the leading axis), the
// domain is cut into parts whose number depends on the sizes alone (at most 64, a
// part at least 2^17 points, parts x segments bounded), each with accumulators of
// its own, combined in part order by finish: results do not depend on the number
// of threads. Otherwise each segment is reduced by one call, in order, as the
// interpreter does.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Llvm.h"
#include "runtime/cpu/Kernels.h"

#include <functional>
#include <vector>

namespace graphc::cpu {

/// f(begin, end) over parts of [0, units) on the threads, given the work's points.
using ParallelFor = std::function<void(int64_t units, int64_t points,
                                       const std::function<void(int64_t, int64_t)>&)>;

/// A kernel compiled for the host.
class CompiledKernel {
public:
  /// Compiles `k` (or finds it in the caches). Throws graphc::Error when the JIT is
  /// not available or the kernel has no host form.
  explicit CompiledKernel(const codegen::Kernel& k);

  /// Runs the kernel as FusedKernel::run does; `steps` are the kernel's
  /// instructions' Steps (for errors), `parallel` spreads loops over threads.
  void run(const codegen::Kernel& k, const std::vector<Step>& steps,
           llvm::ArrayRef<const void*> inputs, llvm::ArrayRef<void*> outputs,
           const ParallelFor& parallel) const;

  /// The generated code (its LLVM IR before optimization).
  const codegen::CpuKernel& code() const { return code_; }
  /// The number of parts a reduction's domain is cut into.
  int64_t parts(const codegen::Kernel& k) const;

private:
  using Function = void (*)(void** table, int64_t begin, int64_t end, int64_t parts);
  struct Stage {
    Function accumulate = nullptr, means = nullptr, deviations = nullptr, finish = nullptr;
  };

  codegen::CpuKernel code_;
  std::vector<Stage> stages_;
  Function outputs_ = nullptr;
};

} // namespace graphc::cpu
