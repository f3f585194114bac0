//===- codegen/LlvmOps.h - Elementwise ops as LLVM IR -----------*- C++ -*-===//
//
// Internal to codegen/Llvm.cpp: the IR of one elementwise op at one point, the
// host counterpart of codegen/Cuda.cpp's Emitter::compute and of
// runtime/cpu/Elementwise.cpp. Values in registers have the IR type of their dtype
// (irType: i1 for bool); exp, log, expm1, log1p, tanh and sigmoid are inline
// (codegen/LlvmMath.h), the other transcendental functions call the C library
// (sinf, sin, ...), which the JIT resolves in the process.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Op.h"
#include "ir/Types.h"

#include "llvm/IR/IRBuilder.h"

#include <functional>

namespace graphc::codegen::llvmir {

/// The register type of `t`: i1, i32, i64, float, double.
llvm::Type* irType(llvm::LLVMContext& c, ir::DType t);

/// `value` (a double attribute) as a constant of type `t`, as runtime/cpu's
/// fromDouble converts it.
llvm::Constant* constantOf(llvm::LLVMContext& c, ir::DType t, double value);

/// `v` of dtype `from` converted to `to` as C++'s static_cast (to bool: != 0).
llvm::Value* convert(llvm::IRBuilder<>& b, llvm::Value* v, ir::DType from, ir::DType to);

/// Where an op emits its code.
struct OpSite {
  llvm::IRBuilder<>& b;
  llvm::Module& m;
  /// Records that the instruction fails where `cond` (i1) holds: integer division or
  /// remainder by zero, a negative integer power.
  std::function<void(llvm::Value* cond)> fail;
};

/// The result of elementwise `op` on `args` whose element type is `operand`
/// (select's: its second and third) with result type `result`. Throws
/// graphc::Error for an op that is not elementwise or has no form for `operand`.
llvm::Value* emitOp(OpSite& site, ir::Op op, ir::DType operand, ir::DType result,
                    llvm::ArrayRef<llvm::Value*> args);

} // namespace graphc::codegen::llvmir
