//===- codegen/LlvmReduction.cpp - LLVM IR of a kernel's reductions --------===//
//
// The reductions' part of the CPU kernel generator (codegen/LlvmGen.h): how a
// point joins a reduction's accumulators, the rows of max, min, argmax and argmin
// in a form the loop vectorizer takes, the finish of a segment (combining the
// parts' accumulators) and var's means. Semantics as in codegen/Llvm.h.
//
//===----------------------------------------------------------------------===//
#include "codegen/LlvmGen.h"

#include <algorithm>

namespace graphc::codegen::cpugen {

using llvmir::irType;

llvm::Value* Gen::accumulate(int r, const Values& acc, llvm::Value* x, llvm::Value* pos,
                             llvm::Value* mean, Values& out) {
  const Inst& inst = k_.insts[r];
  Op op = inst.node->op();
  DType t = k_.insts[inst.args[0]].dtype;
  DType at = accumulatorType(r);
  llvm::FastMathFlags reassoc;
  reassoc.setAllowReassoc();
  if (mean) { // var's second sweep: the squared deviation from the mean
    llvm::Value* d = b_.CreateFSub(llvmir::convert(b_, x, t, DType::F64), mean);
    llvm::Value* sum = b_.CreateFAdd(acc[0], b_.CreateFMul(d, d));
    llvm::cast<llvm::Instruction>(sum)->setFastMathFlags(reassoc);
    out = {sum};
    return nullptr;
  }
  if (isExtreme(op)) {
    bool isMax = op == Op::Max || op == Op::Argmax;
    llvm::Value* best = acc[0];
    llvm::Value* better;
    if (ir::isFloat(t)) {
      llvm::Value* xNan = b_.CreateFCmpUNO(x, x);
      llvm::Value* bestNan = b_.CreateFCmpUNO(best, best);
      llvm::Value* beats = isMax ? b_.CreateFCmpOGT(x, best) : b_.CreateFCmpOLT(x, best);
      better = b_.CreateAnd(b_.CreateNot(bestNan), b_.CreateOr(xNan, beats));
    } else {
      better = isMax ? b_.CreateICmpSGT(x, best) : b_.CreateICmpSLT(x, best);
    }
    if (acc.size() == 1) { // float max or min from +-inf: no position
      out = {b_.CreateSelect(better, x, best)};
      return nullptr;
    }
    llvm::Value* take = b_.CreateOr(b_.CreateICmpSLT(acc[1], b_.getInt64(0)), better);
    out = {b_.CreateSelect(take, x, best), b_.CreateSelect(take, pos, acc[1])};
    return nullptr;
  }
  llvm::Value* v = llvmir::convert(b_, x, t, at);
  bool product = op == Op::Prod;
  llvm::Value* next;
  if (ir::isFloat(at)) {
    next = product ? b_.CreateFMul(acc[0], v) : b_.CreateFAdd(acc[0], v);
    llvm::cast<llvm::Instruction>(next)->setFastMathFlags(reassoc);
  } else {
    next = product ? b_.CreateMul(acc[0], v) : b_.CreateAdd(acc[0], v);
  }
  out = {next};
  return nullptr;
}

bool Gen::vectorExtreme(int r) const {
  const Inst& inst = k_.insts[r];
  return isExtreme(inst.node->op()) && k_.insts[inst.args[0]].dtype != DType::Bool;
}

/// LLVM 14's vectorizer takes neither a (value, position) recurrence nor a float
/// max that must keep NaN. So: the first loop finds the extreme as a plain
/// maxnum/minnum reduction over the values with NaN taken out (exact: no NaN goes
/// in, and a zero's sign does not matter to the comparison) and, apart, whether
/// there was a NaN; the second, for argmax and argmin, the first position holding
/// it (a min reduction over positions). Integer max and min keep the first
/// point's position (any point seen will do: only the value is read), float ones
/// none (they start at -inf or +inf). The result then
/// joins the accumulator as a single point would, so earlier points win ties.
Values Gen::extremeRow(const Sweep& s, const Values& idx, llvm::Value* from, llvm::Value* to,
                       const std::vector<int>& rs, const Values& init) {
  auto argOf = [&](int r) { return k_.insts[r].args[0]; };
  auto isMax = [&](int r) {
    Op op = k_.insts[r].node->op();
    return op == Op::Max || op == Op::Argmax;
  };
  auto dtypeOf = [&](int r) { return k_.insts[argOf(r)].dtype; };
  auto identity = [&](int r) -> llvm::Value* {
    DType t = dtypeOf(r);
    llvm::Type* ty = irType(ctx_, t);
    if (ir::isFloat(t))
      return llvm::ConstantFP::getInfinity(ty, isMax(r));
    unsigned w = ty->getIntegerBitWidth();
    return b_.getInt(isMax(r) ? llvm::APInt::getSignedMinValue(w)
                              : llvm::APInt::getSignedMaxValue(w));
  };
  Values initA;
  for (size_t n = 0, c = 0; n < rs.size(); ++n) {
    int r = rs[n];
    size_t width = accumulators_[r]->position ? 2 : 1;
    if (vectorExtreme(r)) {
      initA.push_back(identity(r));
      if (ir::isFloat(dtypeOf(r)))
        initA.push_back(b_.getFalse());
    } else {
      initA.insert(initA.end(), init.begin() + c, init.begin() + c + width);
    }
    c += width;
  }
  llvm::FastMathFlags exact;
  exact.setNoNaNs();
  exact.setNoSignedZeros();
  Values a = loop(from, to, initA, false, [&](llvm::Value* i, const Values& cur) {
    Values at = idx;
    at.push_back(i);
    body(s, merged_, at);
    Values next;
    size_t c = 0;
    for (int r : rs) {
      llvm::Value* x = vals_[argOf(r)];
      if (!vectorExtreme(r)) {
        size_t width = accumulators_[r]->position ? 2 : 1;
        Values out;
        accumulate(r, Values(cur.begin() + c, cur.begin() + c + width), x, nullptr, nullptr, out);
        next.insert(next.end(), out.begin(), out.end());
        c += width;
        continue;
      }
      if (!ir::isFloat(dtypeOf(r))) {
        llvm::Value* beats = isMax(r) ? b_.CreateICmpSGT(x, cur[c]) : b_.CreateICmpSLT(x, cur[c]);
        next.push_back(b_.CreateSelect(beats, x, cur[c]));
        c += 1;
        continue;
      }
      llvm::Value* nan = b_.CreateFCmpUNO(x, x);
      llvm::Value* clean = b_.CreateSelect(nan, identity(r), x);
      llvm::Value* m = b_.CreateBinaryIntrinsic(
          isMax(r) ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum, cur[c], clean);
      llvm::cast<llvm::Instruction>(m)->setFastMathFlags(exact);
      next.push_back(m);
      next.push_back(b_.CreateOr(cur[c + 1], nan));
      c += 2;
    }
    return next;
  });
  // The extremes: NaN where there was one.
  std::vector<llvm::Value*> target(k_.insts.size(), nullptr), nanSeen = target;
  bool positions = false;
  for (size_t n = 0, c = 0; n < rs.size(); ++n) {
    int r = rs[n];
    if (!vectorExtreme(r)) {
      c += accumulators_[r]->position ? 2 : 1;
      continue;
    }
    target[r] = a[c];
    if (ir::isFloat(dtypeOf(r))) {
      nanSeen[r] = a[c + 1];
      target[r] = b_.CreateSelect(a[c + 1], llvm::ConstantFP::getNaN(a[c]->getType()), a[c]);
    }
    c += ir::isFloat(dtypeOf(r)) ? 2 : 1;
    Op op = k_.insts[r].node->op();
    positions = positions || op == Op::Argmax || op == Op::Argmin;
  }
  Values first = idx;
  first.push_back(from);
  llvm::Value* firstPos = offset(kPosition, first);
  // Within a row of known extent, the position as an i32 offset from the first
  // point: twice the lanes of an i64 one.
  size_t level = idx.size();
  bool narrow = level > 0 && merged_.extents[level] < INT32_MAX;
  llvm::Value* none = narrow ? b_.getInt32(INT32_MAX) : b_.getInt64(INT64_MAX);
  Values firstAt;
  if (positions) {
    Values initB;
    for (int r : rs)
      if (vectorExtreme(r))
        initB.push_back(none);
    // The second loop only where an argmax or argmin's extreme beats the points
    // before the block (in a long row, the later blocks seldom do).
    llvm::Value* beats = b_.getFalse();
    for (size_t n = 0, c = 0; n < rs.size(); ++n) {
      int r = rs[n];
      size_t width = accumulators_[r]->position ? 2 : 1;
      Op op = k_.insts[r].node->op();
      if (vectorExtreme(r) && (op == Op::Argmax || op == Op::Argmin)) {
        Values old(init.begin() + c, init.begin() + c + 2), joined;
        accumulate(r, old, target[r], b_.getInt64(-2), nullptr, joined); // -2: no position
        beats = b_.CreateOr(beats, b_.CreateICmpNE(joined[1], old[1]));
      }
      c += width;
    }
    llvm::BasicBlock* skip = b_.GetInsertBlock();
    llvm::BasicBlock* find = llvm::BasicBlock::Create(ctx_, "find", f_);
    llvm::BasicBlock* found = llvm::BasicBlock::Create(ctx_, "found", f_);
    b_.CreateCondBr(beats, find, found);
    b_.SetInsertPoint(find);
    Values inFind = loop(from, to, initB, false, [&](llvm::Value* i, const Values& cur) {
      Values at = idx;
      at.push_back(i);
      body(s, merged_, at);
      llvm::Value* pos =
          narrow ? b_.CreateTrunc(b_.CreateSub(i, from), b_.getInt32Ty()) : offset(kPosition, at);
      Values next;
      size_t c = 0;
      for (int r : rs) {
        if (!vectorExtreme(r))
          continue;
        llvm::Value* x = vals_[argOf(r)];
        llvm::Value* match = ir::isFloat(dtypeOf(r))
                                 ? b_.CreateSelect(nanSeen[r], b_.CreateFCmpUNO(x, x),
                                                   b_.CreateFCmpOEQ(x, target[r]))
                                 : b_.CreateICmpEQ(x, target[r]);
        llvm::Value* candidate = b_.CreateSelect(match, pos, none);
        next.push_back(b_.CreateSelect(b_.CreateICmpSLT(candidate, cur[c]), candidate, cur[c]));
        ++c;
      }
      return next;
    });
    llvm::BasicBlock* findEnd = b_.GetInsertBlock();
    b_.CreateBr(found);
    b_.SetInsertPoint(found);
    for (size_t j = 0; j < inFind.size(); ++j) {
      llvm::PHINode* phi = b_.CreatePHI(none->getType(), 2);
      phi->addIncoming(inFind[j], findEnd);
      phi->addIncoming(none, skip);
      firstAt.push_back(phi);
    }
    if (narrow)
      for (llvm::Value*& v : firstAt)
        v = b_.CreateAdd(firstPos, b_.CreateMul(b_.CreateSExt(v, b_.getInt64Ty()),
                                                b_.getInt64(merged_.strides[kPosition][level])));
  }
  llvm::Value* seen = b_.CreateICmpSLT(from, to);
  Values out;
  for (size_t n = 0, c = 0, e = 0, p = 0; n < rs.size(); ++n) {
    int r = rs[n];
    size_t width = accumulators_[r]->position ? 2 : 1;
    if (!vectorExtreme(r)) {
      for (size_t j = 0; j < width; ++j)
        out.push_back(a[e + j]);
      e += width;
      c += width;
      continue;
    }
    e += ir::isFloat(dtypeOf(r)) ? 2 : 1;
    Op op = k_.insts[r].node->op();
    llvm::Value* pos = op == Op::Argmax || op == Op::Argmin ? firstAt[p] : firstPos;
    p += 1;
    Values old(init.begin() + c, init.begin() + c + width), joined;
    accumulate(r, old, target[r], pos, nullptr, joined);
    for (size_t j = 0; j < width; ++j)
      out.push_back(b_.CreateSelect(seen, joined[j], old[j]));
    c += width;
  }
  return out;
}

/// Reduction `r`'s result at the current segment: its parts' accumulators combined
/// in order, then finished (mean and var divide by the count).
llvm::Value* Gen::finishReduction(int r, const Values& idx) {
  const Inst& inst = k_.insts[r];
  Op op = inst.node->op();
  const CpuAccumulator& a = *accumulators_[r];
  llvm::Value* s = offset(kDense, idx);
  llvm::Value* segments = b_.getInt64(std::max<int64_t>(ir::numElements(k_.reducedShape), 1));
  llvm::Type* at = irType(ctx_, a.value);
  int valueSlot = slots_.of(op == Op::Var ? CpuSlots::Squares : CpuSlots::Value, r);
  llvm::Value* values = pointer(valueSlot, op == Op::Var ? b_.getDoubleTy() : at);
  Values init{op == Op::Var ? llvm::ConstantFP::get(b_.getDoubleTy(), 0.0)
                            : llvmir::constantOf(ctx_, a.value, a.init)};
  if (a.position)
    init.push_back(b_.getInt64(-1));
  auto combine = [&](llvm::Value* p, const Values& cur) {
    llvm::Value* at = b_.CreateAdd(b_.CreateMul(p, segments), s);
    llvm::Value* v = load(op == Op::Var ? b_.getDoubleTy() : irType(ctx_, a.value), values, at);
    if (!a.position && isExtreme(op)) {
      Values out;
      accumulate(r, cur, v, nullptr, nullptr, out);
      return out;
    }
    if (!a.position) {
      bool product = op == Op::Prod;
      if (ir::isFloat(a.value))
        return Values{product ? b_.CreateFMul(cur[0], v) : b_.CreateFAdd(cur[0], v)};
      return Values{product ? b_.CreateMul(cur[0], v) : b_.CreateAdd(cur[0], v)};
    }
    llvm::Value* pos =
        load(b_.getInt64Ty(), pointer(slots_.of(CpuSlots::Position, r), b_.getInt64Ty()), at);
    // Part p's extreme replaces the earlier parts' where it comes first in the order.
    Values out;
    accumulate(r, cur, v, pos, nullptr, out);
    llvm::Value* seen = b_.CreateICmpSGE(pos, b_.getInt64(0));
    return Values{b_.CreateSelect(seen, out[0], cur[0]), b_.CreateSelect(seen, out[1], cur[1])};
  };
  // One part without partial sums: no loop, so that the finish vectorizes.
  Values acc = outerReduced_ ? loop(b_.getInt64(0), parts_, init, false, combine)
                             : combine(b_.getInt64(0), init);
  llvm::Value* result = acc[0];
  DType from = a.value;
  if (op == Op::Argmax || op == Op::Argmin) {
    result = acc[1];
    from = DType::I64;
  } else if (op == Op::Var || (op == Op::Mean && ir::isFloat(from))) {
    double count = static_cast<double>(k_.segmentSize());
    result = b_.CreateFDiv(result, llvm::ConstantFP::get(b_.getDoubleTy(), count));
    from = DType::F64;
  } else if (op == Op::Mean) { // integers: the wrapped sum over the count, truncated
    result = b_.CreateSDiv(b_.CreateSExt(result, b_.getInt64Ty()),
                           b_.getInt64(std::max<int64_t>(k_.segmentSize(), 1)));
    from = DType::I64;
  }
  return llvmir::convert(b_, result, from, inst.dtype);
}

/// var's means at the current segment: its parts' sums over the count.
void Gen::means(const Sweep& s, const Values& idx) {
  llvm::Value* at = offset(kDense, idx);
  llvm::Value* segments = b_.getInt64(std::max<int64_t>(ir::numElements(k_.reducedShape), 1));
  for (int r : reductions(s)) {
    llvm::Value* sums = pointer(slots_.of(CpuSlots::Value, r), b_.getDoubleTy());
    auto add = [&](llvm::Value* p, const Values& cur) {
      llvm::Value* v = load(b_.getDoubleTy(), sums, b_.CreateAdd(b_.CreateMul(p, segments), at));
      return Values{b_.CreateFAdd(cur[0], v)};
    };
    Values zero{llvm::ConstantFP::get(b_.getDoubleTy(), 0.0)};
    Values total =
        outerReduced_ ? loop(b_.getInt64(0), parts_, zero, false, add) : add(b_.getInt64(0), zero);
    llvm::Value* count =
        llvm::ConstantFP::get(b_.getDoubleTy(), static_cast<double>(k_.segmentSize()));
    store(b_.CreateFDiv(total[0], count), pointer(slots_.of(CpuSlots::Mean, r), b_.getDoubleTy()),
          at);
  }
}

} // namespace graphc::codegen::cpugen
