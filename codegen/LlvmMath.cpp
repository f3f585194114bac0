//===- codegen/LlvmMath.cpp - Vectorizable elementary functions -----------===//
//
// exp and expm1: x = n ln2 + r with n = rint(x / ln2) and ln2 in two parts (the
// first with few bits, so n * ln2_hi is exact: Cody and Waite), |r| <= ln2 / 2,
// e^r by its Taylor polynomial (degree 13 in double, 7 in float; the truncation
// is under 2^-60 and 2^-27 of the result); 2^n is put together from its bits in
// two factors, so results down through the subnormals round once. x is clamped
// first to a range whose ends already overflow or underflow, which also keeps
// every conversion defined.
//
// log: x = 2^k m with m in [sqrt(2)/2, sqrt(2)) read from the bits (subnormals
// scaled by 2^60 first); log(m) = f - f^2/2 + s (f^2/2 + R(s^2)) with f = m - 1,
// s = f / (2 + f) and R fdlibm's minimax polynomial (e_log.c, e_logf.c); k ln2
// added in two parts. log1p corrects log(1 + x) by the rounding of 1 + x
// (Goldberg); tanh is -t / (2 + t) with t = expm1(-2|x|), its sign copied back.
//
//===----------------------------------------------------------------------===//
#include "codegen/LlvmMath.h"

#include "llvm/IR/Intrinsics.h"

#include <initializer_list>

namespace graphc::codegen::llvmir {
namespace {

/// Constants and helpers for one floating-point (vector) type.
class Math {
public:
  Math(llvm::IRBuilder<>& b, llvm::Value* x)
      : b(b), t(x->getType()), f64(t->getScalarType()->isDoubleTy()),
        bits(like(f64 ? b.getInt64Ty() : b.getInt32Ty())), exps(like(b.getInt32Ty())) {}

  llvm::IRBuilder<>& b;
  llvm::Type* t;
  bool f64;
  llvm::Type* bits; ///< the integer type of t's size
  llvm::Type* exps; ///< i32 of t's shape, for exponents

  int mantissa() const { return f64 ? 52 : 23; }
  int bias() const { return f64 ? 1023 : 127; }
  llvm::Value* c(double v) { return llvm::ConstantFP::get(t, v); }
  llvm::Value* ci(llvm::Type* ty, int64_t v) {
    return llvm::ConstantInt::get(ty, static_cast<uint64_t>(v), true);
  }
  llvm::Value* fma(llvm::Value* x, llvm::Value* y, llvm::Value* z) {
    return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t}, {x, y, z});
  }
  /// sum coeffs[j] x^(n-1-j): the highest power first.
  llvm::Value* horner(llvm::Value* x, std::initializer_list<double> coeffs) {
    llvm::Value* p = nullptr;
    for (double k : coeffs)
      p = p ? fma(p, x, c(k)) : c(k);
    return p;
  }
  llvm::Value* isNan(llvm::Value* x) { return b.CreateFCmpUNO(x, x); }
  /// x clamped to [lo, hi]; NaN becomes lo.
  llvm::Value* clamp(llvm::Value* x, double lo, double hi) {
    llvm::Value* up = b.CreateSelect(b.CreateFCmpOGT(x, c(lo)), x, c(lo));
    return b.CreateSelect(b.CreateFCmpOLT(up, c(hi)), up, c(hi));
  }
  /// 2^n for an exponent n (i32) of a normal number.
  llvm::Value* pow2(llvm::Value* n) {
    llvm::Value* e = b.CreateAdd(b.CreateSExtOrTrunc(n, bits), ci(bits, bias()));
    return b.CreateBitCast(b.CreateShl(e, ci(bits, mantissa())), t);
  }
  /// n = rint(x / ln2) (as t and as i32) and r = x - n ln2.
  void reduce(llvm::Value* x, llvm::Value*& n, llvm::Value*& ni, llvm::Value*& r) {
    n = b.CreateUnaryIntrinsic(llvm::Intrinsic::rint, b.CreateFMul(x, c(1.4426950408889634)));
    // ln2 = hi + lo, hi with few enough bits that n * hi is exact.
    double hi = f64 ? 6.93147180369123816490e-01 : 0.693359375;
    double lo = f64 ? 1.90821492927058770002e-10 : -2.12194440e-4;
    r = fma(n, c(-hi), x);
    r = fma(n, c(-lo), r);
    ni = b.CreateFPToSI(n, exps);
  }
  /// e^r - 1 for |r| <= ln2 / 2: r (1 + r/2! + ... ) by Taylor.
  llvm::Value* expm1Reduced(llvm::Value* r) {
    llvm::Value* p = f64 ? horner(r, {1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0,
                                      1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0,
                                      1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0})
                         : horner(r, {1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0,
                                      1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0});
    return b.CreateFMul(p, r);
  }

private:
  llvm::Type* like(llvm::Type* element) const {
    if (auto* v = llvm::dyn_cast<llvm::VectorType>(t))
      return llvm::VectorType::get(element, v->getElementCount());
    return element;
  }
};

} // namespace

