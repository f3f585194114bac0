//===- codegen/Kernel.h - A fusion group as a loop body ---------*- C++ -*-===//
//
// A kernel group (passes/Fusion.h) lowered to the form every backend runs: a
// straight-line list of scalar instructions evaluated at each point of the group's
// iteration space. The CPU backend interprets it over blocks of points
// (runtime/cpu/FusedKernel.cpp); the CUDA code generator prints it as a kernel body.
//
// Spaces. Without a reduction a kernel has one space, the domain. With reductions
// it has two: the domain (the reductions' input shape), walked segment by segment,
// and the reduced space (the reductions' result shape), one point per segment.
// Every instruction lives in one space. Reductions come in stages: a reduction
// whose operand reads another's value at the segment (the variance after the mean)
// is one stage later, and a backend walks each segment once per stage.
//
// Index maps. broadcast_to and reshape generate no instruction: they become the
// affine index maps of the loads below them. At point p of its space a load reads
// element `sum_k p[k] * strides[k]` of its dense input. A reduced value used back in
// the domain (`x - mean`) is read at the current segment (a Segment instruction).
//
// Computed sources. A full, eye, iota or one-element constant among the nodes is
// not read from memory: a Source instruction computes it from the same index map a
// load would use (its flat index f = sum_k p[k] * strides[k]), whatever broadcasts,
// reshapes or batch axes lie between it and the point: an eye of shape [..., m, n]
// is 1 where f / n % m == f % n, an iota along axis a is f / inner_a % extent_a, a
// full is its value everywhere (see SourceIndex).
//
//   %s = sum(%x) {axes=[1], keepdims}      kernel: domain f32[8,4], reduced f32[8,1]
//   %d = sub(%x, broadcast_to(%s))           %0 = load in0 [4, 1]        (domain)
//                                            %1 = reduce sum %0          (reduced)
//                                            %2 = segment %1             (domain)
//                                            %3 = sub %0, %2             (domain)
//                                            out0 = %3                   (domain)
//
// buildKernel reports the groups it cannot express (a broadcast seen through a
// reshape that splits or merges axes, a reduced value read outside its segment);
// the backends run such a group node by node.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "passes/Fusion.h"

#include <string>
#include <variant>
#include <vector>

namespace graphc::codegen {

/// Where an instruction is evaluated.
enum class Space : uint8_t { Domain, Reduced };

/// One scalar instruction of a kernel.
struct Inst {
  enum class Kind : uint8_t {
    Load,    ///< element of input `input` at offset sum p[k] * strides[k]
    Compute, ///< elementwise `node`'s op applied to `args`
    Reduce,  ///< reduction `node` of domain value args[0] over the current segment
    Segment, ///< reduced value args[0] at the current segment, read in the domain
    Source,  ///< source `node` computed at flat index sum p[k] * strides[k] of it
  } kind;
  Space space = Space::Domain;
  ir::DType dtype = ir::DType::F64; ///< the result's element type
  const ir::Node* node = nullptr;   ///< Compute, Reduce, Source: the node
  std::vector<int> args{};          ///< earlier instructions
  int input = -1;                   ///< Load: position in Kernel::inputs
  ir::Shape strides{};              ///< Load, Source of an index: one per axis of the space
  /// The reduction stage the value waits for: 0 for values of the inputs alone; a
  /// Reduce is one stage after its operand; others take their operands' highest.
  int stage = 0;
};

/// How the value of a computed source follows its flat index f: `value` where
/// coord(f, a) == coord(f, b), else 0 (eye), or coord(f, a) (iota), or `value`
/// everywhere (full, a one-element constant), with coord(f, x) = f / x.inner % x.extent.
struct SourceIndex {
  enum Form : uint8_t { Uniform, Diagonal, Coordinate } form = Uniform;
  struct Axis {
    int64_t inner = 1, extent = 1;
  };
  Axis a, b;
  double value = 1; ///< Uniform, Diagonal: the value (the diagonal's 1)

  /// The form of source `n` (passes::computedSource(n) must hold).
  static SourceIndex of(const ir::Node& n);
  /// True when the value depends on the index.
  bool readsIndex() const { return form != Uniform; }
};

/// A value the kernel writes: element p of its space at flat position p.
struct KernelOutput {
  ir::Value value;
  int inst = -1;
  Space space = Space::Domain;
};

/// A fusion group lowered to instructions.
struct Kernel {
  ir::Shape domain;
  /// True when the kernel has a reduction stage (possibly over no axes).
  bool reduces = false;
  /// The reductions' result shape.
  ir::Shape reducedShape;
  /// The reduced axes of the domain, increasing.
  std::vector<int64_t> reduceAxes;
  std::vector<ir::Value> inputs;
  std::vector<Inst> insts;
  std::vector<KernelOutput> outputs;

  bool hasReduction() const { return reduces; }
  /// The number of reduction stages (layernorm's variance waits for its mean: 2).
  int stages() const;
  /// The stage of `inst` from its operands' among `insts`: their highest, one more
  /// for a Reduce.
  static int stageOf(const std::vector<Inst>& insts, const Inst& inst);
  /// The shape of a space.
  const ir::Shape& shape(Space s) const { return s == Space::Domain ? domain : reducedShape; }
  /// Elements per segment (1 without a reduction).
  int64_t segmentSize() const;
  /// Per domain axis, the stride of the segment index: domain point p lies in
  /// segment sum p[k] * segmentStrides()[k].
  ir::Shape segmentStrides() const;
  /// True when the reduced axes are the trailing ones: segment s is the contiguous
  /// domain range [s * segmentSize(), (s + 1) * segmentSize()).
  bool segmentsContiguous() const;
};

/// Lowers the kernel group of `nodes` (in topological order, as a lowered program's
/// kernel step holds them) with `outputs` (the values it writes), or says why not.
/// Sources among `nodes` become Source instructions; sources that are not are loads.
std::variant<Kernel, std::string> buildKernel(const std::vector<const ir::Node*>& nodes,
                                              const std::vector<ir::Value>& outputs);

/// Dense row-major strides of `shape`, in elements.
ir::Shape denseStrides(llvm::ArrayRef<int64_t> shape);

/// Marks instruction `inst` of `k` and what it reads in its own space in `needed`
/// (one flag per instruction). A Segment's operand lives in the reduced space,
/// computed in an earlier pass: the walk stops there.
void markNeeded(const Kernel& k, int inst, std::vector<bool>& needed);

/// The text of a kernel, one instruction a line (as in the example above).
std::string printKernel(const Kernel& k);

} // namespace graphc::codegen
