//===- tests/codegen/CpuColumnTest.cpp - Column reductions vs a plain loop ===//
//
// Reductions whose reduced axes lie outside a kept innermost one (a sum over the
// leading axis of a short-wide array) run strip by strip of the innermost axis
// (codegen/Llvm.cpp: stripWidth, finishesInline). Here they run on the "cpu"
// backend over a sweep of shapes around the strips' widths (128 to 1024 points,
// a short last strip, one strip, a kept axis between reduced ones, reduced axes
// merged) and their bound (16 rows), and beside them shapes that take rows whole and against a
// plain float64 loop over the same f32 or i32 inputs: sum, mean, an epilogue (sqrt of a sum of
// squares), a prologue, max, argmax, var, and a domain output beside the reduction (x - mean).
//
//===----------------------------------------------------------------------===//
#include "codegen/Kernel.h"
#include "ir/Parser.h"
#include "runtime/Backends.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fmt/format.h>

namespace graphc {
namespace {

/// The values of each segment of a C-order array of `shape` reduced over `axes`,
/// in C order of the reduced coordinates.
std::vector<std::vector<double>> segmentsOf(const std::vector<double>& v, const ir::Shape& shape,
                                            const std::vector<int64_t>& axes) {
  ir::Shape strides = codegen::denseStrides(shape), kept;
  auto reduced = [&](size_t a) {
    return std::count(axes.begin(), axes.end(), static_cast<int64_t>(a)) != 0;
  };
  for (size_t a = 0; a < shape.size(); ++a)
    if (!reduced(a))
      kept.push_back(shape[a]);
  ir::Shape keptStrides = codegen::denseStrides(kept);
  std::vector<std::vector<double>> out(std::max<int64_t>(ir::numElements(kept), 1));
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
    int64_t segment = 0;
    for (size_t a = 0, j = 0; a < shape.size(); ++a)
      if (!reduced(a))
        segment += i / strides[a] % shape[a] * keptStrides[j++];
    out[segment].push_back(v[i]);
  }
  return out;
}

std::vector<double> asDoubles(const Array& a) {
  std::vector<double> out;
  if (a.dtype() == ir::DType::F32)
    for (float x : a.toVector<float>())
      out.push_back(x);
  else if (a.dtype() == ir::DType::I32)
    for (int32_t x : a.toVector<int32_t>())
      out.push_back(x);
  else
    for (int64_t x : a.toVector<int64_t>())
      out.push_back(static_cast<double>(x));
  return out;
}

/// Within `rtol` of `want` (relative to `scale`, the segment's sum of |x|).
void expectNear(const std::vector<double>& got, const std::vector<double>& want,
                const std::vector<double>& scale, double rtol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t s = 0; s < want.size() && bad < 5; ++s)
    if (!(std::abs(got[s] - want[s]) <= rtol * std::max(std::abs(want[s]), scale[s] * 1e-6)))
      ADD_FAILURE() << what << " segment " << s << ": got " << got[s] << ", want " << want[s]
                    << " (" << ++bad << ")";
}

