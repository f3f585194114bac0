//===- tests/runtime/CollectiveTest.cpp - all_reduce and the host communicator -===//
//
// all_reduce on one rank (a program compiled without ranks) is its operand; on
// several, each rank's program compiled by compileRank() over one host
// communicator returns the sum, max or min of the ranks' operands, checked against
// loops over them in f64, the same bits on every rank. Then the communicators
// alone: the host one's rounds and an abort that wakes the ranks waiting for a
// failed one; the socket one (each rank with a communicator of its own, as
// processes have, over a Unix socket) the same, and a rank that leaves.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Collective.h"
#include "TestUtil.h"
#include "runtime/Backends.h"

#include "ir/Graph.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>

#include <cmath>
#include <filesystem>
#include <thread>
#include <unistd.h>

namespace graphc::testing {
namespace {

using ir::Op;

constexpr const char* kReductions[] = {"sum", "max", "min"};

TEST(Collective, AllReduceOfOneRankIsItsOperand) {
  for (DType dt : {DType::F32, DType::F64, DType::I32, DType::I64})
    for (const char* r : kReductions) {
      Array x = runOp1(Op::Cast, {randn(DType::F64, {4, 3}, 5)}, {{"dtype", dt}});
      Array out = runOp1(Op::AllReduce, {x}, {{"reduction", std::string(r)}});
      EXPECT_EQ(out.type(), x.type());
      EXPECT_EQ(doubles(out), doubles(x)) << r << " " << ir::dtypeName(dt).str();
    }
}

TEST(Collective, EachRanksProgramGetsTheReductionOverTheRanks) {
  constexpr int kRanks = 3;
  for (const char* backend : {"cpu", "cpu-unfused"})
    for (DType dt : {DType::F64, DType::I64})
      for (const char* reduction : kReductions) {
        ir::Graph g("collective");
        ir::Value x = g.addParameter("x", ir::TensorType(dt, {2, 5}));
        g.addOutput(g.apply(Op::AllReduce, {x}, {{"reduction", std::string(reduction)}}));
        auto comm = getBackend(backend).communicator(kRanks);
        std::vector<Array> in, out(kRanks);
        std::vector<std::thread> threads;
        for (int r = 0; r < kRanks; ++r)
          in.push_back(runOp1(Op::Cast, {randn(DType::F64, {2, 5}, 40 + r)}, {{"dtype", dt}}));
        for (int r = 0; r < kRanks; ++r)
          threads.emplace_back([&, r] {
            out[r] = getBackend(backend).compileRank(g, RankOf{comm, r})->run({in[r]})[0];
          });
        for (std::thread& t : threads)
          t.join();
        std::vector<double> want = doubles(in[0]);
        for (int r = 1; r < kRanks; ++r)
          for (size_t i = 0; i < want.size(); ++i) {
            double v = doubles(in[r])[i];
            want[i] = reduction == std::string("sum")   ? want[i] + v
                      : reduction == std::string("max") ? std::max(want[i], v)
                                                        : std::min(want[i], v);
          }
        for (int r = 0; r < kRanks; ++r)
          expectClose(
              doubles(out[r]), want, 1e-14,
              fmt::format("{} {} rank {} on {}", reduction, ir::dtypeName(dt).str(), r, backend));
        EXPECT_EQ(doubles(out[1]), doubles(out[0]));
      }
}

TEST(Collective, TheHostCommunicatorGivesEveryRankTheSameBits) {
  constexpr int kRanks = 4;
  auto comm = hostCommunicator(kRanks);
  std::vector<Array> sums(kRanks), maxes(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r)
    threads.emplace_back([&, r] {
      Array x = Array::randomNormal(DType::F64, {3, 7}, 100 + r);
      sums[r] = comm->allReduce(r, x, Reduction::Sum);
      maxes[r] = comm->allReduce(r, x, Reduction::Max);
    });
  for (std::thread& t : threads)
    t.join();
  for (int64_t i = 0; i < 21; ++i) {
    double sum = 0, max = -INFINITY; // the reference: a loop over the ranks' values
    for (int r = 0; r < kRanks; ++r) {
      double v = Array::randomNormal(DType::F64, {3, 7}, 100 + r).data<double>()[i];
      sum += v;
      max = std::max(max, v);
    }
    for (int r = 0; r < kRanks; ++r) {
      EXPECT_EQ(sums[r].data<double>()[i], sums[0].data<double>()[i]) << r;
      EXPECT_NEAR(sums[r].data<double>()[i], sum, 1e-14);
      EXPECT_EQ(maxes[r].data<double>()[i], max);
    }
  }
  EXPECT_NE(sums[0].rawData(), sums[1].rawData()); // each rank's result is its own
}

TEST(Collective, AnAbortWakesTheRanksWaitingForTheFailedOne) {
  auto comm = hostCommunicator(3);
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      try {
        comm->allReduce(r, Array::zeros(DType::F32, {2}), Reduction::Sum);
      } catch (const Error& e) {
        errors[r] = e.message();
      }
    });
  comm->abort(2);
  for (std::thread& t : threads)
    t.join();
  for (const std::string& e : errors)
    EXPECT_EQ(e, "all_reduce: rank 2 of 3 failed");
  comm->reset(); // the next run meets again
  Array one = Array::fromVector<double>({1.5}, {1});
  std::vector<Array> got(3);
  threads.clear();
  for (int r = 0; r < 3; ++r)
    threads.emplace_back([&, r] { got[r] = comm->allReduce(r, one, Reduction::Sum); });
  for (std::thread& t : threads)
    t.join();
  EXPECT_EQ(got[2].data<double>()[0], 4.5);
}

