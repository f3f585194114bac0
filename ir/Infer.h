//===- ir/Infer.h - Shape and dtype rules of every op -----------*- C++ -*-===//
//
// The typing rules of the IR in one place. Graph::create applies them to every new
// node and the verifier re-applies them to whole graphs. A broken rule throws a
// graphc::Error whose message names the op and its operands' types, e.g.
//   matmul(f64[3,4], f64[5,2]): contracted dimensions differ (4 vs 5)
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Attr.h"
#include "ir/Op.h"
#include "ir/Types.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

namespace graphc::ir {

using TypeList = llvm::SmallVector<TensorType, 1>;

/// Checks `attrs` against the schema of `op`: no unknown attribute, every required
/// one present, each of the declared kind. Throws graphc::Error.
void checkAttrs(Op op, const Attrs& attrs);

/// The result types of `op` applied to operands of types `operands` with `attrs`.
/// `given` holds annotated result types: required for source ops (which have no
/// operands to infer from), checked against the inferred types for all others.
/// Checks the attributes too. Throws graphc::Error naming the op and operand types.
TypeList inferTypes(Op op, llvm::ArrayRef<TensorType> operands, const Attrs& attrs,
                    llvm::ArrayRef<TensorType> given = {});

/// The NumPy broadcast of two shapes, or nullopt when they do not broadcast.
std::optional<Shape> broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

} // namespace graphc::ir
