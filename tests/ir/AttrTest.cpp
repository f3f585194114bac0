//===- tests/ir/AttrTest.cpp - Attribute sets in canonical form -----------===//
#include "ir/Attr.h"

#include "ir/Graph.h"
#include "support/Error.h"

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

/// The message of the Error `f` throws, or "" when it throws none.
template <typename F> std::string errorOf(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.message();
  }
  return "";
}

// A node's attributes are read against its op's schema: a misspelled name or a read
// as another kind fails, where an untied set would answer false or 0.
TEST(Attrs, NodesReadTheirAttributesAgainstTheSchema) {
  Graph g("f");
  Value x = g.addParameter("x", TensorType(DType::F64, {3, 4}));
  const Node* sum =
      g.create(Op::Sum, {x}, Attrs{{"axes", std::vector<int64_t>{1}}, {"keepdims", true}});
  const Attrs& a = sum->attrs();
  EXPECT_TRUE(a.flag("keepdims"));
  EXPECT_EQ(a.getInts("axes"), (std::vector<int64_t>{1}));
  EXPECT_EQ(errorOf([&] { a.flag("keepdim"); }),
            "internal error: sum has no attribute 'keepdim' (ir/Ops.def)");
  EXPECT_EQ(errorOf([&] { a.has("axis"); }),
            "internal error: sum has no attribute 'axis' (ir/Ops.def)");
  EXPECT_EQ(errorOf([&] { a.getInt("axes"); }),
            "internal error: attribute 'axes' of sum is ints, read as int");
  Attrs copy = a; // copies stay tied, and compare by their entries alone
  EXPECT_NE(errorOf([&] { copy.getFloat("value"); }), "");
  EXPECT_EQ(copy, (Attrs{{"axes", std::vector<int64_t>{1}}, {"keepdims", true}}));
  Attrs loose{{"axes", std::vector<int64_t>{1}}};
  EXPECT_FALSE(loose.flag("keepdim")); // not tied: no schema to check against
}

// A node made from another op's attributes is checked against its own op's schema.
TEST(Attrs, CreateTiesTheGivenAttributesToTheNewOp) {
  Graph g("f");
  Value x = g.addParameter("x", TensorType(DType::F64, {3, 3}));
  const Node* u = g.create(Op::Triu, {x}, Attrs{{"k", int64_t{1}}});
  const Node* l = g.create(Op::Tril, {x}, u->attrs());
  EXPECT_EQ(l->attrs().getInt("k"), 1);
  const Node* m = g.create(Op::Max, {x}, Attrs{{"axes", std::vector<int64_t>{0}}});
  const Node* s = g.create(Op::Sum, {x}, m->attrs());
  EXPECT_EQ(s->attrs().getInts("axes"), (std::vector<int64_t>{0}));
}

} // namespace
} // namespace graphc::ir
