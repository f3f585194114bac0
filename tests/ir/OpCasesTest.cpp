//===- tests/ir/OpCasesTest.cpp - The generated case labels of each kind --===//
//
// ir/OpCases.h is written from ir/Ops.def at configure time. Each kind's labels
// must hold exactly that kind's ops: the switches below fail to compile on an op in
// two kinds (a duplicate case) and warn on one in none (-Wswitch), and the tests
// compare each op's kind through the labels with the table's.
//
//===----------------------------------------------------------------------===//
#include "ir/OpCases.h"

#include <gtest/gtest.h>

namespace graphc::ir {
namespace {

/// The kind of `op`, read through the generated labels.
OpKind kindByCases(Op op) {
  switch (op) {
  GRAPHC_SOURCE_CASES:
    return OpKind::Source;
  GRAPHC_UNARY_CASES:
    return OpKind::Unary;
  GRAPHC_BINARY_CASES:
    return OpKind::Binary;
  GRAPHC_COMPARE_CASES:
    return OpKind::Compare;
  GRAPHC_LOGICAL_CASES:
    return OpKind::Logical;
  GRAPHC_SELECT_CASES:
    return OpKind::Select;
  GRAPHC_CAST_CASES:
    return OpKind::Cast;
  GRAPHC_SHAPE_CASES:
    return OpKind::Shape;
  GRAPHC_REDUCE_CASES:
    return OpKind::Reduce;
  GRAPHC_LINALG_CASES:
    return OpKind::Linalg;
  GRAPHC_ASSUME_CASES:
    return OpKind::Assume;
  GRAPHC_COLLECTIVE_CASES:
    return OpKind::Collective;
  }
  unknownOp();
}

TEST(OpCases, EachKindsLabelsHoldItsOps) {
  for (const OpInfo& info : allOps())
    EXPECT_EQ(kindByCases(info.op), info.kind) << info.name.str();
}

bool elementwiseByCases(Op op) {
  switch (op) {
  GRAPHC_ELEMENTWISE_CASES:
    return true;
  GRAPHC_SOURCE_CASES:
  GRAPHC_SHAPE_CASES:
  GRAPHC_REDUCE_CASES:
  GRAPHC_LINALG_CASES:
  GRAPHC_ASSUME_CASES:
  GRAPHC_COLLECTIVE_CASES:
    return false;
  }
  unknownOp();
}

TEST(OpCases, ElementwiseLabelsAreTheElementwiseKinds) {
  for (const OpInfo& info : allOps())
    EXPECT_EQ(elementwiseByCases(info.op), isElementwise(info.kind)) << info.name.str();
}

/// True for the shape ops, read as "shape" or "every op but shape".
bool shapeByComplement(Op op) {
  switch (op) {
  GRAPHC_SHAPE_CASES:
    return true;
  GRAPHC_ALL_BUT_SHAPE_CASES:
    return false;
  }
  unknownOp();
}

bool linalgByComplement(Op op) {
  switch (op) {
  GRAPHC_LINALG_CASES:
    return true;
  GRAPHC_ALL_BUT_LINALG_CASES:
    return false;
  }
  unknownOp();
}

TEST(OpCases, AllButAKindIsItsComplement) {
  for (const OpInfo& info : allOps()) {
    EXPECT_EQ(shapeByComplement(info.op), info.kind == OpKind::Shape) << info.name.str();
    EXPECT_EQ(linalgByComplement(info.op), info.kind == OpKind::Linalg) << info.name.str();
  }
}

TEST(OpCases, AValueOutsideTheTableIsAnInternalError) {
  EXPECT_THROW(kindByCases(static_cast<Op>(allOps().size())), Error);
}

} // namespace
} // namespace graphc::ir
