//===- codegen/LlvmOps.cpp - Elementwise ops as LLVM IR -------------------===//
//
// One switch over every op, without `default:` (-Wswitch names a new op). The
// composite ops (abs, sign, sigmoid, maximum, remainder, ...) are ir/Formulas.h's
// formulas over the instructions of Primitives; the others map onto one instruction,
// intrinsic or function each. The semantics are runtime/cpu/Elementwise.cpp's:
// integer arithmetic wraps (no nsw flags); div truncates toward zero and MIN / -1
// wraps; round is half to even (nearbyint); casts are C conversions. Floating-point
// instructions carry no fast-math flags, so each op rounds as the interpreter's does.
//
//===----------------------------------------------------------------------===//
#include "codegen/LlvmOps.h"

#include "codegen/LlvmMath.h"

#include "ir/Formulas.h"
#include "ir/OpCases.h"
#include "ir/Scalar.h"
#include "support/Error.h"

#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

#include <fmt/format.h>

namespace graphc::codegen::llvmir {

using ir::DType;
using ir::Op;

llvm::Type* irType(llvm::LLVMContext& c, DType t) {
  switch (t) {
  case DType::Bool:
    return llvm::Type::getInt1Ty(c);
  case DType::I32:
    return llvm::Type::getInt32Ty(c);
  case DType::I64:
    return llvm::Type::getInt64Ty(c);
  case DType::F32:
    return llvm::Type::getFloatTy(c);
  case DType::F64:
    return llvm::Type::getDoubleTy(c);
  }
  throw Error("irType: unknown dtype");
}

llvm::Constant* constantOf(llvm::LLVMContext& c, DType t, double value) {
  llvm::Type* ty = irType(c, t);
  if (ir::isFloat(t))
    return llvm::ConstantFP::get(
        ty, t == DType::F32 ? static_cast<double>(static_cast<float>(value)) : value);
  if (t == DType::Bool)
    return llvm::ConstantInt::get(ty, value != 0.0);
  // The conversion the interpreter's fromDouble<T> makes, in T itself.
  int64_t v = t == DType::I32 ? ir::scalar::toInteger<int32_t>(value)
                              : ir::scalar::toInteger<int64_t>(value);
  return llvm::ConstantInt::get(ty, static_cast<uint64_t>(v), true);
}

namespace {

/// A call of the C library's `name` (float: `name` + "f") on `args`.
llvm::Value* libm(OpSite& s, const char* name, DType t, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Type* ty = irType(s.b.getContext(), t);
  std::string fn = t == DType::F32 ? std::string(name) + "f" : std::string(name);
  llvm::SmallVector<llvm::Type*, 2> params(args.size(), ty);
  llvm::FunctionCallee callee =
      s.m.getOrInsertFunction(fn, llvm::FunctionType::get(ty, params, false));
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->setDoesNotThrow();
    f->setDoesNotAccessMemory(); // errno aside: lets loops around them be optimized
  }
  return s.b.CreateCall(callee, args);
}

llvm::Value* intrinsic(OpSite& s, llvm::Intrinsic::ID id, llvm::Value* x) {
  return s.b.CreateUnaryIntrinsic(id, x);
}

/// Integer `base` to the power `e` by squaring, wrapping; a negative `e` fails.
llvm::Value* intPow(OpSite& s, llvm::Value* base, llvm::Value* e) {
  llvm::IRBuilder<>& b = s.b;
  llvm::Type* ty = base->getType();
  llvm::Constant* zero = llvm::ConstantInt::get(ty, 0);
  llvm::Value* negative = b.CreateICmpSLT(e, zero);
  s.fail(negative);
  llvm::Value* e0 = b.CreateSelect(negative, zero, e);
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* entry = b.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(b.getContext(), "pow.loop", f);
  llvm::BasicBlock* step = llvm::BasicBlock::Create(b.getContext(), "pow.step", f);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(b.getContext(), "pow.done", f);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::PHINode* r = b.CreatePHI(ty, 2, "pow.r");
  llvm::PHINode* x = b.CreatePHI(ty, 2, "pow.x");
  llvm::PHINode* n = b.CreatePHI(ty, 2, "pow.n");
  r->addIncoming(llvm::ConstantInt::get(ty, 1), entry);
  x->addIncoming(base, entry);
  n->addIncoming(e0, entry);
  b.CreateCondBr(b.CreateICmpSGT(n, zero), step, done);
  b.SetInsertPoint(step);
  llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(n, llvm::ConstantInt::get(ty, 1)), zero);
  r->addIncoming(b.CreateSelect(odd, b.CreateMul(r, x), r), step);
  x->addIncoming(b.CreateMul(x, x), step);
  n->addIncoming(b.CreateLShr(n, llvm::ConstantInt::get(ty, 1)), step);
  b.CreateBr(loop);
  b.SetInsertPoint(done);
  return r;
}

