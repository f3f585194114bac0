//===- tests/gpu/NcclTest.cpp - The NCCL communicator on one GPU ----------===//
//
// NcclCommunicator over the GPUs this machine has, one rank each, the ranks
// threads of this process: every element type and reduction against a loop over
// the ranks' values, an abort that the other ranks' all-reduces report, a reset,
// and more ranks than GPUs refused. On one GPU the group is one rank (its
// all-reduce the identity, through NCCL all the same).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Nccl.h"

#include "GpuTestUtil.h"
#include "support/Numeric.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

namespace graphc {
namespace {

int visibleGpus() {
  int n = 0;
  GRAPHC_CUDA_CHECK(cudaGetDeviceCount(&n));
  return n;
}

/// Element i of a dense array, as a double.
double element(const Array& a, int64_t i) {
  switch (a.dtype()) {
  case ir::DType::Bool:
    return a.data<bool>()[i];
  case ir::DType::I32:
    return a.data<int32_t>()[i];
  case ir::DType::I64:
    return static_cast<double>(a.data<int64_t>()[i]);
  case ir::DType::F32:
    return a.data<float>()[i];
  case ir::DType::F64:
    return a.data<double>()[i];
  }
  return 0;
}

/// Rank r's value of element type `t`: small integers (exact sums in every type),
/// and a NaN among rank 0's float values.
Array rankValue(ir::DType t, int r) {
  Array a = Array::zeros(t, {3, 5});
  for (int64_t i = 0; i < a.numel(); ++i) {
    double v =
        t == ir::DType::Bool ? (i + r) % 3 == 0 : static_cast<double>((i * 7 + r * 5) % 11) - 4;
    if (ir::isFloat(t) && r == 0 && i == 4)
      v = std::nan("");
    switch (t) {
    case ir::DType::Bool:
      a.data<bool>()[i] = v != 0;
      break;
    case ir::DType::I32:
      a.data<int32_t>()[i] = static_cast<int32_t>(v);
      break;
    case ir::DType::I64:
      a.data<int64_t>()[i] = static_cast<int64_t>(v);
      break;
    case ir::DType::F32:
      a.data<float>()[i] = static_cast<float>(v);
      break;
    case ir::DType::F64:
      a.data<double>()[i] = v;
      break;
    }
  }
  return a;
}

TEST(Nccl, EveryTypeAndReductionMatchesALoopOverTheRanks) {
  GRAPHC_REQUIRE_GPU();
  GRAPHC_REQUIRE_NCCL();
  const int ranks = visibleGpus();
  cuda::NcclCommunicator comm(ranks);
  ASSERT_EQ(comm.size(), ranks);
  EXPECT_TRUE(comm.inProcess());
  for (ir::DType t : ir::kAllDTypes)
    for (Reduction red : {Reduction::Sum, Reduction::Max, Reduction::Min}) {
      SCOPED_TRACE(fmt::format("{} {}", ir::dtypeName(t).str(), static_cast<int>(red)));
      std::vector<Array> got(ranks);
      std::vector<std::thread> threads;
      for (int r = 0; r < ranks; ++r)
        threads.emplace_back([&, r] { got[r] = comm.allReduce(r, rankValue(t, r), red); });
      for (std::thread& th : threads)
        th.join();
      for (int64_t i = 0; i < got[0].numel(); ++i) {
        double want = element(rankValue(t, 0), i);
        for (int r = 1; r < ranks; ++r) {
          double v = element(rankValue(t, r), i);
          want = red == Reduction::Min                           ? std::min(want, v)
                 : red == Reduction::Max || t == ir::DType::Bool ? std::max(want, v)
                                                                 : want + v;
        }
        for (int r = 0; r < ranks; ++r) {
          if (std::isnan(element(rankValue(t, 0), i)) && red == Reduction::Sum) {
            EXPECT_TRUE(std::isnan(element(got[r], i))) << "rank " << r << " element " << i;
            continue;
          }
          if (std::isnan(element(rankValue(t, 0), i)))
            continue; // NCCL's max and min of a NaN are its own (docs/sharding.md)
          EXPECT_EQ(element(got[r], i), want) << "rank " << r << " element " << i;
        }
      }
    }
}

TEST(Nccl, AnAbortIsReportedUntilAReset) {
  GRAPHC_REQUIRE_GPU();
  GRAPHC_REQUIRE_NCCL();
  cuda::NcclCommunicator comm(1);
  Array x = rankValue(ir::DType::F64, 1);
  comm.abort(0);
  try {
    comm.allReduce(0, x, Reduction::Sum);
    ADD_FAILURE() << "an all-reduce after an abort";
  } catch (const AbortedError& e) {
    EXPECT_EQ(e.message(), "all_reduce on rank 0: rank 0 failed");
  }
  comm.reset();
  EXPECT_EQ(testing::relativeDifference(comm.allReduce(0, x, Reduction::Sum), x), 0.0);
}

TEST(Nccl, MoreRanksThanGpusAreRefused) {
  GRAPHC_REQUIRE_GPU();
  GRAPHC_REQUIRE_NCCL();
  int gpus = visibleGpus();
  try {
    cuda::NcclCommunicator comm(gpus + 1);
    ADD_FAILURE() << "a communicator over more ranks than GPUs";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              fmt::format("{} ranks on the GPU need as many GPUs; {} visible", gpus + 1, gpus));
  }
}

} // namespace
} // namespace graphc
