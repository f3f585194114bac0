/*===- examples/dlpack_ctypes/graphc_dlpack.h - A C entry point ---*- C -*-===//
 *
 * libgraphc_dlpack.so runs a graphc program on DLPack tensors, for callers that
 * load it with ctypes (examples/dlpack_ctypes/run_torch.py) or dlopen. The inputs
 * are taken without copies: a tensor on CUDA device 0 is read where it is, on the
 * caller's stream, and the outputs are new device tensors in graphc's memory,
 * handed back as DLManagedTensors for torch.utils.dlpack.from_dlpack.
 *
 *   DLManagedTensor* ins[2] = {x, y};          // from torch.utils.dlpack.to_dlpack
 *   DLManagedTensor* outs[1];
 *   char error[512];
 *   if (graphc_dlpack_run(gir_text, ins, 2, outs, 1, stream, error, sizeof error))
 *     fprintf(stderr, "%s\n", error);
 *
 *===----------------------------------------------------------------------===*/
#ifndef GRAPHC_DLPACK_H
#define GRAPHC_DLPACK_H

#include <dlpack/dlpack.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Runs the first graph of `gir` (graphc's text format; compiled with the pass
 * pipeline on the cuda backend once per distinct text) on `inputs`, which must be
 * dense tensors on CUDA device 0 of the graph's parameter types, enqueued on
 * `stream` (a cudaStream_t; NULL for the legacy default stream) after the work
 * queued there so far, and waits for it. Writes `num_outputs` new tensors to
 * `outputs`; the caller calls each one's deleter once (from_dlpack does).
 *
 * The library takes every input, whether or not the call succeeds: each input's
 * deleter runs exactly once, when graphc no longer reads the tensor (at the latest
 * before this returns). Returns 0, or 1 with a message in `error` (`error_bytes`
 * long, NUL-terminated) and no outputs written. Calls from several threads run
 * one at a time. */
int graphc_dlpack_run(const char* gir, DLManagedTensor** inputs, int num_inputs,
                      DLManagedTensor** outputs, int num_outputs, void* stream, char* error,
                      size_t error_bytes);

/** How many deleters of input tensors the library has called, and how many
 * deleters of the outputs it made have been called, since the process started
 * (for checks that each ran exactly once). */
uint64_t graphc_dlpack_inputs_deleted(void);
uint64_t graphc_dlpack_outputs_deleted(void);

/** The data pointer graphc read input `i` of the last call from (for checks that
 * nothing was copied); 0 before the first call. */
uintptr_t graphc_dlpack_last_input(int i);

#ifdef __cplusplus
}
#endif

#endif /* GRAPHC_DLPACK_H */
