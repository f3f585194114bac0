//===- tests/runtime/ReduceTest.cpp - Reductions --------------------------===//
//
// Every reduction over several axis sets, with and without keepdims, in float and
// integer dtypes, against a reference that walks the input once and accumulates
// into the output index; argmax/argmin over several axes are checked as indices
// flattened over the reduced axes in C order.
//
//===----------------------------------------------------------------------===//
#include "ir/OpCases.h"
#include "tests/runtime/TestUtil.h"

#include <cmath>
#include <gtest/gtest.h>
#include <map>

namespace graphc::testing {
namespace {

using ir::Op;
using Ints = std::vector<int64_t>;

/// Groups the input's elements by output position: for each kept-axes index (as a
/// flat C-order position) the reduced elements in C order of the reduced axes.
std::vector<std::vector<double>> groups(const Array& x, const Ints& axes) {
  std::map<Ints, std::vector<double>> byKey;
  forEachIndex(x.shape(), [&](llvm::ArrayRef<int64_t> i) {
    Ints key;
    for (int64_t a = 0; a < x.rank(); ++a)
      if (std::find(axes.begin(), axes.end(), a) == axes.end())
        key.push_back(i[a]);
    byKey[key].push_back(x.getDouble(i));
  });
  std::vector<std::vector<double>> out;
  for (auto& [k, v] : byKey) // std::map orders keys lexicographically = C order
    out.push_back(v);
  return out;
}

double reference(Op op, const std::vector<double>& g) {
  double acc = op == Op::Prod ? 1 : 0;
  size_t best = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    acc = op == Op::Prod ? acc * g[i] : acc + g[i];
    bool better = (op == Op::Max || op == Op::Argmax) ? g[i] > g[best] : g[i] < g[best];
    if (better)
      best = i;
  }
  switch (op) {
  case Op::Mean:
    return acc / static_cast<double>(g.size());
  case Op::Var: {
    long double mean = 0, squares = 0;
    for (double v : g)
      mean += v;
    mean /= g.size();
    for (double v : g)
      squares += (v - mean) * (v - mean);
    return static_cast<double>(squares / g.size());
  }
  case Op::Max:
  case Op::Min:
    return g[best];
  case Op::Argmax:
  case Op::Argmin:
    return static_cast<double>(best);
  case Op::Sum:
  case Op::Prod:
  GRAPHC_SOURCE_CASES:
  GRAPHC_ELEMENTWISE_CASES:
  GRAPHC_SHAPE_CASES:
  GRAPHC_LINALG_CASES:
  GRAPHC_ASSUME_CASES:
  GRAPHC_COLLECTIVE_CASES:
    return acc;
  }
  ir::unknownOp();
}

TEST(Reduce, EveryReductionOverAxisSets) {
  const Op ops[] = {Op::Sum, Op::Mean, Op::Var, Op::Max, Op::Min, Op::Prod, Op::Argmax, Op::Argmin};
  const Ints axisSets[] = {{0}, {1}, {2}, {0, 2}, {1, 2}, {0, 1, 2}, {}};
  Ints shape = {3, 4, 5};
  for (DType dt : {DType::F32, DType::F64, DType::I32, DType::I64}) {
    Array input = ir::isFloat(dt) ? Array::randomUniform(dt, shape, 71, 0.5, 1.5)
                                  : Array::randomUniform(dt, shape, 71, -3, 4);
    // Integer products use {-1, 0, 1, 2} so that they stay far from overflow.
    Array small = Array::randomUniform(dt, shape, 72, -1, 3);
    for (Op op : ops) {
      if ((op == Op::Mean || op == Op::Var) && !ir::isFloat(dt))
        continue;
      const Array& x = op == Op::Prod && !ir::isFloat(dt) ? small : input;
      for (const Ints& axes : axisSets)
        for (bool keep : {false, true}) {
          ir::Attrs attrs{{"axes", axes}};
          attrs.set("keepdims", keep);
          Array y = runOp1(op, {x}, attrs);
          Ints want;
          for (int64_t a = 0; a < 3; ++a) {
            bool reduced = std::find(axes.begin(), axes.end(), a) != axes.end();
            if (!reduced || keep)
              want.push_back(reduced ? 1 : shape[a]);
          }
          ASSERT_EQ(y.shape(), llvm::ArrayRef<int64_t>(want));
          bool isArg = op == Op::Argmax || op == Op::Argmin;
          EXPECT_EQ(y.dtype(), isArg ? DType::I64 : dt);
          std::vector<double> ref;
          for (const std::vector<double>& g : groups(x, axes))
            ref.push_back(reference(op, g));
          double scale = op == Op::Prod ? 1e3 : 60;
          expectClose(doubles(y), ref, isArg ? 0 : tolerance(dt, scale),
                      fmt::format("{} {} axes={} keepdims={}", ir::opName(op).str(),
                                  ir::dtypeName(dt).str(), ir::shapeString(axes), keep));
        }
    }
  }
}

TEST(Reduce, ArgmaxFlattensReducedAxesInCOrder) {
  // [2,3,2] with the maximum of batch 0 at (0, 2, 1) and of batch 1 at (1, 1, 0).
  std::vector<double> v(12, 0.0);
  v[0 * 6 + 2 * 2 + 1] = 5;
  v[1 * 6 + 1 * 2 + 0] = 7;
  Array x = Array::fromVector(v, {2, 3, 2});
  Array y = runOp1(Op::Argmax, {x}, {{"axes", Ints{1, 2}}});
  EXPECT_EQ(y.toVector<int64_t>(), (std::vector<int64_t>{2 * 2 + 1, 1 * 2 + 0}));
  // NaN wins max and argmax, as in NumPy.
  Array n = Array::fromVector<double>({1, NAN, 3}, {3});
  EXPECT_TRUE(std::isnan(runOp1(Op::Max, {n}, {{"axes", Ints{0}}}).toVector<double>()[0]));
  EXPECT_EQ(runOp1(Op::Argmax, {n}, {{"axes", Ints{0}}}).toVector<int64_t>()[0], 1);
}

TEST(Reduce, EmptyReductions) {
  Array x = Array::zeros(DType::F64, {3, 0});
  ir::Attrs attrs{{"axes", Ints{1}}};
  EXPECT_EQ(runOp1(Op::Sum, {x}, attrs).toVector<double>(), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(runOp1(Op::Prod, {x}, attrs).toVector<double>(), (std::vector<double>{1, 1, 1}));
  for (Op op : {Op::Max, Op::Argmin, Op::Mean, Op::Var})
    EXPECT_THROW(runOp1(op, {x}, attrs), Error);
}

/// var is computed in double from the elements: f32 rows far from zero (a mean of
/// 3000, deviations of 0.01, a variance of 1e-4) keep 6 digits and more, where
/// deviations from the mean rounded to f32 (half an ulp: 1.2e-4) would not.
TEST(Reduce, VarianceKeepsItsDigitsFarFromZero) {
  Array noise = Array::randomNormal(DType::F64, {4, 1000}, 73);
  std::vector<double> v = noise.toVector<double>();
  std::vector<float> f;
  for (double d : v)
    f.push_back(static_cast<float>(3000 + 0.01 * d));
  Array x = Array::fromVector(f, {4, 1000});
  std::vector<double> want;
  for (const std::vector<double>& g : groups(x, {1}))
    want.push_back(reference(Op::Var, g));
  expectClose(doubles(runOp1(Op::Var, {x}, {{"axes", Ints{1}}})), want, 1e-10, "var");
}

} // namespace
} // namespace graphc::testing
