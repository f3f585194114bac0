//===- frontend/Eval.h - Evaluating lazy tensors ----------------*- C++ -*-===//
//
// Eager-looking code records graphs; they run when a value is needed. The graph
// that computes the requested tensors from their data is cut out (dead code and
// already-computed parts dropped), compiled on the default backend and run. Compiled
// programs are cached by graph structure (ir::Graph::hash + ir::structurallyEqual),
// so a loop that builds the same expression on new data compiles it once. The cache
// is shared with jit (frontend/Jit.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/Tensor.h"
#include "runtime/Backends.h"
#include "runtime/core/Backend.h"

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace graphc {

/// Compiled programs, keyed by backend and graph structure.
class ProgramCache {
public:
  /// The process-wide cache used by eval() and jit().
  static ProgramCache& global();

  /// A compiled graph.
  struct Program {
    std::string backend;
    std::unique_ptr<ir::Graph> graph;
    std::unique_ptr<Executable> exe;
  };

  /// The program for `g` on `backend`, compiling (and keeping `g`) on a miss.
  std::shared_ptr<const Program> get(std::unique_ptr<ir::Graph> g, Backend& backend);

  /// Number of compilations so far (misses).
  size_t compileCount() const;
  /// Number of lookups that found a compiled program.
  size_t hitCount() const;
  /// Drops every program.
  void clear();

private:
  mutable std::mutex mutex_;
  std::unordered_multimap<size_t, std::shared_ptr<const Program>> entries_;
  size_t compiles_ = 0, hits_ = 0;
};

/// Selects the backend eager evaluation and jit use: "cpu", "cuda" or "auto" (the
/// default, overridden by the environment variable GRAPHC_BACKEND).
void setDefaultBackend(std::string name);
/// The backend selected by setDefaultBackend().
Backend& defaultBackend();

/// Evaluates several tensors with one program (e.g. all results of lu()).
void evalAll(llvm::ArrayRef<Tensor> ts, SrcLoc loc = SrcLoc::current());

} // namespace graphc
