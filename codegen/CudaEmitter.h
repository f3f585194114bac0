//===- codegen/CudaEmitter.h - The CUDA emitter's internals -----*- C++ -*-===//
//
// What codegen/Cuda.cpp (the emitter: instructions, loads, signatures),
// codegen/CudaElementwise.cpp (kernels without a reduction), codegen/CudaHelpers.cpp
// (the device helpers' text), codegen/CudaReductionPlan.cpp (a reduction kernel's
// launch, passes and rows) and codegen/CudaReduction.cpp (its CUDA C++) share. Not
// part of the codegen interface (codegen/Cuda.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Cuda.h"

#include <fmt/format.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace graphc::codegen::detail {

/// The most points of a segment a lane keeps in registers (row caching, in
/// Emitter::reduction).
constexpr int64_t kCachedPointsPerLane = 16;
/// The most 4-byte registers of cached points a lane holds where its points go by
/// 16-byte vectors and its thread has registers to spare (RowPlan): 32 f32 points.
/// On an H200, softmax over rows of 32768 f32 so took 0.158 ms, against 0.241 from
/// shared memory (bench/results/2026-12-03-h200-f703fb3-rows.jsonl).
constexpr int64_t kCachedRegisters = 32;
/// The points a lane pushes at once to an online sum (gc_online_push) where they
/// are not in its registers: as many loads in flight.
constexpr int64_t kOnlineGroup = 8;
/// The most shared memory one reduction of a block-per-segment kernel takes for
/// combining its warps: w<N>[BS / 32] of at most 32 bytes (gc_moments), BS <= 1024.
constexpr int64_t kSharedPerReduction = 32 * 32;
/// Row-cached kernels moving more bytes than this (about an H100's or H200's L2)
/// are bandwidth-bound: they move their rows and domain outputs 16 bytes at a
/// time where aligned. Their loads and stores are plain: with evict-first hints
/// (__ldcs, __stcs) W4's layernorm took 66.4 or 69.8 us on an H200 by what earlier
/// work had left in the L2, plain 66.8 in every state (CHANGELOG.md,
/// 8dd9e49).
constexpr int64_t kWideBytes = int64_t{64} << 20;
/// Elementwise kernels reading a value transposed (a load contiguous along an
/// outer axis r of the domain, strided along its last axis c) go by tiles of
/// kTile x kTile points of (r, c): a block reads such a load's tile along r into
/// shared memory, then its threads take the points along c from there, so both the
/// reads and the writes are coalesced. Both axes must span at least kTileMinExtent
/// points; shorter axes are read directly (a warp then spans few rows anyway).
constexpr int64_t kTile = 32, kTileMinExtent = 16;
/// The most loads one tiled kernel stages in shared memory (32 x 33 elements each,
/// 8.4 KB in f64); further transposed loads read directly.
constexpr size_t kMostStagedLoads = 4;

using ir::DType;
using ir::Op;

/// Element types, spelled as in the IR (typedefs at the top of every source).
const char* ctype(DType t);
/// The unsigned type integer arithmetic of `t` wraps in.
const char* utype(DType t);
/// The name of instruction i's value: vN.
std::string val(int i);
/// `x + y`, leaving out zeros.
std::string plus(const std::string& x, const std::string& y);
/// `sum_k (var / inner_k % extents[k]) * strides[k]` for a flat index `var` over
/// `extents` (C order), simplified; "0" when no axis contributes.
std::string affine(llvm::StringRef var, llvm::ArrayRef<int64_t> extents,
                   llvm::ArrayRef<int64_t> strides);
/// The elements of `v` at `axes`, or at the other axes when `complement`.
ir::Shape pick(llvm::ArrayRef<int64_t> v, llvm::ArrayRef<int64_t> axes, bool complement);
/// Blocks for `items` work units of `perBlock` each, at most 2^20 (the loops
/// stride over the rest).
unsigned blocksFor(int64_t items, int64_t perBlock);

/// Device helpers a kernel may need; each is printed once, in this order.
enum Helper : unsigned {
  kVec = 1,
  kBest = 2,
  kIntDiv = 4,
  kIntRem = 8,
  kIntPow = 16,
  kMoments = 32,
  kExtreme = 64,
  kOnline = 128,
  kCopyAsync = 256,
};
/// The typedefs every kernel's source starts with (CudaHelpers.cpp).
const char* typedefsText();
/// The CUDA C++ of helper `h`, one of the flags (CudaHelpers.cpp).
const char* helperText(Helper h);

