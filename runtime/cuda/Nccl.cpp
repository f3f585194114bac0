//===- runtime/cuda/Nccl.cpp - The GPUs of one process as ranks, through NCCL -===//
//
// NCCL's entry points come from dlopen, typed by nccl.h (the toolkit's, the same
// major version as the library loaded: its ABI is stable across minor versions).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Nccl.h"

#include "runtime/cuda/Check.h"
#include "runtime/cuda/Pool.h"
#include "support/Error.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <mutex>
#include <numeric>
#include <string>

namespace graphc::cuda {
namespace {

/// The NCCL entry points graphc calls.
struct NcclApi {
  decltype(&::ncclGetVersion) getVersion;
  decltype(&::ncclGetErrorString) errorString;
  decltype(&::ncclCommInitAll) commInitAll;
  decltype(&::ncclCommDestroy) commDestroy;
  decltype(&::ncclCommAbort) commAbort;
  decltype(&::ncclAllReduce) allReduce;
};

/// Loads NCCL once per process; throws (each time) when it cannot.
const NcclApi& api() {
  static std::once_flag once;
  static NcclApi loaded{};
  static std::string failure;
  std::call_once(once, [] {
    const char* named = std::getenv("GRAPHC_NCCL_LIBRARY");
    const char* file = named && *named ? named : "libnccl.so.2";
    void* lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      failure = fmt::format("NCCL cannot be loaded ({}): {}; set GRAPHC_NCCL_LIBRARY to the path "
                            "of libnccl.so.2, or add its folder to LD_LIBRARY_PATH",
                            file, dlerror());
      return;
    }
    auto symbol = [&](const char* name) {
      void* p = dlsym(lib, name);
      if (!p && failure.empty())
        failure = fmt::format("NCCL ({}) has no {}", file, name);
      return p;
    };
    loaded.getVersion = reinterpret_cast<decltype(loaded.getVersion)>(symbol("ncclGetVersion"));
    loaded.errorString =
        reinterpret_cast<decltype(loaded.errorString)>(symbol("ncclGetErrorString"));
    loaded.commInitAll = reinterpret_cast<decltype(loaded.commInitAll)>(symbol("ncclCommInitAll"));
    loaded.commDestroy = reinterpret_cast<decltype(loaded.commDestroy)>(symbol("ncclCommDestroy"));
    loaded.commAbort = reinterpret_cast<decltype(loaded.commAbort)>(symbol("ncclCommAbort"));
    loaded.allReduce = reinterpret_cast<decltype(loaded.allReduce)>(symbol("ncclAllReduce"));
  });
  if (!failure.empty())
    throw Error(failure);
  return loaded;
}

void check(ncclResult_t status, const char* call) {
  if (status != ncclSuccess)
    throw Error(fmt::format("{} failed: {}", call, api().errorString(status)));
}

ncclDataType_t ncclType(ir::DType t) {
  switch (t) {
  case ir::DType::Bool:
    return ncclUint8;
  case ir::DType::I32:
    return ncclInt32;
  case ir::DType::I64:
    return ncclInt64;
  case ir::DType::F32:
    return ncclFloat32;
  case ir::DType::F64:
    return ncclFloat64;
  }
  throw Error("internal error: an all_reduce of an unknown element type");
}

/// A sum of bools is their or, the max of 0 and 1 (as the host communicators give).
ncclRedOp_t ncclOp(Reduction r, ir::DType t) {
  if (r == Reduction::Min)
    return ncclMin;
  return r == Reduction::Max || t == ir::DType::Bool ? ncclMax : ncclSum;
}

} // namespace

int ncclVersion() {
  int version = 0;
  check(api().getVersion(&version), "ncclGetVersion");
  return version;
}

std::string ncclUnavailableReason() noexcept {
  try {
    ncclVersion();
    return "";
  } catch (const Error& e) {
    return e.message();
  } catch (const std::exception& e) {
    return e.what();
  }
}

NcclCommunicator::NcclCommunicator(int ranks) : ranks_(ranks) {
  int devices = 0;
  GRAPHC_CUDA_CHECK(cudaGetDeviceCount(&devices));
  if (ranks < 1 || ranks > devices)
    throw Error(fmt::format("{} ranks on the GPU need as many GPUs; {} visible", ranks, devices));
  comms_.assign(ranks, nullptr);
  initialize();
}

NcclCommunicator::~NcclCommunicator() {
  std::lock_guard<std::mutex> lock(mutex_);
  release(api().commDestroy);
}

void NcclCommunicator::initialize() {
  std::vector<int> devices(ranks_);
  std::iota(devices.begin(), devices.end(), 0);
  std::vector<ncclComm_t> comms(ranks_); // comms_ keeps its null ones where this fails
  check(api().commInitAll(comms.data(), ranks_, devices.data()), "ncclCommInitAll");
  comms_ = std::move(comms);
  failed_ = -1;
}

void NcclCommunicator::release(ncclResult_t (*how)(ncclComm_t)) {
  for (ncclComm_t& c : comms_)
    if (c) {
      how(c);
      c = nullptr;
    }
}

void NcclCommunicator::abort(int rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_ >= 0)
    return;
  failed_ = rank;
  release(api().commAbort);
}

void NcclCommunicator::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_ >= 0) // the aborted communicators are gone: a new group
    initialize();
}

void NcclCommunicator::enqueue(int rank, const void* in, void* out, int64_t count, ir::DType t,
                               Reduction reduction, cudaStream_t stream) const {
  ncclComm_t comm = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_ >= 0)
      throw AbortedError(fmt::format("all_reduce on rank {}: rank {} failed", rank, failed_));
    comm = comms_.at(rank);
  }
  check(api().allReduce(in, out, static_cast<size_t>(count), ncclType(t), ncclOp(reduction, t),
                        comm, stream),
        "ncclAllReduce");
}

Array NcclCommunicator::allReduce(int rank, const Array& x, Reduction reduction) {
  Array host = x.contiguous();
  int64_t bytes = host.type().bytes();
  ScopedDevice on(rank);
  DeviceBuffer device(DevicePool::forDevice(rank), std::max<int64_t>(bytes, 1), nullptr);
  Array out = Array::empty(host.dtype(), host.shape());
  GRAPHC_CUDA_CHECK(cudaMemcpy(device.data(), host.rawData(), bytes, cudaMemcpyHostToDevice));
  enqueue(rank, device.data(), device.data(), host.numel(), host.dtype(), reduction, nullptr);
  GRAPHC_CUDA_CHECK(cudaMemcpy(out.rawData(), device.data(), bytes, cudaMemcpyDeviceToHost));
  return out;
}

} // namespace graphc::cuda
