//===- tests/ir/RandomGraphTest.cpp - Round trips of random graphs --------===//
//
// parse(print(g)) == g for many random graphs that together use every op of the
// table, multi-result ops and several outputs.
//
//===----------------------------------------------------------------------===//
#include "support/RandomGraph.h"

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace graphc::ir {
namespace {

TEST(RandomGraphs, RoundTripCoveringEveryOp) {
  testing::RandomGraphGenerator gen(2024);
  unsigned multiResult = 0, multiOutput = 0;
  for (int i = 0; i < 300; ++i) {
    std::unique_ptr<Graph> g = gen.generate(fmt::format("r{}", i));
    ASSERT_NO_THROW(verify(*g)) << printGraph(*g);
    std::string text = printGraph(*g);
    std::unique_ptr<Graph> back;
    ASSERT_NO_THROW(back = parseGraph(text)) << text;
    EXPECT_TRUE(structurallyEqual(*g, *back)) << text;
    EXPECT_EQ(printGraph(*back), text);
    EXPECT_EQ(g->hash(), back->hash()) << text;
    for (const Node* n : g->nodes())
      multiResult += n->numResults() > 1;
    multiOutput += g->outputs().size() > 1;
  }
  for (const OpInfo& info : allOps())
    EXPECT_GT(gen.opCounts().count(info.op) ? gen.opCounts().at(info.op) : 0u, 0u)
        << "the generator never built " << info.name.str();
  EXPECT_GT(multiResult, 0u);
  EXPECT_GT(multiOutput, 0u);
}

TEST(RandomGraphs, ModulesRoundTrip) {
  testing::RandomGraphOptions opts;
  opts.numNodes = 8;
  opts.floatOnly = true;
  testing::RandomGraphGenerator gen(99, opts);
  Module m;
  for (int i = 0; i < 5; ++i)
    m.graphs.push_back(gen.generate(fmt::format("g{}", i)));
  std::string text = printModule(m);
  Module back = parseModule(text);
  ASSERT_EQ(back.graphs.size(), m.graphs.size());
  for (size_t i = 0; i < m.graphs.size(); ++i)
    EXPECT_TRUE(structurallyEqual(*m.graphs[i], *back.graphs[i]));
  EXPECT_EQ(printModule(back), text);
  EXPECT_NO_THROW(verify(back));
}

TEST(RandomGraphs, SameSeedSameGraphs) {
  testing::RandomGraphGenerator a(5), b(5);
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(printGraph(*a.generate()), printGraph(*b.generate()));
}

TEST(RandomGraphs, OpSubset) {
  testing::RandomGraphOptions opts;
  opts.ops = {Op::Matmul, Op::Add};
  testing::RandomGraphGenerator gen(1, opts);
  for (int i = 0; i < 20; ++i)
    verify(*gen.generate());
  for (const auto& [op, n] : gen.opCounts())
    EXPECT_TRUE(op == Op::Matmul || op == Op::Add || opInfo(op).kind == OpKind::Source)
        << opName(op).str();
}

} // namespace
} // namespace graphc::ir
