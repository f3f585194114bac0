//===- tests/ir/InferTest.cpp - Typing rules ------------------------------===//
#include "ir/Infer.h"

#include "support/Error.h"

#include <gtest/gtest.h>

namespace graphc::ir {
namespace {

TensorType f64(std::initializer_list<int64_t> s) {
  return TensorType(DType::F64, s);
}
TensorType i32(std::initializer_list<int64_t> s) {
  return TensorType(DType::I32, s);
}
using Ints = std::vector<int64_t>;

/// The message of the error inferTypes throws, or "" when it accepts.
std::string errorOf(Op op, llvm::ArrayRef<TensorType> xs, const Attrs& attrs = {},
                    llvm::ArrayRef<TensorType> given = {}) {
  try {
    inferTypes(op, xs, attrs, given);
    return "";
  } catch (const Error& e) {
    return e.message();
  }
}

TEST(Infer, Elementwise) {
  EXPECT_EQ(inferTypes(Op::Add, {f64({2, 3}), f64({2, 3})}, {})[0], f64({2, 3}));
  EXPECT_EQ(inferTypes(Op::Lt, {i32({2}), i32({2})}, {})[0], TensorType(DType::Bool, {2}));
  EXPECT_EQ(inferTypes(Op::Cast, {i32({2})}, Attrs{{"dtype", DType::F32}})[0],
            TensorType(DType::F32, {2}));
  EXPECT_EQ(errorOf(Op::Add, {f64({2, 3}), f64({3})}),
            "add(f64[2,3], f64[3]): operand shapes differ; broadcast explicitly with broadcast_to");
  EXPECT_EQ(errorOf(Op::Sqrt, {i32({2})}), "sqrt(i32[2]): needs a floating-point operand");
  EXPECT_EQ(errorOf(Op::Neg, {i32({2})}), "");
}

TEST(Infer, ShapeOps) {
  EXPECT_EQ(inferTypes(Op::BroadcastTo, {f64({3, 1})}, Attrs{{"shape", Ints{2, 3, 4}}})[0],
            f64({2, 3, 4}));
  EXPECT_EQ(inferTypes(Op::Transpose, {f64({2, 3, 4})}, Attrs{{"perm", Ints{2, 0, 1}}})[0],
            f64({4, 2, 3}));
  EXPECT_EQ(inferTypes(Op::Slice, {f64({5})},
                       Attrs{{"start", Ints{1}}, {"stop", Ints{5}}, {"stride", Ints{2}}})[0],
            f64({2}));
  EXPECT_EQ(inferTypes(Op::Concat, {f64({2, 3}), f64({2, 1})}, Attrs{{"axis", int64_t{1}}})[0],
            f64({2, 4}));
  EXPECT_EQ(inferTypes(Op::DiagPart, {f64({2, 3, 5})}, {})[0], f64({2, 3}));
  EXPECT_NE(errorOf(Op::BroadcastTo, {f64({1})}, Attrs{{"shape", Ints{-1}}}), "");
  // The element count of the target shape must not overflow (it used to wrap to 0).
  EXPECT_EQ(
      errorOf(Op::Reshape, {f64({0})}, Attrs{{"shape", Ints{int64_t{1} << 32, int64_t{1} << 32}}}),
      "reshape(f64[0]): shape [4294967296,4294967296] has too many elements");
  EXPECT_EQ(errorOf(Op::Reshape, {f64({0})}, Attrs{{"shape", Ints{int64_t{1} << 32, 0}}}), "");
}

TEST(Infer, Reductions) {
  Attrs a{{"axes", Ints{0, 2}}};
  EXPECT_EQ(inferTypes(Op::Sum, {f64({2, 3, 4})}, a)[0], f64({3}));
  a.set("keepdims", true);
  EXPECT_EQ(inferTypes(Op::Sum, {f64({2, 3, 4})}, a)[0], f64({1, 3, 1}));
  EXPECT_EQ(inferTypes(Op::Argmax, {f64({2, 3})}, Attrs{{"axes", Ints{1}}})[0],
            TensorType(DType::I64, {2}));
  EXPECT_EQ(errorOf(Op::Mean, {i32({2})}, Attrs{{"axes", Ints{0}}}),
            "mean(i32[2]): needs a floating-point operand");
  EXPECT_EQ(errorOf(Op::Var, {i32({2})}, Attrs{{"axes", Ints{0}}}),
            "var(i32[2]): needs a floating-point operand");
}

TEST(Infer, Linalg) {
  EXPECT_EQ(inferTypes(Op::Matmul, {f64({3, 4}), f64({5, 4})}, Attrs{{"transpose_b", true}})[0],
            f64({3, 5}));
  EXPECT_EQ(errorOf(Op::Matmul, {f64({3, 4}), f64({5, 2})}),
            "matmul(f64[3,4], f64[5,2]): contracted dimensions differ (4 vs 5)");
  TypeList qr = inferTypes(Op::Qr, {f64({2, 6, 3})}, {});
  ASSERT_EQ(qr.size(), 2u);
  EXPECT_EQ(qr[0], f64({2, 6, 3}));
  EXPECT_EQ(qr[1], f64({2, 3, 3}));
  EXPECT_EQ(inferTypes(Op::Lu, {f64({3, 3})}, {}).size(), 3u);
  EXPECT_EQ(inferTypes(Op::Det, {f64({7, 3, 3})}, {})[0], f64({7}));
  EXPECT_EQ(
      inferTypes(Op::TriangularSolve, {f64({3, 3}), f64({2, 3})}, Attrs{{"right_side", true}})[0],
      f64({2, 3}));
}

TEST(Infer, Sources) {
  EXPECT_EQ(inferTypes(Op::Eye, {}, {}, {f64({3, 3})})[0], f64({3, 3}));
  EXPECT_EQ(errorOf(Op::Eye, {}, {}), "eye(): a source op needs its result type (`: f64[2,3]`)");
  EXPECT_EQ(errorOf(Op::Constant, {}, Attrs{{"value", std::vector<double>{1}}}, {f64({2})}),
            "constant(): value has 1 elements but the type f64[2] has 2");
}

TEST(Infer, GivenTypesAreChecked) {
  EXPECT_EQ(errorOf(Op::Neg, {f64({2})}, {}, {f64({3})}),
            "neg(f64[2]): result type is f64[2], but f64[3] was given");
  EXPECT_EQ(errorOf(Op::Qr, {f64({2, 2})}, {}, {f64({2, 2})}),
            "qr(f64[2,2]): has 2 result(s), 1 type(s) given");
}

TEST(Infer, CheckAttrs) {
  EXPECT_NO_THROW(checkAttrs(Op::Sum, Attrs{{"axes", Ints{0}}}));
  auto msg = [](Op op, const Attrs& a) {
    try {
      checkAttrs(op, a);
      return std::string();
    } catch (const Error& e) {
      return e.message();
    }
  };
  EXPECT_EQ(msg(Op::Sum, Attrs{{"axes", Ints{0}}, {"axis", int64_t{0}}}),
            "sum: unknown attribute 'axis'");
  EXPECT_EQ(msg(Op::Sum, Attrs{{"axes", int64_t{0}}}),
            "sum: attribute 'axes' must be of kind ints, got int");
  EXPECT_EQ(msg(Op::Sum, {}), "sum: missing attribute 'axes' (ints)");
  // Optional attributes and flags may be absent.
  EXPECT_EQ(msg(Op::Slice, Attrs{{"start", Ints{}}, {"stop", Ints{}}}), "");
  EXPECT_EQ(msg(Op::Matmul, {}), "");
}

TEST(Infer, BroadcastShapes) {
  EXPECT_EQ(*broadcastShapes({3, 1}, {4}), Shape({3, 4}));
  EXPECT_EQ(*broadcastShapes({}, {2, 2}), Shape({2, 2}));
  EXPECT_FALSE(broadcastShapes({3}, {4}).has_value());
}

} // namespace
} // namespace graphc::ir
