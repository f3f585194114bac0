//===- codegen/Llvm.cpp - LLVM IR for a kernel on the host ----------------===//
//
// Each function is a loop nest over a merged space (see codegen/Llvm.h) whose
// innermost loop evaluates the needed instructions at one point: offsets are
// sum idx[a] * stride[a] over the merged axes, which LLVM strength-reduces. Loops
// whose iterations are independent (writing outputs, or accumulating into one
// accumulator per point when the innermost axis is kept) carry
// llvm.loop.parallel_accesses, so the vectorizer needs no alias checks (an output
// may be written over an input of the same size: each point reads its element
// before writing it). When the innermost axis is reduced, the accumulators of the
// current segment live in registers across the inner loop, their floating-point
// adds marked reassociable: the vectorizer keeps several partial sums. The
// reductions' part of the generator is codegen/LlvmReduction.cpp.
//
//===----------------------------------------------------------------------===//
#include "codegen/LlvmGen.h"

#include "support/Error.h"

#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace graphc::codegen {
namespace cpugen {

using llvmir::irType;

namespace {

Merged merge(const ir::Shape& shape, const std::vector<ir::Shape>& maps) {
  Merged m;
  m.strides.resize(maps.size());
  for (size_t a = 0; a < shape.size(); ++a) {
    if (shape[a] == 1)
      continue;
    bool joins = !m.extents.empty();
    for (size_t i = 0; i < maps.size() && joins; ++i)
      joins = m.strides[i].back() == maps[i][a] * shape[a];
    if (joins) {
      m.extents.back() *= shape[a];
      for (size_t i = 0; i < maps.size(); ++i)
        m.strides[i].back() = maps[i][a];
      continue;
    }
    m.extents.push_back(shape[a]);
    for (size_t i = 0; i < maps.size(); ++i)
      m.strides[i].push_back(maps[i][a]);
  }
  if (m.extents.empty()) {
    m.extents.push_back(1);
    for (ir::Shape& s : m.strides)
      s.push_back(0);
  }
  return m;
}

/// The strip width of a column reduction: a merged space whose outer axis is
/// reduced (map `segment` has stride 0 there), whose innermost axis is kept and
/// long, and whose segments have at most 16 points (a sum over the short leading
/// axis of a wide array). 0 for others. Such a space is walked strip by strip of
/// the innermost axis (stripped()): each strip's accumulators stay in the L1 cache
/// over the few reduced rows, and the strips, kept, split over the threads without
/// partial accumulators (there would be too many segments for them). Strips of at
/// least 128 points, at most 1024 (8 KB of double accumulators), about 16 of them.
/// With more rows, walking each row whole is faster (measured on 4096 x 4096 and
/// 64 x 100000: strips took 2x and 1.2x as long): memory is read in long runs.
int64_t stripWidth(const Merged& m, int segment) {
  size_t n = m.extents.size();
  if (n < 2 || m.strides[segment][0] != 0 || m.strides[segment].back() == 0)
    return 0;
  constexpr int64_t kMin = 128, kMax = 1024, kMaxRows = 16;
  int64_t inner = m.extents.back();
  if (inner < 2 * kMin)
    return 0;
  int64_t rows = 1; // per segment
  for (size_t a = 0; a + 1 < n; ++a)
    rows *= m.strides[segment][a] == 0 ? m.extents[a] : 1;
  if (rows > kMaxRows)
    return 0;
  int64_t w = kMin;
  while (w < kMax && w * 16 < inner)
    w *= 2;
  return w;
}

/// `m` with its innermost axis cut into strips of `width` points, the strips'
/// axis first: [strips, axes..., points of a strip] (the last strip may be short:
/// Gen::nest bounds it).
Merged stripped(const Merged& m, int64_t width) {
  Merged s;
  int64_t inner = m.extents.back();
  s.extents.push_back((inner + width - 1) / width);
  s.extents.insert(s.extents.end(), m.extents.begin(), m.extents.end() - 1);
  s.extents.push_back(width);
  for (const ir::Shape& st : m.strides) {
    ir::Shape t{st.back() * width};
    t.insert(t.end(), st.begin(), st.end() - 1);
    t.push_back(st.back());
    s.strides.push_back(t);
  }
  return s;
}

/// The strip width of a sweep that accumulates nothing over a merged space whose
/// outer axis is short (under 16 units) and whose innermost axis is long: 0 for
/// others. The threads split the outer axis, so such a space would split by whole
/// rows, unevenly where the rows do not divide among the threads (3 rows of 2^20
/// points on 2 threads: 2 to 1, 1.3x the time of even parts). Stripped, the strips
/// are the outer axis: about 64 of them in all, of at least 4096 points (a multiple
/// of 64), each row's points of a strip one contiguous run.
int64_t outputStripWidth(const Merged& m) {
  constexpr int64_t kShortOuter = 16, kUnits = 64, kMin = 4096, kAlign = 64;
  size_t n = m.extents.size();
  int64_t inner = m.extents.back();
  if (n < 2 || m.extents[0] >= kShortOuter || inner < 2 * kMin)
    return 0;
  int64_t rows = 1;
  for (size_t a = 0; a + 1 < n; ++a)
    rows *= m.extents[a];
  int64_t strips = std::max<int64_t>(1, (kUnits + rows - 1) / rows);
  int64_t width = ((inner + strips - 1) / strips + kAlign - 1) / kAlign * kAlign;
  return std::max(width, kMin);
}

/// Whether rows of a reduced axis over a kept innermost axis of `inner` points
/// are summed several at a time (Gen::nest's jam) rather than one row after the
/// other: in strips (stripWidth's few rows), for rows of at most 64 points, and
/// where a row's double accumulators pass 16 KB (half the L1 cache: they would
/// not stay there while the rows stream by). In between, a row at a time is 2-2.5x
/// faster (measured 2026-12-02 on 256 x 256 x 256 over the middle axis and on
/// n x 128 ... n x 2048 over the leading one: the accumulators stay in L1 and the
/// input is read as one stream, not four interleaved ones).
bool jams(int64_t inner, bool strips) {
  constexpr int64_t kShortRow = 64, kL1Accumulators = 16 << 10;
  return strips || inner <= kShortRow || inner * 8 > kL1Accumulators;
}

llvm::Type* memoryType(llvm::LLVMContext& c, DType t) {
  return t == DType::Bool ? llvm::Type::getInt8Ty(c) : irType(c, t);
}

} // namespace

std::vector<int> Gen::reductions(const Sweep& s) const {
  std::vector<int> out;
  for (size_t i = 0; i < k_.insts.size(); ++i) {
    const Inst& inst = k_.insts[i];
    if (inst.kind == Inst::Kind::Reduce && inst.stage == s.stage &&
        ((s.kind != Sweep::Deviations && s.kind != Sweep::Means) || inst.node->op() == Op::Var))
      out.push_back(static_cast<int>(i));
  }
  return out;
}

llvm::Value* Gen::pointer(int slot, llvm::Type* element) {
  if (auto it = overrides_.find(slot); it != overrides_.end())
    return b_.CreateBitCast(it->second, element->getPointerTo());
  auto key = std::make_pair(slot, element);
  if (auto it = pointers_.find(key); it != pointers_.end())
    return it->second;
  llvm::IRBuilder<> e(entry_->getTerminator());
  llvm::Type* i8p = llvm::Type::getInt8PtrTy(ctx_);
  llvm::Value* raw = e.CreateLoad(i8p, e.CreateConstInBoundsGEP1_64(i8p, table_, slot));
  return pointers_[key] = e.CreateBitCast(raw, element->getPointerTo());
}

llvm::Value* Gen::offset(int map, const Values& idx) {
  llvm::Value* sum = nullptr; // no `+ 0` or `* 1` in the printed IR
  for (size_t a = 0; a < idx.size(); ++a)
    if (int64_t st = merged_.strides[map][a]; st != 0) {
      llvm::Value* term = st == 1 ? idx[a] : b_.CreateMul(idx[a], b_.getInt64(st));
      sum = sum ? b_.CreateAdd(sum, term) : term;
    }
  return sum ? sum : b_.getInt64(0);
}

llvm::Value* Gen::load(llvm::Type* t, llvm::Value* ptr, llvm::Value* off) {
  llvm::LoadInst* l = b_.CreateLoad(t, b_.CreateInBoundsGEP(t, ptr, off));
  if (accessGroup_)
    l->setMetadata(llvm::LLVMContext::MD_access_group, accessGroup_);
  return l;
}

void Gen::store(llvm::Value* v, llvm::Value* ptr, llvm::Value* off) {
  llvm::StoreInst* s = b_.CreateStore(v, b_.CreateInBoundsGEP(v->getType(), ptr, off));
  if (accessGroup_)
    s->setMetadata(llvm::LLVMContext::MD_access_group, accessGroup_);
}

/// Bools are bytes in memory and i1 in registers.
llvm::Value* Gen::loadTyped(DType t, llvm::Value* ptr, llvm::Value* off) {
  if (t == DType::Bool)
    return b_.CreateICmpNE(load(b_.getInt8Ty(), ptr, off), b_.getInt8(0));
  return load(irType(ctx_, t), ptr, off);
}

void Gen::storeTyped(DType t, llvm::Value* v, llvm::Value* ptr, llvm::Value* off) {
  store(t == DType::Bool ? b_.CreateZExt(v, b_.getInt8Ty()) : v, ptr, off);
}

void Gen::fail(int inst, llvm::Value* cond) {
  llvm::Value* word = pointer(slots_.error(), b_.getInt32Ty());
  llvm::Value* old = b_.CreateLoad(b_.getInt32Ty(), word);
  llvm::Value* first = b_.CreateAnd(cond, b_.CreateICmpEQ(old, b_.getInt32(0)));
  b_.CreateStore(b_.CreateSelect(first, b_.getInt32(inst + 1), old), word);
}

llvm::Value* Gen::source(int i, llvm::Value* flat) {
  const Inst& inst = k_.insts[i];
  SourceIndex src = SourceIndex::of(*inst.node);
  llvm::Constant* v = llvmir::constantOf(ctx_, inst.dtype, src.value);
  if (!src.readsIndex())
    return v;
  auto coord = [&](SourceIndex::Axis x) {
    return b_.CreateURem(b_.CreateUDiv(flat, b_.getInt64(x.inner)), b_.getInt64(x.extent));
  };
  if (src.form == SourceIndex::Diagonal)
    return b_.CreateSelect(b_.CreateICmpEQ(coord(src.a), coord(src.b)), v,
                           llvm::Constant::getNullValue(v->getType()));
  return llvmir::convert(b_, coord(src.a), DType::I64, inst.dtype);
}

/// The value of instruction `i` at the current point: computed in this sweep, or
/// (a reduced value of an earlier stage) read from its buffer.
llvm::Value* Gen::value(int i, const Sweep& s, const Values& idx) {
  if (vals_[i])
    return vals_[i];
  const Inst& inst = k_.insts[i];
  if (inst.space == Space::Reduced && !(s.space == Space::Reduced && s.needed[i]))
    return vals_[i] = loadTyped(
               inst.dtype, pointer(slots_.of(CpuSlots::Reduced, i), memoryType(ctx_, inst.dtype)),
               offset(kDense, idx));
  return vals_[i] = compute(i, s, idx);
}

llvm::Value* Gen::compute(int i, const Sweep& s, const Values& idx) {
  const Inst& inst = k_.insts[i];
  switch (inst.kind) {
  case Inst::Kind::Load:
    return loadTyped(inst.dtype, pointer(slots_.input(inst.input), memoryType(ctx_, inst.dtype)),
                     offset(kFirstInst + i, idx));
  case Inst::Kind::Source:
    return source(i, offset(kFirstInst + i, idx));
  case Inst::Kind::Segment: {
    int r = inst.args[0];
    return loadTyped(inst.dtype,
                     pointer(slots_.of(CpuSlots::Reduced, r), memoryType(ctx_, inst.dtype)),
                     offset(kSegment, idx));
  }
  case Inst::Kind::Reduce:
    return finishReduction(i, idx);
  case Inst::Kind::Compute: {
    Values args;
    for (int a : inst.args)
      args.push_back(value(a, s, idx));
    Op op = inst.node->op();
    DType operand = k_.insts[inst.args[op == Op::Select ? 1 : 0]].dtype;
    llvmir::OpSite site{b_, *m_, [&](llvm::Value* cond) { fail(i, cond); }};
    return llvmir::emitOp(site, op, operand, inst.dtype, args);
  }
  }
  throw Error("emitCpu: unknown instruction kind");
}

Values Gen::loop(llvm::Value* from, llvm::Value* to, const Values& init, bool parallel,
                 const std::function<Values(llvm::Value*, const Values&)>& body) {
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx_, "loop", f_);
  llvm::BasicBlock* inside = llvm::BasicBlock::Create(ctx_, "body", f_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, "exit", f_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, "i");
  i->addIncoming(from, pre);
  std::vector<llvm::PHINode*> phis;
  Values current;
  for (llvm::Value* v : init) {
    phis.push_back(b_.CreatePHI(v->getType(), 2));
    phis.back()->addIncoming(v, pre);
    current.push_back(phis.back());
  }
  b_.CreateCondBr(b_.CreateICmpSLT(i, to), inside, exit);
  b_.SetInsertPoint(inside);
  llvm::MDNode* outerGroup = accessGroup_;
  if (parallel)
    accessGroup_ = llvm::MDNode::getDistinct(ctx_, {});
  Values next = body(i, current);
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  i->addIncoming(b_.CreateAdd(i, b_.getInt64(1), "", /*HasNUW=*/true, /*HasNSW=*/true), latch);
  for (size_t j = 0; j < phis.size(); ++j)
    phis[j]->addIncoming(next[j], latch);
  llvm::BranchInst* back = b_.CreateBr(header);
  if (parallel) {
    llvm::Metadata* hint[] = {llvm::MDString::get(ctx_, "llvm.loop.parallel_accesses"),
                              accessGroup_};
    llvm::TempMDTuple temp = llvm::MDNode::getTemporary(ctx_, {});
    llvm::Metadata* ops[] = {temp.get(), llvm::MDNode::get(ctx_, hint)};
    llvm::MDNode* id = llvm::MDNode::getDistinct(ctx_, ops);
    id->replaceOperandWith(0, id);
    back->setMetadata(llvm::LLVMContext::MD_loop, id);
  }
  accessGroup_ = outerGroup;
  b_.SetInsertPoint(exit);
  return current;
}

