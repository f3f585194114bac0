//===- codegen/LlvmGen.h - The CPU kernel generator's state -----*- C++ -*-===//
//
// Internal to codegen: the generator of codegen/Llvm.h, shared by Llvm.cpp (merged
// spaces, loop nests, the functions of a kernel and its module) and
// LlvmReduction.cpp (a reduction's accumulation of one point, the vectorizable
// rows of max and min, the finish of a segment, var's means).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Llvm.h"
#include "codegen/LlvmOps.h"

#include "llvm/IR/Module.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace graphc::codegen::cpugen {

using ir::DType;
using ir::Op;
using Values = std::vector<llvm::Value*>;

/// A space with its unit axes dropped and neighbouring axes merged where every
/// index map allows (rank >= 1: a point space is one axis of extent 1).
struct Merged {
  ir::Shape extents;
  std::vector<ir::Shape> strides; ///< per map, per merged axis
};

inline bool isExtreme(Op op) {
  return op == Op::Max || op == Op::Min || op == Op::Argmax || op == Op::Argmin;
}

/// The body of one function: what it evaluates and where the values go.
struct Sweep {
  codegen::Space space;
  std::vector<bool> needed;
  int stage = 0; ///< accumulate, deviations, means, finish: the stage
  enum Kind { Outputs, Accumulate, Deviations, Means, Finish } kind = Outputs;
};

class Gen {
public:
  Gen(const Kernel& k, llvm::StringRef name)
      : k_(k), name_(name.str()), m_(std::make_unique<llvm::Module>(name_, ctx_)), b_(ctx_) {
    slots_.inputs = k.inputs.size();
    slots_.outputs = k.outputs.size();
    slots_.insts = k.insts.size();
  }

  CpuKernel emit();

private:
  // Index maps of a sweep: 0 dense, 1 segment, 2 position, then one per instruction.
  enum { kDense, kSegment, kPosition, kFirstInst };

  CpuLoop function(const std::string& suffix, const Sweep& s);
  /// maps_, merged_ and the strips of sweep `s`.
  void layout(const Sweep& s);
  /// True when sweep `s` accumulates over a reduced outer axis (partial sums).
  bool outerReduced(const Sweep& s);
  /// True when the accumulate sweep `acc` can finish each strip's segments as soon
  /// as they are complete, by calling sweep `finish`'s function on them: a stripped
  /// column reduction whose only kept axis is the innermost, the finish's space
  /// one axis of every segment, no partial sums, no positions or var. The strip's
  /// accumulators then live in a buffer of the function, never in the table's
  /// slots: the values are read in the L1 cache, and no accumulator goes to memory.
  bool finishesInline(const Sweep& acc, const Sweep& finish);
  /// Starts strip `strip` of an inline-finishing sweep: its buffers, set to the
  /// accumulators' start, stand for the value slots.
  void beginStrip(const Sweep& s, llvm::Value* strip);
  /// Finishes the strip's segments (a call of the finish function).
  void endStrip();
  void body(const Sweep& s, const Merged& ms, const Values& idx);
  llvm::Value* offset(int map, const Values& idx);
  llvm::Value* pointer(int slot, llvm::Type* element);
  llvm::Value* load(llvm::Type* t, llvm::Value* ptr, llvm::Value* offset);
  void store(llvm::Value* v, llvm::Value* ptr, llvm::Value* offset);
  llvm::Value* loadTyped(DType t, llvm::Value* ptr, llvm::Value* offset);
  void storeTyped(DType t, llvm::Value* v, llvm::Value* ptr, llvm::Value* offset);
  llvm::Value* value(int i, const Sweep& s, const Values& idx);
  llvm::Value* compute(int i, const Sweep& s, const Values& idx);
  llvm::Value* source(int i, llvm::Value* flat);
  /// for (i = from; i < to; ++i) carrying `init`; body returns the next values.
  Values loop(llvm::Value* from, llvm::Value* to, const Values& init, bool parallel,
              const std::function<Values(llvm::Value*, const Values&)>& body);
  void nest(const Sweep& s, const Merged& ms, size_t level, Values idx, int64_t rows);
  /// True when level `level` of `ms` is an innermost reduced row of at most 8
  /// points under a kept axis: nest unrolls it, and the loop over the kept axis
  /// is the one that vectorizes (max over rows of 4 points: a lane per row).
  bool unrolledRow(const Sweep& s, const Merged& ms, size_t level, bool hasErrors) const;
  /// The reductions a sweep accumulates.
  std::vector<int> reductions(const Sweep& s) const;
  llvm::Value* accumulate(int r, const Values& acc, llvm::Value* x, llvm::Value* pos,
                          llvm::Value* mean, Values& out);
  /// The innermost (reduced) loop of a row with max, min, argmax or argmin in
  /// vectorizable form; returns the accumulators as nest's register loop does.
  Values extremeRow(const Sweep& s, const Values& idx, llvm::Value* from, llvm::Value* to,
                    const std::vector<int>& rs, const Values& init);
  bool vectorExtreme(int r) const;
  llvm::Value* finishReduction(int r, const Values& idx);
  void means(const Sweep& s, const Values& idx);
  void fail(int inst, llvm::Value* cond);
  DType accumulatorType(int r) const { return accumulators_[r]->value; }

  const Kernel& k_;
  std::string name_;
  llvm::LLVMContext ctx_;
  std::unique_ptr<llvm::Module> m_;
  llvm::IRBuilder<> b_;
  CpuSlots slots_;
  std::vector<std::optional<CpuAccumulator>> accumulators_;
  ir::Shape segmentStrides_, positionStrides_;

  // Per function.
  llvm::Function* f_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;
  llvm::Value *table_ = nullptr, *begin_ = nullptr, *end_ = nullptr, *parts_ = nullptr;
  std::map<std::pair<int, llvm::Type*>, llvm::Value*> pointers_;
  std::vector<ir::Shape> maps_;
  Merged merged_;
  llvm::MDNode* accessGroup_ = nullptr; ///< of the innermost loop being emitted
  Values vals_;
  bool outerReduced_ = false;
  /// The strip width where merged_ is stripped() (0: not), and the extent of the
  /// axis cut into strips.
  int64_t strip_ = 0, stripped_ = 0;
  /// An accumulate function that finishes its strips itself (finishesInline): the
  /// stage's finish function, the table it is called with, the current strip's
  /// first segment and width, and the slots the strip's buffers stand for.
  bool inlineFinish_ = false;
  llvm::Function* finish_ = nullptr;
  llvm::Value *localTable_ = nullptr, *stripBase_ = nullptr, *stripWidth_ = nullptr;
  std::map<int, llvm::Value*> overrides_;
};

} // namespace graphc::codegen::cpugen
