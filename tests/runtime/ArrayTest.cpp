//===- tests/runtime/ArrayTest.cpp - graphc::Array ------------------------===//
//
// Factories, typed access (dtype mismatches throw), wrapping caller memory without
// copying, strided views made contiguous (against an index loop), and printing.
//
//===----------------------------------------------------------------------===//
#include "tests/runtime/TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>

namespace graphc::testing {
namespace {

TEST(Array, FromVectorRoundTripsEveryDType) {
  Array f = Array::fromVector<double>({1.5, -2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(f.type(), ir::TensorType(DType::F64, {2, 3}));
  EXPECT_EQ(f.toVector<double>(), (std::vector<double>{1.5, -2, 3, 4, 5, 6}));
  EXPECT_EQ(f.at<double>({1, 2}), 6.0);
  EXPECT_EQ(Array::fromVector<float>({1, 2}, {2}).toVector<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(Array::fromVector<int32_t>({7, -8}, {2}).toVector<int32_t>(),
            (std::vector<int32_t>{7, -8}));
  EXPECT_EQ(Array::fromVector<int64_t>({1LL << 40}, {1}).toVector<int64_t>()[0], 1LL << 40);
  EXPECT_EQ(Array::fromVector<bool>({true, false, true}, {3}).toVector<bool>(),
            (std::vector<bool>{true, false, true}));
  EXPECT_EQ(Array::scalar(2.5).rank(), 0);
  EXPECT_EQ(Array::scalar(2.5).at<double>({}), 2.5);
}

/// A double into an integer array: truncated toward zero, NaN as 0, values past the
/// type's range as its least or greatest value (a C conversion of those is undefined).
TEST(Array, FullOfIntegersSaturates) {
  auto first = [](ir::DType t, double v) {
    Array a = Array::full(t, {1}, v);
    return t == ir::DType::I32 ? int64_t{a.at<int32_t>({0})} : a.at<int64_t>({0});
  };
  EXPECT_EQ(first(ir::DType::I32, -2.9), -2);
  EXPECT_EQ(first(ir::DType::I32, std::nan("")), 0);
  EXPECT_EQ(first(ir::DType::I32, 3e9), INT32_MAX);
  EXPECT_EQ(first(ir::DType::I32, -0x1p31), INT32_MIN);
  EXPECT_EQ(first(ir::DType::I32, 2147483647.5), INT32_MAX);
  EXPECT_EQ(first(ir::DType::I64, -HUGE_VAL), INT64_MIN);
  EXPECT_EQ(first(ir::DType::I64, 0x1p63), INT64_MAX);
  EXPECT_EQ(first(ir::DType::I64, 0x1p62), int64_t{1} << 62);
}

TEST(Array, RandomUniformNeedsAnInterval) {
  for (auto [low, high] :
       {std::pair{1.0, 1.0}, {2.0, 1.0}, {std::nan(""), 1.0}, {0.0, HUGE_VAL}, {-1e308, 1e308}})
    EXPECT_THROW(Array::randomUniform(ir::DType::I64, {2}, 1, low, high), Error)
        << low << " " << high;
  Array a = Array::randomUniform(ir::DType::I64, {50}, 1, -1e300, -1e299); // saturated: the least
  EXPECT_EQ(a.at<int64_t>({7}), INT64_MIN);
  Array b = Array::randomUniform(ir::DType::I32, {50}, 2, 0.5, 2.5); // 0, 1 or 2
  for (int64_t i = 0; i < 50; ++i)
    EXPECT_TRUE(b.at<int32_t>({i}) >= 0 && b.at<int32_t>({i}) <= 2);
}

TEST(Array, TypeAndCountMismatchesThrow) {
  Array f = Array::fromVector<double>({1, 2}, {2});
  EXPECT_THROW(f.toVector<float>(), Error);
  EXPECT_THROW(f.data<int32_t>(), Error);
  EXPECT_THROW(f.at<double>({2}), Error);
  EXPECT_THROW(f.at<double>({0, 0}), Error);
  EXPECT_THROW(Array::fromVector<double>({1, 2, 3}, {2, 2}), Error);
  EXPECT_THROW(Array().toVector<double>(), Error);
  try {
    f.toVector<float>();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("f64"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("f32"), std::string::npos) << e.message();
  }
}

TEST(Array, WrapSharesCallerMemory) {
  std::vector<double> mem = {1, 2, 3, 4, 5, 6};
  Array w = Array::wrap(mem.data(), {2, 3});
  EXPECT_FALSE(w.ownsMemory());
  EXPECT_EQ(w.rawData(), mem.data());
  mem[4] = 50;
  EXPECT_EQ(w.at<double>({1, 1}), 50.0);
  Array c = Array::copyOf(mem.data(), {2, 3});
  mem[0] = -1;
  EXPECT_EQ(c.at<double>({0, 0}), 1.0);
  EXPECT_TRUE(c.ownsMemory());
}

TEST(Array, StridedWrapIsMadeContiguous) {
  std::vector<int32_t> mem = {1, 2, 3, 4, 5, 6};     // [2,3] row-major
  Array t = Array::wrap(mem.data(), {3, 2}, {1, 3}); // its transpose
  EXPECT_FALSE(t.isContiguous());
  EXPECT_EQ(t.toVector<int32_t>(), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
  Array c = t.contiguous();
  EXPECT_TRUE(c.isContiguous());
  EXPECT_EQ(c.toVector<int32_t>(), t.toVector<int32_t>());
  // Every other element, backwards.
  Array r = Array::wrap(mem.data() + 5, {3}, {-2});
  EXPECT_EQ(r.toVector<int32_t>(), (std::vector<int32_t>{6, 4, 2}));
  EXPECT_THROW(t.view({4, 2}, {1, 3}), Error);
  EXPECT_THROW(t.reshaped({6}), Error);
  EXPECT_EQ(c.reshaped({6}).toVector<int32_t>(), t.toVector<int32_t>());
}

// Strided views of every element size (transposes, steps, broadcasts, reversed
// axes, unit axes) made contiguous hold the elements an index loop reads.
TEST(Array, StridedCopiesMatchAnIndexLoop) {
  std::mt19937 rng(7);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (DType dt : ir::kAllDTypes) {
    for (int trial = 0; trial < 40; ++trial) {
      int rank = static_cast<int>(pick(1, 4));
      ir::Shape shape, strides;
      for (int i = 0; i < rank; ++i)
        shape.push_back(trial % 5 == 0 && i == 0 ? 1 : pick(1, i == rank - 1 ? 70 : 9));
      // A random order of the axes in memory, a step of 1 or 2 on each, sometimes
      // a broadcast axis or a reversed one.
      std::vector<int> order(rank);
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      strides.assign(rank, 0);
      int64_t span = 1, offset = 0;
      for (int k = rank - 1; k >= 0; --k) {
        int ax = order[k];
        int64_t step = pick(1, 2);
        strides[ax] = pick(0, 9) == 0 ? 0 : span * step;
        if (pick(0, 4) == 0) { // reversed: start at the far end of the axis
          offset += strides[ax] * (shape[ax] - 1);
          strides[ax] = -strides[ax];
        }
        span *= shape[ax] * step;
      }
      Array base = Array::empty(dt, {span}); // distinct bytes (0 or 1 for bool)
      auto* bytes = static_cast<unsigned char*>(base.rawData());
      for (int64_t b = 0; b < span * base.elementSize(); ++b)
        bytes[b] = static_cast<unsigned char>(dt == DType::Bool ? rng() % 2 : rng());
      Array view = base.view(shape, strides, offset);
      Array copy = view.contiguous();
      ASSERT_TRUE(copy.isContiguous());
      int64_t size = base.elementSize();
      const auto* src = static_cast<const char*>(base.rawData());
      const auto* got = static_cast<const char*>(copy.rawData());
      ir::Shape idx(rank, 0);
      for (int64_t e = 0; e < copy.numel(); ++e) {
        int64_t off = offset;
        for (int i = 0; i < rank; ++i)
          off += idx[i] * strides[i];
        ASSERT_EQ(std::memcmp(got + e * size, src + off * size, size), 0)
            << ir::dtypeName(dt).str() << " element " << e << " of shape "
            << ir::TensorType(dt, shape).str() << ", trial " << trial;
        for (int i = rank - 1; i >= 0 && ++idx[i] == shape[i]; --i)
          idx[i] = 0;
      }
    }
  }
}

TEST(Array, ZerosFullRandom) {
  for (DType dt : ir::kAllDTypes) {
    Array z = Array::zeros(dt, {2, 2});
    for (double v : doubles(z))
      EXPECT_EQ(v, 0.0);
    for (double v : doubles(Array::full(dt, {3}, 1.0)))
      EXPECT_EQ(v, 1.0);
  }
  Array a = Array::randomNormal(DType::F64, {1000}, 7);
  Array b = Array::randomNormal(DType::F64, {1000}, 7);
  Array c = Array::randomNormal(DType::F64, {1000}, 8);
  EXPECT_EQ(a.toVector<double>(), b.toVector<double>());
  EXPECT_NE(a.toVector<double>(), c.toVector<double>());
  double mean = 0;
  for (double v : a.toVector<double>())
    mean += v / 1000;
  EXPECT_LT(std::abs(mean), 0.15);
  for (int32_t v : Array::randomUniform(DType::I32, {200}, 3, -2, 3).toVector<int32_t>()) {
    EXPECT_GE(v, -2);
    EXPECT_LT(v, 3);
  }
  for (float v : Array::randomUniform(DType::F32, {200}, 3, 1, 2).toVector<float>()) {
    EXPECT_GE(v, 1.0f);
    EXPECT_LE(v, 2.0f);
  }
  EXPECT_THROW(Array::randomNormal(DType::I32, {2}, 1), Error);
}

TEST(Array, PrintsLikeNumPy) {
  Array a = Array::fromVector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(fmt::format("{}", a), "[[1, 2, 3],\n [4, 5, 6]] i32[2,3]");
  EXPECT_EQ(Array::fromVector<bool>({true, false}, {2}).str(), "[true, false] bool[2]");
  EXPECT_EQ(Array::scalar(0.5).str(), "0.5 f64[]");
  Array cube = Array::zeros(DType::F32, {2, 1, 2});
  EXPECT_EQ(cube.str(), "[[[0, 0]],\n\n [[0, 0]]] f32[2,1,2]");
  std::vector<double> big(5000);
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<double>(i);
  std::string s = Array::fromVector(big, {5000}).str();
  EXPECT_EQ(s, "[0, 1, 2, ..., 4997, 4998, 4999] f64[5000]");
}

// Element and byte counts are checked: a shape whose bytes overflow int64_t (2^62
// f64 elements) and one that cannot be allocated (2^40 f64, 8 TiB) are
// AllocationErrors naming the type and the bytes, never a crash or std::bad_alloc.
TEST(Array, ImpossibleSizesAreAllocationErrors) {
  auto message = [](auto f) -> std::string {
    try {
      f();
    } catch (const AllocationError& e) {
      return e.message();
    }
    return "no AllocationError";
  };
  EXPECT_EQ(message([] {
              Array::randomNormal(DType::F64, {2147483648, 2147483648}, 0);
            }),
            "f64[2147483648,2147483648] needs more than 2^63 bytes");
  EXPECT_EQ(message([] { Array::empty(DType::F64, {int64_t(1) << 40}); }),
            "cannot allocate 8796093022208 bytes (8.0 TiB) for f64[1099511627776]");
  EXPECT_EQ(message([] {
              Array::zeros(DType::Bool, {int64_t(1) << 62, 4});
            }),
            "bool[4611686018427387904,4] needs more than 2^63 bytes");
  // Zero elements, however large the other extents: nothing to allocate.
  EXPECT_EQ(Array::empty(DType::F64, {0, int64_t(1) << 40}).numel(), 0);
  EXPECT_EQ(ir::checkedNumElements({3, -1}), std::nullopt);
  EXPECT_EQ(ir::checkedNumElements({int64_t(1) << 32, int64_t(1) << 31}), std::nullopt); // 2^63
  EXPECT_EQ(ir::checkedNumElements({int64_t(1) << 31, int64_t(1) << 31}), int64_t(1) << 62);
  EXPECT_EQ(ir::checkedByteSize(DType::F64, {int64_t(1) << 31, int64_t(1) << 31}), std::nullopt);
  EXPECT_EQ(ir::checkedByteSize(DType::F32, {int64_t(1) << 30, int64_t(1) << 30}), int64_t(1)
                                                                                       << 62);
  EXPECT_THROW(ir::numElements({int64_t(1) << 32, int64_t(1) << 32}), Error);
}

} // namespace
} // namespace graphc::testing