llvm::Value* emitExp(llvm::IRBuilder<>& b, llvm::Value* x) {
  Math m(b, x);
  // Beyond these ends e^x is inf or rounds to 0; n stays within [-1075, 1024].
  llvm::Value* xc = m.f64 ? m.clamp(x, -745.2, 709.8) : m.clamp(x, -104.0, 89.0);
  llvm::Value *n, *ni, *r;
  m.reduce(xc, n, ni, r);
  llvm::Value* p = b.CreateFAdd(m.expm1Reduced(r), m.c(1.0));
  // 2^n as 2^(n/2) 2^(n - n/2): both normal; the second product rounds once.
  llvm::Value* n1 = b.CreateAShr(ni, m.ci(m.exps, 1));
  llvm::Value* n2 = b.CreateSub(ni, n1);
  llvm::Value* e = b.CreateFMul(b.CreateFMul(p, m.pow2(n1)), m.pow2(n2));
  return b.CreateSelect(m.isNan(x), x, e);
}

llvm::Value* emitExpm1(llvm::IRBuilder<>& b, llvm::Value* x) {
  Math m(b, x);
  // Below the lower end e^x - 1 rounds to -1; above the upper one it overflows.
  llvm::Value* xc = m.f64 ? m.clamp(x, -40.0, 709.8) : m.clamp(x, -18.0, 89.0);
  llvm::Value *n, *ni, *r;
  m.reduce(xc, n, ni, r);
  llvm::Value* q = m.expm1Reduced(r);
  // 2^n (1 + q) - 1 = 2^n q + (2^n - 1); n = 1024 as 2^1023 doubled (float: 128).
  llvm::Value* maxExp = m.ci(m.exps, m.bias());
  llvm::Value* over = b.CreateICmpSGT(ni, maxExp);
  llvm::Value* s = m.pow2(b.CreateSelect(over, maxExp, ni));
  llvm::Value* e = m.fma(s, q, b.CreateFSub(s, m.c(1.0)));
  e = b.CreateFMul(e, b.CreateSelect(over, m.c(2.0), m.c(1.0)));
  llvm::Value* keep = b.CreateOr(m.isNan(x), b.CreateFCmpOEQ(x, m.c(0.0))); // NaN, +-0
  return b.CreateSelect(keep, x, e);
}

