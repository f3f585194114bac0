//===- runtime/cuda/Lane.h - A stream and what a run on it needs -*- C++ -*-===//
//
// Internal to the cuda backend (runtime/cuda/CudaBackend.cpp, whose file comment
// says how lanes are used; runtime/cuda/StepEnqueue.h puts a run's work on one): a
// Lane is a stream with its own library handles and workspace, the program's slots
// and staging buffers, its check words and the pinned ring they are copied into,
// its captured run and its deferred runs' state.
// With it, the small owners of CUDA streams, events and pinned memory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/cuda/CapturedRun.h"
#include "runtime/cuda/Check.h"
#include "runtime/cuda/Library.h"
#include "runtime/cuda/Pool.h"
#include "runtime/cuda/PreparedProgram.h"
#include "runtime/cuda/RunBatch.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cuda_runtime_api.h>

#include <exception>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace graphc::cuda {

/// Runs whose checks a deferred lane's ring holds before it must wait.
constexpr size_t kRingRuns = 256;

/// Pinned host ints (device copies into them can be captured in a graph).
class PinnedInts {
public:
  explicit PinnedInts(size_t count) {
    if (count)
      GRAPHC_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&p_), count * sizeof(int)));
  }
  PinnedInts(const PinnedInts&) = delete;
  PinnedInts& operator=(const PinnedInts&) = delete;
  ~PinnedInts() {
    if (p_)
      cudaFreeHost(p_);
  }
  int* data() const { return p_; }

private:
  int* p_ = nullptr;
};

/// A non-blocking stream, waited for and destroyed with its owner.
class OwnedStream {
public:
  OwnedStream() { GRAPHC_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  ~OwnedStream() { // errors at teardown have nowhere to go
    cudaStreamSynchronize(s_);
    cudaStreamDestroy(s_);
  }
  operator cudaStream_t() const { return s_; }

private:
  cudaStream_t s_ = nullptr;
};

/// An event without timing, destroyed with its owner.
class OwnedEvent {
public:
  OwnedEvent() { GRAPHC_CUDA_CHECK(cudaEventCreateWithFlags(&e_, cudaEventDisableTiming)); }
  OwnedEvent(const OwnedEvent&) = delete;
  OwnedEvent& operator=(const OwnedEvent&) = delete;
  ~OwnedEvent() { cudaEventDestroy(e_); }
  operator cudaEvent_t() const { return e_; }

private:
  cudaEvent_t e_ = nullptr;
};

/// A stream and everything a run on it needs (see the file comment). The stream
/// is declared first: everything else is released on it before it goes.
struct Lane {
  /// The buffers, library context and ring of `prepared`, from `pool`; `paramTypes`
  /// are the program's parameters' types.
  Lane(const PreparedProgram& prepared, DevicePool& pool,
       llvm::ArrayRef<ir::TensorType> paramTypes);
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;
  ~Lane() { cudaStreamSynchronize(stream); } // before the ring and buffers go

  /// Brings the lane back to idle after a run failed on the way (e.g. out of
  /// memory): ends a capture left open, waits for what the stream has queued (so
  /// the failed run's buffers may go), and forgets the ring's runs and failure.
  void settle() noexcept;

  OwnedStream stream;
  OwnedEvent callerReady, runDone;       ///< order runs on a caller's stream
  std::optional<LibraryContext> library; ///< when the program calls the libraries
  std::vector<DeviceBuffer> slots, staging;
  DeviceBuffer checks;
  PinnedInts ring;                    ///< kRingRuns runs' check words
  std::unique_ptr<CapturedRun> graph; ///< the captured run, once made
  std::unique_ptr<RunBatch> batch;    ///< deferred runs of a oneKernel() program
  bool noGraph = false;               ///< capturing failed: run step by step
  size_t queued = 0;                  ///< runs in the ring
  std::vector<size_t> runs;           ///< the numbers of the ring's runs
  /// The first failure found so far: the run's number and its error.
  std::optional<std::pair<size_t, std::exception_ptr>> failure;
  llvm::SmallVector<ByteRange, 8> reads, writes; ///< of its deferred runs since finish
  OwnedEvent tail;                               ///< where another lane waits for it
};

} // namespace graphc::cuda
