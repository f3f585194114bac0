//===- codegen/LlvmMath.h - Vectorizable elementary functions ---*- C++ -*-===//
//
// Internal to codegen/LlvmOps.cpp: exp, log, expm1, log1p and tanh of a float or
// double as straight-line LLVM IR (range reduction, a polynomial, selects for the
// special values), so that loops over them vectorize where a call of the C
// library's function would keep them scalar. The same IR works on vectors of
// float or double.
//
// Accuracy against the exact result (tests/codegen/CpuMathTest.cpp bounds it
// through compiled kernels, over random inputs of the whole range and the special
// values, against libm in long double or double): exp and log within 2 ulp;
// expm1, log1p and tanh within 3 ulp. NaN in gives NaN; +-inf, overflow (to inf),
// underflow (through the subnormals to 0), log of 0 (-inf) and of a negative
// number (NaN) as IEEE and C99's Annex F say. The polynomials are evaluated with
// llvm.fmuladd: fused where the host has FMA, so the last bit may differ between
// hosts (both within the bounds), never between runs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/IR/IRBuilder.h"

namespace graphc::codegen::llvmir {

/// e^x.
llvm::Value* emitExp(llvm::IRBuilder<>& b, llvm::Value* x);
/// e^x - 1, accurate near 0.
llvm::Value* emitExpm1(llvm::IRBuilder<>& b, llvm::Value* x);
/// The natural logarithm.
llvm::Value* emitLog(llvm::IRBuilder<>& b, llvm::Value* x);
/// log(1 + x), accurate near 0.
llvm::Value* emitLog1p(llvm::IRBuilder<>& b, llvm::Value* x);
/// The hyperbolic tangent.
llvm::Value* emitTanh(llvm::IRBuilder<>& b, llvm::Value* x);

} // namespace graphc::codegen::llvmir
