//===- runtime/cuda/KernelCache.h - Compiled kernels, kept ------*- C++ -*-===//
//
// Kernels compile once per structure. A KernelCache turns the source of a
// codegen::CudaKernel into a loaded kernel, looking in three places in turn:
//
//   memory  a process-wide map (thread-safe; concurrent requests for one key wait
//           for a single compilation)
//   disk    $GRAPHC_CACHE_DIR, else $XDG_CACHE_HOME/graphc/kernels, else
//           ~/.cache/graphc/kernels: one file per key, written atomically (temp
//           file + rename), holding the whole key and a checksum, so a corrupted
//           or colliding file is ignored and rewritten. A folder that cannot be
//           created or written just disables the disk cache.
//   NVRTC   for the current device's architecture (sm_90 on an H200), without FMA
//           contraction (codegen/Cuda.h); a compile error is a graphc::Error with
//           NVRTC's log and the numbered generated source.
//
// The key is (source, kernel name, target compute capability, NVRTC version,
// options); files are named by its 64-bit FNV-1a hash. Loaded libraries live as
// long as the cache (the global one: the process).
//
//   KernelCache& cache = KernelCache::global();
//   auto loaded = cache.get(codegen::emitCuda(kernel, "k"));
//   loaded->kernel.launch(config, args);
//
// Hand-written translation units with several (template) kernels go through
// getModule() and the same three levels, keyed also by their name expressions,
// whose mangled names are stored with the image (the helper kernels of
// runtime/cuda/Library.cpp). Before the disk, getModule() looks in the modules the
// build compiled ahead (runtime/cuda/PrebuiltModules.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Cuda.h"
#include "runtime/cuda/KernelLibrary.h"
#include "runtime/cuda/Nvrtc.h"

#include "llvm/ADT/ArrayRef.h"

#include <atomic>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace graphc::cuda {

/// A compiled translation unit, loaded; `library` keeps its kernels alive.
struct LoadedModule {
  explicit LoadedModule(CompiledModule m) : module(std::move(m)), library(module) {}
  virtual ~LoadedModule() = default;

  /// The kernel of a name expression given when compiling (e.g. "f<double>"), or of
  /// an extern "C" name. Throws graphc::Error when there is none.
  Kernel kernel(const std::string& name) const;

  CompiledModule module;
  KernelLibrary library;
};

/// A compiled kernel, loaded: launch `kernel`.
struct LoadedKernel : LoadedModule {
  explicit LoadedKernel(CompiledModule m, const std::string& name)
      : LoadedModule(std::move(m)), kernel(library.kernel(name)) {}

  Kernel kernel;
};

/// A whole CUDA C++ translation unit for KernelCache::getModule().
struct ModuleSource {
  std::string source;
  std::string name; ///< labels it in errors, e.g. "helpers.cu"
  /// Names to resolve to their mangled forms, e.g. "transpose<double>".
  std::vector<std::string> nameExpressions;
};

/// One compiled module in the disk cache's file format (KernelCache.cpp), under
/// `key`.
std::string encodeModule(const std::string& key, const CompiledModule& m);
/// The module encodeModule() wrote under `key` exactly; nothing when `file` is
/// damaged or holds another key.
std::optional<CompiledModule> decodeModule(llvm::StringRef file, llvm::StringRef key);

/// Compiles, loads and keeps kernels (see the file comment).
class KernelCache {
public:
  /// How a cache compiles and where it stores.
  struct Options {
    /// The disk cache folder; unset: the default (defaultDiskDir()); "": no disk cache.
    std::optional<std::string> diskDir;
    /// Target compute capability; 0: the current device's.
    int computeCapability = 0;
    /// NVRTC flags besides the architecture.
    std::vector<std::string> flags = {"--fmad=false"};
  };

  /// Where the kernels came from, counted per get() (for tests and logs).
  struct Stats {
    uint64_t memoryHits = 0; ///< found in memory (or being compiled by another caller)
    uint64_t diskHits = 0;   ///< read from the disk cache
    uint64_t compiled = 0;   ///< compiled with NVRTC
    uint64_t prebuilt = 0;   ///< modules found in the build's table (PrebuiltModules.h)
  };

  /// A cache with default options.
  KernelCache();
  explicit KernelCache(Options options);
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  /// The process-wide cache with default options.
  static KernelCache& global();

  /// The disk folder the environment selects: $GRAPHC_CACHE_DIR, else
  /// $XDG_CACHE_HOME/graphc/kernels, else $HOME/.cache/graphc/kernels ("" without HOME).
  static std::string defaultDiskDir();

  /// `k` compiled and loaded (needs a device). Throws graphc::Error when NVRTC
  /// fails (with the source) or loading fails; a failed key is retried next time.
  std::shared_ptr<const LoadedKernel> get(const codegen::CudaKernel& k);

  /// get() for each of `kernels`, and getModule() for each of `modules`, compiled in
  /// parallel; the kernels' results in order.
  std::vector<std::shared_ptr<const LoadedKernel>>
  compileAll(llvm::ArrayRef<codegen::CudaKernel> kernels,
             llvm::ArrayRef<ModuleSource> modules = {});

  /// `m` compiled (with this cache's flags) and loaded, through memory, the build's
  /// prebuilt modules (runtime/cuda/PrebuiltModules.h), disk and NVRTC. Throws like
  /// get().
  std::shared_ptr<const LoadedModule> getModule(const ModuleSource& m);

  /// The counters so far.
  Stats stats() const;
  /// Forgets the kernels in memory (the disk cache stays); loaded kernels that
  /// callers still hold stay valid.
  void clearMemory();
  /// The disk cache folder in use, "" when disabled.
  const std::string& diskDir() const { return diskDir_; }
  /// The path of `k`'s disk cache file ("" without a disk cache).
  std::string diskPath(const codegen::CudaKernel& k) const;

private:
  using Entry = std::shared_future<std::shared_ptr<const LoadedModule>>;
  std::string key(const codegen::CudaKernel& k) const;
  std::string key(const ModuleSource& m) const;
  /// The entry of `key`, made by `load` (from the disk or NVRTC) once.
  std::shared_ptr<const LoadedModule>
  once(const std::string& key, const std::function<std::shared_ptr<const LoadedModule>()>& load);
  /// The disk's module for `key`, or NVRTC's (then written to the disk).
  CompiledModule compile(const std::string& key, const ModuleSource& m);
  std::optional<CompiledModule> readDisk(const std::string& key) const;
  void writeDisk(const std::string& key, const CompiledModule& m) const;
  int targetComputeCapability() const;

  Options options_;
  std::string diskDir_;
  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
  std::atomic<uint64_t> memoryHits_{0}, diskHits_{0}, compiled_{0}, prebuilt_{0};
};

} // namespace graphc::cuda
