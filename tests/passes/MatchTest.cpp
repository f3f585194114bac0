//===- tests/passes/MatchTest.cpp - Pattern predicates shared by passes ---===//
//
// matchShiftedGram: the forms scale * G + shift * I it must see through, with the
// scale and shift it must compute, and the near misses it must refuse.
//
//===----------------------------------------------------------------------===//
#include "passes/Match.h"

#include "ir/Parser.h"

#include <gtest/gtest.h>

namespace graphc::passes {
namespace {

/// matchShiftedGram of the first output of the graph `body` (over %x: f64[3,4,6]
/// and %y: f64[3,4,6]), every node allowed unless `refused` names it.
std::optional<ShiftedGram> match(const std::string& body, const std::string& refused = "") {
  static std::vector<std::unique_ptr<ir::Graph>> graphs; // the values point into them
  graphs.push_back(ir::parseGraph("graph @t(%x: f64[3,4,6], %y: f64[3,4,6]) {\n" + body + "\n}"));
  return matchShiftedGram(graphs.back()->outputs().front(),
                          [&](const ir::Node& n) { return n.name() != refused; });
}

TEST(MatchShiftedGram, SeesScaleAndShiftThroughArithmetic) {
  // The W5 matrix: X X' / 8 + 0.1 I, the constants as full matrices.
  auto m = match(R"(
  %g = matmul %x, %x {transpose_b}
  %k = full {value=8.0} : f64[3,4,4]
  %c = div %g, %k
  %eye = eye : f64[3,4,4]
  %tenth = full {value=0.1} : f64[3,4,4]
  %r = mul %tenth, %eye
  %s = add %c, %r
  return %s)");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->gram.factor.node->name(), "x");
  EXPECT_FALSE(m->gram.transposed);
  EXPECT_EQ(m->product.node->name(), "g");
  EXPECT_DOUBLE_EQ(m->scale, 0.125);
  EXPECT_DOUBLE_EQ(m->shift, 0.1);

  // X'X through a transpose, scalars broadcast, sub and neg: -(3 I - 2 X'X) * 0.5.
  m = match(R"(
  %t = transpose %x {perm=[0,2,1]}
  %g = matmul %t, %x
  %two = full {value=2.0} : f64[]
  %two6 = broadcast_to %two {shape=[3,6,6]}
  %g2 = mul %g, %two6
  %eye = eye : f64[3,6,6]
  %three = full {value=3.0} : f64[3,6,6]
  %e3 = mul %eye, %three
  %d = sub %e3, %g2
  %n = neg %d
  %half = full {value=0.5} : f64[3,6,6]
  %s = mul %n, %half
  return %s)");
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->gram.transposed);
  EXPECT_DOUBLE_EQ(m->scale, 1.0);
  EXPECT_DOUBLE_EQ(m->shift, -1.5);

  // A scalar expression folded along the way: G * (1 / 4) + I * I.
  m = match(R"(
  %g = matmul %x, %x {transpose_b}
  %one = full {value=1.0} : f64[3,4,4]
  %four = full {value=4.0} : f64[3,4,4]
  %q = div %one, %four
  %gq = mul %g, %q
  %eye = eye : f64[3,4,4]
  %ii = mul %eye, %eye
  %s = add %gq, %ii
  return %s)");
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(m->scale, 0.25);
  EXPECT_DOUBLE_EQ(m->shift, 1.0);
}

TEST(MatchShiftedGram, RefusesWhatIsNotScaleGPlusShiftI) {
  const std::pair<const char*, const char*> nearMisses[] = {
      {"G plus a full matrix of ones is not a shift of the diagonal", R"(
  %g = matmul %x, %x {transpose_b}
  %one = full {value=1.0} : f64[3,4,4]
  %s = add %g, %one
  return %s)"},
      {"eye * G keeps only G's diagonal", R"(
  %g = matmul %x, %x {transpose_b}
  %eye = eye : f64[3,4,4]
  %s = mul %eye, %g
  return %s)"},
      {"two different Gram matrices", R"(
  %g = matmul %x, %x {transpose_b}
  %h = matmul %y, %y {transpose_b}
  %s = add %g, %h
  return %s)"},
      {"X Y' is not a Gram matrix", R"(
  %g = matmul %x, %y {transpose_b}
  %eye = eye : f64[3,4,4]
  %s = add %g, %eye
  return %s)"},
      {"exp is not affine", R"(
  %g = matmul %x, %x {transpose_b}
  %s = exp %g
  return %s)"},
      {"division by a matrix", R"(
  %g = matmul %x, %x {transpose_b}
  %eye = eye : f64[3,4,4]
  %s = div %eye, %g
  return %s)"},
      {"no Gram matrix at all", R"(
  %eye = eye : f64[3,4,4]
  %s = neg %eye
  return %s)"},
  };
  for (const auto& [why, body] : nearMisses)
    EXPECT_FALSE(match(body)) << why;
  // A node the caller keeps out of the match.
  const char* shifted = R"(
  %g = matmul %x, %x {transpose_b}
  %eye = eye : f64[3,4,4]
  %gi = add %g, %eye
  %s = neg %gi
  return %s)";
  EXPECT_TRUE(match(shifted));
  EXPECT_FALSE(match(shifted, "gi"));
  EXPECT_FALSE(match(shifted, "s"));
}

} // namespace
} // namespace graphc::passes
