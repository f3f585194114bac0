//===- tests/passes/MatchTest.cpp - Pattern predicates shared by passes ---===//
//
// matchShiftedGram: the forms scale * G + shift * I it must see through, with the
// scale and shift it must compute, and the near misses it must refuse.
//
//===----------------------------------------------------------------------===//
#include "passes/Match.h"

#include "ir/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <pthread.h>

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

/// Runs `f` on a thread with a 256 KiB stack (a recursion along a long chain
/// overflows it) and waits for it.
void onSmallStack(void (*f)(void*), void* arg) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 << 10);
  pthread_t thread;
  struct Call {
    void (*f)(void*);
    void* arg;
  } call{f, arg};
  ASSERT_EQ(pthread_create(
                &thread, &attr,
                [](void* c) -> void* {
                  static_cast<Call*>(c)->f(static_cast<Call*>(c)->arg);
                  return nullptr;
                },
                &call),
            0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

// A chain of 100,000 adds and subs of the identity, and the Gram matrix added to
// itself down a chain (each node read twice): walked without recursion, each node
// once (the recursive matcher overflowed the stack, and took 2^n steps on the second).
TEST(MatchShiftedGram, ChainsOfAnyLength) {
  struct Result {
    std::optional<ShiftedGram> sum, doubled;
  } result;
  onSmallStack(
      [](void* r) {
        ir::Graph g("chain");
        ir::TensorType t(ir::DType::F64, {4, 4});
        ir::Value x = g.addParameter("x", t);
        ir::Value v = g.create(ir::Op::Syrk, {x})->result();
        ir::Value eye = g.create(ir::Op::Eye, {}, {}, {t})->result();
        for (int i = 0; i < 100000; ++i) // +I, +I, -I: 33,334 I in all
          v = g.create(i % 3 == 2 ? ir::Op::Sub : ir::Op::Add, {v, eye})->result();
        auto all = [](const ir::Node&) { return true; };
        static_cast<Result*>(r)->sum = matchShiftedGram(v, all);
        ir::Value w = g.create(ir::Op::Syrk, {x})->result();
        for (int i = 0; i < 60; ++i)
          w = g.create(ir::Op::Add, {w, w})->result();
        static_cast<Result*>(r)->doubled = matchShiftedGram(w, all);
      },
      &result);
  ASSERT_TRUE(result.sum);
  EXPECT_EQ(result.sum->scale, 1.0);
  EXPECT_EQ(result.sum->shift, 33334.0);
  ASSERT_TRUE(result.doubled);
  EXPECT_EQ(result.doubled->scale, std::ldexp(1.0, 60));
  EXPECT_EQ(result.doubled->shift, 0.0);
}

// collectLinearTerms along a chain of 100,000 adds: no recursion, and it stops as
// soon as the terms would pass maxTerms.
TEST(CollectLinearTerms, ChainsOfAnyLength) {
  // What the terms say, read before the graph they point into goes.
  struct Result {
    bool longOk = true, shortOk = false;
    std::string firstLeaf;
    std::vector<double> coefficients;
  } result;
  onSmallStack(
      [](void* r) {
        auto& out = *static_cast<Result*>(r);
        ir::Graph g("chain");
        ir::TensorType t(ir::DType::F64, {4, 4});
        ir::Value w = g.addParameter("w", t), v = g.addParameter("v", t);
        ir::Value first = v;
        for (int i = 0; i < 100000; ++i)
          v = g.create(i % 2 ? ir::Op::Sub : ir::Op::Add, {v, w})->result();
        std::vector<LinearTerm> many;
        out.longOk = collectLinearTerms(v, 1, many);
        ir::Value s = first;
        for (int i = 0; i < 3; ++i)
          s = g.create(i % 2 ? ir::Op::Sub : ir::Op::Add, {s, w})->result();
        std::vector<LinearTerm> terms;
        out.shortOk = collectLinearTerms(s, 2, terms); // 2 (v + w - w + w)
        if (!terms.empty())
          out.firstLeaf = terms[0].leaf.node->name();
        for (const LinearTerm& term : terms)
          out.coefficients.push_back(term.coefficient);
      },
      &result);
  EXPECT_FALSE(result.longOk);
  ASSERT_TRUE(result.shortOk);
  EXPECT_EQ(result.firstLeaf, "v");
  EXPECT_EQ(result.coefficients, (std::vector<double>{2, 2, -2, 2}));
}

} // namespace
} // namespace graphc::passes
