//===- tests/runtime/ShapeTest.cpp - Data movement ops --------------------===//
//
// Each shape op against an index-by-index reference: out[idx] == in[f(idx)], for
// several ranks and dtypes, including batched diag/diag_part/triu/tril.
//
//===----------------------------------------------------------------------===//
#include "tests/runtime/TestUtil.h"

#include <gtest/gtest.h>

namespace graphc::testing {
namespace {

using ir::Op;
using Ints = std::vector<int64_t>;

/// Expects y[idx] == x[source(idx)] for every idx of y, or 0 where source returns
/// an empty index list.
void expectGather(const Array& y, const Array& x,
                  const std::function<Ints(llvm::ArrayRef<int64_t>)>& source,
                  const std::string& what) {
  forEachIndex(y.shape(), [&](llvm::ArrayRef<int64_t> idx) {
    Ints s = source(idx);
    double want = s.empty() && x.rank() > 0 ? 0.0 : x.getDouble(s);
    ASSERT_EQ(y.getDouble(idx), want) << what << " at " << ir::shapeString(idx);
  });
}

Array sample(DType dt, llvm::ArrayRef<int64_t> shape, uint64_t seed) {
  return ir::isFloat(dt) ? randn(dt, shape, seed) : Array::randomUniform(dt, shape, seed, -9, 9);
}

TEST(ShapeOps, BroadcastTo) {
  for (DType dt : {DType::F32, DType::F64, DType::I32, DType::Bool}) {
    Array x = sample(dt, {3, 1}, 1);
    Array y = runOp1(Op::BroadcastTo, {x}, {{"shape", Ints{2, 3, 4}}});
    expectGather(
        y, x,
        [](auto i) {
          return Ints{i[1], 0};
        },
        "broadcast [3,1]");
    Array v = sample(dt, {4}, 2);
    expectGather(
        runOp1(Op::BroadcastTo, {v}, {{"shape", Ints{3, 4}}}), v, [](auto i) { return Ints{i[1]}; },
        "broadcast [4]");
  }
}

TEST(ShapeOps, Reshape) {
  Array x = sample(DType::F64, {2, 3, 4}, 3);
  Array y = runOp1(Op::Reshape, {x}, {{"shape", Ints{4, 6}}});
  expectGather(
      y, x,
      [](auto i) {
        int64_t flat = i[0] * 6 + i[1];
        return Ints{flat / 12, (flat / 4) % 3, flat % 4};
      },
      "reshape");
}

/// An empty array whose extents multiply past 64 bits ([0, 2^48, 2^32]) is a clear
/// error, not an overflow in the kernel builder on the way to it.
TEST(ShapeOps, ReshapeToAHugeEmptyShapeIsAnError) {
  Array x = sample(DType::F32, {0}, 3);
  try {
    runOp1(Op::Reshape, {x}, {{"shape", Ints{0, int64_t{1} << 48, int64_t{1} << 32}}});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("do not fit in int64_t"), std::string::npos) << e.message();
  }
}

TEST(ShapeOps, TransposeAnyPermutation) {
  for (DType dt : {DType::F32, DType::F64, DType::I64}) {
    Array x = sample(dt, {2, 3, 4}, 4);
    for (Ints perm : {Ints{0, 1, 2}, Ints{2, 0, 1}, Ints{1, 2, 0}, Ints{2, 1, 0}, Ints{0, 2, 1}}) {
      Array y = runOp1(Op::Transpose, {x}, {{"perm", perm}});
      expectGather(
          y, x,
          [&](auto i) {
            Ints s(3);
            for (int a = 0; a < 3; ++a)
              s[perm[a]] = i[a];
            return s;
          },
          "transpose " + ir::shapeString(perm));
    }
  }
}

TEST(ShapeOps, SliceWithStride) {
  Array x = sample(DType::F32, {5, 7, 3}, 5);
  Array y = runOp1(Op::Slice, {x},
                   {{"start", Ints{1, 0, 2}}, {"stop", Ints{5, 7, 3}}, {"stride", Ints{2, 3, 1}}});
  EXPECT_EQ(y.shape(), (llvm::ArrayRef<int64_t>{2, 3, 1}));
  expectGather(
      y, x,
      [](auto i) {
        return Ints{1 + 2 * i[0], 3 * i[1], 2 + i[2]};
      },
      "slice");
  Array z = runOp1(Op::Slice, {x}, {{"start", Ints{2, 1, 0}}, {"stop", Ints{4, 6, 3}}});
  expectGather(
      z, x,
      [](auto i) {
        return Ints{2 + i[0], 1 + i[1], i[2]};
      },
      "slice");
}

TEST(ShapeOps, Concat) {
  for (DType dt : {DType::F64, DType::I32, DType::Bool}) {
    Array a = sample(dt, {2, 1, 3}, 6), b = sample(dt, {2, 4, 3}, 7), c = sample(dt, {2, 2, 3}, 8);
    Array y = runOp1(Op::Concat, {a, b, c}, {{"axis", int64_t{1}}});
    EXPECT_EQ(y.shape(), (llvm::ArrayRef<int64_t>{2, 7, 3}));
    forEachIndex(y.shape(), [&](llvm::ArrayRef<int64_t> i) {
      int64_t j = i[1];
      const Array& src = j < 1 ? a : j < 5 ? b : c;
      int64_t off = j < 1 ? 0 : j < 5 ? 1 : 5;
      ASSERT_EQ(y.getDouble(i), src.getDouble({i[0], j - off, i[2]}));
    });
    Array z = runOp1(Op::Concat, {a, a}, {{"axis", int64_t{0}}});
    expectGather(
        z, a,
        [](auto i) {
          return Ints{i[0] % 2, i[1], i[2]};
        },
        "concat axis 0");
  }
}

TEST(ShapeOps, DiagAndDiagPart) {
  for (DType dt : {DType::F32, DType::F64, DType::I32}) {
    Array v = sample(dt, {2, 3, 4}, 9);
    Array d = runOp1(Op::Diag, {v});
    EXPECT_EQ(d.shape(), (llvm::ArrayRef<int64_t>{2, 3, 4, 4}));
    expectGather(
        d, v,
        [](auto i) {
          return i[2] == i[3] ? Ints{i[0], i[1], i[2]} : Ints{};
        },
        "diag");
    for (const Ints& shape : {Ints{3, 5}, Ints{2, 5, 3}, Ints{2, 2, 4, 4}}) {
      Array m = sample(dt, shape, 10);
      Array p = runOp1(Op::DiagPart, {m});
      expectGather(
          p, m,
          [](auto i) {
            Ints s(i.begin(), i.end());
            s.push_back(s.back());
            return s;
          },
          "diag_part " + ir::shapeString(shape));
    }
  }
}

TEST(ShapeOps, TriuTrilWithK) {
  for (DType dt : {DType::F32, DType::F64, DType::I64}) {
    Array m = sample(dt, {2, 4, 5}, 11);
    for (int64_t k : {-2, -1, 0, 1, 3}) {
      for (Op op : {Op::Triu, Op::Tril}) {
        ir::Attrs attrs;
        if (k != 0)
          attrs.set("k", k);
        Array y = runOp1(op, {m}, attrs);
        expectGather(
            y, m,
            [&](auto i) {
              bool keep = op == Op::Triu ? i[2] - i[1] >= k : i[2] - i[1] <= k;
              return keep ? Ints(i.begin(), i.end()) : Ints{};
            },
            fmt::format("{} k={}", ir::opName(op).str(), k));
      }
    }
  }
}

} // namespace
} // namespace graphc::testing
