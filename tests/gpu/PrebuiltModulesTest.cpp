//===- tests/gpu/PrebuiltModulesTest.cpp - Library modules built ahead ----===//
//
// The table the build embeds (runtime/cuda/PrebuiltModules.h) holds every library
// module for every compute capability of GRAPHC_PREBUILT_ARCHS, as CUBIN with its
// name expressions resolved, and only under the exact source and flags; the
// kernel cache takes a module from it without NVRTC and the module's kernels run.
// Only the last test needs a device.
//
//===----------------------------------------------------------------------===//
#include "GpuTestUtil.h"

#include "runtime/cuda/Device.h"
#include "runtime/cuda/HelperKernels.h"
#include "runtime/cuda/PrebuiltModules.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <vector>

namespace graphc {
namespace {

using cuda::KernelCache;
using cuda::ModuleSource;
using testing::DeviceArray;

const std::vector<int> kArchs = {GRAPHC_PREBUILT_ARCHS_LIST};

/// Makes the build's table the process's, as the first cuda backend does.
void useBuiltInTable() {
  cuda::setPrebuiltTable(cuda::builtInPrebuiltTable());
}

/// Skips a test that needs a table when the build was configured without one.
#define GRAPHC_REQUIRE_TABLE()                                                                     \
  if (kArchs.empty())                                                                              \
  GTEST_SKIP() << "GRAPHC_PREBUILT_ARCHS is empty: no table"

TEST(PrebuiltModules, TableHoldsEveryLibraryModuleForEachArchitecture) {
  useBuiltInTable();
  std::vector<std::string> flags = KernelCache::Options().flags;
  std::vector<ModuleSource> modules = cuda::HelperKernels::moduleSources();
  EXPECT_EQ(cuda::prebuiltRecords(cuda::builtInPrebuiltTable()).size(),
            kArchs.size() * modules.size());
  for (int cc : kArchs)
    for (const ModuleSource& m : modules) {
      std::optional<cuda::CompiledModule> built =
          cuda::prebuiltModule(cuda::prebuiltKey(m, cc, flags));
      ASSERT_TRUE(built) << m.name << " for sm_" << cc;
      EXPECT_TRUE(built->isCubin);
      EXPECT_EQ(built->architecture, fmt::format("sm_{}", cc));
      EXPECT_EQ(built->image.substr(0, 4), "\x7f"
                                           "ELF")
          << m.name;
      for (const std::string& e : m.nameExpressions)
        EXPECT_EQ(built->loweredNames.count(e), 1u) << m.name << ": " << e;
    }
}

TEST(PrebuiltModules, AnotherSourceOrFlagIsNotFound) {
  useBuiltInTable();
  std::vector<std::string> flags = KernelCache::Options().flags;
  GRAPHC_REQUIRE_TABLE();
  ModuleSource m = cuda::HelperKernels::moduleSource();
  ASSERT_TRUE(cuda::prebuiltModule(cuda::prebuiltKey(m, kArchs.front(), flags)));
  ModuleSource edited = m;
  edited.source += "\n// edited\n";
  EXPECT_FALSE(cuda::prebuiltModule(cuda::prebuiltKey(edited, kArchs.front(), flags)));
  std::vector<std::string> fma = {"--fmad=true"};
  EXPECT_FALSE(cuda::prebuiltModule(cuda::prebuiltKey(m, kArchs.front(), fma)));
  EXPECT_FALSE(cuda::prebuiltModule(cuda::prebuiltKey(m, 1, flags)));
}

TEST(PrebuiltModules, MalformedTablesHoldNothing) {
  GRAPHC_REQUIRE_TABLE();
  llvm::StringRef table = cuda::builtInPrebuiltTable();
  ASSERT_FALSE(cuda::prebuiltRecords(table).empty());
  EXPECT_TRUE(cuda::prebuiltRecords(table.drop_back(1)).empty());
  EXPECT_TRUE(cuda::prebuiltRecords(table.drop_front(1)).empty());
  EXPECT_TRUE(cuda::prebuiltRecords("GRAPHCP1").empty());
  std::string extra = table.str() + "x";
  EXPECT_TRUE(cuda::prebuiltRecords(extra).empty());
  // A table of two records gives both back by key.
  cuda::CompiledModule a, b;
  a.image = "image a", b.image = "image b";
  std::string t = cuda::prebuiltTable({cuda::encodeModule("a", a), cuda::encodeModule("b", b)});
  std::map<std::string, llvm::StringRef> records = cuda::prebuiltRecords(t);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(cuda::decodeModule(records.at("b"), "b")->image, "image b");
  EXPECT_FALSE(cuda::decodeModule(records.at("b"), "a"));
}

TEST(PrebuiltModules, CacheTakesModulesFromTheTableAndTheyRun) {
  GRAPHC_REQUIRE_GPU();
  if (!llvm::is_contained(kArchs, cuda::deviceInfo().computeCapability()))
    GTEST_SKIP() << "the table has no module for this device's architecture";
  useBuiltInTable();
  KernelCache::Options options;
  options.diskDir = ""; // no disk: the table or NVRTC
  KernelCache cache(options);
  auto helpers = cache.getModule(cuda::HelperKernels::moduleSource());
  EXPECT_EQ(cache.stats().prebuilt, 1u);
  EXPECT_EQ(cache.stats().compiled, 0u);
  // fill<double> from the prebuilt image.
  DeviceArray out(std::vector<double>(1000, 0.0));
  int64_t n = 1000;
  double value = 2.5;
  double* dst = out.data();
  helpers->kernel("fill<double>").launch(cuda::LaunchConfig::linear(n), {&n, &value, &dst});
  EXPECT_EQ(out.toHost(), std::vector<double>(1000, 2.5));
}

} // namespace
} // namespace graphc
