//===- support/DiskCache.h - Files of the kernel caches ----*- C++ -*-===//
//
// What the kernel caches of every backend share on disk (runtime/cuda/KernelCache.h,
// runtime/cpu/HostJit.h): the folder the environment selects, the 64-bit FNV-1a
// hash that names a key's file and checks its contents, and whole-file reads and
// atomic writes (a temporary file, then a rename), so a reader never sees half a
// file. A write that fails (a full or read-only disk) only costs the cache.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace graphc {

/// $GRAPHC_CACHE_DIR, else $XDG_CACHE_HOME/graphc/kernels, else
/// $HOME/.cache/graphc/kernels ("" without HOME).
std::string kernelCacheDir();

/// Creates `dir` if needed; false (no disk cache) where it cannot be created or written.
bool usableCacheDir(const std::string& dir);

/// The 64-bit FNV-1a hash of `bytes`, continuing from `h`.
uint64_t fnv1a(llvm::StringRef bytes, uint64_t h = 0xcbf29ce484222325ull);

/// The contents of the file at `path`, if it can be read.
std::optional<std::string> readWholeFile(const std::string& path);

/// Appends `v` as the host writes it (8 bytes, little-endian on the hosts we run on).
void putU64(std::string& out, uint64_t v);
/// Appends the size of `s` (putU64), then `s`.
void putString(std::string& out, llvm::StringRef s);

/// Reads the fields of a cache file in the order putU64/putString wrote them; any
/// overrun clears `ok` and gives empty fields.
struct RecordReader {
  llvm::StringRef data;
  bool ok = true;

  /// The next `n` bytes.
  llvm::StringRef take(uint64_t n);
  uint64_t u64();
  std::string string() { return take(u64()).str(); }
};

/// Writes `bytes` to `path` through a temporary file and a rename; false when the
/// write failed (nothing is left behind).
bool writeFileAtomically(const std::string& path, llvm::StringRef bytes);

} // namespace graphc
