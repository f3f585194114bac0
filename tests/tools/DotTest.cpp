//===- tests/tools/DotTest.cpp - Graphviz rendering (ir/Dot.h) -------------===//
#include "ir/Dot.h"
#include "ir/Parser.h"
#include "ir/Printer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace graphc::ir;
using ::testing::HasSubstr;

namespace {

/// x -> qr -> matmul(q#0, q#1), outputs: the product and the parameter itself.
std::unique_ptr<Graph> qrGraph() {
  auto g = std::make_unique<Graph>("f");
  Value x = g->addParameter("x", TensorType(DType::F64, {3, 3}));
  Node* qr = g->create(Op::Qr, {x}, {}, {}, {}, "q");
  Node* m = g->create(Op::Matmul, {qr->result(0), qr->result(1)}, Attrs{{"transpose_a", true}}, {},
                      {}, "m");
  g->addOutput(m->result());
  g->addOutput(x);
  return g;
}

} // namespace

TEST(Dot, WholeGraph) {
  EXPECT_EQ(printDot(*qrGraph()),
            R"(digraph "@f" {
  node [shape=box, fontname="monospace"];
  edge [fontname="monospace"];
  n0 [label="%x: f64[3,3]", shape=ellipse, style=filled, fillcolor=lightblue];
  n1 [label="%q:2 = qr\nf64[3,3], f64[3,3]"];
  n2 [label="%m = matmul\n{transpose_a}\nf64[3,3]"];
  n0 -> n1;
  n1 -> n2 [label="#0"];
  n1 -> n2 [label="#1"];
  out0 [label="return #0", shape=house, style=filled, fillcolor=palegreen];
  n2 -> out0;
  out1 [label="return #1", shape=house, style=filled, fillcolor=palegreen];
  n0 -> out1;
}
)");
}

// The output depends on the graph, not on how it was built: the graph parsed back
// from its text (other nodes, other addresses) prints the same.
TEST(Dot, DependsOnTheGraphOnly) {
  auto g = qrGraph();
  auto parsed = parseGraph(printGraph(*g));
  EXPECT_EQ(printDot(*parsed), printDot(*g));
  EXPECT_THAT(printDot(*g), ::testing::HasSubstr("label=\"#1\""));
}

TEST(Dot, EscapesQuotes) {
  auto g = qrGraph();
  g->setName("a\"b\\c");
  EXPECT_THAT(printDot(*g), ::testing::StartsWith("digraph \"@a\\\"b\\\\c\" {\n"));
}

TEST(Dot, ModuleHasOneDigraphPerGraph) {
  Module m;
  m.graphs.push_back(qrGraph());
  m.graphs.push_back(qrGraph());
  m.graphs.back()->setName("g");
  std::string dot = printDot(m);
  EXPECT_THAT(dot, HasSubstr("}\n\ndigraph \"@g\" {\n"));
  EXPECT_EQ(dot.find("digraph \"@f\""), 0u);
}
