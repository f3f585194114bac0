//===- runtime/cuda/KernelLibrary.cpp - Load and launch kernels -----------===//
#include "runtime/cuda/KernelLibrary.h"

#include "runtime/cuda/Check.h"
#include "support/Error.h"

#include <algorithm>
#include <fmt/format.h>
#include <utility>

namespace graphc::cuda {

LaunchConfig LaunchConfig::linear(int64_t n, unsigned blockSize, cudaStream_t stream) {
  LaunchConfig c;
  c.block = dim3(blockSize);
  c.grid = dim3(static_cast<unsigned>(std::max<int64_t>(1, (n + blockSize - 1) / blockSize)));
  c.stream = stream;
  return c;
}

void Kernel::launch(const LaunchConfig& config, llvm::ArrayRef<void*> args) const {
  if (!kernel_)
    throw Error("launch of a null kernel");
  if (config.cluster > 1) {
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = config.cluster;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    cudaLaunchConfig_t c{config.grid, config.block, config.sharedBytes, config.stream, &cluster, 1};
    GRAPHC_CUDA_CHECK(cudaLaunchKernelExC(&c, static_cast<const void*>(kernel_),
                                          const_cast<void**>(args.data())));
    return;
  }
  GRAPHC_CUDA_CHECK(cudaLaunchKernel(static_cast<const void*>(kernel_), config.grid, config.block,
                                     const_cast<void**>(args.data()), config.sharedBytes,
                                     config.stream));
}

void KernelLaunch::enqueue(cudaStream_t stream) const {
  if (config.grid.x == 0)
    return;
  llvm::SmallVector<void*, 16> values(args.begin(), args.end()), addresses;
  for (void*& v : values)
    addresses.push_back(&v);
  LaunchConfig c = config;
  c.stream = stream;
  kernel.launch(c, addresses);
}

KernelLibrary::KernelLibrary(const CompiledModule& module) {
  GRAPHC_CUDA_CHECK(cudaLibraryLoadData(&library_, module.image.data(), nullptr, nullptr, 0,
                                        nullptr, nullptr, 0));
}

KernelLibrary::KernelLibrary(KernelLibrary&& other) noexcept
    : library_(std::exchange(other.library_, nullptr)) {}

KernelLibrary& KernelLibrary::operator=(KernelLibrary&& other) noexcept {
  std::swap(library_, other.library_);
  return *this;
}

KernelLibrary::~KernelLibrary() {
  if (library_)
    cudaLibraryUnload(library_); // errors at teardown have nowhere to go
}

Kernel KernelLibrary::kernel(llvm::StringRef name) const {
  cudaKernel_t k = nullptr;
  std::string n = name.str();
  cudaError_t status = cudaLibraryGetKernel(&k, library_, n.c_str());
  if (status != cudaSuccess)
    check(status, fmt::format("cudaLibraryGetKernel(\"{}\")", n).c_str());
  return Kernel(k);
}

} // namespace graphc::cuda
