//===- runtime/cuda/KernelCache.cpp - Compiled kernels, kept --------------===//
//
// A disk cache file (also a record of the prebuilt table, PrebuiltModules.h) is
//   "GRAPHCK2", u64 key size, key, u8 isCubin, u64 size, architecture,
//   u64 size, image, u64 count, count x (u64 size, name expression, u64 size,
//   lowered name), u64 FNV-1a of everything before it
// (integers little-endian as the host writes them). Anything that does not parse,
// check out or match the key exactly is a miss.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/KernelCache.h"

#include "runtime/cuda/Check.h"
#include "runtime/cuda/PrebuiltModules.h"
#include "support/DiskCache.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>

namespace graphc::cuda {
namespace {

constexpr char kMagic[] = "GRAPHCK2";

using Reader = RecordReader;

std::string nvrtcVersionString() {
  int major = 0, minor = 0;
  GRAPHC_CUDA_CHECK(nvrtcVersion(&major, &minor));
  return fmt::format("{}.{}", major, minor);
}

} // namespace

std::string encodeModule(const std::string& key, const CompiledModule& m) {
  std::string file = kMagic;
  putString(file, key);
  file += m.isCubin ? '\1' : '\0';
  putString(file, m.architecture);
  putString(file, m.image);
  putU64(file, m.loweredNames.size());
  for (const auto& [expression, lowered] : m.loweredNames) {
    putString(file, expression);
    putString(file, lowered);
  }
  putU64(file, fnv1a(file));
  return file;
}

std::optional<CompiledModule> decodeModule(llvm::StringRef file, llvm::StringRef key) {
  if (file.size() < sizeof(uint64_t))
    return std::nullopt;
  llvm::StringRef body = file.drop_back(sizeof(uint64_t));
  Reader r{file};
  CompiledModule m;
  bool magic = r.take(8) == kMagic;
  bool sameKey = r.string() == key;
  m.isCubin = r.take(1) == "\1";
  m.architecture = r.string();
  m.image = r.string();
  for (uint64_t i = 0, count = r.u64(); r.ok && i < count; ++i) {
    std::string expression = r.string();
    m.loweredNames[expression] = r.string();
  }
  uint64_t sum = r.u64();
  if (!r.ok || !magic || !sameKey || !r.data.empty() || sum != fnv1a(body) || m.image.empty())
    return std::nullopt;
  return m;
}

KernelCache::KernelCache() : KernelCache(Options()) {}

KernelCache::KernelCache(Options options) : options_(std::move(options)) {
  diskDir_ = options_.diskDir ? *options_.diskDir : defaultDiskDir();
  if (!diskDir_.empty() && !usableCacheDir(diskDir_))
    diskDir_.clear(); // unwritable: no disk cache
}

KernelCache& KernelCache::global() {
  static KernelCache cache;
  return cache;
}

std::string KernelCache::defaultDiskDir() {
  return kernelCacheDir();
}

int KernelCache::targetComputeCapability() const {
  if (options_.computeCapability)
    return options_.computeCapability;
  int device = 0, major = 0, minor = 0;
  GRAPHC_CUDA_CHECK(cudaGetDevice(&device));
  GRAPHC_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  GRAPHC_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major * 10 + minor;
}

std::string KernelCache::key(const codegen::CudaKernel& k) const {
  static const std::string nvrtc = nvrtcVersionString();
  return fmt::format("graphc kernel\nnvrtc {}\nsm {}\nflags {}\nname {}\n{}", nvrtc,
                     targetComputeCapability(), fmt::join(options_.flags, " "), k.name, k.source);
}

std::string KernelCache::diskPath(const codegen::CudaKernel& k) const {
  if (diskDir_.empty())
    return "";
  return fmt::format("{}/{:016x}.bin", diskDir_, fnv1a(key(k)));
}

std::optional<CompiledModule> KernelCache::readDisk(const std::string& key) const {
  std::optional<std::string> file =
      readWholeFile(fmt::format("{}/{:016x}.bin", diskDir_, fnv1a(key)));
  if (!file)
    return std::nullopt;
  return decodeModule(*file, key);
}

void KernelCache::writeDisk(const std::string& key, const CompiledModule& m) const {
  // a full or read-only disk only costs the cache
  writeFileAtomically(fmt::format("{}/{:016x}.bin", diskDir_, fnv1a(key)), encodeModule(key, m));
}

std::string KernelCache::key(const ModuleSource& m) const {
  static const std::string nvrtc = nvrtcVersionString();
  return fmt::format("graphc module\nnvrtc {}\nsm {}\nflags {}\nname {}\nexpressions {}\n{}", nvrtc,
                     targetComputeCapability(), fmt::join(options_.flags, " "), m.name,
                     fmt::join(m.nameExpressions, ";"), m.source);
}

CompiledModule KernelCache::compile(const std::string& key, const ModuleSource& m) {
  if (!diskDir_.empty())
    if (std::optional<CompiledModule> module = readDisk(key)) {
      ++diskHits_;
      return std::move(*module);
    }
  CompileOptions options;
  options.computeCapability = targetComputeCapability();
  options.flags = options_.flags;
  options.nameExpressions = m.nameExpressions;
  CompiledModule module = compileCuda(m.source, m.name, options);
  ++compiled_;
  if (!diskDir_.empty())
    writeDisk(key, module);
  return module;
}

std::shared_ptr<const LoadedModule>
KernelCache::once(const std::string& id,
                  const std::function<std::shared_ptr<const LoadedModule>()>& load) {
  std::promise<std::shared_ptr<const LoadedModule>> promise;
  Entry entry;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(id);
    if (it != entries_.end()) {
      ++memoryHits_;
      entry = it->second;
    } else {
      entries_.emplace(id, promise.get_future().share());
    }
  }
  if (entry.valid())
    return entry.get(); // rethrows another caller's compile error
  try {
    auto loaded = load();
    promise.set_value(loaded);
    return loaded;
  } catch (...) {
    promise.set_exception(std::current_exception());
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.erase(id); // the next get() tries again
    throw;
  }
}