/// Lines of code at an indentation depth.
struct Code {
  std::string text;
  int depth = 0;

  template <typename... Args> void line(fmt::format_string<Args...> f, Args&&... args) {
    text.append(2 * depth, ' ');
    text += fmt::format(f, std::forward<Args>(args)...);
    text += '\n';
  }
  void open(const std::string& head) {
    line("{} {{", head);
    ++depth;
  }
  void close() {
    --depth;
    line("}}");
  }
};

/// The running state of one reduction in a lane.
struct Accumulator {
  std::string type, init;
  /// Extreme: a float max/min as a plain value (no position: on an H200 the max
  /// over the rows of f32[8192,8192] took 0.178 ms tracking positions, 2.5 times
  /// its sum's); Best: with the position, for argmax/argmin and integers.
  enum { Add, Multiply, Best, Moments, Extreme } how = Add;
  bool max = false; ///< Best, Extreme: max/argmax rather than min/argmin

  /// The state combining states `x` and `y` (centered moments), x first.
  std::string combine(const std::string& x, const std::string& y) const {
    if (how == Best)
      return fmt::format("gc_pick<{}>({}, {})", max ? "true" : "false", x, y);
    if (how == Moments)
      return fmt::format("gc_merge({}, {})", x, y);
    if (how == Extreme)
      return fmt::format("gc_extreme<{}>({}, {})", max ? "true" : "false", x, y);
    return fmt::format("{} {} {}", x, how == Add ? "+" : "*", y);
  }
  /// The state `x` with item `y` (at point j, after x's points) added.
  std::string push(const std::string& x, const std::string& y) const {
    if (how == Best)
      return fmt::format("gc_push<{0}>({1}, (decltype({1}.v)){2}, j)", max ? "true" : "false", x,
                         y);
    if (how == Moments)
      return fmt::format("gc_push({}, (f64){})", x, y);
    return combine(x, fmt::format("({}){}", type, y));
  }
};

/// Prints one Kernel as CUDA C++ (emitCuda): the loop form, the instructions, the
/// entry points.
class Emitter {
public:
  Emitter(const Kernel& k, const CudaTarget& target)
      : k_(k), online_(k.insts.size(), -1), target_(target) {
    int64_t most = ir::numElements(k.domain);
    for (const ir::Value& v : k.inputs)
      most = std::max(most, v.type().numel());
    wide_ = most > (int64_t{1} << 30);
    for (const Inst& inst : k.insts)
      if (inst.kind == Inst::Kind::Compute && !ir::isFloat(k.insts[inst.args[0]].dtype))
        error_ = error_ || inst.node->op() == Op::Div || inst.node->op() == Op::Remainder ||
                 inst.node->op() == Op::Pow;
  }

  CudaKernel emit(llvm::StringRef name);

private:
  /// How a body reads load instruction i, or the flat index of instruction i (a load
  /// or a Source of an index): an expression.
  using LoadFn = std::function<std::string(int)>;