/// Integer a / b truncating toward zero (div) or its remainder, the sign of a
/// (C's %), with b == -1 done apart (MIN / -1 wraps; MIN % -1 is 0); b == 0 fails.
llvm::Value* intDivide(OpSite& s, bool remainder, llvm::Value* a, llvm::Value* d) {
  llvm::IRBuilder<>& b = s.b;
  llvm::Type* ty = a->getType();
  llvm::Constant *zero = llvm::ConstantInt::get(ty, 0), *one = llvm::ConstantInt::get(ty, 1),
                 *minusOne = llvm::ConstantInt::getSigned(ty, -1);
  llvm::Value* byZero = b.CreateICmpEQ(d, zero);
  s.fail(byZero);
  llvm::Value* byMinusOne = b.CreateICmpEQ(d, minusOne);
  llvm::Value* safe = b.CreateSelect(b.CreateOr(byZero, byMinusOne), one, d);
  if (!remainder)
    return b.CreateSelect(byMinusOne, b.CreateSub(zero, a), b.CreateSDiv(a, safe));
  return b.CreateSRem(a, safe); // a % 1 == 0 where b is -1
}

/// The primitives of ir/Formulas.h as instructions on values of dtype `t`.
/// `site` may be null where no integer division, remainder or fmod is made.
struct Primitives {
  llvm::IRBuilder<>& b;
  OpSite* site;
  DType t;

  bool isFloat() const { return ir::isFloat(t); }
  llvm::Value* constant(double c) const { return constantOf(b.getContext(), t, c); }
  llvm::Value* neg(llvm::Value* x) const {
    return isFloat() ? b.CreateFNeg(x) : b.CreateSub(constant(0), x);
  }
  llvm::Value* add(llvm::Value* x, llvm::Value* y) const {
    return isFloat() ? b.CreateFAdd(x, y) : b.CreateAdd(x, y);
  }
  llvm::Value* sub(llvm::Value* x, llvm::Value* y) const {
    return isFloat() ? b.CreateFSub(x, y) : b.CreateSub(x, y);
  }
  llvm::Value* mul(llvm::Value* x, llvm::Value* y) const {
    return isFloat() ? b.CreateFMul(x, y) : b.CreateMul(x, y);
  }
  llvm::Value* div(llvm::Value* x, llvm::Value* y) const {
    return isFloat() ? b.CreateFDiv(x, y) : intDivide(*site, false, x, y);
  }
  llvm::Value* exp(llvm::Value* x) const { return emitExp(b, x); }
  llvm::Value* sqrt(llvm::Value* x) const {
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
  }
  // Ordered for floats (NaN compares false) but for ne; signed for integers.
  llvm::Value* lt(llvm::Value* x, llvm::Value* y) const {
    return isFloat() ? b.CreateFCmpOLT(x, y) : b.CreateICmpSLT(x, y);
  }
  llvm::Value* gt(llvm::Value* x, llvm::Value* y) const {
    return isFloat() ? b.CreateFCmpOGT(x, y) : b.CreateICmpSGT(x, y);
  }
  llvm::Value* ge(llvm::Value* x, llvm::Value* y) const {
    return isFloat() ? b.CreateFCmpOGE(x, y) : b.CreateICmpSGE(x, y);
  }
  llvm::Value* ne(llvm::Value* x, llvm::Value* y) const {
    return isFloat() ? b.CreateFCmpUNE(x, y) : b.CreateICmpNE(x, y);
  }
  llvm::Value* isNan(llvm::Value* x) const {
    return isFloat() ? b.CreateFCmpUNO(x, x) : b.getFalse();
  }
  llvm::Value* either(llvm::Value* c, llvm::Value* d) const { return b.CreateOr(c, d); }
  llvm::Value* both(llvm::Value* c, llvm::Value* d) const { return b.CreateAnd(c, d); }
  llvm::Value* differ(llvm::Value* c, llvm::Value* d) const { return b.CreateICmpNE(c, d); }
  llvm::Value* select(llvm::Value* c, llvm::Value* x, llvm::Value* y) const {
    return b.CreateSelect(c, x, y);
  }
  llvm::Value* truncRem(llvm::Value* x, llvm::Value* y) const {
    return isFloat() ? libm(*site, "fmod", t, {x, y}) : intDivide(*site, true, x, y);
  }
  static llvm::Value* let(llvm::Value* x) { return x; }
};

} // namespace

llvm::Value* convert(llvm::IRBuilder<>& b, llvm::Value* v, DType from, DType to) {
  if (from == to)
    return v;
  llvm::Type* ty = irType(b.getContext(), to);
  if (to == DType::Bool) {
    Primitives p{b, nullptr, from};
    return ir::formula::toBool(p, v);
  }
  if (from == DType::Bool)
    return ir::isFloat(to) ? b.CreateUIToFP(v, ty) : b.CreateZExt(v, ty);
  if (ir::isInteger(from))
    return ir::isFloat(to) ? b.CreateSIToFP(v, ty) : b.CreateSExtOrTrunc(v, ty);
  return ir::isFloat(to) ? b.CreateFPCast(v, ty) : b.CreateFPToSI(v, ty);
}

