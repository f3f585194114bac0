//===- tests/passes/PipelineTest.cpp - runPipeline's verify-each ----------===//
//
// With verifyEach, a pass that returns a broken graph is named in the error, with the
// verifier's message; the passes before it ran and were fine. Without it, the broken
// graph is returned (what a release build does unless asked).
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"
#include "passes/PassManager.h"
#include "support/Error.h"

#include <gtest/gtest.h>

namespace graphc::passes {
namespace {

/// A pass that drops every output: the verifier rejects a graph without outputs.
std::unique_ptr<ir::Graph> dropOutputs(const ir::Graph& g, PassStats&) {
  auto out = std::make_unique<ir::Graph>(g.name());
  for (const ir::Node* p : g.params())
    out->addParameter(p->attrs().getStr("name"), p->type(), p->loc());
  return out;
}

const Pass kDropOutputs{"drop-outputs", "breaks every graph", dropOutputs};

TEST(Pipeline, VerifyEachNamesThePassThatBrokeTheGraph) {
  auto g = ir::parseGraph("graph @g(%x: f64[3]) {\n  %y = neg %x\n  %z = neg %y\n  return %z\n}\n");
  std::vector<const Pass*> passes{findPass("canonicalize"), &kDropOutputs};
  ASSERT_NE(passes[0], nullptr);
  std::vector<std::string> ran;
  PipelineOptions options;
  options.verifyEach = true;
  options.afterPass = [&](const Pass& p, const ir::Graph&, const PassStats&) {
    ran.push_back(p.name.str());
  };
  try {
    runPipeline(*g, passes, options);
    FAIL() << "expected graphc::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "after pass 'drop-outputs': graph @g has no outputs");
  }
  EXPECT_EQ(ran, std::vector<std::string>{"canonicalize"});

  options.verifyEach = false;
  std::unique_ptr<ir::Graph> broken = runPipeline(*g, passes, options);
  EXPECT_TRUE(broken->outputs().empty());
}

} // namespace
} // namespace graphc::passes
