//===- ir/Op.h - Op codes and their static description ----------*- C++ -*-===//
//
// The Op enum, and for each op its text spelling, operand and result counts, kind
// and attribute schema, all expanded from ir/Ops.def.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Attr.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace graphc::ir {

/// Every op of the IR.
enum class Op : uint16_t {
#define GRAPHC_OP(Name, Spelling, NumOperands, NumResults, Kind, Schema) Name,
#include "ir/Ops.def"
};

/// The broad class of an op; drives inference, printing and later fusion.
enum class OpKind : uint8_t {
  Source,     ///< no operands; result type given
  Unary,      ///< elementwise, numeric in, same type out
  Binary,     ///< elementwise, two numeric operands of one type
  Compare,    ///< elementwise, bool out
  Logical,    ///< elementwise on bool
  Select,     ///< elementwise select(cond, a, b)
  Cast,       ///< elementwise dtype conversion
  Shape,      ///< data movement
  Reduce,     ///< reduction over axes
  Linalg,     ///< matrix ops, batched over leading axes
  Assume,     ///< identity on square matrices asserting a structure (assume_spd, ...)
  Collective, ///< a reduction over the ranks of a sharded run (all_reduce)
};

/// One entry of an op's attribute schema.
struct AttrSpec {
  llvm::StringRef name;
  AttrKind kind;
  bool optional;
};

/// The static description of an op.
struct OpInfo {
  Op op;
  llvm::StringRef name; ///< text spelling
  int numOperands;      ///< -1: variadic (at least one)
  int numResults;
  OpKind kind;
  llvm::ArrayRef<AttrSpec> attrs;
};

/// The description of `op`.
const OpInfo& opInfo(Op op);
/// The text spelling of `op`.
inline llvm::StringRef opName(Op op) {
  return opInfo(op).name;
}
/// The op spelled `name`, if any.
std::optional<Op> parseOpName(llvm::StringRef name);
/// All ops, in table order.
llvm::ArrayRef<OpInfo> allOps();
/// The schema entry for attribute `name` of `op`, or nullptr.
const AttrSpec* findAttrSpec(Op op, llvm::StringRef name);

inline bool isElementwise(OpKind k) {
  return k == OpKind::Unary || k == OpKind::Binary || k == OpKind::Compare ||
         k == OpKind::Logical || k == OpKind::Select || k == OpKind::Cast;
}

} // namespace graphc::ir