void Gen::body(const Sweep& s, const Merged& ms, const Values& idx) {
  (void)ms;
  vals_.assign(k_.insts.size(), nullptr);
  for (size_t i = 0; i < k_.insts.size(); ++i)
    if (s.needed[i] && k_.insts[i].space == s.space)
      value(static_cast<int>(i), s, idx);
}

bool Gen::unrolledRow(const Sweep& s, const Merged& ms, size_t level, bool hasErrors) const {
  constexpr int64_t kShortRow = 8;
  bool accumulates = s.kind == Sweep::Accumulate || s.kind == Sweep::Deviations;
  return accumulates && !hasErrors && level > 0 && level + 1 == ms.extents.size() &&
         ms.strides[kSegment][level] == 0 && ms.strides[kSegment][level - 1] != 0 &&
         ms.extents[level] <= kShortRow && !strip_;
}

void Gen::nest(const Sweep& s, const Merged& ms, size_t level, Values idx, int64_t rows) {
  llvm::Value* from = level == 0 ? begin_ : b_.getInt64(0);
  llvm::Value* to = level == 0 ? end_ : b_.getInt64(ms.extents[level]);
  bool innermost = level + 1 == ms.extents.size();
  if (innermost && strip_) { // the points of strip idx[0]: the last one may be short
    llvm::Value* left = b_.CreateSub(b_.getInt64(stripped_), b_.CreateMul(idx[0], to));
    to = b_.CreateSelect(b_.CreateICmpSLT(left, to), left, to);
  }
  bool accumulates = s.kind == Sweep::Accumulate || s.kind == Sweep::Deviations;
  bool hasErrors = false;
  for (size_t i = 0; i < k_.insts.size(); ++i)
    if (s.needed[i] && k_.insts[i].kind == Inst::Kind::Compute && !ir::isFloat(k_.insts[i].dtype))
      hasErrors = true;
  // Rows of a reduced axis over a kept innermost one (a sum over a leading axis):
  // kRows rows at a time, each accumulator loaded and stored once for them (the
  // rows still add in order). Only where it pays (jams()).
  constexpr int64_t kRows = 4;
  bool jam = accumulates && !hasErrors && level + 2 == ms.extents.size() &&
             ms.strides[kSegment][level] == 0 && ms.strides[kSegment].back() != 0 &&
             ms.extents[level] >= kRows && jams(ms.extents.back(), strip_ != 0);
  if (jam) {
    llvm::Value* blocks = b_.CreateSDiv(b_.CreateSub(to, from), b_.getInt64(kRows));
    llvm::Value* rest = b_.CreateAdd(from, b_.CreateMul(blocks, b_.getInt64(kRows)));
    loop(b_.getInt64(0), blocks, {}, false, [&](llvm::Value* q, const Values&) {
      Values inner = idx;
      inner.push_back(b_.CreateAdd(from, b_.CreateMul(q, b_.getInt64(kRows))));
      nest(s, ms, level + 1, inner, kRows);
      return Values{};
    });
    from = rest;
  }
  if (!innermost) {
    // Rows of a few points, unrolled: the loop over them is the innermost, its
    // iterations independent (each its own segment), so it vectorizes.
    bool parallel = unrolledRow(s, ms, level + 1, hasErrors);
    loop(from, to, {}, parallel, [&](llvm::Value* i, const Values&) {
      Values inner = idx;
      inner.push_back(i);
      bool strip = level == 0 && inlineFinish_;
      if (strip)
        beginStrip(s, i);
      nest(s, ms, level + 1, inner, 1);
      if (strip)
        endStrip();
      return Values{};
    });
    return;
  }
  // Accumulators in registers where the innermost axis is reduced (the segment is
  // the same along it).
  bool registers = accumulates && ms.strides[kSegment].back() == 0;
  std::vector<int> rs = accumulates ? reductions(s) : std::vector<int>{};
  auto accPointers = [&](int r) {
    const CpuAccumulator& a = *accumulators_[r];
    bool dev = s.kind == Sweep::Deviations;
    llvm::Type* t = dev ? b_.getDoubleTy() : irType(ctx_, a.value);
    Values p{pointer(slots_.of(dev ? CpuSlots::Squares : CpuSlots::Value, r), t)};
    if (a.position && !dev)
      p.push_back(pointer(slots_.of(CpuSlots::Position, r), b_.getInt64Ty()));
    return p;
  };
  auto types = [&](int r) {
    const CpuAccumulator& a = *accumulators_[r];
    bool dev = s.kind == Sweep::Deviations;
    std::vector<llvm::Type*> t{dev ? b_.getDoubleTy() : irType(ctx_, a.value)};
    if (a.position && !dev)
      t.push_back(b_.getInt64Ty());
    return t;
  };
  Values init;
  llvm::Value* segOffset = nullptr;
  if (registers) {
    Values at = idx;
    at.push_back(b_.getInt64(0));
    segOffset = offset(kSegment, at);
    for (int r : rs) {
      Values ps = accPointers(r);
      std::vector<llvm::Type*> ts = types(r);
      for (size_t j = 0; j < ps.size(); ++j)
        init.push_back(load(ts[j], ps[j], segOffset));
    }
  }
  bool parallel = !hasErrors && !registers;
  // A row (of at least kVectorRow points) with an extreme: two vectorizable loops.
  constexpr int64_t kVectorRow = 16;
  bool extremes = registers && s.kind == Sweep::Accumulate &&
                  (level == 0 || ms.extents[level] >= kVectorRow) &&
                  std::any_of(rs.begin(), rs.end(), [&](int r) { return vectorExtreme(r); });
  // With argmax or argmin: in blocks of kExtremeBlock points, each joined to the
  // accumulators of the ones before: the block is in the L1 cache for the second
  // loop, which most blocks of a long row skip.
  constexpr int64_t kExtremeBlock = 512;
  auto blocks = [&]() {
    llvm::Value* count =
        b_.CreateSDiv(b_.CreateAdd(b_.CreateSub(to, from), b_.getInt64(kExtremeBlock - 1)),
                      b_.getInt64(kExtremeBlock));
    return loop(b_.getInt64(0), count, init, false, [&](llvm::Value* q, const Values& cur) {
      llvm::Value* first = b_.CreateAdd(from, b_.CreateMul(q, b_.getInt64(kExtremeBlock)));
      llvm::Value* last = b_.CreateAdd(first, b_.getInt64(kExtremeBlock));
      last = b_.CreateSelect(b_.CreateICmpSLT(last, to), last, to);
      return extremeRow(s, idx, first, last, rs, cur);
    });
  };
  bool argExtremes = std::any_of(rs.begin(), rs.end(), [&](int r) {
    Op op = k_.insts[r].node->op();
    return vectorExtreme(r) && (op == Op::Argmax || op == Op::Argmin);
  });
  auto point = [&](llvm::Value* i, const Values& cur) {
    Values at = idx;
    at.push_back(i);
    Values next;
    if (s.kind == Sweep::Means) {
      means(s, at);
      return next;
    }
    body(s, ms, at);
    if (s.kind == Sweep::Outputs || s.kind == Sweep::Finish) {
      for (size_t i2 = 0; i2 < k_.insts.size(); ++i2) {
        const Inst& inst = k_.insts[i2];
        if (s.kind == Sweep::Outputs || inst.space != Space::Reduced || !s.needed[i2])
          continue;
        storeTyped(inst.dtype, vals_[i2],
                   pointer(slots_.of(CpuSlots::Reduced, i2), memoryType(ctx_, inst.dtype)),
                   offset(kDense, at));
      }
      if (s.kind == Sweep::Outputs)
        for (size_t o = 0; o < k_.outputs.size(); ++o) {
          const KernelOutput& out = k_.outputs[o];
          if (out.space != Space::Domain)
            continue;
          DType t = k_.insts[out.inst].dtype;
          storeTyped(t, vals_[out.inst], pointer(slots_.output(o), memoryType(ctx_, t)),
                     offset(kDense, at));
        }
      return next;
    }
    // The segment is the same for the `rows` rows (their axis is reduced).
    llvm::Value* off = registers ? segOffset : offset(kSegment, at);
    bool positions = false;
    for (int r : rs)
      positions = positions || (accumulators_[r]->position && s.kind == Sweep::Accumulate);
    std::vector<Values> accs;
    std::vector<llvm::Value*> means;
    size_t c = 0;
    for (int r : rs) {
      Values ps = accPointers(r);
      std::vector<llvm::Type*> ts = types(r);
      Values acc;
      for (size_t j = 0; j < ps.size(); ++j)
        acc.push_back(registers ? cur[c + j] : load(ts[j], ps[j], off));
      accs.push_back(acc);
      means.push_back(s.kind != Sweep::Deviations
                          ? nullptr
                          : load(b_.getDoubleTy(),
                                 pointer(slots_.of(CpuSlots::Mean, r), b_.getDoubleTy()), off));
      c += ps.size();
    }
    for (int64_t u = 0; u < rows; ++u) {
      Values point = at;
      if (u > 0) {
        point[point.size() - 2] = b_.CreateAdd(at[at.size() - 2], b_.getInt64(u));
        body(s, ms, point);
      }
      llvm::Value* pos = positions ? offset(kPosition, point) : nullptr;
      for (size_t n = 0; n < rs.size(); ++n) {
        Values out;
        accumulate(rs[n], accs[n], vals_[k_.insts[rs[n]].args[0]], pos, means[n], out);
        accs[n] = out;
      }
    }
    for (size_t n = 0; n < rs.size(); ++n) {
      Values ps = accPointers(rs[n]);
      for (size_t j = 0; j < accs[n].size(); ++j) {
        if (registers)
          next.push_back(accs[n][j]);
        else
          store(accs[n][j], ps[j], off);
      }
    }
    return next;
  };
  Values final;
  if (extremes) {
    final = argExtremes ? blocks() : extremeRow(s, idx, from, to, rs, init);
  } else if (unrolledRow(s, ms, level, hasErrors)) {
    final = init;
    for (int64_t u = 0; u < ms.extents[level]; ++u)
      final = point(b_.getInt64(u), final);
  } else {
    final = loop(from, to, init, parallel, point);
  }
  if (registers) {
    size_t c = 0;
    for (int r : rs) {
      Values ps = accPointers(r);
      for (llvm::Value* p : ps)
        store(final[c++], p, segOffset);
    }
  }
}

