//===- runtime/cuda/Nccl.h - The GPUs of one process as ranks, through NCCL -*- C++ -*-===//
//
// A sharded program (passes/Shard.h) on the GPU runs rank r on GPU r of this
// process; its all_reduce steps are NCCL all-reduces on the rank's stream. NCCL is
// loaded when a communicator is first made (dlopen of the file GRAPHC_NCCL_LIBRARY
// names, else libnccl.so.2 on the library path), so that a process that never
// spans GPUs needs no NCCL. Keep NVLink multicast off where GPUs are shared
// (NCCL_NVLS_ENABLE=0): docs/sharding.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Types.h"
#include "runtime/core/Collective.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace graphc::cuda {

/// `ranks` ranks on GPUs 0 .. ranks - 1 of this process, one NCCL communicator
/// each (ncclCommInitAll). Every rank receives the same bits (NCCL's reduction
/// order is the same on every rank).
class NcclCommunicator final : public Communicator {
public:
  /// Throws graphc::Error when NCCL cannot be loaded, fewer than `ranks` GPUs are
  /// visible, or NCCL fails to set the group up.
  explicit NcclCommunicator(int ranks);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int size() const override { return ranks_; }
  bool inProcess() const override { return true; }
  /// Host arrays: `x` goes to rank `rank`'s GPU and the reduction comes back.
  Array allReduce(int rank, const Array& x, Reduction reduction) override;
  /// Aborts every rank's NCCL communicator: their pending all-reduces return and
  /// the next ones throw AbortedError until reset() makes the group anew.
  void abort(int rank) override;
  void reset() override;

  /// Enqueues rank `rank`'s all-reduce of `count` elements of type `t` from `in` to
  /// `out` (its GPU's memory; they may be the same) on `stream`, a stream of its
  /// GPU. Throws AbortedError after abort(), graphc::Error when NCCL refuses.
  void enqueue(int rank, const void* in, void* out, int64_t count, ir::DType t, Reduction reduction,
               cudaStream_t stream) const;

private:
  void initialize();
  /// Gives every communicator back by `how` (ncclCommDestroy or ncclCommAbort).
  void release(ncclResult_t (*how)(ncclComm_t));

  /// Guards comms_ and failed_: a failing rank's thread aborts the group while the
  /// others' threads enqueue (each call then runs on the communicator it read).
  mutable std::mutex mutex_;
  const int ranks_;
  std::vector<ncclComm_t> comms_; ///< by rank
  int failed_ = -1;               ///< the rank that aborted the group, or -1
};

/// The NCCL version loaded (e.g. 22809 for 2.28.9); loads it. Throws graphc::Error
/// saying what was tried when NCCL cannot be loaded.
int ncclVersion();

/// Why NCCL cannot be loaded, or "" when it can (then it is). Never throws.
std::string ncclUnavailableReason() noexcept;

} // namespace graphc::cuda
