//===- runtime/cuda/PreparedProgram.h - A program ready to enqueue -*- C++ -*-===//
//
// What every run of a cuda executable shares, made once: the lowered program
// (passes/MemoryPlan.h), each step ready to enqueue (a loaded fused kernel, a
// library call, or nodes to run on the host), where each step finds its buffers in
// a run, the constants, and the layout of a run's check words (the library calls'
// info words and the kernels' error words). The executor (CudaBackend.cpp) runs it
// on lanes.
//
// Where values live (Source): fused kernels read and write the caller's buffers
// directly (an output a fused kernel writes, and that no library or host step reads,
// is written straight into the caller's array); library calls see only memory that
// stays put from run to run, because a captured CUDA graph keeps their pointers: a
// parameter a library call reads is first copied into a staging buffer of the lane,
// and an output no fused kernel writes is copied from its slot at the end of the run.
// A program whose library calls read more than 16 MB of parameters is not captured:
// the calls read the parameters in place.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/MemoryPlan.h"
#include "passes/Program.h"
#include "runtime/core/Backend.h"
#include "runtime/cuda/FusedKernel.h"
#include "runtime/cuda/Library.h"
#include "runtime/cuda/Nccl.h"
#include "runtime/cuda/Pool.h"
#include "runtime/cuda/SmallBatched.h"

#include <cuda_runtime_api.h>

#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace graphc::cuda {

/// A step that runs on the host: its one-node graph compiled on the cpu backend.
struct HostStep {
  std::unique_ptr<ir::Graph> graph;
  std::unique_ptr<Executable> exe;
};

/// Where a step finds one of its values in a run.
struct Source {
  enum Kind : uint8_t {
    Param,    ///< the caller's input `index`
    Staged,   ///< the lane's staging buffer `index`, a copy of input staged()[index]
    Constant, ///< constant `index`
    Slot,     ///< the lane's slot `index`
    Output,   ///< the caller's output `index`
  } kind;
  int index;
};

/// One step, ready to enqueue.
struct PreparedStep {
  enum class How {
    Kernel,        ///< a fused kernel
    Library,       ///< a cuBLAS/cuSOLVER call (Library.h)
    Move,          ///< a data-movement op on the device (DataMovement.h)
    Host,          ///< nodes run on the host
    CholeskySolve, ///< a Cholesky and the two solves with its factor, in one kernel
                   ///< (and the steps forming its matrix: passes/CholeskySolves.h)
    Collective,    ///< an all_reduce through the rank's NCCL communicator (Nccl.h)
  } how;
  const passes::Step* step;
  /// The values it reads and writes, in the order its kernel or call takes them.
  std::vector<ir::Value> inputs, outputs;
  std::vector<Source> ins, outs; ///< where `inputs` and `outputs` are in a run
  std::unique_ptr<CudaFusedKernel> kernel;
  std::vector<HostStep> host; ///< one per node
  int64_t checkOffset = -1;   ///< its info words or error word in the check words
  /// A batched library or CholeskySolve step: its info words (infoCount of them,
  /// after the check words, never copied back) and, at checkOffset, their summary
  /// (HelperKernels::summarizeInfo). Else -1: its info words are the check words
  /// (so are a chosen Cholesky's, for batches of up to 1024 items; a larger one's
  /// are fetched from the device when its summary reports a failure).
  int64_t infoOffset = -1, infoCount = 0;
  KernelLaunch solve; ///< a CholeskySolve's launch, without its buffers

  /// True when the step is one kernel launch that reads and writes the caller's
  /// buffers: a captured run's node for it is pointed at each run's buffers.
  bool rebound() const { return how == How::Kernel || how == How::CholeskySolve; }
};

/// An output that no fused kernel writes in place: copied from `from` at the end.
struct OutputCopy {
  int output;
  Source from;
  int64_t bytes;
};

/// The graph the GPU lowers for `g`'s live part: triangular masks as selects
/// (passes/Masks.h), which fuse, and reductions of few outputs split
/// (passes/SplitReductions.h).
std::unique_ptr<ir::Graph> graphForGpu(const ir::Graph& g);

/// The program the GPU runs for graphForGpu's graph: fusion,
/// the Cholesky solves `target`'s kernels take in one step each
/// (passes/CholeskySolves.h), the memory plan. Needs no device: `graphc dump
/// --lowered --target=cuda` prints it for sm_90.
passes::Program lowerForGpu(const ir::Graph& g, const codegen::CudaTarget& target,
                            const passes::PlanOptions& options = {});