CpuLoop Gen::function(const std::string& suffix, const Sweep& s) {
  std::string fname = fmt::format("{}_{}", name_, suffix);
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* params[] = {llvm::Type::getInt8PtrTy(ctx_)->getPointerTo(), i64, i64, i64};
  f_ = llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), params, false),
                              llvm::Function::ExternalLinkage, fname, *m_);
  f_->setDoesNotThrow();
  table_ = f_->getArg(0);
  begin_ = f_->getArg(1);
  end_ = f_->getArg(2);
  parts_ = f_->getArg(3);
  table_->setName("table");
  begin_->setName("begin");
  end_->setName("end");
  parts_->setName("parts");
  pointers_.clear();
  entry_ = llvm::BasicBlock::Create(ctx_, "entry", f_);
  llvm::BasicBlock* start = llvm::BasicBlock::Create(ctx_, "start", f_);
  b_.SetInsertPoint(entry_);
  b_.CreateBr(start);
  b_.SetInsertPoint(start);
  layout(s);
  if (inlineFinish_) { // the strips' own copy of the table (see beginStrip)
    llvm::IRBuilder<> e(entry_->getTerminator());
    llvm::Type* i8p = llvm::Type::getInt8PtrTy(ctx_);
    localTable_ = e.CreateAlloca(i8p, b_.getInt64(slots_.size()));
    for (size_t j = 0; j < slots_.size(); ++j)
      e.CreateStore(e.CreateLoad(i8p, e.CreateConstInBoundsGEP1_64(i8p, table_, j)),
                    e.CreateConstInBoundsGEP1_64(i8p, localTable_, j));
  }
  nest(s, merged_, 0, {}, 1);
  b_.CreateRetVoid();
  const ir::Shape& shape = k_.shape(s.space);
  CpuLoop l;
  l.function = fname;
  l.extent = merged_.extents[0];
  l.unitPoints = ir::numElements(shape) / std::max<int64_t>(l.extent, 1);
  return l;
}