/// A Unix socket path of this test process's own.
std::string socketPath(const char* name) {
  return (std::filesystem::temp_directory_path() /
          fmt::format("graphc-{}-{}.sock", name, static_cast<long>(getpid())))
      .string();
}

/// Runs `f(rank, comm)` for `ranks` ranks, each on a thread with a socket
/// communicator of its own at `address`.
void onSocketRanks(int ranks, const std::string& address,
                   const std::function<void(int, Communicator&)>& f) {
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      std::shared_ptr<Communicator> comm = socketCommunicator(address, ranks, r, 20);
      f(r, *comm);
    });
  for (std::thread& t : threads)
    t.join();
}

TEST(Collective, SocketRanksReduceInRankOrder) {
  constexpr int kRanks = 3;
  std::vector<Array> in, sums(kRanks), mins(kRanks);
  for (int r = 0; r < kRanks; ++r)
    in.push_back(randn(DType::F64, {4, 5}, 60 + r));
  onSocketRanks(kRanks, "unix:" + socketPath("reduce"), [&](int r, Communicator& comm) {
    sums[r] = comm.allReduce(r, in[r], Reduction::Sum);
    mins[r] = comm.allReduce(r, in[r], Reduction::Min);
  });
  std::vector<double> sum = doubles(in[0]), min = doubles(in[0]);
  for (int r = 1; r < kRanks; ++r)
    for (size_t i = 0; i < sum.size(); ++i) {
      sum[i] += doubles(in[r])[i];
      min[i] = std::min(min[i], doubles(in[r])[i]);
    }
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(doubles(sums[r]), doubles(sums[0])) << r; // the same bits everywhere
    expectClose(doubles(sums[r]), sum, 1e-14, fmt::format("sum on rank {}", r));
    EXPECT_EQ(doubles(mins[r]), min) << r;
  }
}

TEST(Collective, SocketRanksThrowWhenOneFailsOrLeaves) {
  std::vector<std::string> errors(3);
  // Rank 2 fails before its all-reduce: the others, waiting, throw.
  onSocketRanks(3, "unix:" + socketPath("abort"), [&](int r, Communicator& comm) {
    if (r == 2)
      return comm.abort(2);
    try {
      comm.allReduce(r, Array::zeros(DType::F32, {3}), Reduction::Sum);
    } catch (const AbortedError& e) {
      errors[r] = e.message();
    }
  });
  EXPECT_EQ(errors[0], "all_reduce: rank 2 of 3 failed");
  EXPECT_EQ(errors[1], "all_reduce: rank 2 of 3 failed");
  // Rank 1 leaves (its communicator goes) instead of joining the all-reduce.
  errors.assign(2, "");
  onSocketRanks(2, "unix:" + socketPath("leave"), [&](int r, Communicator& comm) {
    if (r == 1)
      return;
    try {
      comm.allReduce(r, Array::zeros(DType::F32, {3}), Reduction::Sum);
    } catch (const AbortedError& e) {
      errors[r] = e.message();
    }
  });
  EXPECT_EQ(errors[0], "all_reduce: rank 1 of 2 failed");
}

TEST(Collective, SocketAddressesAndMeetingsThatFailAreErrors) {
  auto message = [](const std::string& address, int ranks, int rank, int timeout) {
    try {
      socketCommunicator(address, ranks, rank, timeout);
    } catch (const Error& e) {
      return e.message();
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("localhost", 2, 1, 1),
            "communicator address 'localhost' is not HOST:PORT or unix:PATH");
  EXPECT_EQ(message("localhost:99999", 2, 1, 1),
            "communicator address 'localhost:99999' is not HOST:PORT or unix:PATH");
  EXPECT_EQ(message("unix:" + socketPath("nobody"), 2, 1, 1),
            fmt::format("communicator at unix:{}: the 2 ranks did not meet in time (rank 1 found "
                        "no rank 0)",
                        socketPath("nobody")));
  EXPECT_EQ(message("unix:" + socketPath("alone"), 2, 0, 1),
            fmt::format("communicator at unix:{}: the 2 ranks did not meet in time (1 of them "
                        "joined)",
                        socketPath("alone")));
  EXPECT_FALSE(std::filesystem::exists(socketPath("alone"))) << "the socket's file is left";
  EXPECT_EQ(message("unix:x", 2, 2, 1), "communicator: rank 2 of 2 ranks");
}

} // namespace
} // namespace graphc::testing
