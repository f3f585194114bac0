//===- tests/passes/ConstantFoldTest.cpp - Folds have the backends' bits --===//
//
// The canonicalizer folds elementwise ops on uniform constants through the
// interpreter's scalar functions (ir/Scalar.h). Here every unary and binary op in
// f32 and f64, on edge values, folded and run unfolded on the cpu backend (its JIT
// kernels) and on cpu-unfused (the interpreter): the same bits, NaN as NaN. The
// ops whose result IEEE 754 fixes fold; the math library's do not. abs is IEEE's:
// abs(-0.0) is +0.0 on every path.
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
#include "support/FoldedOps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace graphc {
namespace {

void expectFoldsMatch(const char* backend) {
  SCOPED_TRACE(backend);
  testing::FoldComparison c = testing::compareFoldsWith(backend);
  for (const std::string& m : c.mismatches)
    ADD_FAILURE() << m;
  // The ops whose result IEEE 754 fixes, in both dtypes, and nothing else.
  std::vector<std::string> want;
  for (const char* op :
       {"neg", "abs", "sign", "sqrt", "rsqrt", "square", "reciprocal", "relu", "floor", "ceil",
        "round", "add", "sub", "mul", "div", "maximum", "minimum", "remainder"})
    for (const char* t : {"f32", "f64"})
      want.push_back(std::string(op) + " " + t);
  std::sort(want.begin(), want.end());
  std::sort(c.folded.begin(), c.folded.end());
  EXPECT_EQ(c.folded, want);
}

TEST(ConstantFold, FoldsHaveTheBitsOfTheCpuBackend) {
  expectFoldsMatch("cpu");
}

TEST(ConstantFold, FoldsHaveTheBitsOfTheInterpreter) {
  expectFoldsMatch("cpu-unfused");
}

// IEEE 754's abs (C's fabs, NumPy's abs) clears the sign: abs(-0.0) is +0.0, also
// where the op runs on a parameter.
TEST(ConstantFold, AbsOfNegativeZeroIsPositiveZero) {
  for (const char* t : {"f32", "f64"}) {
    auto g = ir::parseGraph(std::string("graph @a(%x: ") + t +
                            "[2]) {\n  %r = abs %x\n  return %r\n}\n");
    for (const char* backend : {"cpu", "cpu-unfused"}) {
      Array x = Array::fromVector<double>({-0.0, 0.0}, {2});
      if (std::string(t) == "f32")
        x = Array::fromVector<float>({-0.0F, 0.0F}, {2});
      Array r = compile(*g, getBackend(backend))->run({x}).front();
      for (int64_t i = 0; i < 2; ++i) {
        double v = std::string(t) == "f32" ? r.data<float>()[i] : r.data<double>()[i];
        EXPECT_EQ(v, 0.0) << t << " " << backend;
        EXPECT_FALSE(std::signbit(v))
            << t << " " << backend << ": abs(" << (i ? "+" : "-") << "0.0) is -0.0";
      }
    }
  }
}

} // namespace
} // namespace graphc
