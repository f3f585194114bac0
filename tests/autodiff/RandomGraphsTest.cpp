//===- tests/autodiff/RandomGraphsTest.cpp - Derivatives of random graphs --===//
//
// 120 random well-typed f64 graphs (tests/support/RandomGraph) over the smooth ops,
// the shape ops, reductions and matrix products, each checked like a rule
// (DerivativeCheck.h): tangents against central differences, the transposition
// identity, and the optimized derivative graphs against the unoptimized ones.
//
//===----------------------------------------------------------------------===//
#include "DerivativeCheck.h"

#include "support/RandomGraph.h"

#include <gtest/gtest.h>

#include <cmath>

namespace graphc {
namespace {

/// All values f64 and every constant finite and of moderate size: graphs whose
/// derivatives finite differences can check.
bool checkable(const ir::Graph& g) {
  for (const ir::Node* n : g.nodes()) {
    for (const ir::TensorType& t : n->types())
      if (t.dtype != ir::DType::F64)
        return false;
    std::vector<double> values;
    if (n->op() == ir::Op::Full)
      values = {n->attrs().getFloat("value")};
    if (n->op() == ir::Op::Constant)
      values = n->attrs().getFloats("value");
    for (double v : values)
      if (!(std::abs(v) <= 10))
        return false;
  }
  return !g.params().empty();
}

TEST(AutodiffRandomGraphs, DerivativesMatchFiniteDifferences) {
  testing::RandomGraphOptions options;
  options.floatOnly = true;
  options.numNodes = 12;
  options.ops = {ir::Op::Add,     ir::Op::Sub,       ir::Op::Mul,   ir::Op::Neg,
                 ir::Op::Tanh,    ir::Op::Sin,       ir::Op::Cos,   ir::Op::Sigmoid,
                 ir::Op::Square,  ir::Op::Full,      ir::Op::Eye,   ir::Op::BroadcastTo,
                 ir::Op::Reshape, ir::Op::Transpose, ir::Op::Slice, ir::Op::Concat,
                 ir::Op::Matmul,  ir::Op::Syrk,      ir::Op::Sum,   ir::Op::Mean,
                 ir::Op::Var,     ir::Op::Max,       ir::Op::Diag,  ir::Op::DiagPart,
                 ir::Op::Triu,    ir::Op::Tril,      ir::Op::Trace};
  testing::RandomGraphGenerator gen(2026, options);
  int checked = 0;
  std::map<ir::Op, int> seen;
  for (int i = 0; checked < 120 && i < 4000; ++i) {
    std::unique_ptr<ir::Graph> g = gen.generate("random" + std::to_string(i));
    if (!checkable(*g))
      continue;
    for (const ir::Node* n : g->nodes())
      ++seen[n->op()];
    testing::checkDerivatives(*g, 1000 + i);
    ++checked;
  }
  EXPECT_EQ(checked, 120);
  for (ir::Op op : options.ops)
    EXPECT_GT(seen[op], 0) << "no random graph used " << ir::opName(op).str();
}

} // namespace
} // namespace graphc