void expectColumnReductions(const ir::Shape& shape, const std::vector<int64_t>& axes) {
  std::string where = fmt::format("{} axes {}", ir::shapeString(shape), ir::shapeString(axes));
  SCOPED_TRACE(where);
  std::string s = ir::shapeString(shape), a = ir::shapeString(axes);
  Array x = Array::randomUniform(ir::DType::F32, shape, 23, -1.0, 1.0);
  std::vector<double> v = asDoubles(x);
  std::vector<std::vector<double>> segs = segmentsOf(v, shape, axes);
  std::vector<double> sum, mean, norm, shifted, mx, arg, var, scale;
  for (const std::vector<double>& g : segs) {
    double t = 0, sq = 0, abs = 0, sh = 0, best = -INFINITY, at = 0;
    for (size_t i = 0; i < g.size(); ++i) {
      t += g[i];
      sq += g[i] * g[i];
      abs += std::abs(g[i]);
      sh += std::exp(static_cast<double>(static_cast<float>(g[i] * 2.0f)));
      if (g[i] > best)
        best = g[i], at = static_cast<double>(i);
    }
    double m = t / g.size(), dev = 0;
    for (double y : g)
      dev += (y - m) * (y - m);
    sum.push_back(t);
    mean.push_back(m);
    norm.push_back(std::sqrt(sq));
    shifted.push_back(sh);
    mx.push_back(best);
    arg.push_back(at);
    var.push_back(dev / g.size());
    scale.push_back(abs + 1);
  }
  // Sums that finish in their strips: alone, with an epilogue, with a prologue.
  auto sums = ir::parseGraph(fmt::format(R"(graph @sums(%x: f32{0}) {{
  %s = sum %x {{axes={1}}}
  %m = mean %x {{axes={1}}}
  %q = mul %x, %x
  %qs = sum %q {{axes={1}}}
  %n = sqrt %qs
  %c = full {{value=2.0}} : f32{0}
  %y = mul %x, %c
  %e = exp %y
  %es = sum %e {{axes={1}}}
  return %s, %m, %n, %es
}})",
                                         s, a));
  std::vector<Array> got = getBackend("cpu").compile(*sums)->run({x});
  expectNear(asDoubles(got[0]), sum, scale, 2.4e-7, "sum");
  expectNear(asDoubles(got[1]), mean, scale, 2.4e-7, "mean");
  expectNear(asDoubles(got[2]), norm, scale, 2.4e-7, "sqrt of the sum of squares");
  expectNear(asDoubles(got[3]), shifted, scale, 1e-6, "sum of exp(2x)");
  // Extremes, positions and var: strips whose accumulators are the table's.
  auto others = ir::parseGraph(fmt::format(R"(graph @others(%x: f32{0}) {{
  %m = max %x {{axes={1}}}
  %i = argmax %x {{axes={1}}}
  %v = var %x {{axes={1}}}
  return %m, %i, %v
}})",
                                           s, a));
  got = getBackend("cpu").compile(*others)->run({x});
  EXPECT_EQ(asDoubles(got[0]), mx) << "max";
  EXPECT_EQ(asDoubles(got[1]), arg) << "argmax";
  expectNear(asDoubles(got[2]), var, scale, 1e-6, "var");
  // A domain output beside the reduction: x - mean(x).
  auto centred = ir::parseGraph(fmt::format(R"(graph @centred(%x: f32{0}) {{
  %m = mean %x {{axes={1}, keepdims}}
  %b = broadcast_to %m {{shape={0}}}
  %d = sub %x, %b
  return %d
}})",
                                            s, a));
  std::vector<double> d = asDoubles(getBackend("cpu").compile(*centred)->run({x})[0]);
  std::vector<std::vector<double>> dsegs = segmentsOf(d, shape, axes);
  for (size_t g = 0, bad = 0; g < segs.size() && bad < 5; ++g)
    for (size_t i = 0; i < segs[g].size(); ++i)
      if (std::abs(dsegs[g][i] - (segs[g][i] - mean[g])) > 3e-7 * (1 + std::abs(segs[g][i])) &&
          ++bad <= 5)
        ADD_FAILURE() << "x - mean, segment " << g << " point " << i;
  // Integers wrap in their own type: exact.
  Array xi = Array::randomUniform(ir::DType::I32, shape, 29, -1000.0, 1000.0);
  auto isum = ir::parseGraph(
      fmt::format("graph @isum(%x: i32{0}) {{\n  %s = sum %x {{axes={1}}}\n  return %s\n}}", s, a));
  std::vector<double> want;
  for (const std::vector<double>& g : segmentsOf(asDoubles(xi), shape, axes)) {
    double t = 0;
    for (double y : g)
      t += y;
    want.push_back(t);
  }
  EXPECT_EQ(asDoubles(getBackend("cpu").compile(*isum)->run({xi})[0]), want) << "i32 sum";
}

TEST(CpuColumn, ReductionsOverLeadingAxesMatchAPlainLoop) {
  for (int64_t cols : {255, 256, 257, 1000, 1023, 1024, 1025, 2049, 4097, 16385, 100003})
    for (int64_t rows : {1, 3, 4, 5})
      expectColumnReductions({rows, cols}, {0});
  expectColumnReductions({16, 3000}, {0}); // the most rows strips take
  expectColumnReductions({17, 3000}, {0});
  expectColumnReductions({64, 100000}, {0});
  expectColumnReductions({4, 1000000}, {0});
  expectColumnReductions({1000, 300}, {0});
}

TEST(CpuColumn, ReductionsOverSeveralAndMiddleAxesMatchAPlainLoop) {
  expectColumnReductions({3, 5, 2000}, {0, 1}); // merged reduced axes
  expectColumnReductions({3, 5, 2000}, {0});
  expectColumnReductions({3, 5, 2000}, {1});      // kept outer axis: no strips
  expectColumnReductions({2, 3, 5, 700}, {0, 2}); // a kept axis between reduced ones
  expectColumnReductions({4, 1, 3, 5000}, {0, 2});
  expectColumnReductions({64, 64, 64}, {0, 1});
}

// Rows of a reduced axis over a kept innermost one go a row at a time where the
// row is 65 to 2048 points (codegen/Llvm.cpp: jams), several at a time beside it:
// the sizes around both bounds, over a middle axis and a leading one, with
// reduced axes of 1, 3 (fewer than the jam's 4) and odd lengths.
// Rows of at most 8 points are unrolled, the loop over the rows vectorized
// (codegen/Llvm.cpp: unrolledRow): rows of 1 to 9 points over an odd number of
// rows, and under a kept axis with reduced axes outside it.
TEST(CpuColumn, ShortRowsMatchAPlainLoop) {
  for (int64_t points = 1; points <= 9; ++points)
    expectColumnReductions({1001, points}, {1});
  expectColumnReductions({5, 333, 4}, {0, 2});
  expectColumnReductions({3, 7, 11, 2}, {3});
}

TEST(CpuColumn, RowsAtATimeAndJammedMatchAPlainLoop) {
  for (int64_t inner : {63, 64, 65, 129, 2047, 2048, 2049})
    for (int64_t rows : {1, 3, 37})
      expectColumnReductions({3, rows, inner}, {1});
  expectColumnReductions({5, 1, 300}, {1});
  expectColumnReductions({1, 7, 300}, {1});
  expectColumnReductions({41, 67, 257}, {1});
  expectColumnReductions({301, 65}, {0});
  expectColumnReductions({301, 64}, {0});
  expectColumnReductions({9, 23, 31, 130}, {0, 2}); // reduced axes on both sides of a kept one
}

} // namespace
} // namespace graphc
