//===- runtime/cuda/kernels/Slots.cuh - A thread's place in a batch -===//
//
// The kernels of SmallBatched's module work on a group of blockDim.x threads per
// matrix, blockDim.y matrices per block.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Common.cuh"

// The calling thread's place: thread `tid` of the `nt` threads of batch item `b`
// (blockDim.y items a block, one per threadIdx.y); `present` is false for the
// padding items of the last block, which still reach every __syncthreads().
struct Slot {
  int tid, nt;
  i64 b;
  bool present;
};

__device__ Slot thisSlot(i64 batch) {
  Slot g;
  g.tid = threadIdx.x;
  g.nt = blockDim.x;
  g.b = blockIdx.x * (i64)blockDim.y + threadIdx.y;
  g.present = g.b < batch;
  return g;
}

// Calls store(t, load(t)) for t = tid, tid + nt, ... < count, four loads ahead of
// their stores, so that a thread has four global loads in flight rather than
// waiting out each one's latency in turn.
template <typename T, typename Load, typename Store>
__device__ void stage(int count, const Slot& g, Load load, Store store) {
  for (int t0 = g.tid; t0 < count; t0 += 4 * g.nt) {
    T v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (t0 + u * g.nt < count)
        v[u] = load(t0 + u * g.nt);
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (t0 + u * g.nt < count)
        store(t0 + u * g.nt, v[u]);
  }
}