void Gen::layout(const Sweep& s) {
  const ir::Shape& shape = k_.shape(s.space);
  maps_.assign(kFirstInst + k_.insts.size(), ir::Shape(shape.size(), 0));
  maps_[kDense] = denseStrides(shape);
  bool accumulates = s.kind == Sweep::Accumulate || s.kind == Sweep::Deviations;
  bool segments = accumulates;
  for (size_t i = 0; i < k_.insts.size(); ++i)
    segments = segments || (s.needed[i] && k_.insts[i].kind == Inst::Kind::Segment);
  if (s.space == Space::Domain && segments)
    maps_[kSegment] = segmentStrides_;
  if (s.space == Space::Domain && accumulates)
    maps_[kPosition] = positionStrides_;
  for (size_t i = 0; i < k_.insts.size(); ++i) {
    const Inst& inst = k_.insts[i];
    bool indexed = inst.kind == Inst::Kind::Load ||
                   (inst.kind == Inst::Kind::Source && SourceIndex::of(*inst.node).readsIndex());
    if (indexed && inst.space == s.space && s.needed[i])
      maps_[kFirstInst + i] = inst.strides;
  }
  merged_ = merge(shape, maps_);
  strip_ = s.space != Space::Domain   ? 0
           : accumulates              ? stripWidth(merged_, kSegment)
           : s.kind == Sweep::Outputs ? outputStripWidth(merged_)
                                      : 0;
  stripped_ = merged_.extents.back();
  if (strip_)
    merged_ = stripped(merged_, strip_);
}