llvm::Value* emitOp(OpSite& s, Op op, DType t, DType result, llvm::ArrayRef<llvm::Value*> args) {
  llvm::IRBuilder<>& b = s.b;
  bool isFloat = ir::isFloat(t);
  llvm::Value* a = args.empty() ? nullptr : args[0];
  llvm::Value* c = args.size() > 1 ? args[1] : nullptr;
  Primitives p{b, &s, t};
  auto needFloat = [&] {
    if (!isFloat)
      throw Error(fmt::format("emitCpu: {} of {} has no host form", ir::opName(op).str(),
                              ir::dtypeName(t).str()));
  };
  auto math = [&](const char* fn) {
    needFloat();
    return libm(s, fn, t, args);
  };
  // Inline, vectorizable forms (codegen/LlvmMath.h).
  auto inlineMath = [&](llvm::Value* (*fn)(llvm::IRBuilder<>&, llvm::Value*)) {
    needFloat();
    return fn(b, a);
  };
  // Comparisons: ordered for floats (NaN compares false but for ne), signed for
  // integers, unsigned for bools (false < true).
  auto compare = [&](llvm::CmpInst::Predicate f, llvm::CmpInst::Predicate i,
                     llvm::CmpInst::Predicate u) {
    return b.CreateCmp(isFloat ? f : t == DType::Bool ? u : i, a, c);
  };
  using P = llvm::CmpInst::Predicate;
  namespace formula = ir::formula;
  switch (op) {
  case Op::Neg:
    return p.neg(a);
  case Op::Abs:
    return formula::abs(p, a);
  case Op::Sign:
    return formula::sign(p, a);
  case Op::Square:
    return formula::square(p, a);
  case Op::Relu:
    return formula::relu(p, a);
  case Op::Exp:
    return inlineMath(emitExp);
  case Op::Log:
    return inlineMath(emitLog);
  case Op::Log1p:
    return inlineMath(emitLog1p);
  case Op::Expm1:
    return inlineMath(emitExpm1);
  case Op::Sqrt:
    needFloat();
    return p.sqrt(a);
  case Op::Rsqrt:
    needFloat();
    return formula::rsqrt(p, a);
  case Op::Reciprocal:
    needFloat();
    return formula::reciprocal(p, a);
  case Op::Sin:
    return math("sin");
  case Op::Cos:
    return math("cos");
  case Op::Tanh:
    return inlineMath(emitTanh);
  case Op::Sigmoid:
    needFloat();
    return formula::sigmoid(p, a);
  case Op::Erf:
    return math("erf");
  case Op::Floor:
    needFloat();
    return intrinsic(s, llvm::Intrinsic::floor, a);
  case Op::Ceil:
    needFloat();
    return intrinsic(s, llvm::Intrinsic::ceil, a);
  case Op::Round: // half to even
    needFloat();
    return intrinsic(s, llvm::Intrinsic::nearbyint, a);
  case Op::Add:
    return p.add(a, c);
  case Op::Sub:
    return p.sub(a, c);
  case Op::Mul:
    return p.mul(a, c);
  case Op::Div:
    return p.div(a, c);
  case Op::Pow:
    return isFloat ? libm(s, "pow", t, args) : intPow(s, a, c);
  case Op::Maximum:
    return formula::maximum(p, a, c);
  case Op::Minimum:
    return formula::minimum(p, a, c);
  case Op::Atan2:
    return math("atan2");
  case Op::Remainder:
    return formula::remainder(p, a, c);
  case Op::Eq:
    return compare(P::FCMP_OEQ, P::ICMP_EQ, P::ICMP_EQ);
  case Op::Ne:
    return compare(P::FCMP_UNE, P::ICMP_NE, P::ICMP_NE);
  case Op::Lt:
    return compare(P::FCMP_OLT, P::ICMP_SLT, P::ICMP_ULT);
  case Op::Le:
    return compare(P::FCMP_OLE, P::ICMP_SLE, P::ICMP_ULE);
  case Op::Gt:
    return compare(P::FCMP_OGT, P::ICMP_SGT, P::ICMP_UGT);
  case Op::Ge:
    return compare(P::FCMP_OGE, P::ICMP_SGE, P::ICMP_UGE);
  case Op::Not:
    return b.CreateNot(a);
  case Op::And:
    return b.CreateAnd(a, c);
  case Op::Or:
    return b.CreateOr(a, c);
  case Op::Select:
    return b.CreateSelect(a, c, args[2]);
  case Op::Cast:
    return convert(b, a, t, result);
  GRAPHC_SOURCE_CASES:
  GRAPHC_SHAPE_CASES:
  GRAPHC_REDUCE_CASES:
  GRAPHC_LINALG_CASES:
  GRAPHC_ASSUME_CASES:
  GRAPHC_COLLECTIVE_CASES:
    throw Error(fmt::format("emitCpu: {} cannot be part of a kernel", ir::opName(op).str()));
  }
  ir::unknownOp();
}

} // namespace graphc::codegen::llvmir
