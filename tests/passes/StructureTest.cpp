//===- tests/passes/StructureTest.cpp - Structure analysis rules ----------===//
//
// Each test builds a small graph the way the frontend would and checks the facts
// the analysis claims, including the cases where it must claim nothing.
//
//===----------------------------------------------------------------------===//
#include "passes/Structure.h"

#include <gtest/gtest.h>

namespace graphc::passes {
namespace {

using ir::Attrs;
using ir::DType;
using ir::Graph;
using ir::Op;
using ir::TensorType;
using ir::Value;
using S = Structure;

TensorType f64(std::initializer_list<int64_t> shape) {
  return TensorType(DType::F64, shape);
}

/// Builders that mirror what the DSL emits.
struct Builder {
  Graph g{"t"};

  Value param(const char* name, std::initializer_list<int64_t> shape) {
    return g.addParameter(name, f64(shape));
  }
  Value scalar(double c, const TensorType& like) {
    Value s = g.apply(Op::Full, {}, Attrs{{"value", c}}, {f64({})});
    return g.apply(Op::BroadcastTo, {s},
                   Attrs{{"shape", std::vector<int64_t>(like.shape.begin(), like.shape.end())}});
  }
  Value eye(int64_t n) { return g.apply(Op::Eye, {}, {}, {f64({n, n})}); }
  Value gram(Value x) { return g.apply(Op::Matmul, {x, x}, Attrs{{"transpose_b", true}}); }
  Value t(Value x) {
    return g.apply(Op::Transpose, {x}, Attrs{{"perm", std::vector<int64_t>{1, 0}}});
  }
  Value bin(Op op, Value a, Value b) { return g.apply(op, {a, b}); }
  Value un(Op op, Value a) { return g.apply(op, {a}); }
  Structure of(Value v) { return StructureMap(g)[v]; }
};

TEST(Structure, GramMatrixIsPsdNotSpd) {
  Builder b;
  Value y = b.param("y", {6, 6});
  Value c = b.gram(y);
  EXPECT_TRUE(b.of(c).has(S::PSD | S::Symmetric));
  EXPECT_FALSE(b.of(c).has(S::SPD));
  EXPECT_EQ(b.of(c).lowRank, 0); // rank 6 is not low for a 6x6 matrix
}

TEST(Structure, GramThroughExplicitTranspose) {
  Builder b;
  Value x = b.param("x", {8, 3});
  Value viaT = b.bin(Op::Matmul, b.t(x), x); // X'*X, 3x3
  Value viaFlag = b.g.apply(Op::Matmul, {x, x}, Attrs{{"transpose_a", true}});
  EXPECT_TRUE(b.of(viaT).has(S::PSD));
  EXPECT_TRUE(b.of(viaFlag).has(S::PSD));
  Value notGram = b.bin(Op::Matmul, b.t(x), b.param("z", {8, 3}));
  EXPECT_FALSE(b.of(notGram).has(S::Symmetric));
}

TEST(Structure, EnkfCovariancePlusNoiseIsSpd) {
  Builder b;
  Value yc = b.param("yc", {5, 5});
  Value cyy = b.bin(Op::Div, b.gram(yc), b.scalar(4.0, f64({5, 5})));
  Value s = b.bin(Op::Add, cyy, b.bin(Op::Mul, b.eye(5), b.scalar(0.1, f64({5, 5}))));
  EXPECT_TRUE(b.of(cyy).has(S::PSD));
  EXPECT_FALSE(b.of(cyy).has(S::SPD));
  EXPECT_TRUE(b.of(s).has(S::SPD));
}

TEST(Structure, EnsembleRegimeIsLowRankPlusDiagonal) {
  Builder b;
  Value yc = b.param("yc", {64, 4});
  Value cyy = b.bin(Op::Mul, b.gram(yc), b.scalar(1.0 / 3, f64({64, 64})));
  Value s = b.bin(Op::Add, cyy, b.bin(Op::Mul, b.eye(64), b.scalar(0.1, f64({64, 64}))));
  EXPECT_EQ(b.of(cyy).lowRank, 4);
  EXPECT_EQ(b.of(s).lowRankPlusDiagonal, 4);
  EXPECT_TRUE(b.of(s).has(S::SPD));
}

TEST(Structure, IndefiniteShiftIsNotDefinite) {
  Builder b;
  Value y = b.param("y", {5, 5});
  Value s = b.bin(Op::Sub, b.gram(y), b.bin(Op::Mul, b.eye(5), b.scalar(0.1, f64({5, 5}))));
  EXPECT_TRUE(b.of(s).has(S::Symmetric));
  EXPECT_FALSE(b.of(s).has(S::PSD));
}

TEST(Structure, NegativeScaleDropsDefiniteness) {
  Builder b;
  Value y = b.param("y", {5, 5});
  Value s = b.bin(Op::Mul, b.gram(y), b.scalar(-2.0, f64({5, 5})));
  EXPECT_TRUE(b.of(s).has(S::Symmetric));
  EXPECT_FALSE(b.of(s).has(S::PSD));
}

TEST(Structure, PositiveDiagonalsFromElementwiseFacts) {
  Builder b;
  Value v = b.param("v", {5});
  Value expDiag = b.un(Op::Diag, b.un(Op::Exp, v));
  Value sqEps = b.bin(Op::Add, b.un(Op::Square, v), b.scalar(1e-6, f64({5})));
  Value sqDiag = b.un(Op::Diag, sqEps);
  Value plainDiag = b.un(Op::Diag, v);
  Value sqOnly = b.un(Op::Diag, b.un(Op::Square, v));
  EXPECT_TRUE(b.of(expDiag).has(S::SPD | S::Diagonal));
  EXPECT_TRUE(b.of(sqDiag).has(S::SPD));
  EXPECT_FALSE(b.of(plainDiag).has(S::PSD));
  EXPECT_TRUE(b.of(sqOnly).has(S::PSD));
  EXPECT_FALSE(b.of(sqOnly).has(S::SPD));
}

TEST(Structure, ParameterIsPlain) {
  Builder b;
  Value a = b.param("a", {4, 4});
  EXPECT_EQ(b.of(a), Structure{});
  EXPECT_EQ(structureString(b.of(a)), "");
}

TEST(Structure, SymmetrizedSum) {
  Builder b;
  Value a = b.param("a", {4, 4});
  EXPECT_TRUE(b.of(b.bin(Op::Add, a, b.t(a))).has(S::Symmetric));
  EXPECT_FALSE(b.of(b.bin(Op::Add, a, a)).has(S::Symmetric));
}

TEST(Structure, TriangularFactors) {
  Builder b;
  Value a = b.param("a", {4, 4});
  Value l = b.un(Op::Cholesky, a);
  EXPECT_TRUE(b.of(l).has(S::Lower | S::PositiveDiagonal));
  EXPECT_FALSE(b.of(l).has(S::Upper));
  EXPECT_TRUE(b.of(b.t(l)).has(S::Upper));
  ir::Node* lu = b.g.create(Op::Lu, {a});
  EXPECT_TRUE(b.of(lu->result(1)).has(S::Lower));
  EXPECT_TRUE(b.of(lu->result(2)).has(S::Upper));
  EXPECT_TRUE(b.of(b.g.apply(Op::Tril, {a})).has(S::Lower));
  EXPECT_FALSE(b.of(b.g.apply(Op::Tril, {a}, Attrs{{"k", int64_t{1}}})).has(S::Lower));
}

TEST(Structure, DescribesFacts) {
  Builder b;
  Value yc = b.param("yc", {64, 4});
  Value s = b.bin(Op::Add, b.gram(yc), b.eye(64));
  EXPECT_EQ(structureString(b.of(s)), "spd, lowrank(4)+diag");
  EXPECT_EQ(structureString(b.of(b.eye(3))), "identity, spd, nonneg");
}

} // namespace
} // namespace graphc::passes
