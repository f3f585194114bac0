//===- tests/passes/BatchTest.cpp - The batching transform ----------------===//
//
// batchGraph (passes/Batch.h) against the graph it came from: the batched graph
// runs once on the items stacked along a leading axis, the original runs once per
// item, both node by node on "cpu-unfused", and item b of every batched output must
// equal the original's output on item b, bit for bit. This for every example graph, hundreds of
// random graphs over the whole op table (with random batched/unbatched parameter
// masks and batch sizes, batch 1 included), and the W5 workload through compile(),
// where the batch of SPD systems must still be lowered to a Cholesky. Also the
// batched IR itself (rules, names, locations, unbatched work kept once) and the
// errors for bad batch sizes and parameter masks.
//
//===----------------------------------------------------------------------===//
#include "passes/Batch.h"

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "passes/PassManager.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
#include "support/GraphFiles.h"
#include "support/Numeric.h"
#include "support/RandomGraph.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fmt/format.h>
#include <limits>
#include <set>

namespace graphc {
namespace {

using ir::Op;

/// `items` stacked along a new leading axis.
Array stack(llvm::ArrayRef<Array> items) {
  ir::Shape shape{static_cast<int64_t>(items.size())};
  shape.append(items.front().shape().begin(), items.front().shape().end());
  Array out = Array::empty(items.front().dtype(), shape);
  size_t bytes = items.front().numel() * items.front().elementSize();
  for (size_t b = 0; b < items.size(); ++b)
    std::memcpy(static_cast<char*>(out.rawData()) + b * bytes, items[b].contiguous().rawData(),
                bytes);
  return out;
}

/// The inputs of a batched graph from per-item inputs `items` (one per parameter):
/// parameter i stacked when mask[i] (or the mask is empty), else item 0's value,
/// which then becomes every item's value.
std::vector<Array> stackInputs(std::vector<std::vector<Array>>& items,
                               const std::vector<bool>& mask) {
  std::vector<Array> stacked;
  for (size_t i = 0; i < items.front().size(); ++i) {
    bool batched = mask.empty() || mask[i];
    std::vector<Array> column;
    for (auto& item : items) {
      if (!batched)
        item[i] = items.front()[i];
      column.push_back(item[i]);
    }
    stacked.push_back(batched ? stack(column) : column.front());
  }
  return stacked;
}

/// Item `b` of an array with a leading batch axis.
Array itemOf(const Array& batched, int64_t b) {
  Array c = batched.contiguous();
  llvm::ArrayRef<int64_t> shape = c.shape().drop_front();
  return c.view(shape, contiguousStrides(shape), b * ir::numElements(shape));
}

/// Batches `g` `batch` ways (parameter mask `mask`, empty: all batched), runs it on
/// random items and expects item b of each output to be the original's output on
/// item b, bit for bit (the batched linear algebra runs item by item on the same
/// kernels). Where an item fails, the batched run must fail too.
void expectItemsMatch(const ir::Graph& g, int64_t batch, const std::vector<bool>& mask,
                      uint64_t seed) {
  SCOPED_TRACE(fmt::format("@{} batch {}", g.name(), batch));
  llvm::SmallVector<bool, 8> flags(mask.begin(), mask.end());
  std::unique_ptr<ir::Graph> batched = passes::batchGraph(g, batch, flags);
  ASSERT_NO_THROW(ir::verify(*batched)) << ir::printGraph(*batched);
  std::vector<std::vector<Array>> items; // per item, one input per parameter
  for (int64_t b = 0; b < batch; ++b)
    items.push_back(testing::randomInputs(g, seed + 100 * b));
  std::vector<Array> stacked = stackInputs(items, mask);
  auto original = compile(g, getBackend("cpu-unfused"), {"none"});
  auto batchedExe = compile(*batched, getBackend("cpu-unfused"), {"none"});
  std::vector<std::vector<Array>> want;
  for (int64_t b = 0; b < batch; ++b) {
    try {
      want.push_back(original->run(items[b]));
    } catch (const Error& e) { // then the batch fails too
      EXPECT_THROW(batchedExe->run(stacked), Error) << "item " << b << " failed: " << e.what();
      return;
    }
  }
  std::vector<Array> got = batchedExe->run(stacked);
  for (int64_t b = 0; b < batch; ++b) {
    ASSERT_EQ(got.size(), want[b].size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_EQ(testing::relativeDifference(itemOf(got[i], b), want[b][i]), 0.0)
          << "item " << b << ", output " << i << "\n"
          << ir::printGraph(g) << ir::printGraph(*batched);
  }
}

TEST(Batch, ExampleGraphsAllAndSomeParametersBatched) {
  for (const std::string& file : testing::kExampleGraphFiles)
    for (auto& g : testing::graphsOf(testing::readSourceFile(file), file)) {
      size_t n = g->params().size();
      expectItemsMatch(*g, 3, {}, 1);
      expectItemsMatch(*g, 1, {}, 2);
      for (size_t shared = 0; shared < n; ++shared) { // each parameter shared in turn
        std::vector<bool> mask(n, true);
        mask[shared] = false;
        expectItemsMatch(*g, 2, mask, 3 + shared);
      }
    }
}

/// The ops that run on a batched value in `g` under `mask`: every op with an operand
/// that depends on a batched parameter.
std::set<Op> batchedOps(const ir::Graph& g, const std::vector<bool>& mask) {
  std::vector<bool> dependent(g.nodes().size());
  for (size_t i = 0; i < g.params().size(); ++i)
    dependent[g.params()[i]->id()] = mask[i];
  std::set<Op> ops;
  for (const ir::Node* n : g.nodes())
    for (ir::Value v : n->operands())
      if (dependent[v.node->id()]) {
        dependent[n->id()] = true;
        ops.insert(n->op());
      }
  return ops;
}

TEST(Batch, RandomGraphsOverEveryOp) {
  testing::RandomGraphOptions options;
  options.floatOnly = true;
  testing::RandomGraphGenerator gen(1234, options);
  std::mt19937_64 rng(99);
  std::set<Op> covered;
  for (int i = 0; i < 300; ++i) {
    std::unique_ptr<ir::Graph> g = gen.generate("random" + std::to_string(i));
    std::vector<bool> mask(g->params().size(), true);
    for (size_t p = 0; p < mask.size(); ++p)
      mask[p] = i % 3 != 0 || rng() % 2; // every third graph shares some parameters
    std::set<Op> ops = batchedOps(*g, mask);
    covered.insert(ops.begin(), ops.end());
    expectItemsMatch(*g, 1 + i % 3, mask, 1000 + 10 * i);
  }
  for (const ir::OpInfo& op : ir::allOps())
    if (op.kind != ir::OpKind::Source) {
      EXPECT_TRUE(covered.count(op.op)) << op.name.str() << " never ran batched";
    }
}

/// The rules, spelled out: a batched and an unbatched operand (the unbatched one
/// broadcast), unbatched work kept unbatched, shifted reduction axes, permutations
/// and slices, a broadcast that adds axes, a batched-by-unbatched matmul as one
/// stacked product, an output that depends on nothing batched. Names carry over.
TEST(Batch, RulesInTheIR) {
  const char* text = R"(graph @rules(%x: f64[3,4], %w: f64[4,2], %v: f64[4]) {
  %e = exp %v : f64[4]
  %eb = broadcast_to %e {shape=[3,4]} : f64[3,4]
  %y = mul %x, %eb : f64[3,4]
  %p = matmul %y, %w : f64[3,2]
  %pt = matmul %y, %y {transpose_a} : f64[4,4]
  %s = argmax %p {axes=[1], keepdims} : i64[3,1]
  %t = transpose %p {perm=[1,0]} : f64[2,3]
  %sl = slice %t {start=[0,1], stop=[2,3], stride=[1,2]} : f64[2,1]
  %c = full {value=2.0} : f64[2,3]
  return %s, %sl, %c, %pt
}
)";
  std::unique_ptr<ir::Graph> g = ir::parseGraph(text, "rules.gir");
  std::unique_ptr<ir::Graph> b = passes::batchGraph(*g, 5, {true, false, false});
  EXPECT_EQ(ir::printGraph(*b), R"(graph @rules(%x: f64[5,3,4], %w: f64[4,2], %v: f64[4]) {
  %e = exp %v : f64[4]
  %eb = broadcast_to %e {shape=[3,4]} : f64[3,4]
  %0 = broadcast_to %eb {shape=[5,3,4]} : f64[5,3,4]
  %y = mul %x, %0 : f64[5,3,4]
  %1 = reshape %y {shape=[15,4]} : f64[15,4]
  %2 = matmul %1, %w : f64[15,2]
  %p = reshape %2 {shape=[5,3,2]} : f64[5,3,2]
  %pt = matmul %y, %y {transpose_a} : f64[5,4,4]
  %s = argmax %p {axes=[2], keepdims} : i64[5,3,1]
  %t = transpose %p {perm=[0,2,1]} : f64[5,2,3]
  %sl = slice %t {start=[0,0,1], stop=[5,2,3], stride=[1,1,2]} : f64[5,2,1]
  %c = full {value=2.0} : f64[2,3]
  %3 = broadcast_to %c {shape=[5,2,3]} : f64[5,2,3]
  return %s, %sl, %3, %pt
}
)");
  for (const ir::Node* n : b->nodes()) // every node keeps its source location
    if (n->op() != Op::Parameter) {
      EXPECT_TRUE(n->loc().valid() && n->loc().file == "rules.gir") << n->name();
    }
  std::unique_ptr<ir::Graph> all = passes::batchGraph(*g, 2);
  EXPECT_EQ(ir::printGraph(*passes::batchGraph(*g, 2, {true, true, true})), ir::printGraph(*all));
}

