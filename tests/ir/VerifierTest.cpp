//===- tests/ir/VerifierTest.cpp - Whole-graph checks ---------------------===//
#include "ir/Verifier.h"
#include "ir/Parser.h"

#include <gtest/gtest.h>

namespace graphc::ir {
namespace {

std::string errorOf(const Module& m) {
  try {
    verify(m);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

TEST(Verifier, AcceptsValidGraphs) {
  Module m = parseModule("graph @g(%x: f64[2,2]) {\n  %q:2 = qr %x\n  return %q#1, %x\n}\n");
  EXPECT_EQ(errorOf(m), "");
}

TEST(Verifier, NeedsOutputs) {
  Module m;
  m.graphs.push_back(std::make_unique<Graph>("g"));
  m.graphs[0]->addParameter("x", TensorType(DType::F64, {2}));
  EXPECT_EQ(errorOf(m), "error: graph @g has no outputs");
}

TEST(Verifier, GraphNamesAreUniqueInAModule) {
  Module m;
  for (int i = 0; i < 2; ++i) {
    auto g = std::make_unique<Graph>("g");
    g->addOutput(g->addParameter("x", TensorType(DType::F64, {2})));
    m.graphs.push_back(std::move(g));
  }
  EXPECT_EQ(errorOf(m), "error: graph @g is defined twice in the module");
}

// The remaining checks (stale types, operands defined later or in another graph,
// misnumbered parameters) guard against passes that bypass Graph::create; the public
// API cannot build such graphs, so they are exercised only through valid graphs here.

} // namespace
} // namespace graphc::ir
