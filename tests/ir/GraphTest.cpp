//===- tests/ir/GraphTest.cpp - Hash-consing and graph structure ----------===//
#include "ir/Graph.h"
#include "ir/Printer.h"

#include <gtest/gtest.h>

namespace graphc::ir {
namespace {

TEST(Graph, EqualNodesAreOneNode) {
  Graph g;
  Value x = g.addParameter("x", TensorType(DType::F64, {2, 3}));
  Value a = g.apply(Op::Exp, {x});
  Value b = g.apply(Op::Exp, {x});
  EXPECT_EQ(a, b);
  EXPECT_EQ(g.nodes().size(), 2u);
  // Annotated and inferred types give the same node.
  EXPECT_EQ(g.apply(Op::Exp, {x}, {}, {TensorType(DType::F64, {2, 3})}), a);
  // Attribute order and false flags do not matter.
  Value s1 = g.apply(Op::Sum, {x}, Attrs{{"axes", std::vector<int64_t>{1}}, {"keepdims", false}});
  Value s2 = g.apply(Op::Sum, {x}, Attrs{{"axes", std::vector<int64_t>{1}}});
  EXPECT_EQ(s1, s2);
}

TEST(Graph, DifferentAttrsOperandsOrOpsAreDifferentNodes) {
  Graph g;
  Value x = g.addParameter("x", TensorType(DType::F64, {2, 3}));
  Value y = g.addParameter("y", TensorType(DType::F64, {2, 3}));
  Value s0 = g.apply(Op::Sum, {x}, Attrs{{"axes", std::vector<int64_t>{0}}});
  Value s1 = g.apply(Op::Sum, {x}, Attrs{{"axes", std::vector<int64_t>{1}}});
  Value k1 = g.apply(Op::Sum, {x}, Attrs{{"axes", std::vector<int64_t>{1}}, {"keepdims", true}});
  EXPECT_NE(s0, s1);
  EXPECT_NE(s1, k1);
  EXPECT_NE(g.apply(Op::Sub, {x, y}), g.apply(Op::Sub, {y, x}));
  EXPECT_NE(g.apply(Op::Exp, {x}), g.apply(Op::Log, {x}));
  Value f1 = g.apply(Op::Full, {}, Attrs{{"value", 1.0}}, {TensorType(DType::F32, {2})});
  Value f2 = g.apply(Op::Full, {}, Attrs{{"value", 1.0}}, {TensorType(DType::F64, {2})});
  EXPECT_NE(f1, f2);
}

TEST(Graph, StructuralHashFollowsStructure) {
  Graph g;
  Value x = g.addParameter("x", TensorType(DType::F64, {2}));
  Value y = g.addParameter("y", TensorType(DType::F64, {2}));
  EXPECT_NE(g.apply(Op::Neg, {x}).node->hash(), g.apply(Op::Neg, {y}).node->hash());
}

TEST(Graph, ParametersAreNumberedAndUnique) {
  Graph g;
  Value x = g.addParameter("x", TensorType(DType::F64, {2}));
  Value y = g.addParameter("y", TensorType(DType::F64, {2}));
  EXPECT_EQ(x.node->attrs().getInt("index"), 0);
  EXPECT_EQ(y.node->attrs().getInt("index"), 1);
  EXPECT_EQ(g.findParam("y"), y.node);
  EXPECT_THROW(g.addParameter("x", TensorType(DType::F64, {2})), Error);
  EXPECT_THROW(g.addParameter("", TensorType(DType::F64, {2})), Error);
}

TEST(Graph, OperandsMustBelongToTheGraph) {
  Graph g, h;
  Value x = g.addParameter("x", TensorType(DType::F64, {2}));
  EXPECT_THROW(h.apply(Op::Neg, {x}), Error);
  EXPECT_THROW(h.addOutput(x), Error);
}

TEST(Graph, MultiResultNodes) {
  Graph g;
  Value a = g.addParameter("a", TensorType(DType::F64, {4, 3}));
  Node* qr = g.create(Op::Qr, {a});
  ASSERT_EQ(qr->numResults(), 2u);
  EXPECT_EQ(qr->type(0), TensorType(DType::F64, {4, 3}));
  EXPECT_EQ(qr->type(1), TensorType(DType::F64, {3, 3}));
  EXPECT_THROW(g.apply(Op::Qr, {a}), Error);
}

TEST(Graph, CreateErrorsCarryTheLocation) {
  Graph g;
  Value x = g.addParameter("x", TensorType(DType::I32, {2}));
  try {
    g.apply(Op::Exp, {x}, {}, {}, SourceLoc{"f.gir", 3, 7});
    FAIL() << "exp of i32 was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "f.gir:3:7: error: exp(i32[2]): needs a floating-point operand");
  }
}

TEST(Graph, StructuralEqualityIgnoresNamesButNotStructure) {
  auto build = [](bool named, Op op) {
    auto g = std::make_unique<Graph>("g");
    Value x = g->addParameter("x", TensorType(DType::F64, {2}));
    g->addOutput(g->create(op, {x}, {}, {}, {}, named ? "t" : "")->result());
    return g;
  };
  EXPECT_TRUE(structurallyEqual(*build(true, Op::Exp), *build(false, Op::Exp)));
  EXPECT_FALSE(structurallyEqual(*build(true, Op::Exp), *build(true, Op::Log)));
  auto renamed = build(true, Op::Exp);
  renamed->setName("h");
  EXPECT_FALSE(structurallyEqual(*build(true, Op::Exp), *renamed));
}

} // namespace
} // namespace graphc::ir
