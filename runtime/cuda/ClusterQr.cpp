//===- runtime/cuda/ClusterQr.cpp - Householder QR in one cluster of blocks ===//
//
// The kernel is one template per element type and rows-per-lane count R (a warp's
// lane holds rows lane, lane + 32, ... of a column: m <= 32 R). Cluster barriers,
// ranks and the mapping of a shared address to another block's are inline PTX
// (barrier.cluster, %cluster_ctarank, mapa), so the source needs no headers.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/ClusterQr.h"

#include "passes/RoutePolicy.h"

#include "runtime/cuda/Check.h"
#include "runtime/cuda/KernelCache.h"
#include "runtime/cuda/kernels/Sources.h"
#include "support/Error.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstring>
#include <fmt/format.h>
#include <type_traits>

namespace graphc::cuda {

namespace {

/// Rows per lane of the instantiations: m <= 32 R.
constexpr int kRowsPerLane[] = {1, 2, 4, 8, 16};
constexpr int kThreads = 256; // kernels/ClusterQr.cu's kThreads

std::string kernelName(const char* type, int rowsPerLane) {
  return fmt::format("clusterQr<{}, {}>", type, rowsPerLane);
}

template <typename V> void* slot(V v) {
  static_assert(sizeof(V) <= sizeof(void*) && std::is_trivially_copyable_v<V>);
  void* s = nullptr;
  std::memcpy(&s, &v, sizeof(V));
  return s;
}

} // namespace

ClusterQr::ClusterQr() {
  int device = 0, major = 0, optin = 0;
  GRAPHC_CUDA_CHECK(cudaGetDevice(&device));
  GRAPHC_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major < 9)
    return;
  GRAPHC_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  ModuleSource source = moduleSource();
  module_ = KernelCache::global().getModule(source);
  for (const std::string& expression : source.nameExpressions) {
    Kernel k = module_->kernel(expression);
    GRAPHC_CUDA_CHECK(cudaKernelSetAttributeForDevice(
        k.handle(), cudaFuncAttributeMaxDynamicSharedMemorySize, optin, device));
    kernels_[expression] = k;
  }
  maxSharedBytes_ = static_cast<size_t>(optin);
  GRAPHC_CUDA_CHECK(
      cudaDeviceGetAttribute(&multiprocessors_, cudaDevAttrMultiProcessorCount, device));
}

ModuleSource ClusterQr::moduleSource() {
  ModuleSource source{kernels::kClusterQr, "graphc_cluster_qr.cu", {}};
  for (const char* type : {"float", "double"})
    for (int rows : kRowsPerLane)
      source.nameExpressions.push_back(kernelName(type, rows));
  return source;
}

passes::QrCluster ClusterQr::shape(int64_t m, int64_t n, size_t elementSize, int widest) const {
  if (maxSharedBytes_ == 0)
    return {};
  return passes::chooseQrCluster(passes::RoutePolicy::gpu(), m, n, elementSize, maxSharedBytes_,
                                 widest);
}

template <typename T>
void ClusterQr::qr(int64_t batch, int64_t m, int64_t n, const T* a, T* q, T* r, cudaStream_t stream,
                   int widest, bool mayStream) const {
  passes::QrCluster s = shape(m, n, sizeof(T), widest);
  if (s.ctas == 0 || batch * s.ctas > INT_MAX)
    throw Error(fmt::format("internal error: cluster QR of {} x {}", m, n));
  if (batch == 0)
    return;
  int rowsPerLane = *std::find_if(std::begin(kRowsPerLane), std::end(kRowsPerLane),
                                  [&](int rows) { return m <= 32 * rows; });
  LaunchConfig config;
  config.grid = dim3(static_cast<unsigned>(batch * s.ctas));
  config.block = dim3(kThreads);
  config.cluster = static_cast<unsigned>(s.ctas);
  const passes::RoutePolicy& policy = passes::RoutePolicy::gpu();
  const bool streamed =
      mayStream && passes::qrClusterStreamed(policy, batch, m, s.ctas, multiprocessors_);
  const bool qByRows = streamed && q &&
                       passes::qrClusterQByRows(policy, batch, m, n, s.ctas, s.panel, sizeof(T),
                                                maxSharedBytes_, multiprocessors_);
  config.sharedBytes = passes::qrClusterSharedBytes(m, n, s.ctas, s.panel, sizeof(T), qByRows);
  config.stream = stream;
  KernelLaunch l{
      kernels_.at(kernelName(std::is_same_v<T, float> ? "float" : "double", rowsPerLane)),
      config,
      {slot(static_cast<int>(m)), slot(static_cast<int>(n)),
       slot(std::countr_zero(unsigned(s.panel))), slot(static_cast<int>(streamed)),
       slot(static_cast<int>(qByRows)), slot(a), slot(q), slot(r)}};
  l.enqueue(stream);
}

template void ClusterQr::qr<float>(int64_t, int64_t, int64_t, const float*, float*, float*,
                                   cudaStream_t, int, bool) const;
template void ClusterQr::qr<double>(int64_t, int64_t, int64_t, const double*, double*, double*,
                                    cudaStream_t, int, bool) const;

} // namespace graphc::cuda