  /// The expression of Compute instruction i; the temporaries its formula names
  /// (ir/Formulas.h) go into `c` first.
  std::string compute(Code& c, int i);
  /// ir/Formulas.h's primitives as CUDA C++ expressions (Cuda.cpp).
  class Primitives;
  /// Lines defining `vi` for Source instruction i; `index` gives its flat index.
  void source(Code& c, int i, const LoadFn& index);
  /// The instructions of `space` that `needed` marks; `load` reads loads, `index`
  /// gives the flat index of index-reading sources.
  void body(Code& c, codegen::Space space, const std::vector<bool>& needed, const LoadFn& load,
            const LoadFn& index);
  /// A parameter of the kernel: "const float* __restrict__ in0".
  struct Param {
    std::string type, name;
    bool restrict;
    std::string str() const;
  };
  std::vector<Param> parameters() const;
  /// The signature of the body every entry point calls.
  std::string signature(const CudaKernel& ck) const;
  /// The kernels around the body: `name` takes one run's buffers as parameters,
  /// runsName() a table of them (see CudaKernel::name).
  std::string entryPoints(const CudaKernel& ck) const;
  void elementwise(Code& c, CudaKernel& ck);
  /// The axes and loads of the tiled elementwise form (Cuda.cpp).
  struct Tiles;
  /// The tiles for the loads `needed` marks, or none (Tiles::staged empty).
  Tiles tiles(const std::vector<bool>& needed) const;
  void tiledElementwise(Code& c, CudaKernel& ck, const std::vector<bool>& needed, const Tiles& t);
  // Reduction kernels (CudaReductionPlan.h, CudaReduction.cpp, CudaSegment.cpp).
  struct Passes;
  struct RowPlan;
  class Segment;
  /// The loop over a reduction kernel's segments (CudaSegment.cpp): its rows loaded
  /// (cached), a pass per stage, the domain outputs, the reduced outputs. With
  /// `vectors`, the wide rows go by RowPlan::width points (the buffers must be
  /// aligned).
  void segmentLoop(Code& c, const CudaKernel& ck, const Passes& ps, const RowPlan& rows,
                   bool vectors);
  RowPlan planRows(const CudaKernel& ck, const Passes& ps, bool multiPass) const;
  /// The launch form (into `ck`), the passes and the row plan of a reduction kernel.
  std::pair<Passes, RowPlan> planReduction(CudaKernel& ck) const;
  /// By input: read at every point in the domain's order (rows a kernel may cache).
  std::vector<bool> rowLoads() const;
  /// The points of the vectors the `cached` rows and the domain outputs would go by
  /// (RowPlan::width): 1 where they may not.
  int64_t vectorWidth(const std::vector<bool>& cached) const;
  void reduction(Code& c, CudaKernel& ck);
  /// `even`: every lane holds as many points (var's moments then merge in equal
  /// halves, with no division).
  void combineLanes(Code& c, CudaKernel::Launch launch, bool even, llvm::ArrayRef<int> reduces);
  std::string reducedValue(int r) const;
  Accumulator accumulator(int reduce);
  /// Pairs the online sums with their maxes (online_), each sum moved to its max's
  /// stage; false where there are none.
  bool pairOnlineSums();
  /// True for the max of an online pair (pushed and combined with its sum).
  bool isOnlineMax(int r) const { return online_[r] >= 0 && k_.insts[r].node->op() == Op::Max; }
  bool isIdentity(const Inst& load) const {
    return load.strides == denseStrides(k_.shape(load.space));
  }
  /// True when the loop count can be a parameter: no instruction that `needed`
  /// marks reads a point's coordinates. Then the domain's leading extent enters the
  /// source nowhere else (affine() gives the outermost axis no modulo, and the
  /// segments' offsets are affine in s the same way), and one source serves every
  /// leading extent: a chain or a row broadcast of any length, a row reduction over
  /// any number of rows.
  bool sizeIsAParameter(const std::vector<bool>& needed) const {
    for (size_t i = 0; i < k_.insts.size(); ++i)
      if (needed[i] && readsIndex(k_.insts[i]))
        return false;
    return true;
  }
  /// True for a Source instruction whose value depends on the point.
  static bool readsIndex(const Inst& inst) {
    return inst.kind == Inst::Kind::Source && SourceIndex::of(*inst.node).readsIndex();
  }
  /// `in<input>[index(i)]` for load i.
  LoadFn loadAt(const LoadFn& index) const {
    return [this, index](int i) { return fmt::format("in{}[{}]", k_.insts[i].input, index(i)); };
  }

  /// The kernel, its online sums moved to their max's stage (pairOnlineSums).
  Kernel k_;
  /// By instruction: a max and a sum of the exponentials of the max's operand minus
  /// the max name each other, -1 elsewhere. The pair takes one pass (the online
  /// softmax of Milakov and Gimelshein, 2018): the sum is kept against the running
  /// max and rescaled as that grows.
  std::vector<int> online_;
  CudaTarget target_;
  bool wide_ = false; ///< 64-bit indices
  /// var in two passes over the cached rows: the mean, then the squared deviations
  /// from it (no moments to merge; Emitter::reduction).
  bool twoPassVar_ = false;
  unsigned helpers_ = 0;
  bool error_ = false; ///< some instruction may store an error code
  /// The last parameter is the count of the kernel's loop (N points, or S segments
  /// of a reduction): set when no instruction reads a point's coordinates, so that
  /// the source depends on the inner extents only (see sizeIsAParameter).
  bool sizeParameter_ = false;
};

} // namespace graphc::codegen::detail
