//===- tests/gpu/DeviceTest.cpp - Device discovery ------------------------===//
#include "GpuTestUtil.h"

#include <gmock/gmock.h>

#include <cstdio>
#include <string>

using namespace graphc::cuda;

// The answer is the runtime's own (a driver and at least one device), with a reason
// exactly when it is no; without a device, asking for one is an error, not a crash.
TEST(Device, AvailabilityAgreesWithTheRuntime) {
  int count = 0;
  bool runtimeSeesOne = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cudaGetLastError();
  EXPECT_EQ(cudaAvailable(), runtimeSeesOne);
  std::string why = cudaUnavailableReason();
  EXPECT_EQ(why.empty(), cudaAvailable()) << why;
  if (!cudaAvailable()) {
    EXPECT_THAT(why, ::testing::AnyOf(::testing::HasSubstr("cudaGetDeviceCount"),
                                      ::testing::HasSubstr("reports no CUDA device")));
    EXPECT_THROW(deviceInfo(0), graphc::Error);
  }
}

TEST(Device, QueryDescribesDeviceZero) {
  GRAPHC_REQUIRE_GPU();
  DeviceInfo info = deviceInfo(0);
  std::printf("device 0: %s\n", info.str().c_str());
  EXPECT_FALSE(info.name.empty());
  EXPECT_GE(info.major, 7);
  EXPECT_GT(info.multiprocessors, 0);
  EXPECT_GT(info.totalMemory, 0u);
  EXPECT_LE(info.freeMemory, info.totalMemory);
}

TEST(Device, BadOrdinalThrowsNamingTheCall) {
  GRAPHC_REQUIRE_GPU();
  try {
    deviceInfo(1 << 20);
    FAIL() << "expected graphc::Error";
  } catch (const graphc::Error& e) {
    EXPECT_NE(e.message().find("cudaGetDeviceProperties"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("cudaErrorInvalidDevice"), std::string::npos) << e.what();
  }
}
