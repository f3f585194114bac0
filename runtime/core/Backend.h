//===- runtime/core/Backend.h - Backends and compiled graphs ----*- C++ -*-===//
//
// A Backend turns an ir::Graph into an Executable; an Executable runs it on Arrays.
// The Executable copies what it needs from the graph, so the graph may be destroyed
// after compile(). Executable::run checks the inputs against the graph's parameters
// (count, dtype, shape) and throws a graphc::Error naming the parameter before
// anything runs. Numeric failures at run time (a Cholesky of a matrix that is not
// positive definite, a singular solve) are graphc::Errors naming the op too.
//
//   ir::Graph g = ...;
//   std::unique_ptr<Executable> exe = getBackend("auto").compile(g);
//   std::vector<Array> outs = exe->run({a, b});
//
// Backends are found by name through a registry. "cpu" is always linked in with
// graphc_cpu; "cuda" registers itself when the CUDA backend is built; "auto" picks
// cuda when it is registered and a device is present, cpu otherwise.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "runtime/core/Array.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace graphc {

/// The signature of a graph: its parameters' names and types, its outputs' types.
struct Signature {
  std::string graphName;
  std::vector<std::string> paramNames;
  std::vector<ir::TensorType> paramTypes;
  std::vector<ir::TensorType> outputTypes;

  /// The signature of `g`.
  static Signature of(const ir::Graph& g);
  /// "@name(%x: f64[3,3], %b: f64[3,1]) -> (f64[3,1])".
  std::string str() const;
};

/// A graph compiled by a backend, ready to run any number of times.
class Executable {
public:
  explicit Executable(Signature sig) : sig_(std::move(sig)) {}
  virtual ~Executable();

  /// The parameters and results of the compiled graph.
  const Signature& signature() const { return sig_; }

  /// Runs the graph on `inputs` (one per parameter, in signature order) and returns
  /// one Array per graph output. Inputs may be strided or wrap caller memory; they are
  /// not modified. Outputs are new owning arrays that do not alias the inputs.
  /// Throws graphc::Error when an input's count, dtype or shape is wrong (naming the
  /// parameter) and when an op fails numerically (naming the op).
  std::vector<Array> run(llvm::ArrayRef<Array> inputs);

  /// The backend's name ("cpu", "cuda").
  virtual llvm::StringRef backendName() const = 0;

protected:
  /// Runs the graph on inputs already checked against the signature.
  virtual std::vector<Array> execute(llvm::ArrayRef<Array> inputs) = 0;

private:
  /// Throws unless `inputs` match the signature.
  void checkInputs(llvm::ArrayRef<Array> inputs) const;

  Signature sig_;
};

/// A way of running graphs: the CPU (loops + BLAS/LAPACK) or a GPU.
class Backend {
public:
  virtual ~Backend();
  /// "cpu", "cuda".
  virtual llvm::StringRef name() const = 0;
  /// Compiles `g`. Throws graphc::Error when the graph cannot run on this backend.
  virtual std::unique_ptr<Executable> compile(const ir::Graph& g) = 0;
};

/// Makes a backend; returns null when it cannot run here (e.g. no GPU present).
using BackendFactory = std::function<std::unique_ptr<Backend>()>;

/// Registers the backend called `name` (replacing an earlier registration). Backends
/// register themselves from a static initializer of their library.
void registerBackend(llvm::StringRef name, BackendFactory factory);

/// The backend called `name`: "cpu", "cuda", or "auto" (cuda where it is built and a
/// device is present, cpu otherwise). The backend is made once and lives until exit.
/// Throws graphc::Error for an unknown name and for "cuda" when the CUDA backend is
/// not built or no device is present.
Backend& getBackend(llvm::StringRef name);

/// The names of the registered backends, sorted.
std::vector<std::string> registeredBackends();

} // namespace graphc