bool Gen::outerReduced(const Sweep& s) {
  layout(s);
  return merged_.strides[kSegment][0] == 0 && merged_.extents[0] > 1;
}

bool Gen::finishesInline(const Sweep& acc, const Sweep& finish) {
  if (outerReduced_)
    return false;
  for (int r : reductions(acc))
    if (accumulators_[r]->position || accumulators_[r]->var)
      return false;
  layout(finish);
  if (merged_.extents.size() != 1 || merged_.extents[0] != ir::numElements(k_.reducedShape))
    return false;
  layout(acc);
  if (!strip_ || merged_.strides[kSegment].back() != 1)
    return false;
  for (size_t a = 1; a + 1 < merged_.extents.size(); ++a)
    if (merged_.strides[kSegment][a] != 0)
      return false;
  return true;
}

void Gen::beginStrip(const Sweep& s, llvm::Value* strip) {
  llvm::Value* base = b_.CreateMul(strip, b_.getInt64(strip_));
  llvm::Value* left = b_.CreateSub(b_.getInt64(stripped_), base);
  llvm::Value* width =
      b_.CreateSelect(b_.CreateICmpSLT(left, b_.getInt64(strip_)), left, b_.getInt64(strip_));
  for (int r : reductions(s)) {
    const CpuAccumulator& a = *accumulators_[r];
    llvm::Type* t = irType(ctx_, a.value);
    llvm::AllocaInst* buffer;
    {
      llvm::IRBuilder<> e(entry_->getTerminator());
      buffer = e.CreateAlloca(t, b_.getInt64(strip_));
      buffer->setAlignment(llvm::Align(64));
    }
    loop(b_.getInt64(0), width, {}, true, [&](llvm::Value* j, const Values&) {
      store(llvmir::constantOf(ctx_, a.value, a.init), buffer, j);
      return Values{};
    });
    // Indexed by segment, as the slot is: element `base` is the buffer's first.
    overrides_[slots_.of(CpuSlots::Value, r)] = b_.CreateGEP(t, buffer, b_.CreateNeg(base));
  }
  stripBase_ = base;
  stripWidth_ = width;
}

