//===- codegen/Llvm.h - LLVM IR for a kernel on the host --------*- C++ -*-===//
//
// Prints a codegen::Kernel as an LLVM IR module of loop nests, which the cpu
// backend optimizes (the loop vectorizer takes the inner loops) and JIT-compiles
// for the host (runtime/cpu/HostJit.h, runtime/cpu/CompiledKernel.h). The module computes
// what the interpreter (runtime/cpu/FusedKernel.h) computes, with the op semantics
// of docs/ops.md; the op -> IR mapping is one switch (codegen/LlvmOps.cpp).
//
// Every function of the module has the signature
//   void f(i8** table, i64 begin, i64 end, i64 parts)
// and loops over a space (the domain or the reduced space) with its unit axes
// dropped and its neighbouring axes merged where every index map allows: the outer
// merged axis runs over [begin, end) (the runtime splits it over threads), inner
// axes over their whole extent. `table` holds the buffers (CpuSlots): inputs,
// outputs, per reduced-space instruction its values, and per reduction its
// accumulators (the running value, from -inf or +inf for float max and min; the
// position of argmax/argmin and of integer max/min, -1 before the first point;
// var's squared deviations and mean). A kernel of integer
// div, remainder or pow stores the failing instruction's number + 1 in the table's
// error word (i32), as codegen/Cuda.h's kernels do (cudaErrorMessage reads it).
//
// Functions, per reduction stage k (from 1): `acc<k>` adds the domain points to the
// stage's accumulators; for a stage with var, `means<k>` turns var's sums into
// means and `dev<k>` adds the squared deviations from them; `finish<k>` (over the
// reduced space) combines the accumulators of `parts` parts (parts apart by a whole
// copy of the reduced space, in order: the first part's points come first) and
// evaluates the stage's reduced-space instructions. `outputs` writes the domain
// outputs; the runtime copies the reduced outputs from their values last.
//
// Numerics as the interpreter's: floating-point sums, means and products
// accumulate in double (vectorized: the inner reductions are reassociated into
// several partial sums), integer ones wrap in their own type; var takes two passes;
// max/min/argmax/argmin prefer NaN, then the first extreme. No FMA contraction.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Kernel.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace graphc::codegen {

/// A loop function of a CpuKernel and the extent of the outer axis it splits.
struct CpuLoop {
  std::string function;   ///< "" when the kernel has no such loop
  int64_t extent = 0;     ///< of the merged outer axis: call with 0 <= begin <= end <= extent
  int64_t unitPoints = 0; ///< points per unit of that axis
  explicit operator bool() const { return !function.empty(); }
};

/// The functions of one reduction stage.
struct CpuStage {
  CpuLoop accumulate, means, deviations, finish;
  /// accumulate calls finish on each strip of segments it completes (a column
  /// reduction, see Llvm.cpp): the runtime calls neither finish nor gives the
  /// stage's reductions value slots.
  bool finishedByAccumulate = false;
};

/// The accumulators of one reduce instruction (see CpuSlots).
struct CpuAccumulator {
  ir::DType value = ir::DType::F64; ///< double for float sums, products and var
  bool position = false; ///< argmax, argmin, integer max and min: i64 positions (-1: none)
  bool var = false;      ///< var: double squares and means
  double init = 0;       ///< the running value's start (1 for prod)
};

/// The slots of a kernel's buffer table.
struct CpuSlots {
  enum Kind { Reduced, Value, Position, Squares, Mean };
  size_t inputs = 0, outputs = 0, insts = 0;
  int input(size_t i) const { return static_cast<int>(i); }
  int output(size_t o) const { return static_cast<int>(inputs + o); }
  int of(Kind kind, size_t inst) const {
    return static_cast<int>(inputs + outputs + 5 * inst + kind);
  }
  int error() const { return static_cast<int>(inputs + outputs + 5 * insts); }
  size_t size() const { return inputs + outputs + 5 * insts + 1; }
};

/// A kernel as an LLVM IR module.
struct CpuKernel {
  std::string name;
  std::string ir; ///< the module's text: deterministic (a cache key)
  std::vector<CpuStage> stages;
  CpuLoop outputs;
  /// The domain's outer axis is reduced: parts of it accumulate apart and finish<k>
  /// combines them. Otherwise each segment lies within one unit of the outer axis.
  bool partials = false;
  int64_t segments = 0;
  CpuSlots slots;
  std::vector<std::optional<CpuAccumulator>> accumulators; ///< per instruction
};

/// The LLVM IR module computing `k`, its functions named "<name>_...". Throws
/// graphc::Error for an op or type the host form does not have (an integer exp).
CpuKernel emitCpu(const Kernel& k, llvm::StringRef name);

} // namespace graphc::codegen
