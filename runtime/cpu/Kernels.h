//===- runtime/cpu/Kernels.h - CPU kernels, by op family --------*- C++ -*-===//
//
// Internal to the cpu backend. A compiled graph is a list of Steps, one per live
// node, copied out of the ir::Graph. Each op family has one entry point that runs
// a Step on contiguous operand Arrays and returns new result Arrays:
//   Elementwise.cpp  sources (constant, full, iota, eye) and elementwise ops
//   ShapeOps.cpp     broadcast_to, reshape, transpose, slice, concat, diag, ...
//   Reduce.cpp       sum, mean, max, min, prod, argmax, argmin
//   Linalg.cpp       matmul, syrk, solve, cholesky, ... through BLAS/LAPACK
// The assume_* ops need no kernel: CpuBackend.cpp passes their operand through.
// Kernels never write into their operands: arrays are immutable once made, so a
// result may share an operand's memory (a reshape does).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Attr.h"
#include "ir/Graph.h"
#include "ir/Op.h"
#include "ir/Scalar.h"
#include "ir/Types.h"
#include "runtime/core/Array.h"
#include "runtime/core/Backend.h"
#include "runtime/core/Collective.h"
#include "runtime/core/ItemFailures.h"
#include "runtime/cpu/ThreadPool.h"
#include "support/Error.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <type_traits>

namespace graphc::cpu {

/// The results of one step.
using Arrays = llvm::SmallVector<Array, 1>;

/// One node of a compiled graph.
struct Step {
  ir::Op op;
  ir::Attrs attrs;
  llvm::SmallVector<ir::TensorType, 1> types;
  /// (step index, result index) of each operand.
  llvm::SmallVector<std::pair<unsigned, unsigned>, 2> operands;
  /// The node's name and source location, for error messages.
  std::string name;
  SourceLoc loc;
  /// The rank the step's program runs as, whose all_reduce meets the other ranks;
  /// null for a program of one rank.
  const RankOf* rank = nullptr;
  /// Results nothing reads, bit i for result i (passes::Step::unread): left
  /// unwritten where the op can skip them (qr's Q: no orgqr).
  unsigned unread = 0;

  /// The step running `n` (operands left empty).
  static Step of(const ir::Node& n);

  const ir::TensorType& type(unsigned i = 0) const { return types[i]; }
  /// "op (%name)", or "op" for a node without a name.
  std::string who() const;
  /// Throws graphc::Error "op (%name): message" at the node's location; a
  /// graphc::FallbackError for a step marked {fallback}.
  [[noreturn]] void fail(const std::string& message) const;
};

/// Thrown by a `cholesky {fallback}` step over a batch that failed on some items
/// only: the FallbackError naming them, and the step's result, whose failed items
/// hold the identity, so that the run can go on and finish the other items.
class ItemsFailed : public ItemFallbackError {
public:
  ItemsFailed(ItemFallbackError e, Array result)
      : ItemFallbackError(std::move(e)), result_(std::move(result)) {}
  const Array& result() const { return result_; }

private:
  Array result_;
};

/// The failures a run goes on after: ItemsFailed of `cholesky {fallback}` steps,
/// merged into one ItemFallbackError. A run calls step() for each node and
/// throwIfFailed() once its outputs are written.
class RunFailures {
public:
  /// runNode(s, operands, into), or the result an ItemsFailed it throws carries
  /// (the failure noted). Any other error after a noted failure is that failure for
  /// the whole run: it may come from the failed items' values.
  Arrays step(const Step& s, llvm::ArrayRef<Array> operands, const Array& into = Array());
  /// In a handler of a step's error: throws the noted failure for the whole run,
  /// or, when there is none, rethrows the error.
  [[noreturn]] void rethrow() const;
  /// Throws the noted failure, if any.
  void throwIfFailed() const;

private:
  std::optional<ItemFallbackError> failed_;
};

/// Copies the host arrays `results` into the dense host arrays `outputs`, one to
/// one (an output that is the result itself stays).
void copyResults(llvm::ArrayRef<Array> results, llvm::ArrayRef<Array> outputs);

/// Runs any non-parameter node by its op family. An array it cannot allocate is an
/// AllocationError naming the node, at its position. `into`, when valid, is a dense
/// array of the type of the node's first result that overlaps no operand: the
/// linear-algebra kernels write that result into it (and return it) instead of
/// into an array of their own; the other families ignore it.
Arrays runNode(const Step& s, llvm::ArrayRef<Array> operands, const Array& into = Array());
/// True when `rank` is one of several ranks that are threads of this process: a run
/// of its program then holds a SingleThreadedBlas, since OpenBLAS's threads, called
/// from each rank at once, spin against each other (an EnKF update of d = 16384,
/// N = 128 as two ranks took 129 ms with them, 19 without, on 2 cores).
bool ranksShareThisProcess(const std::optional<RankOf>& rank);

/// Compiles `g` to its lowered program (the "cpu" backend's executables), as rank
/// `rank` of a sharded run when given.
std::unique_ptr<Executable> compileProgram(const ir::Graph& g,
                                           std::optional<RankOf> rank = std::nullopt);

Arrays runSource(const Step& s);
Arrays runElementwise(const Step& s, llvm::ArrayRef<Array> operands);
/// The elementwise op of `s` on `n` dense elements of each operand (of element type
/// `operandType`; select's are its second and third) into `out`.
void applyElementwise(const Step& s, DType operandType, llvm::ArrayRef<const void*> operands,
                      void* out, int64_t n);
Arrays runShapeOp(const Step& s, llvm::ArrayRef<Array> operands);
Arrays runReduce(const Step& s, llvm::ArrayRef<Array> operands);
/// `into` as runNode's: matmul, syrk, solve, cholesky, triangular_solve and inverse
/// write their result into it.
Arrays runLinalg(const Step& s, llvm::ArrayRef<Array> operands, const Array& into = Array());

/// max, min, mean, argmax and argmin over zero elements: the error of reduction `s`.
[[noreturn]] void failEmptyReduction(const Step& s, const ir::TensorType& input);

/// For max, min, argmax and argmin: does `a` replace the running extreme `b`? NaN
/// wins, as in NumPy; on ties the first element stays.
template <typename T> bool reductionPrefers(ir::Op op, T a, T b) {
  if (b != b)
    return false;
  if (a != a)
    return true;
  return (op == ir::Op::Max || op == ir::Op::Argmax) ? a > b : a < b;
}

using ir::scalar::fromDouble;

/// visitDType restricted to numeric dtypes; bool is an internal error (the typing
/// rules exclude it before a kernel runs).
template <typename F> decltype(auto) visitNumeric(const Step& s, DType dtype, F&& f) {
  if (dtype == DType::Bool)
    s.fail("internal error: bool operand reached a numeric kernel");
  return visitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>)
      return f(TypeTag<int32_t>{}); // unreachable
    else
      return f(tag);
  });
}

/// Integer arithmetic wraps around (two's complement) instead of overflowing.
using ir::scalar::wrapAdd;
using ir::scalar::wrapMul;
using ir::scalar::wrapSub;

} // namespace graphc::cpu