llvm::Value* emitLog(llvm::IRBuilder<>& b, llvm::Value* x) {
  Math m(b, x);
  double tiny = m.f64 ? 2.2250738585072014e-308 : 1.17549435e-38;
  llvm::Value* sub = b.CreateFCmpOLT(x, m.c(tiny));
  llvm::Value* xs = b.CreateSelect(sub, b.CreateFMul(x, m.c(0x1p60)), x);
  llvm::Value* bitsOf = b.CreateBitCast(xs, m.bits);
  // k: the exponent that puts m = x / 2^k in [sqrt(2)/2, sqrt(2)).
  int64_t halfSqrt2 = m.f64 ? 0x3fe6a09e667f3bcdLL : 0x3f3504f3LL;
  llvm::Value* k =
      b.CreateAShr(b.CreateSub(bitsOf, m.ci(m.bits, halfSqrt2)), m.ci(m.bits, m.mantissa()));
  llvm::Value* mant =
      b.CreateBitCast(b.CreateSub(bitsOf, b.CreateShl(k, m.ci(m.bits, m.mantissa()))), m.t);
  llvm::Value* kf = b.CreateFSub(b.CreateSIToFP(b.CreateTrunc(k, m.exps), m.t),
                                 b.CreateSelect(sub, m.c(60.0), m.c(0.0)));
  llvm::Value* f = b.CreateFSub(mant, m.c(1.0));
  llvm::Value* s = b.CreateFDiv(f, b.CreateFAdd(m.c(2.0), f));
  llvm::Value* z = b.CreateFMul(s, s);
  llvm::Value* poly =
      m.f64 ? m.horner(z, {1.479819860511658591e-01, 1.531383769920937332e-01,
                           1.818357216161805012e-01, 2.222219843214978396e-01,
                           2.857142874366239149e-01, 3.999999999940941908e-01,
                           6.666666666666735130e-01})
            : m.horner(z, {0xf89e26.0p-26, 0x91e9ee.0p-25, 0xccce13.0p-25, 0xaaaaaa.0p-24});
  llvm::Value* rest = b.CreateFMul(poly, z);
  double hi = m.f64 ? 6.93147180369123816490e-01 : 6.9313812256e-01;
  double lo = m.f64 ? 1.90821492927058770002e-10 : 9.0580006145e-06;
  llvm::Value* hfsq = b.CreateFMul(m.c(0.5), b.CreateFMul(f, f));
  // k hi - ((hfsq - (s (hfsq + R) + k lo)) - f)
  llvm::Value* inner = m.fma(s, b.CreateFAdd(hfsq, rest), b.CreateFMul(kf, m.c(lo)));
  llvm::Value* logm = b.CreateFSub(b.CreateFSub(hfsq, inner), f);
  llvm::Value* r = b.CreateFSub(b.CreateFMul(kf, m.c(hi)), logm);
  r = b.CreateSelect(b.CreateFCmpOEQ(x, m.c(0.0)), llvm::ConstantFP::getInfinity(m.t, true), r);
  r = b.CreateSelect(b.CreateFCmpOLT(x, m.c(0.0)), llvm::ConstantFP::getNaN(m.t), r);
  llvm::Value* keep =
      b.CreateOr(m.isNan(x), b.CreateFCmpOEQ(x, llvm::ConstantFP::getInfinity(m.t)));
  return b.CreateSelect(keep, x, r);
}

llvm::Value* emitLog1p(llvm::IRBuilder<>& b, llvm::Value* x) {
  Math m(b, x);
  llvm::Value* u = b.CreateFAdd(m.c(1.0), x);
  llvm::Value* l = emitLog(b, u);
  // log(1 + x) - ((u - 1) - x) / u: the rounding of u taken back to first order.
  llvm::Value* err = b.CreateFSub(b.CreateFSub(u, m.c(1.0)), x);
  llvm::Value* r = b.CreateFSub(l, b.CreateFDiv(err, u));
  // u = inf (x = inf) and u = 0 (x = -1): log(u) itself; +-0 stays.
  llvm::Value* plain = b.CreateOr(b.CreateFCmpOEQ(u, llvm::ConstantFP::getInfinity(m.t)),
                                  b.CreateFCmpOEQ(u, m.c(0.0)));
  r = b.CreateSelect(plain, l, r);
  return b.CreateSelect(b.CreateFCmpOEQ(x, m.c(0.0)), x, r);
}

llvm::Value* emitTanh(llvm::IRBuilder<>& b, llvm::Value* x) {
  Math m(b, x);
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* t = emitExpm1(b, b.CreateFMul(ax, m.c(-2.0)));
  llvm::Value* r = b.CreateFDiv(b.CreateFNeg(t), b.CreateFAdd(m.c(2.0), t));
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, r, x);
}

} // namespace graphc::codegen::llvmir
