//===- tests/passes/MasksTest.cpp - Triangular masks as selects -----------===//
//
// passes/Masks.h on the cpu backend against triu and tril as written, run node by
// node on `cpu-unfused`: the same bits for every k (inside, on and past the matrix),
// batched, wide and tall, integers, and NaNs and infinities in the masked-out part
// (which become +0, as the masks write them).
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
#include "support/Numeric.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <limits>

namespace graphc {
namespace {

/// The bytes of `a`, for comparing bits.
std::string bytesOf(const Array& a) {
  return std::string(static_cast<const char*>(a.rawData()), a.numel() * a.elementSize());
}

TEST(Masks, SelectsHaveTheBitsOfTheMasks) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const char* type : {"f64[5,5]", "f64[2,3,6]", "f64[7,2]", "i32[4,4]", "f32[1,3,3]"})
    for (const char* op : {"triu", "tril"})
      for (int k : {-8, -2, -1, 0, 1, 3, 8}) {
        // The mask and its consumer: one kernel after the pass.
        auto g = ir::parseGraph(fmt::format("graph @m(%x: {0}) {{\n  %y = {1} %x {{k={2}}}\n"
                                            "  %z = neg %y\n  return %z\n}}",
                                            type, op, k));
        auto plain = compile(*g, getBackend("cpu-unfused"), {"none"});
        auto masked = compile(*g, getBackend("cpu"), {"masks"});
        std::vector<Array> in = testing::randomInputs(*g, 40 + k);
        if (in[0].dtype() == ir::DType::F64) {
          double* x = in[0].data<double>();
          x[0] = nan, x[in[0].numel() - 1] = inf, x[1] = -0.0;
        }
        std::vector<Array> want = plain->run(in), got = masked->run(in);
        EXPECT_EQ(bytesOf(got[0]), bytesOf(want[0])) << op << " k=" << k << " of " << type;
      }
}

} // namespace
} // namespace graphc
