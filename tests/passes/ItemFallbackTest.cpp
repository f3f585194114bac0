//===- tests/passes/ItemFallbackTest.cpp - Per-item LU fallback on the CPU ---===//
//
// A graph batched by compile() whose chosen Cholesky fails on some items only
// redoes those items alone with LU (runtime/core/Compile.h): every item's A x = b
// holds to rounding (checked by loops in f64), the counters and the warning name
// exactly the failed items, and the other items keep the Cholesky's results bit for
// bit. So do graphs batched by hand whose items come apart (passes/Unbatch.h), and
// deferred runs whose failed items were lost (they run again alone); a matrix
// shared by every item redoes the whole run.
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
#include "runtime/core/ItemFailures.h"
#include "support/Numeric.h"
#include "support/SpdBatch.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace graphc {
namespace {

using testing::assumedSpdSolve;
using testing::backwardError;
using testing::partlyIndefiniteBatch;

constexpr int64_t kBatch = 8, kCols = 2;
const std::vector<int64_t> kIndefinite = {1, 4, 6};

/// Item k of `a` along its first axis.
Array itemOf(const Array& a, int64_t k) {
  return a.view(a.shape().drop_front(), a.strides().drop_front(), k * a.strides().front());
}

bool isIndefinite(int64_t k) {
  return std::find(kIndefinite.begin(), kIndefinite.end(), k) != kIndefinite.end();
}

/// Each item of `x` solves its system to rounding.
void expectSolved(const std::vector<Array>& in, const Array& x, const std::string& what) {
  for (int64_t k = 0; k < kBatch; ++k)
    EXPECT_LE(backwardError(in[0], x, in[1], k), 1e-14) << what << ", item " << k;
}

TEST(ItemFallback, OnlyTheIndefiniteItemsAreRedoneWithLu) {
  for (const char* backend : {"cpu", "cpu-unfused"})
    for (int64_t n : {5, 40}) { // the small loops and LAPACK
      std::string what = fmt::format("{}, n = {}", backend, n);
      std::unique_ptr<ir::Graph> g = assumedSpdSolve(n, kCols);
      auto exe = compile(*g, getBackend(backend), {.batch = kBatch});
      std::vector<Array> in = partlyIndefiniteBatch(kBatch, n, kCols, kIndefinite, 7);
      ::testing::internal::CaptureStderr();
      std::vector<Array> got = exe->run(in);
      std::string log = ::testing::internal::GetCapturedStderr();
      expectSolved(in, got[0], what);
      EXPECT_EQ(exe->fallbacks(), 1) << what;
      EXPECT_EQ(exe->itemFallbacks(), 3) << what;
      EXPECT_NE(log.find("falls back to LU for batch items 1, 4, 6 of this run"), std::string::npos)
          << log;
      EXPECT_NE(log.find("not positive definite in 3 of 8 batch items: 1 (leading minor 1)"),
                std::string::npos)
          << log;
      // The same SPD items with SPD matrices in place of the others: no fallback,
      // and the SPD items' results are the ones the failed run kept.
      std::vector<Array> spd = partlyIndefiniteBatch(kBatch, n, kCols, {}, 7);
      std::vector<Array> clean = exe->run(spd);
      EXPECT_EQ(exe->fallbacks(), 1) << what;
      for (int64_t k = 0; k < kBatch; ++k) {
        if (!isIndefinite(k)) {
          EXPECT_EQ(testing::relativeDifference(itemOf(got[0], k), itemOf(clean[0], k)), 0.0)
              << what << ", item " << k;
        }
      }
    }
}

TEST(ItemFallback, RunsIntoOutputsAndDeferredRunsRedoTheirItems) {
  const int64_t n = 6;
  std::unique_ptr<ir::Graph> g = assumedSpdSolve(n, kCols);
  auto exe = compile(*g, getBackend("cpu"), {.batch = kBatch});
  std::vector<Array> in = partlyIndefiniteBatch(kBatch, n, kCols, kIndefinite, 11);
  Array out = exe->newOutput(0);
  ::testing::internal::CaptureStderr();
  exe->run(in, {out});
  expectSolved(in, out, "into outputs");
  EXPECT_EQ(exe->itemFallbacks(), 3);
  // Three deferred runs, the second and third with failing items (one, then two).
  std::vector<std::vector<Array>> ins = {partlyIndefiniteBatch(kBatch, n, kCols, {}, 12),
                                         partlyIndefiniteBatch(kBatch, n, kCols, {7}, 13),
                                         partlyIndefiniteBatch(kBatch, n, kCols, {0, 3}, 14)};
  std::vector<Array> outs;
  for (const std::vector<Array>& i : ins) {
    outs.push_back(exe->newOutput(0));
    exe->enqueue(i, {outs.back()});
  }
  exe->finish();
  ::testing::internal::GetCapturedStderr();
  for (size_t r = 0; r < ins.size(); ++r)
    expectSolved(ins[r], outs[r], fmt::format("deferred run {}", r));
  EXPECT_EQ(exe->fallbacks(), 3);
  EXPECT_EQ(exe->itemFallbacks(), 3 + 1 + 2);
}

/// The cpu backend, except that a deferred run's failed items are lost, as on the
/// GPU when a later run on the lane wrote over the failed run's info words.
class LostItemsBackend final : public Backend {
public:
  llvm::StringRef name() const override { return "lost-items"; }
  std::unique_ptr<Executable> compile(const ir::Graph& g) override {
    return std::make_unique<Lost>(g);
  }

private:
  struct Lost final : Executable {
    explicit Lost(const ir::Graph& g)
        : Executable(Signature::of(g)), cpu(getBackend("cpu").compile(g)) {}
    llvm::StringRef backendName() const override { return "lost-items"; }
    std::vector<Array> execute(llvm::ArrayRef<Array> in) override { return cpu->run(in); }
    void executeInto(llvm::ArrayRef<Array> in, llvm::ArrayRef<Array> out) override {
      cpu->run(in, out);
    }
    void enqueueRun(size_t run, llvm::ArrayRef<Array> in, llvm::ArrayRef<Array> out,
                    void*) override {
      try {
        cpu->run(in, out);
      } catch (const ItemFallbackError& e) {
        if (!failure)
          failure = RunFailure{
              run, std::make_exception_ptr(ItemFallbackError::lost(e.message(), e.loc()))};
      }
    }
    std::optional<RunFailure> finishRuns() override { return std::exchange(failure, {}); }

