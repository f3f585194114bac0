//===- runtime/cuda/DataMovement.h - Shape ops on the device ----*- C++ -*-===//
//
// The data-movement ops that fusion leaves as groups alone (transpose, slice,
// concat, diag, diag_part) as kernels on the device, so that a program with one
// needs no round trip through the host and can still be captured as a CUDA graph.
// Elements are moved as bytes of their size (1, 2, 4 or 8), whatever their type,
// with the helper kernels of HelperKernels.h: a strided gather (transpose, slice,
// diag_part, each concat operand) and a diagonal embedding (diag). broadcast_to
// and reshape are fused into kernels, and triu and tril are selects before
// lowering (passes/Masks.h), so they never get here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/ArrayRef.h"

#include <cuda_runtime_api.h>

namespace graphc::cuda {

/// True when enqueueMove() takes node `n`.
bool movesOnDevice(const ir::Node& n);

/// Enqueues node `n` on `stream`: its result into the dense device buffer `out`
/// from its operands, dense device buffers `inputs`. Allocates nothing and does
/// not wait.
void enqueueMove(const ir::Node& n, llvm::ArrayRef<const void*> inputs, void* out,
                 cudaStream_t stream);

} // namespace graphc::cuda
