//===- tests/frontend/GraphBuildTest.cpp - What the DSL records -----------===//
//
// Operators and functions produce the expected IR: explicit broadcasts, scalars as
// `full` constants, normalized axes, every op of the table reachable, and errors
// thrown at the caller's line naming the op and the shapes.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "ir/Printer.h"

#include <cmath>
#include <set>

namespace graphc {
namespace {

TensorType f64(llvm::ArrayRef<int64_t> shape) {
  return TensorType(DType::F64, shape);
}
TensorType f32(llvm::ArrayRef<int64_t> shape) {
  return TensorType(DType::F32, shape);
}

// Tensors of two graphs meet by importing one into the other: a chain of 100,000
// ops is imported without recursion (it overflowed the stack) and evaluates to the
// plain loop's value.
TEST(GraphBuild, ImportsChainsOfAnyLength) {
  std::vector<double> x0{0.3, -1.2};
  Tensor y(Array::fromVector(x0, {2}));
  for (int i = 0; i < 100000; ++i)
    y = sin(y);
  Tensor z(Array::fromVector<double>({1, 2}, {2}));
  Tensor w = z + y;                             // z's graph imports y's chain
  EXPECT_EQ(w.graph().nodes().size(), 100003u); // z, x, the chain, the add
  std::vector<double> got = w.toVector<double>();
  for (size_t i = 0; i < 2; ++i) {
    double v = x0[i];
    for (int k = 0; k < 100000; ++k)
      v = std::sin(v);
    EXPECT_NEAR(got[i], 1.0 + i + v, 1e-12);
  }
}

TEST(GraphBuild, BinaryOperatorBroadcastsExplicitly) {
  auto g = traceToGraph([](Tensor x, Tensor y) { return x + y; },
                        {{"x", f64({3, 4})}, {"y", f64({4})}}, "f");
  EXPECT_EQ(ir::printGraph(*g), "graph @f(%x: f64[3,4], %y: f64[4]) {\n"
                                "  %0 = broadcast_to %y {shape=[3,4]} : f64[3,4]\n"
                                "  %1 = add %x, %0 : f64[3,4]\n"
                                "  return %1\n"
                                "}\n");
}

TEST(GraphBuild, BothOperandsBroadcast) {
  auto g = traceToGraph([](Tensor x, Tensor y) { return x * y; },
                        {{"x", f32({3, 1})}, {"y", f32({4})}}, "f");
  const ir::Node* mul = g->outputs()[0].node;
  ASSERT_EQ(mul->op(), ir::Op::Mul);
  for (ir::Value v : mul->operands()) {
    EXPECT_EQ(v.node->op(), ir::Op::BroadcastTo);
    EXPECT_EQ(v.type(), f32({3, 4}));
  }
}

TEST(GraphBuild, ScalarsBecomeFullOfTheTensorDType) {
  auto g = traceToGraph([](Tensor x) { return 1.0 - x * 2.0; }, {{"x", f32({5})}}, "f");
  const ir::Node* sub = g->outputs()[0].node;
  ASSERT_EQ(sub->op(), ir::Op::Sub);
  const ir::Node* one = sub->operand(0).node;
  const ir::Node* mul = sub->operand(1).node;
  EXPECT_EQ(one->op(), ir::Op::Full);
  EXPECT_EQ(one->attrs().getFloat("value"), 1.0);
  EXPECT_EQ(one->type(), f32({5}));
  ASSERT_EQ(mul->op(), ir::Op::Mul);
  EXPECT_EQ(mul->operand(0).node->op(), ir::Op::Parameter);
  EXPECT_EQ(mul->operand(1).node->op(), ir::Op::Full);
  EXPECT_EQ(mul->operand(1).node->attrs().getFloat("value"), 2.0);
}

TEST(GraphBuild, ComparisonsGiveBoolAndSelectMixesScalars) {
  auto g =
      traceToGraph([](Tensor x) { return where(x > 0.0, x, 0.5 * x); }, {{"x", f64({2, 2})}}, "f");
  const ir::Node* sel = g->outputs()[0].node;
  ASSERT_EQ(sel->op(), ir::Op::Select);
  EXPECT_EQ(sel->operand(0).node->op(), ir::Op::Gt);
  EXPECT_EQ(sel->operand(0).type(), TensorType(DType::Bool, {2, 2}));
  EXPECT_EQ(sel->type(), f64({2, 2}));
}

TEST(GraphBuild, ReductionAxesAreNormalized) {
  auto g = traceToGraph(
      [](Tensor x) {
        return mean(x, -1, true) + sum(x, {-1, 0}, true);
      },
      {{"x", f32({2, 3})}}, "f");
  std::string text = ir::printGraph(*g);
  EXPECT_NE(text.find("mean %x {axes=[1], keepdims} : f32[2,1]"), std::string::npos) << text;
  EXPECT_NE(text.find("sum %x {axes=[0,1], keepdims} : f32[1,1]"), std::string::npos) << text;
  auto all = traceToGraph([](Tensor x) { return max(x); }, {{"x", f32({2, 3})}}, "g");
  EXPECT_EQ(all->outputs()[0].node->attrs().getInts("axes"), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(all->outputs()[0].type(), f32({}));
}

TEST(GraphBuild, ShapeFunctions) {
  auto g = traceToGraph(
      [](Tensor x) {
        Tensor t = transpose(x);                      // [2,4,3]
        Tensor r = reshape(t, {-1, 3});               // [8,3]
        Tensor s = slice(r, {0, 1}, {-1, 3}, {2, 1}); // [4,2]
        return concat({s, s}, -1);                    // [4,4]
      },
      {{"x", f64({2, 3, 4})}}, "f");
  std::string text = ir::printGraph(*g);
  EXPECT_NE(text.find("transpose %x {perm=[0,2,1]} : f64[2,4,3]"), std::string::npos) << text;
  EXPECT_NE(text.find("{shape=[8,3]} : f64[8,3]"), std::string::npos) << text;
  EXPECT_NE(text.find("{start=[0,1], stop=[7,3], stride=[2,1]} : f64[4,2]"), std::string::npos)
      << text;
  EXPECT_NE(text.find("concat %2, %2 {axis=1} : f64[4,4]"), std::string::npos) << text;
}

TEST(GraphBuild, HashConsingSharesEqualExpressions) {
  Tensor x(Array::zeros(DType::F64, {3}));
  Tensor a = exp(x) + 1.0, b = exp(x) + 1.0;
  EXPECT_EQ(a.value(), b.value());
}

TEST(GraphBuild, TensorsOfDifferentGraphsMeet) {
  Tensor x(Array::zeros(DType::F64, {3}));
  Tensor y(Array::zeros(DType::F64, {3}));
  Tensor z = x * y + x;
  EXPECT_EQ(z.graphText("t"), "graph @t(%p0: f64[3], %p1: f64[3]) {\n"
                              "  %0 = mul %p0, %p1 : f64[3]\n"
                              "  %1 = add %0, %p0 : f64[3]\n"
                              "  return %1\n"
                              "}\n");
}

TEST(GraphBuild, MatmulBroadcastsBatchAxes) {
  auto g = traceToGraph([](Tensor a, Tensor b) { return matmul(a, b, {.transpose_b = true}); },
                        {{"a", f64({5, 3, 4})}, {"b", f64({2, 4})}}, "f");
  const ir::Node* mm = g->outputs()[0].node;
  EXPECT_TRUE(mm->attrs().flag("transpose_b"));
  EXPECT_EQ(mm->operand(1).node->op(), ir::Op::BroadcastTo);
  EXPECT_EQ(mm->type(), f64({5, 3, 2}));
}

/// Builds one graph using every DSL function; returns the ops it holds.
std::set<ir::Op> opsOfEveryFunction() {
  auto f = [](Tensor x, Tensor m, Tensor v) {
    std::vector<Tensor> outs;
    for (auto fn : {neg,        abs, sign, exp,  log,     log1p, expm1, sqrt,  rsqrt, square,
                    reciprocal, sin, cos,  tanh, sigmoid, relu,  erf,   floor, ceil,  round})
      outs.push_back(fn(x, SrcLoc::current()));
    for (auto fn : {add, sub, mul, div, pow, maximum, minimum, atan2, remainder})
      outs.push_back(fn(x, m));
    Tensor b = x > m;
    for (auto fn : {eq, ne, lt, le, ge})
      b = logical_or(b, logical_and(fn(x, m), !b));
    outs.push_back(select(b, x, m));
    outs.push_back(cast(cast(x, DType::I32), DType::F64));
    outs.push_back(broadcast_to(v, {4, 4}) + reshape(transpose(x), {4, 4}));
    outs.push_back(slice(concat({x, m}), {0, 0}, {4, 4}));
    outs.push_back(diag(diag_part(x)) + triu(x) + tril(x, -1));
    for (auto fn : {sum, mean, var, max, min, prod})
      outs.push_back(fn(x, 0, true, SrcLoc::current()));
    outs.push_back(cast(argmax(x, 1, false) + argmin(x, 1, false), DType::F64));
    outs.push_back(matmul(x, solve(m, cholesky(m))));
    outs.push_back(triangular_solve(m, x) + inverse(x));
    auto [p, l, u] = lu(x);
    auto [q, r] = qr(x);
    outs.insert(outs.end(), {p, l, u, q, r, det(x), logdet(x), trace(x)});
    outs.push_back(syrk(x, true) + assume_spd(m) + assume_symmetric(m) + assume_lower(m) +
                   assume_upper(m) + assume_diagonal(m));
    outs.push_back(all_reduce(x) + all_reduce(x, "max"));
    outs.push_back(eye(4) + full({4, 4}, 2.0) + cast(iota({4, 4}, -1), DType::F64) +
                   constant(std::vector<double>(16, 1.0), {4, 4}));
    return outs;
  };
  auto g = traceToGraph(f, {{"x", f64({4, 4})}, {"m", f64({4, 4})}, {"v", f64({4})}}, "all");
  std::set<ir::Op> ops;
  for (const ir::Node* n : g->nodes())
    ops.insert(n->op());
  return ops;
}

TEST(GraphBuild, EveryOpOfTheTableHasAFrontendFunction) {
  std::set<ir::Op> ops = opsOfEveryFunction();
  for (const ir::OpInfo& info : ir::allOps())
    EXPECT_TRUE(ops.count(info.op)) << "no frontend function made '" << info.name.str() << "'";
}

/// Runs `f`, expecting a graphc::Error at `line` whose message holds every `parts`.
template <typename F>
void expectErrorAt(F f, unsigned line, std::initializer_list<const char*> parts) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.loc().line, line) << e.what();
    EXPECT_NE(e.loc().file.find("GraphBuildTest.cpp"), std::string::npos) << e.what();
    for (const char* p : parts)
      EXPECT_NE(e.message().find(p), std::string::npos) << "'" << p << "' not in: " << e.what();
  }
}

