//===- tests/ir/ParserTest.cpp - The text format, reading side ------------===//
//
// Direct parser checks, plus a fuzz test: random byte mutations of valid text must
// either parse into a graph that verifies and round-trips, or throw graphc::Error.
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "support/RandomGraph.h"

#include <cmath>
#include <gtest/gtest.h>
#include <random>

namespace graphc::ir {
namespace {

std::string errorOf(llvm::StringRef text) {
  try {
    parseModule(text, "t.gir");
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

TEST(Parser, ReadsWhatThePrinterWrites) {
  const char* text = "graph @g(%x: f64[4,3], %y: f64[4,3]) {\n"
                     "  %ym = mean %y {axes=[1], keepdims} : f64[4,1]\n"
                     "  %f:2 = qr %x : f64[4,3], f64[3,3]\n"
                     "  return %ym, %f#1\n"
                     "}\n";
  std::unique_ptr<Graph> g = parseGraph(text);
  EXPECT_EQ(printGraph(*g), text);
  EXPECT_EQ(g->params().size(), 2u);
  EXPECT_EQ(g->outputs().size(), 2u);
  EXPECT_EQ(g->outputs()[1].index, 1u);
  EXPECT_EQ(g->findParam("y")->attrs().getInt("index"), 1);
}

TEST(Parser, NodesRememberTheirNameAndLocation) {
  std::unique_ptr<Graph> g =
      parseGraph("graph @g(%x: f64[2]) {\n  %e = exp %x\n  return %e\n}\n", "f.gir");
  const Node* e = g->outputs()[0].node;
  EXPECT_EQ(e->name(), "e");
  EXPECT_EQ(e->loc().str(), "f.gir:2:8");
  EXPECT_EQ(g->params()[0]->loc().str(), "f.gir:1:10");
}

TEST(Parser, FloatsReadBackExactly) {
  std::unique_ptr<Graph> g = parseGraph(
      "graph @g() {\n  %c = constant {value=[0.1, 1e-300, -2.5e+10, 5e-324, 3, -inf, nan]} "
      ": f64[7]\n  return %c\n}\n");
  const auto& v = g->outputs()[0].node->attrs().getFloats("value");
  ASSERT_EQ(v.size(), 7u);
  EXPECT_EQ(v[0], 0.1);
  EXPECT_EQ(v[1], 1e-300);
  EXPECT_EQ(v[2], -2.5e10);
  EXPECT_EQ(v[3], 5e-324);
  EXPECT_EQ(v[4], 3.0);
  EXPECT_EQ(v[5], -INFINITY);
  EXPECT_TRUE(std::isnan(v[6]));
}

TEST(Parser, ParseGraphWantsExactlyOne) {
  const char* two =
      "graph @a(%x: f64[]) {\n  return %x\n}\ngraph @b(%x: f64[]) {\n  return %x\n}\n";
  EXPECT_EQ(parseModule(two).graphs.size(), 2u);
  try {
    parseGraph(two, "t.gir");
    FAIL() << "two graphs accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "t.gir:4:1: error: expected end of input after graph '@a', found 'graph'");
  }
  EXPECT_THROW(parseGraph(""), Error);
  EXPECT_EQ(parseModule("  // only a comment\n").graphs.size(), 0u);
}

TEST(Parser, ErrorsNameTheTokenAndPlace) {
  EXPECT_EQ(errorOf("graph @g(%x: f64[2]) {\n  %y = foo %x\n  return %y\n}\n"),
            "t.gir:2:8: error: unknown op 'foo'");
  EXPECT_EQ(errorOf("graph @g(%x: f64[2]) {\n  return %y\n}\n"),
            "t.gir:2:10: error: use of undefined value '%y'");
  EXPECT_EQ(errorOf("graph @g(%x: f64[2]) {\n  %s = sum %x {axes=[0], keepdims=1}\n  return %s\n}"),
            "t.gir:2:35: error: attribute 'keepdims' of sum expects bool, found '1'");
  // Typing errors from Graph::create point at the op.
  EXPECT_EQ(errorOf("graph @g(%x: f64[2], %y: f64[3]) {\n  %s = add %x, %y\n  return %s\n}"),
            "t.gir:2:8: error: add(f64[2], f64[3]): operand shapes differ; broadcast explicitly "
            "with broadcast_to");
}

/// Random byte-level edits, biased towards the characters the grammar uses.
std::string mutate(std::string s, std::mt19937_64& rng) {
  static const std::string alphabet = "%@#:=,{}[]()0123456789-+.eE \n\"\\/abfgirx_";
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  for (size_t edits = 1 + pick(3); edits > 0 && !s.empty(); --edits) {
    size_t at = pick(s.size());
    switch (pick(6)) {
    case 0:
      s[at] = alphabet[pick(alphabet.size())];
      break;
    case 1:
      s[at] = static_cast<char>(pick(256));
      break;
    case 2:
      s.erase(at, 1 + pick(8));
      break;
    case 3:
      s.insert(at, 1, alphabet[pick(alphabet.size())]);
      break;
    case 4: {
      size_t from = pick(s.size());
      s.insert(at, s.substr(from, 1 + pick(16)));
      break;
    }
    default:
      s.resize(at);
      break;
    }
  }
  return s;
}

TEST(Parser, FuzzedInputParsesOrFailsCleanly) {
  std::mt19937_64 rng(12345);
  testing::RandomGraphOptions opts;
  opts.numNodes = 10;
  testing::RandomGraphGenerator gen(7, opts);
  unsigned parsed = 0, failed = 0;
  for (int i = 0; i < 150; ++i) {
    std::string text = printGraph(*gen.generate("g"));
    for (int k = 0; k < 80; ++k) {
      std::string input = mutate(text, rng);
      Module m;
      try {
        m = parseModule(input, "fuzz.gir");
      } catch (const Error& e) {
        ++failed;
        EXPECT_TRUE(e.loc().valid()) << "no location for: " << e.what() << "\n" << input;
        continue;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "non-graphc exception " << e.what() << " for:\n" << input;
        continue;
      }
      ++parsed;
      // What parses is well-typed and prints back to itself.
      for (const auto& g : m.graphs) {
        std::string printed = printGraph(*g);
        std::unique_ptr<Graph> back = parseGraph(printed);
        EXPECT_TRUE(structurallyEqual(*g, *back)) << printed;
        EXPECT_EQ(printGraph(*back), printed);
        if (!g->outputs().empty()) {
          EXPECT_NO_THROW(verify(*g)) << printed;
        }
      }
    }
  }
  EXPECT_GT(parsed, 100u);
  EXPECT_GT(failed, 100u);
}

} // namespace
} // namespace graphc::ir
