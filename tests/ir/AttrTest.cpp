//===- tests/ir/AttrTest.cpp - Attribute sets in canonical form -----------===//
#include "ir/Attr.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>

namespace graphc::ir {
namespace {

TEST(Attrs, SortedByNameWhateverTheOrder) {
  Attrs a{{"stop", std::vector<int64_t>{2}}, {"start", std::vector<int64_t>{1}}};
  Attrs b{{"start", std::vector<int64_t>{1}}, {"stop", std::vector<int64_t>{2}}};
  EXPECT_EQ(a, b);
  EXPECT_EQ(hashValue(a), hashValue(b));
  EXPECT_EQ(a.entries()[0].name, "start");
  EXPECT_EQ(attrsString(a), "{start=[1], stop=[2]}");
}

TEST(Attrs, FalseFlagsAreDropped) {
  Attrs a{{"keepdims", false}, {"axes", std::vector<int64_t>{0}}};
  Attrs b{{"axes", std::vector<int64_t>{0}}};
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a.has("keepdims"));
  a.set("keepdims", true);
  EXPECT_NE(a, b);
  EXPECT_EQ(attrsString(a), "{axes=[0], keepdims}");
  a.set("keepdims", false);
  EXPECT_EQ(a, b);
}

TEST(Attrs, SetReplaces) {
  Attrs a;
  a.set("k", int64_t{1}).set("k", int64_t{2});
  EXPECT_EQ(a.entries().size(), 1u);
  EXPECT_EQ(a.getInt("k"), 2);
}

TEST(Attrs, KindsDiffer) {
  EXPECT_NE(Attrs({{"v", int64_t{1}}}), Attrs({{"v", 1.0}}));
  EXPECT_NE(Attrs({{"v", std::vector<int64_t>{1}}}), Attrs({{"v", std::vector<double>{1}}}));
}

TEST(Attrs, NaNEqualsItselfBitwise) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(Attrs({{"value", nan}}), Attrs({{"value", nan}}));
  EXPECT_EQ(hashValue(Attrs({{"value", nan}})), hashValue(Attrs({{"value", nan}})));
  // 0.0 and -0.0 are different constants.
  EXPECT_NE(Attrs({{"value", 0.0}}), Attrs({{"value", -0.0}}));
}

TEST(Attrs, ValueText) {
  EXPECT_EQ(attrValueString(1.0), "1.0");
  EXPECT_EQ(attrValueString(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(attrValueString(std::string("a\"b\\")), "\"a\\\"b\\\\\"");
  EXPECT_EQ(attrValueString(DType::I32), "i32");
  EXPECT_EQ(attrValueString(std::vector<double>{0.5, 2}), "[0.5,2.0]");
}

} // namespace
} // namespace graphc::ir