void Gen::endStrip() {
  llvm::Type* i8p = llvm::Type::getInt8PtrTy(ctx_);
  for (auto [slot, p] : overrides_)
    b_.CreateStore(b_.CreateBitCast(p, i8p), b_.CreateConstInBoundsGEP1_64(i8p, localTable_, slot));
  overrides_.clear();
  b_.CreateCall(finish_,
                {localTable_, stripBase_, b_.CreateAdd(stripBase_, stripWidth_), b_.getInt64(1)});
}

CpuKernel Gen::emit() {
  size_t n = k_.insts.size();
  CpuKernel ck;
  ck.name = name_;
  ck.slots = slots_;
  accumulators_.assign(n, std::nullopt);
  std::vector<bool> varAtStage(k_.stages(), false);
  std::vector<std::vector<bool>> forStage(k_.stages(), std::vector<bool>(n, false));
  std::vector<std::vector<bool>> reducedAtStage = forStage;
  std::vector<bool> forOutputs(n, false);
  bool domainOutputs = false;
  for (size_t i = 0; i < n; ++i) {
    const Inst& inst = k_.insts[i];
    if (inst.space == Space::Reduced) // stage-0 values (loads) with the first stage's
      reducedAtStage[std::max(inst.stage, 1) - 1][i] = true;
    if (inst.kind != Inst::Kind::Reduce)
      continue;
    markNeeded(k_, inst.args[0], forStage[inst.stage - 1]);
    Op op = inst.node->op();
    DType t = k_.insts[inst.args[0]].dtype;
    CpuAccumulator a;
    a.value = ir::isFloat(t) || op == Op::Var ? DType::F64 : t;
    a.init = op == Op::Prod ? 1 : 0;
    if (isExtreme(op)) {
      a.value = t;
      // Float max and min keep no position: they start at -inf or +inf, which
      // every number but itself and every NaN replaces (the sweep's accumulators
      // half as large: a column max over 4096 x 4096 reads 16 KB of them, not 48).
      a.position = op == Op::Argmax || op == Op::Argmin || !ir::isFloat(t);
      if (!a.position)
        a.init = op == Op::Max ? -INFINITY : INFINITY;
    }
    a.var = op == Op::Var;
    varAtStage[inst.stage - 1] = varAtStage[inst.stage - 1] || a.var;
    accumulators_[i] = a;
  }
  for (const KernelOutput& o : k_.outputs)
    if (o.space == Space::Domain) {
      markNeeded(k_, o.inst, forOutputs);
      domainOutputs = true;
    }
  if (k_.hasReduction()) {
    segmentStrides_ = k_.segmentStrides();
    ir::Shape reducedExtents; // the position within a segment: C order over the reduced axes
    for (int64_t a : k_.reduceAxes)
      reducedExtents.push_back(k_.domain[a]);
    ir::Shape dense = denseStrides(reducedExtents);
    positionStrides_.assign(k_.domain.size(), 0);
    for (size_t j = 0; j < k_.reduceAxes.size(); ++j)
      positionStrides_[k_.reduceAxes[j]] = dense[j];
    ck.segments = ir::numElements(k_.reducedShape);
  } else {
    segmentStrides_.assign(k_.domain.size(), 0);
    positionStrides_ = segmentStrides_;
  }
  for (int st = 1; st <= k_.stages(); ++st) {
    Sweep acc{Space::Domain, forStage[st - 1], st, Sweep::Accumulate};
    outerReduced_ = outerReduced_ || outerReduced(acc);
    if (varAtStage[st - 1])
      outerReduced_ =
          outerReduced_ || outerReduced({Space::Domain, forStage[st - 1], st, Sweep::Deviations});
  }
  for (int st = 1; st <= k_.stages(); ++st) {
    CpuStage stage;
    Sweep acc{Space::Domain, forStage[st - 1], st, Sweep::Accumulate};
    Sweep finish{Space::Reduced, reducedAtStage[st - 1], st, Sweep::Finish};
    if (!varAtStage[st - 1] && finishesInline(acc, finish)) {
      stage.finish = function(fmt::format("finish{}", st), finish);
      stage.finishedByAccumulate = true;
      finish_ = f_;
      inlineFinish_ = true;
      stage.accumulate = function(fmt::format("acc{}", st), acc);
      inlineFinish_ = false;
      ck.stages.push_back(stage);
      continue;
    }
    stage.accumulate = function(fmt::format("acc{}", st), acc);
    if (varAtStage[st - 1]) {
      stage.means = function(fmt::format("means{}", st),
                             {Space::Reduced, std::vector<bool>(n, false), st, Sweep::Means});
      stage.deviations = function(fmt::format("dev{}", st),
                                  {Space::Domain, forStage[st - 1], st, Sweep::Deviations});
    }
    stage.finish = function(fmt::format("finish{}", st), finish);
    ck.stages.push_back(stage);
  }
  if (domainOutputs)
    ck.outputs = function("outputs", {Space::Domain, forOutputs, 0, Sweep::Outputs});
  ck.partials = outerReduced_;
  ck.accumulators = accumulators_;
  std::string problems;
  llvm::raw_string_ostream err(problems);
  if (llvm::verifyModule(*m_, &err))
    throw Error(fmt::format("emitCpu: invalid IR for kernel {}: {}", name_, err.str()));
  llvm::raw_string_ostream os(ck.ir);
  m_->print(os, nullptr);
  os.flush();
  return ck;
}

} // namespace cpugen

CpuKernel emitCpu(const Kernel& k, llvm::StringRef name) {
  return cpugen::Gen(k, name).emit();
}

} // namespace graphc::codegen