TEST(GraphBuild, ErrorsAreThrownAtTheCallWithOpAndShapes) {
  Tensor a(Array::zeros(DType::F64, {3, 4}));
  Tensor b(Array::zeros(DType::F64, {5, 2}));
  Tensor c(Array::zeros(DType::F32, {3, 4}));
  Tensor v(Array::zeros(DType::F64, {5}));
  unsigned line = __LINE__ + 1;
  expectErrorAt([&] { matmul(a, b); }, line, {"matmul", "f64[3,4]", "f64[5,2]"});
  line = __LINE__ + 1;
  expectErrorAt([&] { return a + v; }, line, {"add", "f64[3,4]", "f64[5]", "broadcast"});
  line = __LINE__ + 1;
  expectErrorAt([&] { return a * c; }, line, {"mul", "dtypes differ", "f32"});
  line = __LINE__ + 1;
  expectErrorAt([&] { return -(a < b); }, line, {"lt", "f64[3,4]", "f64[5,2]"});
  line = __LINE__ + 1;
  expectErrorAt([&] { sum(a, 2); }, line, {"sum", "f64[3,4]", "axis 2"});
  line = __LINE__ + 1;
  expectErrorAt([&] { reshape(a, {5, -1}); }, line, {"reshape", "12 elements"});
  line = __LINE__ + 1;
  expectErrorAt([&] { solve(a, b); }, line, {"solve", "square"});
  line = __LINE__ + 1;
  expectErrorAt([&] { cholesky(v); }, line, {"cholesky", "f64[5]"});
  line = __LINE__ + 1;
  expectErrorAt([&] { exp(cast(a, DType::I32)); }, line, {"exp", "i32[3,4]", "floating"});
}

TEST(GraphBuild, SymbolicTensorsDoNotEscapeTheirTrace) {
  Tensor leaked;
  traceToGraph([&](Tensor x) { return leaked = x * 2.0; }, {{"x", f64({2})}}, "f");
  EXPECT_THROW(leaked.eval(), Error);
}

} // namespace
} // namespace graphc
