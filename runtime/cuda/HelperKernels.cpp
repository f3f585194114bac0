//===- runtime/cuda/HelperKernels.cpp - The library's helper kernels -----===//
#include "runtime/cuda/HelperKernels.h"

#include "runtime/cuda/Check.h"
#include "runtime/cuda/kernels/Sources.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <mutex>

namespace graphc::cuda {

namespace {

/// The templates of kernels/Helpers.cu instantiated for float and double.
const char* kFloatKernels[] = {
    "unpackTriangle",  "zeroTriangle",      "mirrorUpper", "identity", "permutation",
    "luDeterminant",   "firstZeroDiagonal", "fill",        "eye",      "householderQ",
    "refactorSingular"};
/// The data movement templates, instantiated for elements of 1, 2, 4 and 8 bytes.
const char* kMoveKernels[] = {"transpose", "gather", "diagEmbed"};
const char* kMoveTypes[] = {"unsigned char", "unsigned short", "unsigned int",
                            "unsigned long long"};
/// The trace instantiations (element type and accumulator), and the conversions.
const char* kOtherKernels[] = {"trace<float, double>",   "trace<double, double>",
                               "trace<int, unsigned>",   "trace<long long, unsigned long long>",
                               "convert<float, double>", "convert<double, float>"};

} // namespace

LaunchConfig tiledLaunch(int64_t batch, int64_t rows, int64_t cols, cudaStream_t stream) {
  if ((rows + 31) / 32 > 65535)
    throw Error(fmt::format("{} rows are too many for one grid of tiles", rows));
  LaunchConfig c;
  c.block = dim3(32, 8);
  c.grid = dim3(static_cast<unsigned>((cols + 31) / 32), static_cast<unsigned>((rows + 31) / 32),
                static_cast<unsigned>(std::min<int64_t>(batch, 65535)));
  c.stream = stream;
  return c;
}

const char* movedType(int64_t bytes) {
  switch (bytes) {
  case 1:
    return kMoveTypes[0];
  case 2:
    return kMoveTypes[1];
  case 4:
    return kMoveTypes[2];
  default:
    return kMoveTypes[3];
  }
}

void HelperKernels::transpose(int64_t batch, int64_t rows, int64_t cols, int64_t bytes,
                              const void* in, int64_t inStride, void* out, int64_t outStride,
                              cudaStream_t stream) const {
  if (batch * rows * cols == 0)
    return;
  (*this)[fmt::format("transpose<{}>", movedType(bytes))].launch(
      tiledLaunch(batch, rows, cols, stream),
      {&batch, &rows, &cols, &in, &inStride, &out, &outStride});
}

const HelperKernels& HelperKernels::forCurrentDevice() {
  int device = 0, major = 0, minor = 0;
  GRAPHC_CUDA_CHECK(cudaGetDevice(&device));
  GRAPHC_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  GRAPHC_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  static std::mutex mutex;
  static auto* cache = new std::map<int, std::unique_ptr<HelperKernels>>(); // lives to exit
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<HelperKernels>& k = (*cache)[major * 10 + minor];
  if (!k)
    k.reset(new HelperKernels());
  return *k;
}

Kernel HelperKernels::operator[](const std::string& expression) const {
  auto it = kernels_.find(expression);
  if (it == kernels_.end())
    throw Error(fmt::format("internal error: no helper kernel {}", expression));
  return it->second;
}

ModuleSource HelperKernels::moduleSource() {
  ModuleSource source{kernels::kHelpers, "graphc_linalg_helpers.cu", {}};
  for (const char* name : kFloatKernels)
    for (const char* type : {"float", "double"})
      source.nameExpressions.push_back(fmt::format("{}<{}>", name, type));
  for (const char* name : kMoveKernels)
    for (const char* type : kMoveTypes)
      source.nameExpressions.push_back(fmt::format("{}<{}>", name, type));
  source.nameExpressions.insert(source.nameExpressions.end(), std::begin(kOtherKernels),
                                std::end(kOtherKernels));
  return source;
}

std::vector<ModuleSource> HelperKernels::moduleSources() {
  return {SmallBatched::moduleSource(), ClusterQr::moduleSource(), moduleSource()};
}

HelperKernels::HelperKernels() {
  ModuleSource source = moduleSource();
  module_ = KernelCache::global().getModule(source);
  for (const std::string& expression : source.nameExpressions)
    kernels_[expression] = module_->kernel(expression);
  for (const char* name : {"pointerArray", "firstFailure"})
    kernels_[name] = module_->kernel(name);
  firstFailure_ = kernels_["firstFailure"];
}

void HelperKernels::summarizeInfo(int64_t count, const int* words, int* summary,
                                  cudaStream_t stream) const {
  if (count > 0)
    firstFailure_.launch(LaunchConfig::linear(count, 256, stream), {&count, &words, &summary});
}

} // namespace graphc::cuda
