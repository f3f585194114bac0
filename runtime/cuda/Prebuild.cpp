//===- runtime/cuda/Prebuild.cpp - graphc_prebuild: modules for the build --===//
//
// Usage: graphc_prebuild OUT CC...
//
// Compiles the library modules (HelperKernels::moduleSources()) for each compute
// capability CC (e.g. 90) with the kernel cache's NVRTC flags, in parallel, and
// writes their table to OUT (runtime/cuda/PrebuiltModules.h). Records of an
// existing OUT whose keys still match are kept without compiling. Needs NVRTC, not
// a GPU. CMake runs it; see GRAPHC_PREBUILT_ARCHS.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/HelperKernels.h"
#include "runtime/cuda/PrebuiltModules.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>

using namespace graphc;
using namespace graphc::cuda;

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: graphc_prebuild OUT CC...\n");
    return 2;
  }
  std::string out = argv[1];
  std::string previous;
  if (std::ifstream in(out, std::ios::binary); in) {
    std::stringstream ss;
    ss << in.rdbuf();
    previous = ss.str();
  }
  std::map<std::string, llvm::StringRef> kept = prebuiltRecords(previous);
  std::vector<std::string> flags = KernelCache::Options().flags;
  std::vector<std::future<std::string>> records;
  try {
    for (int i = 2; i < argc; ++i) {
      int cc = std::atoi(argv[i]);
      for (const ModuleSource& m : HelperKernels::moduleSources()) {
        std::string key = prebuiltKey(m, cc, flags);
        if (auto it = kept.find(key); it != kept.end() && decodeModule(it->second, key)) {
          records.push_back(
              std::async(std::launch::deferred, [r = it->second.str()] { return r; }));
          continue;
        }
        records.push_back(std::async(std::launch::async, [m, cc, flags, key] {
          CompileOptions options;
          options.computeCapability = cc;
          options.flags = flags;
          options.nameExpressions = m.nameExpressions;
          fmt::print("graphc_prebuild: compiling {} for sm_{}\n", m.name, cc);
          return encodeModule(key, compileCuda(m.source, m.name, options));
        }));
      }
    }
    std::vector<std::string> done;
    for (std::future<std::string>& r : records)
      done.push_back(r.get());
    std::string temp = out + ".tmp";
    {
      std::ofstream file(temp, std::ios::binary | std::ios::trunc);
      std::string table = prebuiltTable(done);
      file.write(table.data(), static_cast<std::streamsize>(table.size()));
      if (!file)
        throw Error(fmt::format("cannot write {}", temp));
    }
    std::filesystem::rename(temp, out);
  } catch (const std::exception& e) {
    fmt::print(stderr, "graphc_prebuild: {}\n", e.what());
    return 1;
  }
  return 0;
}