/// A lowered program prepared for the GPU (see the file comment).
class PreparedProgram {
public:
  /// Lowers a copy of `g`, compiles its kernels (in parallel, through the kernel
  /// cache) and plans where each step finds its buffers. With `nccl`, `g` is rank
  /// `rank`'s program of a sharded run: its all_reduce steps meet the other ranks
  /// there (without, an all_reduce is the identity of a program of one rank).
  explicit PreparedProgram(const ir::Graph& g, std::shared_ptr<NcclCommunicator> nccl = nullptr,
                           int rank = 0);
  PreparedProgram(const PreparedProgram&) = delete;
  PreparedProgram& operator=(const PreparedProgram&) = delete;

  /// Makes the constants in `pool`'s memory on `stream` (fills and identities on
  /// the device, others on the host); synchronous.
  void uploadConstants(DevicePool& pool, cudaStream_t stream);
  /// True when a step is a cuBLAS or cuSOLVER call (a lane then needs a LibraryContext).
  bool callsLibrary() const;
  /// Gives the constants' memory back (before the stream they were made on goes).
  void releaseConstants() { constants_.clear(); }

  const ir::Graph& graph() const { return *graph_; }
  const passes::Program& program() const { return program_; }
  const std::vector<PreparedStep>& steps() const { return steps_; }
  /// The parameters library calls read, copied into a lane's staging buffers.
  const std::vector<int>& staged() const { return staged_; }
  /// The outputs copied at the end of a run.
  const std::vector<OutputCopy>& copies() const { return copies_; }
  void* constant(int i) const { return constants_[i].data(); }
  /// Ints of check words per run: copied back and decoded by failureOf().
  int64_t checkWords() const { return checkWords_; }
  /// Ints of the words a run's steps write on the device: the check words, then
  /// the batched steps' info words (summarized into check words).
  int64_t deviceWords() const { return checkWords_ + infoWords_; }
  /// Where step `p` writes its info words, among the device words.
  int64_t infoWord(const PreparedStep& p) const {
    return p.infoOffset >= 0 ? checkWords_ + p.infoOffset : p.checkOffset;
  }
  /// True when a run can be captured as a CUDA graph: no host or collective steps,
  /// no kernel that always fails, at most 16 MB of parameters to stage.
  bool capturable() const { return capturable_; }
  /// How each step runs, in order, e.g. "Move Kernel CholeskySolve".
  std::string hows() const;
  /// True when the program is one fused kernel reading and writing the caller's
  /// buffers and nothing else: deferred runs of it share launches (RunBatch).
  bool oneKernel() const;

  /// The launch of CholeskySolve step `p`: its output from its inputs, the
  /// Cholesky's info words into `info`.
  KernelLaunch choleskySolveLaunch(const PreparedStep& p, llvm::ArrayRef<const void*> ins,
                                   void* out, int* info) const;
  /// Enqueues Collective step `p` from `in` to `out` on `stream`.
  void enqueueAllReduce(const PreparedStep& p, const void* in, void* out,
                        cudaStream_t stream) const;

  /// The first failure one run's check words report, or null: the CPU backend's
  /// Error, or a FallbackError for failed {fallback} Choleskies (naming their
  /// failed items when the info words of each item came back, or `deviceInfo`
  /// fetches those a summary stands for, and nothing else failed after them).
  /// `deviceInfo(p)` gives step p's infoCount info words of this run, or nothing
  /// when the device no longer holds them.
  using DeviceInfo = std::function<std::optional<std::vector<int>>(const PreparedStep&)>;
  std::exception_ptr failureOf(const int* words, const DeviceInfo& deviceInfo = {}) const;

private:
  void prepareSteps();
  /// Reserves the check words (and info words) of step `p`, whose library call or
  /// Cholesky is `call`.
  void reserveInfo(PreparedStep& p, const ir::Node& call);
  /// Decides where each step finds its buffers (see the file comment).
  void planBindings();

  std::unique_ptr<ir::Graph> graph_;
  passes::Program program_;
  std::vector<PreparedStep> steps_;
  std::vector<int> staged_;
  std::vector<OutputCopy> copies_;
  std::vector<DeviceBuffer> constants_;
  std::optional<SmallBatched> small_;      ///< made when a CholeskySolve step needs it
  std::shared_ptr<NcclCommunicator> nccl_; ///< where the Collective steps meet
  int rank_ = 0;
  int64_t checkWords_ = 0, infoWords_ = 0;
  bool capturable_ = true;
};

} // namespace graphc::cuda
