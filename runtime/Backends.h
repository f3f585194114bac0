//===- runtime/Backends.h - Finding a backend by name -----------*- C++ -*-===//
//
// getBackend("cpu" | "cpu-unfused" | "cuda" | "auto") gives the process's backend
// of that name. The built-in backends are a table in runtime/Backends.cpp that
// names each one's factory directly: linking graphc_backends (graphc::graphc,
// graphc::backends) gives every backend the build has, with no static
// initializers and no linker flags to keep them. "cuda" is in the table when the
// build has the CUDA backend; whether this machine can run it (a driver, a device)
// is asked when it is first wanted, and a backend that cannot run says why:
//
//   Backend& b = getBackend("cuda");
//   // throws "backend 'cuda': this build has the CUDA backend, but this machine
//   //         cannot run it: no CUDA device (cudaGetDeviceCount: ...)"
//
// "auto" is cuda where it can run and cpu otherwise; autoBackend() says which and
// why. A program can add a backend of its own with registerBackend().
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/MemoryPlan.h"
#include "runtime/core/Backend.h"

#include "llvm/ADT/StringRef.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace graphc {

/// Makes a backend; returns null when it cannot run here.
using BackendFactory = std::function<std::unique_ptr<Backend>()>;

/// Adds the backend called `name`, made by `factory` when first asked for; it
/// replaces a built-in or earlier backend of that name (the one already made stays
/// alive). Built-in backends need no registration.
void registerBackend(llvm::StringRef name, BackendFactory factory);

/// The backend called `name`: one of knownBackends(), or "auto" (see autoBackend()).
/// The backend is made once and lives until exit. Throws graphc::Error for an
/// unknown name, for "cuda" when the build has no CUDA backend, and for a backend
/// the build has but this machine cannot run, saying why.
Backend& getBackend(llvm::StringRef name);

/// One backend of this build (or of registerBackend()).
struct BackendInfo {
  std::string name;        ///< "cpu", "cpu-unfused", "cuda"
  std::string summary;     ///< one line: what it runs on
  std::string unavailable; ///< why this machine cannot run it; empty when it can
};

/// The backends of this build and those registered, sorted by name. Asks each
/// whether it can run here (for the built-ins without making them).
std::vector<BackendInfo> knownBackends();

/// What "auto" picks here: its name and why, e.g. {"cuda", "NVIDIA H200 (sm_90, ...)"}
/// or {"cpu", "this build has no CUDA backend"}.
struct AutoChoice {
  std::string name;
  std::string reason;
};
AutoChoice autoBackend();

/// The text of the program backend `name` ("cpu", "cuda") runs for `g`, without
/// running anything (`graphc dump --lowered --target`): for cuda, the program of
/// an sm_90 device, reductions split (passes/SplitReductions.h) and Cholesky
/// solves fused (passes/CholeskySolves.h). Throws graphc::Error for "cuda" in a
/// build without the CUDA backend.
std::string printLoweredProgramFor(llvm::StringRef name, const ir::Graph& g,
                                   const passes::PlanOptions& options = {});

} // namespace graphc