    std::unique_ptr<Executable> cpu;
    std::optional<RunFailure> failure;
  };
};

/// A deferred run whose failed items are lost runs again alone, which names them:
/// only they are redone, not the whole run.
TEST(ItemFallback, ADeferredRunWhoseItemsAreLostRunsAgainToNameThem) {
  const int64_t n = 6;
  std::unique_ptr<ir::Graph> g = assumedSpdSolve(n, kCols);
  LostItemsBackend lost;
  auto exe = compile(*g, lost, {.batch = kBatch});
  std::vector<std::vector<Array>> ins = {partlyIndefiniteBatch(kBatch, n, kCols, {2, 5}, 31),
                                         partlyIndefiniteBatch(kBatch, n, kCols, {}, 32),
                                         partlyIndefiniteBatch(kBatch, n, kCols, {7}, 33)};
  std::vector<Array> outs;
  for (const std::vector<Array>& i : ins) {
    outs.push_back(exe->newOutput(0));
    exe->enqueue(i, {outs.back()});
  }
  ::testing::internal::CaptureStderr();
  exe->finish();
  std::string log = ::testing::internal::GetCapturedStderr();
  for (size_t r = 0; r < ins.size(); ++r)
    expectSolved(ins[r], outs[r], fmt::format("deferred run {}", r));
  EXPECT_EQ(exe->fallbacks(), 2);
  EXPECT_EQ(exe->itemFallbacks(), 2 + 1);
  EXPECT_NE(log.find("falls back to LU for batch items 2, 5 of this run"), std::string::npos)
      << log;
  EXPECT_EQ(log.find("falls back to LU for this run"), std::string::npos) << log;
}

/// S = Y*Y' + 1e-300*I is proven SPD; item 2's Y has exact entries of rank 2, so its
/// S is exactly singular: its Cholesky fails, and so does its LU, with an error
/// naming the item. The other items are SPD.
TEST(ItemFallback, AnItemSingularForLuTooIsAnErrorNamingIt) {
  std::unique_ptr<ir::Graph> g = testing::tinyShiftGramSolve(4, 4);
  auto exe = compile(*g, getBackend("cpu"), {.batch = 4});
  Array y = Array::randomNormal(ir::DType::F64, {4, 4, 4}, 3);
  const double rank2[] = {1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0};
  std::copy(rank2, rank2 + 16, y.data<double>() + 2 * 16);
  Array b = Array::randomNormal(ir::DType::F64, {4, 4, 1}, 4);
  ::testing::internal::CaptureStderr();
  try {
    exe->run({y, b});
    ADD_FAILURE() << "a singular system was solved";
  } catch (const FallbackError& e) {
    ADD_FAILURE() << "the fallback did not run: " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("batch item 2 of 4: "), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("singular"), std::string::npos) << e.message();
  }
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(exe->fallbacks(), 1);
  EXPECT_EQ(exe->itemFallbacks(), 1);
}