TEST(Batch, BroadcastAddingAxesAndConcatOfMixedOperands) {
  const char* text = R"(graph @mixed(%v: f64[3], %u: f64[2,3]) {
  %b = broadcast_to %v {shape=[2,2,3]} : f64[2,2,3]
  %r = reshape %u {shape=[1,2,3]} : f64[1,2,3]
  %c = concat %b, %r {axis=0} : f64[3,2,3]
  return %c
}
)";
  std::unique_ptr<ir::Graph> g = ir::parseGraph(text, "mixed.gir");
  std::unique_ptr<ir::Graph> b = passes::batchGraph(*g, 4, {true, false});
  EXPECT_EQ(ir::printGraph(*b), R"(graph @mixed(%v: f64[4,3], %u: f64[2,3]) {
  %0 = reshape %v {shape=[4,1,1,3]} : f64[4,1,1,3]
  %b = broadcast_to %0 {shape=[4,2,2,3]} : f64[4,2,2,3]
  %r = reshape %u {shape=[1,2,3]} : f64[1,2,3]
  %1 = broadcast_to %r {shape=[4,1,2,3]} : f64[4,1,2,3]
  %c = concat %b, %1 {axis=1} : f64[4,3,2,3]
  return %c
}
)");
  expectItemsMatch(*g, 4, {true, false}, 7);
  expectItemsMatch(*g, 3, {false, true}, 8);
}

