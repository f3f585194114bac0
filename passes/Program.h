//===- passes/Program.h - The lowered program -------------------*- C++ -*-===//
//
// After fusion a graph becomes a Program: a list of steps in execution order, each
// a fused kernel (a fusion group: its member nodes, the values it reads and writes)
// or a library call (one Linalg node, named after its op for now: matmul, cholesky,
// triangular_solve, ...). Parameters are the caller's buffers; a kernel step holds
// the full, eye, iota and scalar constant sources its group reads among its nodes and
// computes them at each point (passes::computedSource); the other sources, and those
// a library call, a lone data-movement step or the caller reads, are constants
// materialized once. Every value a step writes lives in a buffer slot that the memory
// planner (passes/MemoryPlan.h) assigns.
//
// A backend walks `steps` in order; each step names its nodes (to generate or call),
// its inputs and outputs, and where each of them lives (storage()). The program
// prints in a text form of its own, one line per step:
//
//   step 3: fused[sub, mul, sum] (%yc, %w) -> %s : slot 2 (f64[3000,1], 24000 B)
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "passes/Fusion.h"

#include <cstdint>
#include <string>
#include <vector>

namespace graphc::passes {

/// Where a value lives while a program runs.
struct Storage {
  enum Kind : uint8_t {
    None,     ///< not planned yet
    Param,    ///< the caller's buffer of parameter `index`
    Constant, ///< constant `index`, materialized once
    Slot,     ///< buffer slot `index` of the memory plan
  } kind = None;
  int index = -1;
};

/// The SPD matrices A a CholeskySolve step factors: given as they are (its first
/// input), or formed from its first input X as scale X X' + shift I (Gram, X n x k)
/// or scale X'X + shift I (GramTransposed, X k x n), never stored.
struct SpdMatrices {
  enum Form : uint8_t { Matrix, Gram, GramTransposed };
  Form form = Matrix;
  int64_t n = 0; ///< A is n x n
  int64_t k = 0; ///< the Gram forms' inner dimension
  double scale = 1, shift = 0;
};

/// One step of a program.
struct Step {
  /// A fused kernel, a library call, or (passes/CholeskySolves.h, GPU only) a
  /// Cholesky factorization and the two triangular solves with its factor in one
  /// kernel: inputs A (or X, see `spd`) and B, output X = A^-1 B.
  enum class Kind { Kernel, Library, CholeskySolve } kind = Kind::Kernel;
  /// Members in topological order; a library call has one. A kernel step's members
  /// include the sources it computes (passes::computedSource).
  std::vector<const ir::Node*> nodes;
  /// The values the step reads that other steps, parameters or constants produce:
  /// a kernel's each once, a library call's operands in order.
  std::vector<ir::Value> inputs;
  /// The values the step writes: used by later steps or returned.
  std::vector<ir::Value> outputs;
  /// Per output: the position in `inputs` of the dead input whose buffer it
  /// overwrites, or -1. Set by the memory planner.
  std::vector<int> inPlaceOf;
  /// A library call's results that no step reads and the graph does not return,
  /// bit i for result i (its outputs are all its results): its routine may leave
  /// them unwritten, as qr leaves Q (no orgqr).
  unsigned unread = 0;
  /// The matrices a CholeskySolve step factors.
  SpdMatrices spd;

  /// "fused[sub, mul, sum]", "matmul {transpose_b}" or
  /// "cholesky_solve[cholesky, triangular_solve, triangular_solve]" (with the
  /// matrix it forms, as "{A = 0.0625 * X X' + 1 * I}").
  std::string name() const;
};

/// A buffer slot of the memory plan.
struct Slot {
  int64_t bytes = 0;
  /// The parameter whose donated buffer this slot is, or -1 for a planned buffer.
  int donatedParam = -1;
  /// The values it holds, in program order.
  std::vector<ir::Value> values;
};

/// Memory figures of a plan, in bytes.
struct MemoryStats {
  int64_t slotBytes = 0;         ///< the planned (not donated) slots together
  int64_t peakBytes = 0;         ///< the most planned bytes in use during one step
  int64_t intermediateBytes = 0; ///< every value steps write, each in its own buffer
  int64_t constantBytes = 0;     ///< the materialized constants
  /// The bytes the steps read and write, each step its inputs and outputs once:
  /// the memory traffic of the program when nothing stays in a cache between steps.
  int64_t trafficBytes = 0;
};

/// A lowered graph: constants, steps, and the memory plan once planMemory ran.
class Program {
public:
  /// Lowers `g` along `partition` (which must be partitionForFusion(g)).
  Program(const ir::Graph& g, const FusionPartition& partition);

  const ir::Graph& graph() const { return *graph_; }
  /// Non-parameter sources the steps read as inputs or the graph returns (not those
  /// only kernels compute), materialized once before the first step.
  const std::vector<const ir::Node*>& constants() const { return constants_; }
  std::vector<Step>& steps() { return steps_; }
  const std::vector<Step>& steps() const { return steps_; }
  std::vector<Slot>& slots() { return slots_; }
  const std::vector<Slot>& slots() const { return slots_; }
  MemoryStats& stats() { return stats_; }
  const MemoryStats& stats() const { return stats_; }
  /// Recounts stats().trafficBytes after the steps changed.
  void countTraffic();

  /// Where `v` lives.
  Storage storage(ir::Value v) const { return storage_[v.node->id()][v.index]; }
  void setStorage(ir::Value v, Storage s) { storage_[v.node->id()][v.index] = s; }

private:
  const ir::Graph* graph_;
  std::vector<const ir::Node*> constants_;
  std::vector<Step> steps_;
  std::vector<Slot> slots_;
  MemoryStats stats_;
  std::vector<std::vector<Storage>> storage_; // by node id, result index
};

/// The text form of `p`: parameters, constants, one line per step, the slots and
/// the memory figures.
std::string printProgram(const Program& p);

} // namespace graphc::passes
