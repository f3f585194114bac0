//===- frontend/Ops.h - Elementwise math, operators and factories -*- C++ -*-===//
//
// Elementwise functions of the DSL, one per elementwise op of ir/Ops.def, and the
// C++ operators over them. Operands broadcast NumPy-style: a `broadcast_to` node is
// inserted for each operand whose shape differs from the common one. Scalars mix in
// as `full` constants of the tensor operand's dtype. Tensors of different dtypes do
// not mix: cast() explicitly.
//
//   Tensor y = relu(x * w + b) * sigmoid(x) + tanh(x - b);
//   Tensor m = where(x > 0.0, x, 0.1 * x);
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/Tensor.h"
#include "ir/ElementwiseOps.h"

#include <vector>

namespace graphc {

// One function per elementwise op of ir/Ops.def, named as the op (ir/ElementwiseOps.h:
// `eq`, `lt`, ...; `not`, `and`, `or`, which C++ reserves, are `logical_not`,
// `logical_and` and `logical_or`).

/// Applies a unary elementwise op.
Tensor unary(ir::Op op, const Tensor& x, SrcLoc loc = SrcLoc::current());
/// Applies a binary elementwise op with broadcasting; at least one operand is a tensor.
Tensor binary(ir::Op op, const Operand& a, const Operand& b);

#define GRAPHC_DECLARE_UNARY(name, Code)                                                           \
  /** Elementwise `name` (ir op Code). */                                                          \
  Tensor name(const Tensor& x, SrcLoc loc = SrcLoc::current());
GRAPHC_UNARY_ELEMENTWISE_OPS(GRAPHC_DECLARE_UNARY)
#undef GRAPHC_DECLARE_UNARY

#define GRAPHC_DECLARE_BINARY(name, Code)                                                          \
  /** Elementwise `name` (ir op Code), broadcasting. */                                            \
  Tensor name(const Operand& a, const Operand& b);
GRAPHC_BINARY_ELEMENTWISE_OPS(GRAPHC_DECLARE_BINARY)
#undef GRAPHC_DECLARE_BINARY

/// Elementwise `cond ? a : b`, broadcasting all three; `cond` must be bool.
Tensor select(const Operand& cond, const Operand& a, const Operand& b);
/// NumPy's name for select().
inline Tensor where(const Operand& cond, const Operand& a, const Operand& b) {
  return select(cond, a, b);
}
/// Elementwise conversion to `dtype` (a no-op when the dtype is already `dtype`).
Tensor cast(const Tensor& x, DType dtype, SrcLoc loc = SrcLoc::current());
/// min(max(x, lo), hi).
Tensor clip(const Tensor& x, double lo, double hi, SrcLoc loc = SrcLoc::current());

/// Arithmetic, comparison and logical operators; each is the function named beside.
Tensor operator+(const Operand& a, const Operand& b);  ///< add
Tensor operator-(const Operand& a, const Operand& b);  ///< sub
Tensor operator*(const Operand& a, const Operand& b);  ///< mul (elementwise; see matmul)
Tensor operator/(const Operand& a, const Operand& b);  ///< div
Tensor operator-(const Operand& x);                    ///< neg
Tensor operator==(const Operand& a, const Operand& b); ///< eq
Tensor operator!=(const Operand& a, const Operand& b); ///< ne
Tensor operator<(const Operand& a, const Operand& b);  ///< lt
Tensor operator<=(const Operand& a, const Operand& b); ///< le
Tensor operator>(const Operand& a, const Operand& b);  ///< gt
Tensor operator>=(const Operand& a, const Operand& b); ///< ge
Tensor operator&(const Operand& a, const Operand& b);  ///< logical_and
Tensor operator|(const Operand& a, const Operand& b);  ///< logical_or
Tensor operator!(const Operand& x);                    ///< logical_not

/// Compound assignment rebinds the handle to the new value.
Tensor& operator+=(Tensor& a, const Operand& b);
Tensor& operator-=(Tensor& a, const Operand& b);
Tensor& operator*=(Tensor& a, const Operand& b);
Tensor& operator/=(Tensor& a, const Operand& b);

//===--- Factories: constant tensors ---------------------------------------===//

/// Every element `value`.
Tensor full(llvm::ArrayRef<int64_t> shape, double value, DType dtype = DType::F64,
            SrcLoc loc = SrcLoc::current());
/// full(shape, 0).
Tensor zeros(llvm::ArrayRef<int64_t> shape, DType dtype = DType::F64,
             SrcLoc loc = SrcLoc::current());
/// full(shape, 1).
Tensor ones(llvm::ArrayRef<int64_t> shape, DType dtype = DType::F64,
            SrcLoc loc = SrcLoc::current());
/// The n x n identity.
Tensor eye(int64_t n, DType dtype = DType::F64, SrcLoc loc = SrcLoc::current());
/// Identity matrices of `shape` (rank >= 2; batched over leading axes, may be non-square).
Tensor eye(llvm::ArrayRef<int64_t> shape, DType dtype = DType::F64, SrcLoc loc = SrcLoc::current());
/// Element i0,...,ik holds its index along `axis` (negative axes count from the end).
Tensor iota(llvm::ArrayRef<int64_t> shape, int64_t axis = 0, DType dtype = DType::I64,
            SrcLoc loc = SrcLoc::current());
/// A constant holding `values` in C order.
Tensor constant(const std::vector<double>& values, llvm::ArrayRef<int64_t> shape,
                DType dtype = DType::F64, SrcLoc loc = SrcLoc::current());
/// A rank-0 constant.
Tensor scalar(double value, DType dtype = DType::F64, SrcLoc loc = SrcLoc::current());

} // namespace graphc