TEST(Batch, OutputsIndependentOfTheInputsAreBroadcast) {
  const char* text = R"(graph @consts(%x: f64[2,2]) {
  %i = eye : f64[2,2]
  %k = constant {value=[1.0,2.0,3.0]} : f64[3]
  %io = iota {axis=1} : f64[2,3]
  %y = add %x, %i : f64[2,2]
  return %i, %k, %io, %y, %x
}
)";
  std::unique_ptr<ir::Graph> g = ir::parseGraph(text, "consts.gir");
  for (int64_t batch : {1, 3}) {
    std::unique_ptr<ir::Graph> b = passes::batchGraph(*g, batch);
    for (ir::Value out : b->outputs())
      EXPECT_EQ(out.type().shape.front(), batch) << ir::printGraph(*b);
    expectItemsMatch(*g, batch, {}, 20 + batch);
  }
  // With the only parameter shared, nothing is batched but the outputs.
  std::unique_ptr<ir::Graph> none = passes::batchGraph(*g, 3, {false});
  for (ir::Value out : none->outputs())
    EXPECT_EQ(out.node->op(), Op::BroadcastTo);
  expectItemsMatch(*g, 3, {false}, 30);
}

/// W5 of the benchmark suite, one item: S = X*X'/(2n) + 0.1*I, solve(S, b).
std::string w5Item(int64_t n) {
  return fmt::format(R"(graph @w5(%x: f64[{0},{1}], %b: f64[{0},1]) {{
  %g = matmul %x, %x {{transpose_b}}
  %k = full {{value={1}.0}} : f64[{0},{0}]
  %c = div %g, %k
  %eye = eye : f64[{0},{0}]
  %tenth = full {{value=0.1}} : f64[{0},{0}]
  %r = mul %tenth, %eye
  %s = add %c, %r
  %z = solve %s, %b
  return %z
}}
)",
                     n, 2 * n);
}

/// `g` batched `batch` ways through the default pipeline: what compile() runs.
std::unique_ptr<ir::Graph> batchedAndLowered(const ir::Graph& g, int64_t batch) {
  return passes::runPipeline(*passes::batchGraph(g, batch), passes::defaultPipeline());
}

/// compile(g, {.batch}) on both CPU backends, on random items, against an LU solve
/// of each item (the original graph without passes).
void expectCompiledBatchMatches(const ir::Graph& g, int64_t batch, uint64_t seed,
                                double tolerance) {
  std::vector<std::vector<Array>> items;
  for (int64_t b = 0; b < batch; ++b)
    items.push_back(testing::randomInputs(g, seed + b));
  std::vector<Array> stacked = stackInputs(items, {});
  auto reference = compile(g, getBackend("cpu-unfused"), {"none"});
  for (const char* backend : {"cpu", "cpu-unfused"}) {
    auto exe = compile(g, getBackend(backend), {.batch = batch});
    std::vector<Array> got = exe->run(stacked);
    EXPECT_EQ(exe->fallbacks(), 0);
    for (int64_t b = 0; b < batch; ++b)
      EXPECT_LE(testing::relativeDifference(itemOf(got[0], b), reference->run(items[b])[0]),
                tolerance)
          << backend << " item " << b;
  }
}

