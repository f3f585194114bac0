//===- runtime/core/Backend.h - Backends and compiled graphs ----*- C++ -*-===//
//
// A Backend turns an ir::Graph into an Executable: a prepared program whose
// kernels are compiled and whose buffers are planned. The Executable copies what it
// needs from the graph, so the graph may be destroyed after compile(). Every way of
// running checks the arrays against the graph's signature (count, dtype, shape)
// and throws a graphc::Error naming the parameter before anything runs. Numeric
// failures at run time (a Cholesky of a matrix that is not positive definite, a
// singular solve) are graphc::Errors naming the op too.
//
//   std::unique_ptr<Executable> exe = getBackend("auto").compile(g); // runtime/Backends.h
//   std::vector<Array> outs = exe->run({a, b});   // allocates the outputs
//   exe->run({a, b}, {out});                      // into the caller's arrays
//   for (int k = 0; k < 100; ++k)
//     exe->enqueue({a[k], b[k]}, {out[k]});       // returns at once
//   exe->finish();                                // one wait for all 100
//
// Runs into the caller's arrays take arrays in the backend's memory (host arrays
// for cpu, device arrays for cuda). A backend that cannot run asynchronously runs
// an enqueued call at once and keeps its error for finish(). run() may be called
// from several threads at once; enqueue() and finish() belong to one thread at a
// time.
//
// Backends are found by name with getBackend() (runtime/Backends.h, library
// graphc_backends), which knows every backend of the build.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "runtime/core/Array.h"
#include "runtime/core/Collective.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <exception>
#include <memory>
#include <optional>
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

  /// Runs the graph on `inputs` into `outputs`: dense arrays of the output types in
  /// the backend's memory, none overlapping an input. A prepared program allocates
  /// nothing and waits once, at the end. Throws like run(inputs), and when an
  /// output is missing, of the wrong type, strided, in the wrong memory or overlaps
  /// an input.
  void run(llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs);

  /// Like run(inputs, outputs), but returns as soon as the run is queued. The
  /// arrays must stay alive and unchanged (the outputs unread) until finish().
  /// Runs execute in the order they were enqueued. With a `stream` (a cudaStream_t
  /// of the current device on the cuda backend; other backends take none), the run
  /// is also ordered on the caller's stream: it starts after the work queued there
  /// so far, and work queued there afterwards sees its outputs.
  void enqueue(llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs, void* stream = nullptr);

  /// Waits once for every run enqueued since the last finish(). Throws the first
  /// failure as a graphc::Error that names the run ("run 3 of 100 enqueued: ...").
  void finish();

  /// The backend's name ("cpu", "cuda").
  virtual llvm::StringRef backendName() const = 0;
  /// The memory of the arrays that runs into the caller's outputs take.
  virtual Device device() const { return Device::Host; }

  /// A dense copy of host array `a` in device() memory (`a` itself when it is
  /// dense host memory and device() is the host): a caller's explicit upload.
  virtual Array toDevice(const Array& a) const { return a.contiguous(); }
  /// A host copy of `a`, an array in device() memory: a caller's explicit download.
  virtual Array toHost(const Array& a) const { return a; }
  /// A new array for output `i` in device() memory, uninitialized.
  virtual Array newOutput(size_t i) const;

protected:
  /// A failure of a deferred run: its index since the last finish(), and the error.
  struct RunFailure {
    size_t run;
    std::exception_ptr error;
  };

  /// Runs the graph on inputs already checked against the signature.
  virtual std::vector<Array> execute(llvm::ArrayRef<Array> inputs) = 0;
  /// Runs into checked outputs. By default: execute(), then a copy into `outputs`.
  virtual void executeInto(llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs);
  /// Queues run number `run` since the last finish, ordered on `stream` if given.
  /// By default it runs at once and a failure is kept for finishRuns(); a stream is
  /// an error.
  virtual void enqueueRun(size_t run, llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs,
                          void* stream);
  /// Waits for the queued runs; returns the first failure, if any.
  virtual std::optional<RunFailure> finishRuns();

  friend class OptimizedExecutable; // forwards the protected hooks to its programs

private:
  /// Throws unless `inputs` match the signature.
  void checkInputs(llvm::ArrayRef<Array> inputs) const;
  /// Throws unless `inputs` and `outputs` match the signature, are in device()
  /// memory, and no output is strided or overlaps an input.
  void checkInOut(llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs) const;

  Signature sig_;
  size_t enqueued_ = 0;            ///< runs enqueued since the last finish()
  std::optional<RunFailure> kept_; ///< the default enqueueRun's first failure
};

/// A way of running graphs: the CPU (loops + BLAS/LAPACK) or a GPU.
class Backend {
public:
  virtual ~Backend();
  /// "cpu", "cuda".
  virtual llvm::StringRef name() const = 0;
  /// Compiles `g`. Throws graphc::Error when the graph cannot run on this backend.
  virtual std::unique_ptr<Executable> compile(const ir::Graph& g) = 0;
  /// Compiles `g` as the program of rank `rank.rank` of a sharded run
  /// (passes/Shard.h): its all_reduce steps meet the other ranks through
  /// `rank.comm`. By default one rank compiles as compile() does (an all_reduce over
  /// one rank is the identity) and more throw graphc::Error: the backend runs no
  /// collectives.
  virtual std::unique_ptr<Executable> compileRank(const ir::Graph& g, const RankOf& rank);
  /// Where `ranks` ranks of this backend's sharded programs meet. By default one
  /// rank (a host communicator of one) and more throw graphc::Error, as
  /// compileRank() does.
  virtual std::shared_ptr<Communicator> communicator(int ranks);
};

} // namespace graphc
