//===- tests/tools/ShardedRunTest.cpp - `graphc run --ranks` ---------------===//
//
// `graphc run --ranks N` runs a graph as N ranks of this process; with --connect, as
// one rank of N processes. The test runs ridge regression with its rows split: as
// three ranks in one process, then as two graphc processes started at once that
// meet over a Unix socket, each reading the whole (seeded) inputs and writing its
// own share of each output. Every result is read back from its .npy file and
// compared with the graph run whole, in f64: the weights (replicated) the same bits
// on both processes, the residuals (split by rows) put together from the shares.
//
//===----------------------------------------------------------------------===//
#include "RunTool.h"

#include "runtime/core/Npy.h"
#include "support/ScratchDir.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <thread>

using namespace graphc::testing;
using ::testing::HasSubstr;

namespace {

namespace fs = std::filesystem;

constexpr const char* kRidge = R"(graph @ridge(%x: f64[41,3], %y: f64[41,1]) {
  %g = syrk %x {transpose}
  %xy = matmul %x, %y {transpose_a}
  %i = eye : f64[3,3]
  %s = add %g, %i
  %w = solve %s, %xy
  %p = matmul %x, %w
  %r = sub %p, %y
  return %w, %r
}
)";

/// A folder of this test process's own, with the ridge graph in it.
struct Workdir {
  ScratchDir dir{"sharded"};
  std::string gir = dir.write("ridge.gir", kRidge);
  /// `graphc run` of the ridge graph on seeded random inputs, writing into `out`.
  std::vector<std::string> run(const std::string& out) const {
    return {"run",
            gir,
            "--backend",
            "cpu",
            "--random-inputs",
            "--seed",
            "3",
            "--output-dir",
            (dir / out).string()};
  }
  /// Output `i` written into `out`, as doubles.
  std::vector<double> output(const std::string& out, int i) const {
    return graphc::readNpy((dir / out / fmt::format("ridge_out{}.npy", i)).string())
        .toVector<double>();
  }
};

/// max |got - want| / (1 + max |want|).
double difference(const std::vector<double>& got, const std::vector<double>& want) {
  EXPECT_EQ(got.size(), want.size());
  double worst = 0, scale = 0;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    worst = std::max(worst, std::abs(got[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return worst / (1 + scale);
}

} // namespace

TEST(GraphcRun, RanksOfThisProcessGiveTheWholeResults) {
  Workdir w;
  ToolResult whole = runGraphc(w.run("whole"));
  ASSERT_EQ(whole.exitCode, 0) << whole.describe();
  std::vector<std::string> args = w.run("threads");
  args.insert(args.end(), {"--ranks", "3", "--split", "0,0"});
  ToolResult threads = runGraphc(args);
  ASSERT_EQ(threads.exitCode, 0) << threads.describe();
  EXPECT_THAT(threads.out, HasSubstr("sharded: 3 ranks in this process\n"));
  for (int i : {0, 1})
    EXPECT_LE(difference(w.output("threads", i), w.output("whole", i)), 1e-12) << "out" << i;
}

TEST(GraphcRun, TwoProcessesMeetAndEachWritesItsShare) {
  Workdir w;
  ToolResult whole = runGraphc(w.run("whole"));
  ASSERT_EQ(whole.exitCode, 0) << whole.describe();
  const std::string address = "unix:" + (w.dir / "meet.sock").string();
  std::vector<ToolResult> ranks(2);
  std::vector<std::thread> processes;
  for (int r : {1, 0}) // rank 1 first: it waits for rank 0 to listen
    processes.emplace_back([&, r] {
      std::vector<std::string> args = w.run(fmt::format("rank{}", r));
      args.insert(args.end(), {"--ranks", "2", "--rank", std::to_string(r), "--split", "0,0",
                               "--connect", address, "--repeat", "3"});
      ranks[r] = runGraphc(args, "", 60);
    });
  for (std::thread& p : processes)
    p.join();
  for (int r : {0, 1}) {
    ASSERT_EQ(ranks[r].exitCode, 0) << ranks[r].describe();
    EXPECT_THAT(ranks[r].out, HasSubstr(fmt::format("sharded: rank {} of 2 at {}\n", r, address)));
    EXPECT_THAT(ranks[r].out, HasSubstr("out0: f64[3,1] "));
    EXPECT_THAT(ranks[r].out, HasSubstr("(replicated)"));
  }
  EXPECT_THAT(ranks[0].out, HasSubstr("out1: f64[21,1] "));
  EXPECT_THAT(ranks[0].out, HasSubstr("(axis 0: [0, 21) of 41)"));
  EXPECT_THAT(ranks[1].out, HasSubstr("(axis 0: [21, 41) of 41)"));
  // The weights: the same bits on both ranks, and the whole run's to rounding.
  EXPECT_EQ(w.output("rank0", 0), w.output("rank1", 0));
  EXPECT_LE(difference(w.output("rank0", 0), w.output("whole", 0)), 1e-12);
  // The residuals: rank 0's rows, then rank 1's.
  std::vector<double> rows = w.output("rank0", 1), more = w.output("rank1", 1);
  rows.insert(rows.end(), more.begin(), more.end());
  EXPECT_LE(difference(rows, w.output("whole", 1)), 1e-12);
}

TEST(GraphcRun, ShardFlagsWithoutWhatTheyNeedAreUsageErrors) {
  Workdir w;
  auto err = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = w.run("bad");
    args.insert(args.end(), extra.begin(), extra.end());
    ToolResult r = runGraphc(args);
    EXPECT_EQ(r.exitCode, 2) << r.describe();
    return r.err;
  };
  EXPECT_THAT(err({"--split", "0,0"}), HasSubstr("--split, --rank and --connect need --ranks"));
  EXPECT_THAT(err({"--ranks", "2"}), HasSubstr("--ranks needs --split"));
  EXPECT_THAT(err({"--ranks", "2", "--split", "0,0", "--rank", "1"}),
              HasSubstr("--rank needs --connect"));
  EXPECT_THAT(err({"--ranks", "0", "--split", "0,0"}),
              HasSubstr("--ranks '0' is not a number of at least 1"));
  EXPECT_THAT(err({"--ranks", "2", "--split", "0,0", "--rank", "2", "--connect", "unix:x"}),
              HasSubstr("--rank 2 of --ranks 2"));
}