TEST(Batch, W5LowersToABatchedCholeskyAndMatchesEachItem) {
  const int64_t batch = 6, n = 5;
  std::unique_ptr<ir::Graph> g = ir::parseGraph(w5Item(n), "w5.gir");
  std::unique_ptr<ir::Graph> lowered = batchedAndLowered(*g, batch);
  std::multiset<Op> ops;
  for (const ir::Node* node : lowered->nodes()) {
    ops.insert(node->op());
    if (node->op() == Op::Cholesky) {
      EXPECT_EQ(node->type().shape, ir::Shape({batch, n, n}));
    }
  }
  EXPECT_EQ(ops.count(Op::Cholesky), 1u) << ir::printGraph(*lowered);
  EXPECT_EQ(ops.count(Op::Solve) + ops.count(Op::Lu), 0u) << ir::printGraph(*lowered);
  expectCompiledBatchMatches(*g, batch, 500, 1e-12);
}

/// A batch of EnKF-like solves with d >> N: (C + 0.1 I) \ B with C = Yc Yc' / (N-1)
/// of rank N goes through Woodbury, batched: no d x d matrix is formed.
TEST(Batch, LowRankPlusDiagonalBatchGoesThroughWoodbury) {
  const int64_t batch = 3, d = 24;
  std::unique_ptr<ir::Graph> g = ir::parseGraph(R"(graph @ens(%yc: f64[24,3], %b: f64[24,2]) {
  %g = matmul %yc, %yc {transpose_b}
  %n = full {value=2.0} : f64[24,24]
  %c = div %g, %n
  %i = eye : f64[24,24]
  %r = full {value=0.1} : f64[24,24]
  %ri = mul %i, %r
  %s = add %c, %ri
  %x = solve %s, %b
  return %x
}
)",
                                                "ens.gir");
  std::unique_ptr<ir::Graph> lowered = batchedAndLowered(*g, batch);
  for (const ir::Node* node : lowered->nodes()) {
    const ir::Shape& shape = node->type().shape;
    bool stateByState = shape.size() >= 2 && shape.back() == d && shape[shape.size() - 2] == d;
    EXPECT_FALSE(stateByState) << ir::printGraph(*lowered);
    if (node->op() == Op::Cholesky) {
      EXPECT_EQ(node->type().shape, ir::Shape({batch, 3, 3}));
    }
  }
  expectCompiledBatchMatches(*g, batch, 600, 1e-10);
}

TEST(Batch, SharedMatrixWithBatchedRightHandSides) {
  std::unique_ptr<ir::Graph> g = ir::parseGraph(w5Item(4), "w5.gir");
  auto exe = compile(*g, getBackend("cpu"), {.batch = 3, .batchedParams = {false, true}});
  EXPECT_EQ(exe->signature().paramTypes[0], ir::TensorType(ir::DType::F64, {4, 8}));
  EXPECT_EQ(exe->signature().paramTypes[1], ir::TensorType(ir::DType::F64, {3, 4, 1}));
  expectItemsMatch(*g, 3, {false, true}, 40);
}

TEST(Batch, BadBatchSizesAndMasksAreErrors) {
  std::unique_ptr<ir::Graph> g = ir::parseGraph(w5Item(2), "w5.gir");
  auto message = [&](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.message();
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] { passes::batchGraph(*g, 0); }),
            "@w5: the batch size must be at least 1, got 0");
  EXPECT_EQ(message([&] { passes::batchGraph(*g, -3); }),
            "@w5: the batch size must be at least 1, got -3");
  EXPECT_EQ(message([&] { passes::batchGraph(*g, 2, {true}); }),
            "@w5: 1 batched-parameter flags given for 2 parameters");
  EXPECT_EQ(message([&] { compile(*g, getBackend("cpu"), {.batch = -1}); }),
            "@w5: the batch size must be at least 1, got -1");
  EXPECT_EQ(message([&] {
              compile(*g, getBackend("cpu"), {.batch = 2, .batchedParams = {true, true, false}});
            }),
            "@w5: 3 batched-parameter flags given for 2 parameters");
  EXPECT_EQ(message([&] {
              compile(*g, getBackend("cpu"), {.batchedParams = {true, false}});
            }),
            "@w5: batchedParams given without a batch size");
  int64_t huge = std::numeric_limits<int64_t>::max() / 2;
  EXPECT_EQ(message([&] { passes::batchGraph(*g, huge); }),
            fmt::format("batch {}: parameter %x (f64[2,4]) would have too many elements", huge));
}

} // namespace
} // namespace graphc
