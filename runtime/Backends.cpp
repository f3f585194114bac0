//===- runtime/Backends.cpp - Finding a backend by name -------------------===//
//
// The built-in backends are rows of kBuiltIns, each naming the function that gives
// the process's instance; "cuda" is a row only in builds that have the CUDA
// backend. Backends added with registerBackend() are looked up first.
//
//===----------------------------------------------------------------------===//
#include "runtime/Backends.h"

#include "runtime/cpu/CpuBackend.h"
#include "support/Error.h"

#if GRAPHC_HAS_CUDA
#include "codegen/Cuda.h"
#include "runtime/cuda/CudaBackend.h"
#include "runtime/cuda/Device.h"
#include "runtime/cuda/PreparedProgram.h"
#endif

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>

namespace graphc {
namespace {

/// A backend the build has.
struct BuiltIn {
  const char* name;
  const char* what;    ///< "the CUDA backend", for messages
  const char* summary; ///< what it runs on
  Backend* (*get)();   ///< the process's instance, made on first call; null if it cannot be
  std::string (*unavailable)(); ///< why this machine cannot run it; null: it always can
  /// The program it runs for a graph, as text; null: it runs graphs node by node.
  std::string (*lowered)(const ir::Graph&, const passes::PlanOptions&);
};

std::string cpuLowered(const ir::Graph& g, const passes::PlanOptions& options) {
  return passes::printLoweredProgram(g, options);
}

#if GRAPHC_HAS_CUDA
Backend* cudaInstance() {
  static std::unique_ptr<Backend> backend = cuda::createCudaBackend();
  return backend.get();
}

std::string cudaLowered(const ir::Graph& g, const passes::PlanOptions& options) {
  std::unique_ptr<ir::Graph> prepared = cuda::graphForGpu(g);
  return passes::printProgram(cuda::lowerForGpu(*prepared, codegen::CudaTarget::sm90(), options));
}
#endif

const BuiltIn kBuiltIns[] = {
    {"cpu", "the cpu backend", "fused loops over cache-sized blocks, OpenBLAS/LAPACK",
     [] { return &cpuBackend(true); }, nullptr, cpuLowered},
    {"cpu-unfused", "the cpu-unfused backend", "node by node on the CPU (the reference)",
     [] { return &cpuBackend(false); }, nullptr, nullptr},
#if GRAPHC_HAS_CUDA
    {"cuda", "the CUDA backend", "NVRTC-compiled kernels, cuBLAS/cuSOLVER on an NVIDIA GPU",
     cudaInstance, cuda::cudaUnavailableReason, cudaLowered},
#endif
};

const BuiltIn* findBuiltIn(llvm::StringRef name) {
  for (const BuiltIn& b : kBuiltIns)
    if (name == b.name)
      return &b;
  return nullptr;
}

/// The backends of registerBackend() and those their factories made.
struct Registry {
  std::mutex mutex;
  std::map<std::string, BackendFactory> added;
  std::map<std::string, std::unique_ptr<Backend>> made;
  std::vector<std::unique_ptr<Backend>> replaced; ///< still referenced, maybe
};

Registry& registry() {
  static Registry r;
  return r;
}

std::string cannotRun(llvm::StringRef name, llvm::StringRef what, llvm::StringRef why) {
  return fmt::format("backend '{}': this build has {}, but this machine cannot run it: {}",
                     name.str(), what.str(), why.str());
}

std::string knownNames() {
  std::vector<std::string> names;
  for (const BackendInfo& b : knownBackends())
    names.push_back(b.name);
  names.push_back("auto");
  return fmt::format("{}", fmt::join(names, ", "));
}

/// The error for a backend name that is not built in.
Error notBuiltIn(llvm::StringRef name) {
  if (name == "cuda")
    return Error("backend 'cuda': this build has no CUDA backend (it was configured without the "
                 "CUDA Toolkit); use 'cpu' or 'auto'");
  return Error(fmt::format("unknown backend '{}' (known: {})", name.str(), knownNames()));
}

} // namespace

void registerBackend(llvm::StringRef name, BackendFactory factory) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.added[name.str()] = std::move(factory);
  auto m = r.made.find(name.str());
  if (m != r.made.end()) {
    r.replaced.push_back(std::move(m->second));
    r.made.erase(m);
  }
}

Backend& getBackend(llvm::StringRef name) {
  if (name == "auto")
    return getBackend(autoBackend().name);
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto m = r.made.find(name.str());
    if (m != r.made.end())
      return *m->second;
    auto f = r.added.find(name.str());
    if (f != r.added.end()) {
      std::unique_ptr<Backend> b = f->second();
      if (!b)
        throw Error(cannotRun(name, "it (registered)", "its factory made no backend"));
      return *r.made.emplace(name.str(), std::move(b)).first->second;
    }
  }
  if (const BuiltIn* b = findBuiltIn(name)) {
    if (b->unavailable)
      if (std::string why = b->unavailable(); !why.empty())
        throw Error(cannotRun(name, b->what, why));
    if (Backend* backend = b->get())
      return *backend;
    throw Error(cannotRun(name, b->what, "it could not be started"));
  }
  throw notBuiltIn(name);
}

std::string printLoweredProgramFor(llvm::StringRef name, const ir::Graph& g,
                                   const passes::PlanOptions& options) {
  const BuiltIn* b = findBuiltIn(name);
  if (!b)
    throw notBuiltIn(name);
  if (!b->lowered)
    throw Error(fmt::format("backend '{}' runs graphs node by node: it has no lowered program",
                            name.str()));
  return b->lowered(g, options);
}

std::vector<BackendInfo> knownBackends() {
  std::map<std::string, BackendInfo> byName;
  for (const BuiltIn& b : kBuiltIns)
    byName[b.name] = {b.name, b.summary, b.unavailable ? b.unavailable() : ""};
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto& [name, factory] : r.added)
    byName[name] = {name, "registered by the program", ""};
  std::vector<BackendInfo> out;
  for (auto& [name, info] : byName)
    out.push_back(std::move(info));
  return out;
}

AutoChoice autoBackend() {
#if GRAPHC_HAS_CUDA
  std::string why = cuda::cudaUnavailableReason();
  if (!why.empty())
    return {"cpu", "the CUDA backend cannot run on this machine: " + why};
  try {
    return {"cuda", cuda::deviceInfo().str()};
  } catch (const Error&) {
    return {"cuda", "a CUDA device"};
  }
#else
  return {"cpu", "this build has no CUDA backend"};
#endif
}

} // namespace graphc
