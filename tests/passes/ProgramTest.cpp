//===- tests/passes/ProgramTest.cpp - Lowered programs of real graphs -----===//
//
// The golden suite tests/golden/lower covers small plans; this test lowers the W1
// EnKF example after the default pipeline and prints its plan, and checks the
// invariants of programs lowered from random graphs over the whole op table.
//
//===----------------------------------------------------------------------===//
#include "passes/MemoryPlan.h"

#include "ir/Parser.h"
#include "passes/PassManager.h"
#include "passes/Rewrite.h"
#include "support/RandomGraph.h"

#include <fstream>
#include <gtest/gtest.h>
#include <iostream>
#include <map>
#include <sstream>

namespace graphc::passes {
namespace {

std::unique_ptr<ir::Graph> optimizedEnkf() {
  std::ifstream in(std::string(GRAPHC_SOURCE_DIR) + "/examples/enkf.gir");
  std::stringstream text;
  text << in.rdbuf();
  auto g = ir::parseGraph(text.str(), "enkf.gir");
  return runPipeline(*g, defaultPipeline());
}

TEST(Program, EnkfPlanReusesSlots) {
  auto g = optimizedEnkf();
  PlanOptions options;
  options.donated = {true, false, false}; // xi
  Program p = lowerToProgram(*g, options);
  std::string text = printProgram(p);
  std::cout << text;

  EXPECT_NE(text.find("cholesky"), std::string::npos);
  // the update is written over a value that dies at that step (Xc)
  EXPECT_GE(p.steps().back().inPlaceOf.front(), 0);
  EXPECT_NE(text.find("program @enkf(%xi: f64[6,6] donated, %y: f64[6,6], %obs: f64[6,1])"),
            std::string::npos);
  EXPECT_LT(p.stats().peakBytes, p.stats().intermediateBytes);
  EXPECT_LE(p.stats().peakBytes, p.stats().slotBytes);
  // Every value a step reads is a parameter, a constant or an earlier step's output.
  for (const Step& s : p.steps())
    for (ir::Value v : s.inputs)
      EXPECT_NE(p.storage(v).kind, Storage::None);
  // Its fulls and eye are read by kernels alone, which compute them.
  EXPECT_TRUE(p.constants().empty());
  EXPECT_EQ(p.stats().constantBytes, 0);
  EXPECT_NE(text.find("fused[eye, full, mul, add]"), std::string::npos);
}

/// True when `s` is a kernel step that is not a lone data-movement node.
bool isFusedKernel(const Step& s) {
  return s.kind == Step::Kind::Kernel && !isDataMovement(s.nodes);
}

/// Checks that `p` runs every live node once, in an order where each step reads
/// only parameters, constants and earlier outputs, that fused kernels compute the
/// full/eye/iota sources they use (and read no such constant), and that no slot
/// holds two values at once (a value may hand its slot to an output of its last
/// reader).
void checkInvariants(const ir::Graph& g, const Program& p) {
  std::vector<int> stepOf(g.nodes().size(), -1);
  std::map<std::pair<unsigned, unsigned>, int> lastRead; // by node id, result index
  auto key = [](ir::Value v) { return std::make_pair(v.node->id(), v.index); };
  std::vector<bool> live = liveNodes(g);
  for (size_t i = 0; i < p.steps().size(); ++i) {
    const Step& s = p.steps()[i];
    for (const ir::Node* n : s.nodes) {
      if (n->kind() == ir::OpKind::Source) { // each kernel reading it computes its own
        EXPECT_TRUE(computedSource(*n) && isFusedKernel(s)) << "a source run by " << s.name();
        continue;
      }
      EXPECT_EQ(stepOf[n->id()], -1) << "a node in two steps";
      stepOf[n->id()] = static_cast<int>(i);
    }
    for (ir::Value v : s.inputs)
      EXPECT_FALSE(computedSource(*v.node) && isFusedKernel(s))
          << s.name() << " reads a source it could compute";
  }
  for (const ir::Node* n : g.nodes())
    if (live[n->id()] && n->kind() != ir::OpKind::Source) {
      EXPECT_GE(stepOf[n->id()], 0) << "a live node in no step";
    }
  for (size_t i = 0; i < p.steps().size(); ++i)
    for (ir::Value v : p.steps()[i].inputs) {
      EXPECT_LT(stepOf[v.node->id()], static_cast<int>(i)) << "an input from a later step";
      EXPECT_NE(p.storage(v).kind, Storage::None);
      lastRead[key(v)] = static_cast<int>(i);
    }
  for (ir::Value v : g.outputs())
    lastRead[key(v)] = static_cast<int>(p.steps().size());
  // A library call's `unread` names exactly its results that nothing reads.
  for (const Step& s : p.steps()) {
    if (s.kind != Step::Kind::Library) {
      EXPECT_EQ(s.unread, 0u) << s.name();
      continue;
    }
    ir::Node* n = const_cast<ir::Node*>(s.nodes.front());
    for (unsigned r = 0; r < n->numResults(); ++r)
      EXPECT_EQ(bool(s.unread >> r & 1), !lastRead.count(key(ir::Value{n, r}))) << s.name();
  }
  for (const Slot& slot : p.slots())
    for (size_t k = 0; k + 1 < slot.values.size(); ++k) {
      ir::Value held = slot.values[k];
      auto read = lastRead.find(key(held));
      int end = std::max(read == lastRead.end() ? -1 : read->second, stepOf[held.node->id()]);
      EXPECT_LE(end, stepOf[slot.values[k + 1].node->id()]) << "a slot holds two live values";
    }
}

TEST(Program, RandomGraphsLowerToValidPlans) {
  testing::RandomGraphOptions options;
  options.numNodes = 24;
  testing::RandomGraphGenerator gen(11, options);
  for (int i = 0; i < 300; ++i) {
    auto g = gen.generate();
    PlanOptions plan;
    plan.donated.assign(g->params().size(), i % 2 == 0);
    Program p = lowerToProgram(*g, plan);
    SCOPED_TRACE(ir::printGraph(*g));
    checkInvariants(*g, p);
  }
}

} // namespace
} // namespace graphc::passes
