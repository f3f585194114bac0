//===- runtime/cuda/FusedKernel.cpp - Running a kernel on the GPU ---------===//
#include "runtime/cuda/FusedKernel.h"

#include "runtime/cuda/Check.h"
#include "support/Error.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <fmt/format.h>

namespace graphc::cuda {
namespace {

/// The CPU's error for a max, min, mean, argmax or argmin of `k` over zero
/// elements ("" when there is none).
std::string emptyReductionError(const codegen::Kernel& k) {
  if (!k.hasReduction() || k.segmentSize() != 0 || ir::numElements(k.reducedShape) == 0)
    return "";
  for (const codegen::Inst& inst : k.insts) {
    if (inst.kind != codegen::Inst::Kind::Reduce)
      continue;
    const ir::Node& n = *inst.node;
    if (n.op() == ir::Op::Sum || n.op() == ir::Op::Prod)
      continue;
    std::string who = ir::opName(n.op()).str();
    if (!n.name().empty())
      who += fmt::format(" (%{})", n.name());
    return fmt::format("{}: reduction over zero elements (axes {} of {})", who,
                       ir::shapeString(n.attrs().getInts("axes")), n.operand(0).type().str());
  }
  return "";
}

/// Lets `k` take `bytes` of dynamic shared memory on the current device (needed
/// past 48 KB).
void allowShared(const Kernel& k, int64_t bytes) {
  if (bytes <= 48 << 10)
    return;
  int device = 0;
  GRAPHC_CUDA_CHECK(cudaGetDevice(&device));
  GRAPHC_CUDA_CHECK(cudaKernelSetAttributeForDevice(
      k.handle(), cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes), device));
}

} // namespace

codegen::CudaTarget currentTarget() {
  int device = 0, optin = 0, multiprocessors = 0;
  GRAPHC_CUDA_CHECK(cudaGetDevice(&device));
  GRAPHC_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  GRAPHC_CUDA_CHECK(
      cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  return {optin, multiprocessors};
}

CudaFusedKernel::CudaFusedKernel(const codegen::Kernel& kernel, KernelCache& cache)
    : CudaFusedKernel(kernel, codegen::emitCuda(kernel, "graphc_kernel", currentTarget()), cache) {}

CudaFusedKernel::CudaFusedKernel(codegen::Kernel kernel, codegen::CudaKernel cuda,
                                 KernelCache& cache)
    : k_(std::move(kernel)), cuda_(std::move(cuda)), loaded_(cache.get(cuda_)),
      runs_(loaded_->library.kernel(codegen::runsName(cuda_))),
      emptyReduction_(emptyReductionError(k_)) {
  allowShared(loaded_->kernel, cuda_.sharedBytes);
  allowShared(runs_, cuda_.sharedBytes);
}

llvm::SmallVector<void*, 16> CudaFusedKernel::arguments(llvm::ArrayRef<const void*> inputs,
                                                        llvm::ArrayRef<void*> outputs,
                                                        int* errorWord) const {
  if (inputs.size() != k_.inputs.size() || outputs.size() != k_.outputs.size())
    throw Error(fmt::format("fused kernel launch: {} inputs and {} outputs given, {} and {} "
                            "expected",
                            inputs.size(), outputs.size(), k_.inputs.size(), k_.outputs.size()));
  llvm::SmallVector<void*, 16> values;
  for (const void* p : inputs)
    values.push_back(const_cast<void*>(p));
  values.append(outputs.begin(), outputs.end());
  if (cuda_.hasErrorWord)
    values.push_back(errorWord);
  if (cuda_.size >= 0) // the point count, in the slot's first bytes as an i32 or i64
    values.push_back(reinterpret_cast<void*>(static_cast<intptr_t>(cuda_.size)));
  return values;
}

KernelLaunch CudaFusedKernel::launchOf(llvm::ArrayRef<const void*> inputs,
                                       llvm::ArrayRef<void*> outputs, int* errorWord) const {
  KernelLaunch l{loaded_->kernel, {}, arguments(inputs, outputs, errorWord)};
  if (!emptyReduction_.empty())
    throw Error(emptyReduction_);
  l.config.grid = dim3(cuda_.gridSize);
  l.config.block = dim3(cuda_.blockSize);
  l.config.sharedBytes = static_cast<size_t>(cuda_.sharedBytes);
  return l;
}

void CudaFusedKernel::launchRuns(void* const* table, unsigned runs, cudaStream_t stream) const {
  if (!emptyReduction_.empty())
    throw Error(emptyReduction_);
  LaunchConfig config;
  config.grid = dim3(cuda_.gridSize, runs);
  config.block = dim3(cuda_.blockSize);
  config.sharedBytes = static_cast<size_t>(cuda_.sharedBytes);
  config.stream = stream;
  void* arg = const_cast<void**>(table);
  runs_.launch(config, {&arg});
}

void CudaFusedKernel::throwIfFailed(int code) const {
  if (code == 0)
    return;
  SourceLoc loc;
  if (code > 0 && code <= static_cast<int>(k_.insts.size()) && k_.insts[code - 1].node)
    loc = k_.insts[code - 1].node->loc();
  throw Error(codegen::cudaErrorMessage(k_, code), loc);
}

} // namespace graphc::cuda
