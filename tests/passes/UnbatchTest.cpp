//===- tests/passes/UnbatchTest.cpp - The item graph of a hand-batched graph -===//
//
// unbatchGraph (passes/Unbatch.h): the item graph of a graph batched by hand, spelled
// out; soundness on hundreds of random graphs batched with batchGraph (where it finds
// an item graph, that graph run on item b of the inputs gives item b of every output,
// node by node on "cpu-unfused"); and graphs whose items mix, which it must leave
// whole.
//
//===----------------------------------------------------------------------===//
#include "passes/Unbatch.h"

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "passes/Batch.h"
#include "passes/PassManager.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
#include "support/Numeric.h"
#include "support/RandomGraph.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

namespace graphc {
namespace {

/// Item `b` of an array along its leading axis.
Array itemOf(const Array& batched, int64_t b) {
  Array c = batched.contiguous();
  llvm::ArrayRef<int64_t> shape = c.shape().drop_front();
  return c.view(shape, contiguousStrides(shape), b * ir::numElements(shape));
}

std::string canonical(const ir::Graph& g) {
  return ir::printGraph(*passes::runPipeline(g, passes::parsePipeline("canonicalize")));
}

TEST(Unbatch, ItemGraphOfAGraphBatchedByHand) {
  std::unique_ptr<ir::Graph> g =
      ir::parseGraph(R"(graph @g(%a: f64[4,3,3], %b: f64[4,3,2], %w: f64[2,2], %v: f64[4,2]) {
  %s = assume_spd %a
  %x = solve %s, %b
  %wb = broadcast_to %w {shape=[4,2,2]}
  %p = matmul %x, %wb {transpose_b}
  %c = full {value=2.0} : f64[4,3,2]
  %q = mul %p, %c
  %t = transpose %q {perm=[0,2,1]}
  %r = sum %t {axes=[2]}
  %u = add %r, %v
  %d = logdet %s
  return %u, %d
})");
  std::optional<passes::Unbatched> u = passes::unbatchGraph(*g);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->batch, 4);
  EXPECT_EQ(u->batched, (std::vector<bool>{true, true, false, true}));
  ASSERT_NO_THROW(ir::verify(*u->item));
  std::unique_ptr<ir::Graph> want =
      ir::parseGraph(R"(graph @g(%a: f64[3,3], %b: f64[3,2], %w: f64[2,2], %v: f64[2]) {
  %s = assume_spd %a
  %x = solve %s, %b
  %p = matmul %x, %w {transpose_b}
  %c = full {value=2.0} : f64[3,2]
  %q = mul %p, %c
  %t = transpose %q {perm=[1,0]}
  %r = sum %t {axes=[1]}
  %u = add %r, %v
  %d = logdet %s
  return %u, %d
})");
  EXPECT_EQ(canonical(*u->item), canonical(*want));
}

/// Where unbatchGraph finds an item graph of `g`, that graph on item b of the
/// batched parameters (and the shared ones whole) gives item b of every output, bit
/// for bit. Returns whether it found one.
bool expectSound(const ir::Graph& g, uint64_t seed) {
  std::optional<passes::Unbatched> u = passes::unbatchGraph(g);
  if (!u)
    return false;
  SCOPED_TRACE(ir::printGraph(g) + ir::printGraph(*u->item));
  EXPECT_NO_THROW(ir::verify(*u->item));
  std::vector<Array> in = testing::randomInputs(g, seed);
  std::vector<Array> want;
  try {
    want = compile(g, getBackend("cpu-unfused"), {"none"})->run(in);
  } catch (const Error&) { // a singular system of random inputs: nothing to compare
    return true;
  }
  auto item = compile(*u->item, getBackend("cpu-unfused"), {"none"});
  for (int64_t b = 0; b < u->batch; ++b) {
    std::vector<Array> itemIn;
    for (size_t p = 0; p < in.size(); ++p)
      itemIn.push_back(u->batched[p] ? itemOf(in[p], b) : in[p]);
    std::vector<Array> got = item->run(itemIn);
    EXPECT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size() && i < want.size(); ++i)
      EXPECT_EQ(testing::relativeDifference(got[i], itemOf(want[i], b)), 0.0)
          << "item " << b << ", output " << i;
  }
  return true;
}

TEST(Unbatch, RandomGraphsBatchedComeApartSoundly) {
  testing::RandomGraphOptions options;
  options.floatOnly = true;
  testing::RandomGraphGenerator gen(4321, options);
  std::mt19937_64 rng(17);
  int found = 0, graphs = 300;
  for (int i = 0; i < graphs; ++i) {
    std::unique_ptr<ir::Graph> g = gen.generate("random" + std::to_string(i));
    llvm::SmallVector<bool, 8> mask;
    for (size_t p = 0; p < g->params().size(); ++p)
      mask.push_back(i % 3 != 0 || rng() % 2);
    std::unique_ptr<ir::Graph> batched = passes::batchGraph(*g, 2 + i % 3, mask);
    found += expectSound(*batched, 500 + i);
    expectSound(*g, 900 + i); // random graphs as they are: any leading axis
  }
  // Most batched graphs come apart (a batched-by-shared matmul, which batchGraph
  // stacks into one product, does not).
  EXPECT_GE(found, graphs / 2);
}

TEST(Unbatch, LeavesGraphsWhoseItemsMixWhole) {
  const char* mixing[] = {
      // a reduction over the leading axis
      "graph @g(%x: f64[4,3]) {\n  %r = sum %x {axes=[0,1]}\n  %b = broadcast_to %r "
      "{shape=[4]}\n  return %b\n}",
      // a reshape that merges it
      "graph @g(%x: f64[4,3]) {\n  %r = reshape %x {shape=[2,6]}\n  return %r\n}",
      // a transpose that moves it
      "graph @g(%x: f64[4,4,2]) {\n  %t = transpose %x {perm=[1,0,2]}\n  return %t\n}",
      // a matrix whose rows it is
      "graph @g(%x: f64[4,3], %y: f64[3,4]) {\n  %p = matmul %x, %y\n  return %p\n}",
      "graph @g(%a: f64[4,4], %b: f64[4,2]) {\n  %x = solve %a, %b\n  return %x\n}",
      // a slice and a concat along it
      "graph @g(%x: f64[4,3]) {\n  %s = slice %x {start=[0,0], stop=[2,3]}\n  %c = concat %s, %s "
      "{axis=0}\n  return %c\n}",
      // a shared value that differs from item to item
      "graph @g(%x: f64[4,3]) {\n  %i = iota {axis=0} : f64[4,3]\n  %s = add %x, %i\n  return "
      "%s\n}",
      // an output without the axis, and outputs of two leading lengths
      "graph @g(%x: f64[4,3]) {\n  %s = sum %x {axes=[1]}\n  %t = sum %s {axes=[0]}\n  return "
      "%s, %t\n}",
      "graph @g(%x: f64[4,3], %y: f64[3,4]) {\n  %a = exp %x\n  %b = exp %y\n  return %a, %b\n}",
  };
  for (const char* text : mixing) {
    std::unique_ptr<ir::Graph> g = ir::parseGraph(text);
    EXPECT_FALSE(passes::unbatchGraph(*g)) << text;
  }
}

} // namespace
} // namespace graphc
