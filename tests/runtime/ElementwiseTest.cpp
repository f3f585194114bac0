//===- tests/runtime/ElementwiseTest.cpp - Sources and elementwise ops ----===//
//
// Every source and elementwise op against a reference computed here in double (or
// int64 for integer dtypes) from the same input values, in f32 and f64 and the
// integer and bool dtypes the typing rules allow; the integer edge cases
// (truncating div, NumPy remainder, division by zero) and broadcasting through
// broadcast_to inside one graph.
//
//===----------------------------------------------------------------------===//
#include "ir/OpCases.h"
#include "tests/runtime/TestUtil.h"

#include <cmath>
#include <gtest/gtest.h>

namespace graphc::testing {
namespace {

using ir::Op;

struct UnaryCase {
  Op op;
  double (*ref)(double);
  double low, high; // input domain
};

const UnaryCase kFloatUnary[] = {
    {Op::Neg, [](double x) { return -x; }, -3, 3},
    {Op::Abs, [](double x) { return std::fabs(x); }, -3, 3},
    {Op::Sign, [](double x) { return x > 0   ? 1.0
                                     : x < 0 ? -1.0
                                             : 0.0; }, -3, 3},
    {Op::Exp, [](double x) { return std::exp(x); }, -3, 3},
    {Op::Log, [](double x) { return std::log(x); }, 0.1, 5},
    {Op::Log1p, [](double x) { return std::log(1 + x); }, 0.01, 5},
    {Op::Expm1, [](double x) { return std::exp(x) - 1; }, 0.5, 2},
    {Op::Sqrt, [](double x) { return std::sqrt(x); }, 0, 5},
    {Op::Rsqrt, [](double x) { return 1 / std::sqrt(x); }, 0.1, 5},
    {Op::Square, [](double x) { return x * x; }, -3, 3},
    {Op::Reciprocal, [](double x) { return 1 / x; }, 0.2, 5},
    {Op::Sin, [](double x) { return std::sin(x); }, -3, 3},
    {Op::Cos, [](double x) { return std::cos(x); }, -3, 3},
    {Op::Tanh, [](double x) { return std::tanh(x); }, -3, 3},
    {Op::Sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }, -30, 30},
    {Op::Relu, [](double x) { return x > 0 ? x : 0.0; }, -3, 3},
    {Op::Erf, [](double x) { return std::erf(x); }, -3, 3},
    {Op::Floor, [](double x) { return std::floor(x); }, -3, 3},
    {Op::Ceil, [](double x) { return std::ceil(x); }, -3, 3},
    {Op::Round, [](double x) { return std::nearbyint(x); }, -3, 3},
};

TEST(Elementwise, FloatUnaryOps) {
  for (DType dt : kFloatTypes)
    for (const UnaryCase& c : kFloatUnary) {
      Array x = Array::randomUniform(dt, {3, 17}, 11, c.low, c.high);
      std::vector<double> in = doubles(x), want;
      for (double v : in)
        want.push_back(c.ref(v));
      Array y = runOp1(c.op, {x});
      EXPECT_EQ(y.type(), x.type());
      double scale = 0;
      for (double w : want)
        scale = std::max(scale, std::abs(w));
      expectClose(doubles(y), want, tolerance(dt, scale),
                  fmt::format("{} {}", ir::opName(c.op).str(), ir::dtypeName(dt).str()));
    }
}

TEST(Elementwise, UnaryEdgeCases) {
  Array x = Array::fromVector<double>({0.5, 1.5, 2.5, -0.5, -2.5, 0, -0.0, NAN}, {8});
  std::vector<double> r = runOp1(Op::Round, {x}).toVector<double>();
  EXPECT_EQ(std::vector<double>(r.begin(), r.end() - 1), (std::vector<double>{
                                                             0,
                                                             2,
                                                             2,
                                                             -0.0,
                                                             -2,
                                                             0,
                                                             0,
                                                         })); // half to even
  std::vector<double> s = runOp1(Op::Sign, {x}).toVector<double>();
  EXPECT_EQ(s[5], 0.0);
  EXPECT_TRUE(std::isnan(s[7]));
  EXPECT_TRUE(std::isnan(runOp1(Op::Relu, {x}).toVector<double>()[7]));
  Array big = Array::fromVector<float>({-1000, 1000}, {2});
  EXPECT_EQ(runOp1(Op::Sigmoid, {big}).toVector<float>(), (std::vector<float>{0, 1}));
}

TEST(Elementwise, IntegerUnaryOps) {
  const Op ops[] = {Op::Neg, Op::Abs, Op::Sign, Op::Square, Op::Relu};
  for (DType dt : {DType::I32, DType::I64})
    for (Op op : ops) {
      Array x = Array::randomUniform(dt, {25}, 5, -100, 100);
      std::vector<double> want;
      for (double v : doubles(x)) {
        auto i = static_cast<int64_t>(v);
        switch (op) {
        case Op::Neg:
          want.push_back(-i);
          break;
        case Op::Abs:
          want.push_back(i < 0 ? -i : i);
          break;
        case Op::Sign:
          want.push_back(i > 0 ? 1 : i < 0 ? -1 : 0);
          break;
        case Op::Square:
          want.push_back(i * i);
          break;
        case Op::Exp:
        case Op::Log:
        case Op::Log1p:
        case Op::Expm1:
        case Op::Sqrt:
        case Op::Rsqrt:
        case Op::Reciprocal:
        case Op::Sin:
        case Op::Cos:
        case Op::Tanh:
        case Op::Sigmoid:
        case Op::Relu:
        case Op::Erf:
        case Op::Floor:
        case Op::Ceil:
        case Op::Round:
        GRAPHC_SOURCE_CASES:
        GRAPHC_LOGICAL_CASES:
        GRAPHC_BINARY_CASES:
        GRAPHC_COMPARE_CASES:
        GRAPHC_SELECT_CASES:
        GRAPHC_CAST_CASES:
        GRAPHC_SHAPE_CASES:
        GRAPHC_REDUCE_CASES:
        GRAPHC_LINALG_CASES:
        GRAPHC_ASSUME_CASES:
        GRAPHC_COLLECTIVE_CASES:
          want.push_back(i > 0 ? i : 0);
          break;
        }
      }
      expectClose(doubles(runOp1(op, {x})), want, 0, ir::opName(op).str());
    }
}

struct BinaryCase {
  Op op;
  double (*ref)(double, double);
  double low, high; // domain of both operands
};

double pyRemainder(double a, double b) {
  return a - std::floor(a / b) * b;
}

const BinaryCase kFloatBinary[] = {
    {Op::Add, [](double a, double b) { return a + b; }, -3, 3},
    {Op::Sub, [](double a, double b) { return a - b; }, -3, 3},
    {Op::Mul, [](double a, double b) { return a * b; }, -3, 3},
    {Op::Div, [](double a, double b) { return a / b; }, 0.5, 3},
    {Op::Pow, [](double a, double b) { return std::exp(b * std::log(a)); }, 0.5, 3},
    {Op::Maximum, [](double a, double b) { return a > b ? a : b; }, -3, 3},
    {Op::Minimum, [](double a, double b) { return a < b ? a : b; }, -3, 3},
    {Op::Atan2, [](double a, double b) { return std::atan2(a, b); }, -3, 3},
    {Op::Remainder, pyRemainder, -3, 3},
};

TEST(Elementwise, FloatBinaryOps) {
  for (DType dt : kFloatTypes)
    for (const BinaryCase& c : kFloatBinary) {
      Array a = Array::randomUniform(dt, {4, 9}, 21, c.low, c.high);
      Array b = Array::randomUniform(dt, {4, 9}, 22, c.low, c.high);
      std::vector<double> da = doubles(a), db = doubles(b), want;
      for (size_t i = 0; i < da.size(); ++i)
        want.push_back(c.ref(da[i], db[i]));
      std::vector<double> got = doubles(runOp1(c.op, {a, b}));
      std::string what = fmt::format("{} {}", ir::opName(c.op).str(), ir::dtypeName(dt).str());
      if (c.op == Op::Remainder) // the sign of the divisor; exact up to rounding
        for (size_t i = 0; i < got.size(); ++i) {
          EXPECT_TRUE(got[i] == 0 || (got[i] < 0) == (db[i] < 0)) << what << " " << i;
          EXPECT_LT(std::abs(got[i]), std::abs(db[i])) << what;
        }
      expectClose(got, want, tolerance(dt, 30), what);
    }
}

TEST(Elementwise, MaximumMinimumPropagateNaN) {
  Array a = Array::fromVector<double>({NAN, 1}, {2});
  Array b = Array::fromVector<double>({1, NAN}, {2});
  for (Op op : {Op::Maximum, Op::Minimum})
    for (double v : runOp1(op, {a, b}).toVector<double>())
      EXPECT_TRUE(std::isnan(v));
}

TEST(Elementwise, IntegerBinaryOps) {
  for (DType dt : {DType::I32, DType::I64}) {
    Array a = Array::randomUniform(dt, {40}, 31, -50, 50);
    Array b = Array::randomUniform(dt, {40}, 32, 1, 9);
    Array nb = runOp1(Op::Neg, {b}); // negative divisors too
    Array e = Array::randomUniform(dt, {40}, 33, 0, 5);
    std::vector<double> da = doubles(a), db = doubles(b), de = doubles(e);
    auto check = [&](Op op, const Array& y, auto ref) {
      std::vector<double> want;
      for (size_t i = 0; i < da.size(); ++i)
        want.push_back(static_cast<double>(
            ref(static_cast<int64_t>(da[i]), static_cast<int64_t>(doubles(y)[i]))));
      expectClose(doubles(runOp1(op, {a, y})), want, 0,
                  fmt::format("{} {}", ir::opName(op).str(), ir::dtypeName(dt).str()));
    };
    check(Op::Add, b, [](int64_t x, int64_t y) { return x + y; });
    check(Op::Sub, b, [](int64_t x, int64_t y) { return x - y; });
    check(Op::Mul, b, [](int64_t x, int64_t y) { return x * y; });
    check(Op::Maximum, b, [](int64_t x, int64_t y) { return std::max(x, y); });
    check(Op::Minimum, b, [](int64_t x, int64_t y) { return std::min(x, y); });
    for (const Array& d : {b, nb}) {
      // div truncates toward zero; remainder has the divisor's sign (floor division).
      check(Op::Div, d, [](int64_t x, int64_t y) { return x / y; });
      check(Op::Remainder, d, [](int64_t x, int64_t y) {
        return x - static_cast<int64_t>(std::floor(static_cast<double>(x) / y)) * y;
      });
    }
    check(Op::Pow, e, [](int64_t x, int64_t y) {
      int64_t r = 1;
      for (int64_t i = 0; i < y; ++i)
        r *= x;
      return r;
    });
    Array zero = Array::zeros(dt, {40});
    EXPECT_THROW(runOp1(Op::Div, {a, zero}), Error);
    EXPECT_THROW(runOp1(Op::Remainder, {a, zero}), Error);
    EXPECT_THROW(runOp1(Op::Pow, {a, nb}), Error);
  }
  Array mn = Array::fromVector<int32_t>({INT32_MIN}, {1});
  Array m1 = Array::fromVector<int32_t>({-1}, {1});
  EXPECT_EQ(runOp1(Op::Div, {mn, m1}).toVector<int32_t>()[0], INT32_MIN); // wraps, no trap
}

TEST(Elementwise, Comparisons) {
  const Op ops[] = {Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge};
  for (DType dt : {DType::F32, DType::F64, DType::I32, DType::I64}) {
    // Few distinct values so that equality happens.
    Array a = runOp1(Op::Cast, {Array::randomUniform(DType::I32, {50}, 41, 0, 3)}, {{"dtype", dt}});
    Array b = runOp1(Op::Cast, {Array::randomUniform(DType::I32, {50}, 42, 0, 3)}, {{"dtype", dt}});
    std::vector<double> da = doubles(a), db = doubles(b);
    for (Op op : ops) {
      Array y = runOp1(op, {a, b});
      EXPECT_EQ(y.dtype(), DType::Bool);
      std::vector<bool> got = y.toVector<bool>();
      for (size_t i = 0; i < da.size(); ++i) {
        bool want = op == Op::Eq   ? da[i] == db[i]
                    : op == Op::Ne ? da[i] != db[i]
                    : op == Op::Lt ? da[i] < db[i]
                    : op == Op::Le ? da[i] <= db[i]
                    : op == Op::Gt ? da[i] > db[i]
                                   : da[i] >= db[i];
        ASSERT_EQ(got[i], want) << ir::opName(op).str() << " " << i;
      }
    }
  }
  Array p = Array::fromVector<bool>({true, true, false, false}, {4});
  Array q = Array::fromVector<bool>({true, false, true, false}, {4});
  EXPECT_EQ(runOp1(Op::Eq, {p, q}).toVector<bool>(), (std::vector<bool>{1, 0, 0, 1}));
  EXPECT_EQ(runOp1(Op::Ne, {p, q}).toVector<bool>(), (std::vector<bool>{0, 1, 1, 0}));
}

TEST(Elementwise, LogicalAndSelect) {
  Array p = Array::randomUniform(DType::Bool, {64}, 51);
  Array q = Array::randomUniform(DType::Bool, {64}, 52);
  std::vector<bool> vp = p.toVector<bool>(), vq = q.toVector<bool>();
  std::vector<bool> n = runOp1(Op::Not, {p}).toVector<bool>();
  std::vector<bool> a = runOp1(Op::And, {p, q}).toVector<bool>();
  std::vector<bool> o = runOp1(Op::Or, {p, q}).toVector<bool>();
  for (size_t i = 0; i < vp.size(); ++i) {
    EXPECT_EQ(n[i], !vp[i]);
    EXPECT_EQ(a[i], vp[i] && vq[i]);
    EXPECT_EQ(o[i], vp[i] || vq[i]);
  }
  for (DType dt : ir::kAllDTypes) {
    Array x = Array::randomUniform(dt, {64}, 53, -5, 5);
    Array y = Array::randomUniform(dt, {64}, 54, -5, 5);
    std::vector<double> dx = doubles(x), dy = doubles(y), want;
    for (size_t i = 0; i < vp.size(); ++i)
      want.push_back(vp[i] ? dx[i] : dy[i]);
    expectClose(doubles(runOp1(Op::Select, {p, x, y})), want, 0, "select");
  }
}

TEST(Elementwise, Casts) {
  Array x = Array::fromVector<double>({-2.7, -0.5, 0, 0.5, 2.7, 100}, {6});
  std::vector<double> dx = doubles(x);
  for (DType to : ir::kAllDTypes) {
    std::vector<double> want;
    for (double v : dx)
      want.push_back(to == DType::Bool   ? (v != 0)
                     : ir::isInteger(to) ? std::trunc(v)
                     : to == DType::F32  ? static_cast<double>(static_cast<float>(v))
                                         : v);
    Array y = runOp1(Op::Cast, {x}, {{"dtype", to}});
    EXPECT_EQ(y.dtype(), to);
    expectClose(doubles(y), want, 0, fmt::format("cast to {}", ir::dtypeName(to).str()));
  }
  Array b = Array::fromVector<bool>({true, false}, {2});
  EXPECT_EQ(runOp1(Op::Cast, {b}, {{"dtype", DType::F32}}).toVector<float>(),
            (std::vector<float>{1, 0}));
}

TEST(Elementwise, Sources) {
  std::vector<double> vals = {1.5, -2, 0, 7, 3.25, -1};
  for (DType dt : ir::kAllDTypes) {
    ir::TensorType t(dt, {2, 3});
    Array c = runOp1(Op::Constant, {}, {{"value", vals}}, {t});
    EXPECT_EQ(c.type(), t);
    std::vector<double> want;
    for (double v : vals)
      want.push_back(dt == DType::Bool ? (v != 0) : ir::isInteger(dt) ? std::trunc(v) : v);
    expectClose(doubles(c), want, 0, "constant");
    Array f = runOp1(Op::Full, {}, {{"value", 2.0}}, {t});
    expectClose(doubles(f), std::vector<double>(6, dt == DType::Bool ? 1 : 2), 0, "full");
  }
  for (DType dt : {DType::I32, DType::I64, DType::F32, DType::F64}) {
    for (int64_t axis = 0; axis < 3; ++axis) {
      ir::TensorType t(dt, {2, 3, 4});
      Array y = runOp1(Op::Iota, {}, {{"axis", axis}}, {t});
      forEachIndex(t.shape, [&](llvm::ArrayRef<int64_t> idx) {
        ASSERT_EQ(y.getDouble(idx), static_cast<double>(idx[axis]));
      });
    }
    for (const auto& shape : {std::vector<int64_t>{3, 3}, std::vector<int64_t>{2, 3, 4},
                              std::vector<int64_t>{2, 2, 4, 3}}) {
      Array y = runOp1(Op::Eye, {}, {}, {ir::TensorType(dt, shape)});
      forEachIndex(shape, [&](llvm::ArrayRef<int64_t> idx) {
        size_t r = idx.size();
        ASSERT_EQ(y.getDouble(idx), idx[r - 1] == idx[r - 2] ? 1.0 : 0.0);
      });
    }
  }
}

TEST(Elementwise, BroadcastingInsideAGraph) {
  // z = x * broadcast_to(col, [3,4]) + broadcast_to(row, [3,4])
  for (DType dt : kFloatTypes) {
    ir::Graph g("bcast");
    ir::Value x = g.addParameter("x", ir::TensorType(dt, {3, 4}));
    ir::Value col = g.addParameter("col", ir::TensorType(dt, {3, 1}));
    ir::Value row = g.addParameter("row", ir::TensorType(dt, {4}));
    std::vector<int64_t> s = {3, 4};
    ir::Value bc = g.apply(Op::BroadcastTo, {col}, {{"shape", s}});
    ir::Value br = g.apply(Op::BroadcastTo, {row}, {{"shape", s}});
    g.addOutput(g.apply(Op::Add, {g.apply(Op::Mul, {x, bc}), br}));
    Array ax = randn(dt, {3, 4}, 61), ac = randn(dt, {3, 1}, 62), ar = randn(dt, {4}, 63);
    Array z = getBackend("cpu").compile(g)->run({ax, ac, ar})[0];
    std::vector<double> want;
    forEachIndex(s, [&](llvm::ArrayRef<int64_t> i) {
      want.push_back(ax.getDouble(i) * ac.getDouble({i[0], 0}) + ar.getDouble({i[1]}));
    });
    expectClose(doubles(z), want, tolerance(dt, 10), "broadcast");
  }
}

} // namespace
} // namespace graphc::testing