std::shared_ptr<const LoadedKernel> KernelCache::get(const codegen::CudaKernel& k) {
  std::string id = key(k); // "graphc kernel ...": never a module's key
  auto loaded = once(id, [&] {
    return std::make_shared<const LoadedKernel>(compile(id, {k.source, k.name + ".cu", {}}),
                                                k.name);
  });
  return std::static_pointer_cast<const LoadedKernel>(loaded);
}

std::shared_ptr<const LoadedModule> KernelCache::getModule(const ModuleSource& m) {
  std::string id = key(m); // "graphc module ..."
  return once(id, [&] {
    if (std::optional<CompiledModule> built =
            prebuiltModule(prebuiltKey(m, targetComputeCapability(), options_.flags))) {
      ++prebuilt_;
      return std::make_shared<const LoadedModule>(std::move(*built));
    }
    return std::make_shared<const LoadedModule>(compile(id, m));
  });
}

Kernel LoadedModule::kernel(const std::string& name) const {
  auto it = module.loweredNames.find(name);
  return library.kernel(it == module.loweredNames.end() ? name : it->second);
}

std::vector<std::shared_ptr<const LoadedKernel>>
KernelCache::compileAll(llvm::ArrayRef<codegen::CudaKernel> kernels,
                        llvm::ArrayRef<ModuleSource> modules) {
  size_t items = modules.size() + kernels.size(); // the modules first: the longest
  std::vector<std::shared_ptr<const LoadedKernel>> out(kernels.size());
  std::vector<std::exception_ptr> errors(items);
  std::atomic<size_t> next{0};
  int device = 0;
  GRAPHC_CUDA_CHECK(cudaGetDevice(&device));
  auto work = [&] {
    cudaSetDevice(device); // the caller's device, in this thread too
    for (size_t i; (i = next++) < items;) {
      try {
        if (i < modules.size())
          getModule(modules[i]);
        else
          out[i - modules.size()] = get(kernels[i - modules.size()]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  size_t threads = std::min<size_t>(items, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread& t : pool)
    t.join();
  for (const std::exception_ptr& e : errors)
    if (e)
      std::rethrow_exception(e);
  return out;
}

KernelCache::Stats KernelCache::stats() const {
  return {memoryHits_.load(), diskHits_.load(), compiled_.load(), prebuilt_.load()};
}

void KernelCache::clearMemory() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
}

} // namespace graphc::cuda
