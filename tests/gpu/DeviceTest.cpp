//===- tests/gpu/DeviceTest.cpp - Device discovery ------------------------===//
#include "GpuTestUtil.h"

#include <cstdio>

using namespace graphc::cuda;

TEST(Device, AvailabilityIsStable) {
  // Never throws, with or without a driver, and answers the same each time.
  EXPECT_EQ(cudaAvailable(), cudaAvailable());
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
