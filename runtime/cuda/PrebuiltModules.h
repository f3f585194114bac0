//===- runtime/cuda/PrebuiltModules.h - Library modules built ahead -*- C++ -*-===//
//
// The hand-written library modules (HelperKernels::moduleSources()) take seconds
// to compile with NVRTC, SmallBatched's unrolled solves most of all: on a machine
// whose CUDA compute cache (~/.nv/ComputeCache) is empty, the first compile() of
// the EnKF graph took 8-11 s on an H200 (CHANGELOG.md, 9691009). So the
// build compiles them for the compute capabilities in GRAPHC_PREBUILT_ARCHS
// (graphc_prebuild, run by CMake) into a table that every binary linking the cuda
// backend carries, and KernelCache looks there before its disk cache and NVRTC.
//
// A table record is a module in the disk cache's format (encodeModule) under
// prebuiltKey(): the source, the name expressions, the architecture and the NVRTC
// flags, but not the NVRTC version (a CUBIN runs on any driver that runs its
// architecture). A module that differs in any of them is not found.
//
// The table: "GRAPHCP1", u64 count, count x (u64 size, record).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/cuda/KernelCache.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <map>
#include <optional>
#include <string>

namespace graphc::cuda {

/// The table key of `m` compiled for compute capability `cc` with NVRTC `flags`.
std::string prebuiltKey(const ModuleSource& m, int cc, llvm::ArrayRef<std::string> flags);

/// A table of `records` (encodeModule() results).
std::string prebuiltTable(llvm::ArrayRef<std::string> records);
/// The records of `table` by key; empty when it is malformed.
std::map<std::string, llvm::StringRef> prebuiltRecords(llvm::StringRef table);

/// Makes `table` the process's prebuilt table; it must outlive every lookup. The
/// first createCudaBackend() sets the build's table.
void setPrebuiltTable(llvm::StringRef table);
/// The process's prebuilt module under `key`, if its table holds it.
std::optional<CompiledModule> prebuiltModule(const std::string& key);
/// The table this build embedded (runtime/cuda/PrebuiltTable.cpp).
llvm::StringRef builtInPrebuiltTable();

} // namespace graphc::cuda
