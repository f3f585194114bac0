//===- runtime/cpu/HostJit.h - LLVM IR to machine code, kept ----*- C++ -*-===//
//
// Internal to the cpu backend. The process's JIT (LLVM ORC's LLJIT, linked
// statically) for the host CPU, its features included (AVX2, AVX-512: the host
// target machine's). A module of LLVM IR text becomes machine code once per
// process and per machine kind, looked for in turn:
//
//   memory  a process-wide map from the module text (thread-safe; compiles are
//           serialized)
//   disk    the CUDA kernels' folder (support/DiskCache.h): one file per key
//           "cpu-<hash>.bin", holding the whole key, the object file and a
//           checksum; a file that does not check out, or whose object fails to
//           link, is compiled again and rewritten
//   LLVM    the module parsed, optimized by the passes loop kernels need (clean-up,
//           LICM, induction variables, the loop vectorizer; not the whole O3
//           pipeline, whose other passes would only grow the binaries) and compiled
//           to an object file (about 10 ms a kernel)
//
// The key is (the module text, LLVM's version, the host's triple, CPU name and
// features, the generator's version kCpuKernelVersion). Calls in the code (the C
// library's expf, tanh, ...) resolve to the process's own symbols.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"

#include <memory>
#include <string>
#include <vector>

namespace graphc::cpu {

/// Bump when the generated code's meaning changes (codegen/Llvm.h): old disk
/// entries then miss.
inline constexpr int kCpuKernelVersion = 1;

/// The JIT for the host CPU.
class HostJit {
public:
  /// The process's JIT, or nullptr when LLVM cannot target this CPU (`why` says why).
  static HostJit* get(std::string* why = nullptr);

  /// The addresses of functions `names` of module `ir` (LLVM IR text), compiled or
  /// found in the caches. Throws graphc::Error when the module does not compile.
  std::vector<void*> load(const std::string& ir, llvm::ArrayRef<std::string> names);

  /// "triple cpu features": what compiled code is specific to.
  const std::string& target() const;
  /// The disk cache folder in use ("" for none); set by tests ("" disables it).
  const std::string& diskDir() const;
  void setDiskDir(const std::string& dir);
  /// The disk file of module `ir` ("" without a disk cache).
  std::string diskPath(const std::string& ir) const;
  /// Forgets the modules loaded in memory (tests: the next load reads the disk).
  void forgetMemory();

  /// Modules compiled, read from disk, found in memory.
  struct Counts {
    int compiled = 0, fromDisk = 0, fromMemory = 0;
  };
  Counts counts() const;

  ~HostJit();

private:
  HostJit();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace graphc::cpu