/// A graph batched by hand: its items come apart, so only the failed ones are redone.
TEST(ItemFallback, GraphsBatchedByHandRedoTheirFailedItems) {
  const int64_t n = 5;
  std::vector<Array> in = partlyIndefiniteBatch(kBatch, n, kCols, kIndefinite, 21);
  std::unique_ptr<ir::Graph> byHand = ir::parseGraph(fmt::format(R"(
graph @byhand(%a: f64[{0},{1},{1}], %b: f64[{0},{1},{2}]) {{
  %s = assume_spd %a
  %x = solve %s, %b
  %y = mul %x, %x
  return %x, %y
}}
)",
                                                                 kBatch, n, kCols));
  for (const char* backend : {"cpu", "cpu-unfused"}) {
    auto exe = compile(*byHand, getBackend(backend));
    ::testing::internal::CaptureStderr();
    std::vector<Array> got = exe->run(in);
    std::string log = ::testing::internal::GetCapturedStderr();
    expectSolved(in, got[0], std::string("batched by hand, ") + backend);
    for (int64_t k = 0; k < kBatch; ++k) { // the other output of the redone items too
      Array x = itemOf(got[0], k).contiguous(), y = itemOf(got[1], k).contiguous();
      for (int64_t i = 0; i < n * kCols; ++i)
        EXPECT_EQ(y.data<double>()[i], x.data<double>()[i] * x.data<double>()[i]) << k;
    }
    EXPECT_EQ(exe->fallbacks(), 1) << backend;
    EXPECT_EQ(exe->itemFallbacks(), 3) << backend;
    EXPECT_NE(log.find("falls back to LU for batch items 1, 4, 6 of this run"), std::string::npos)
        << log;
  }
}

/// A matrix shared by every item: every item depends on the one failed
/// factorization, so the whole run is redone with LU, and gives LU's answer.
TEST(ItemFallback, SharedMatricesRedoTheWholeRun) {
  const int64_t n = 5;
  std::vector<Array> in = partlyIndefiniteBatch(kBatch, n, kCols, kIndefinite, 21);
  std::unique_ptr<ir::Graph> g = assumedSpdSolve(n, kCols);
  auto shared = compile(*g, getBackend("cpu"), {.batch = kBatch, .batchedParams = {false, true}});
  Array a = itemOf(in[0], 1).clone(); // indefinite, for every item
  ::testing::internal::CaptureStderr();
  std::vector<Array> got = shared->run({a, in[1]});
  ::testing::internal::GetCapturedStderr();
  std::vector<Array> broadcast = {Array::empty(ir::DType::F64, {kBatch, n, n}), in[1]};
  for (int64_t k = 0; k < kBatch; ++k)
    std::copy(a.data<double>(), a.data<double>() + n * n, broadcast[0].data<double>() + k * n * n);
  expectSolved(broadcast, got[0], "shared matrix");
  EXPECT_EQ(shared->fallbacks(), 1);
  EXPECT_EQ(shared->itemFallbacks(), 0);
}

} // namespace
} // namespace graphc
