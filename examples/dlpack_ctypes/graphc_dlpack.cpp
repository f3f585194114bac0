//===- examples/dlpack_ctypes/graphc_dlpack.cpp - A C entry point ---------===//
//
// graphc_dlpack_run (graphc_dlpack.h): the inputs become Arrays over the caller's
// device memory (fromDLPack, no copy), the graph is compiled once per text with
// graphc::compile on the cuda backend, the run is enqueued on the caller's stream
// into new device outputs and waited for, and the outputs leave as DLPack tensors
// (toDLPack, no copy). Every tensor that passes through gets a counting deleter,
// so a caller can check that each deleter ran exactly once.
//
//===----------------------------------------------------------------------===//
#include "graphc_dlpack.h"

#include "ir/Parser.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
#include "runtime/core/DLPack.h"

#include <fmt/format.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

using namespace graphc;

std::atomic<uint64_t> inputsDeleted{0}, outputsDeleted{0};

/// A DLManagedTensor that counts its deleter's calls, then calls `inner`'s.
struct Counted {
  DLManagedTensor tensor;
  DLManagedTensor* inner;
  std::atomic<uint64_t>* count;
};

void deleteCounted(DLManagedTensor* self) {
  auto* c = static_cast<Counted*>(self->manager_ctx);
  ++*c->count;
  if (c->inner->deleter)
    c->inner->deleter(c->inner);
  delete c;
}

/// `inner` behind a counting deleter (null for null).
DLManagedTensor* counted(DLManagedTensor* inner, std::atomic<uint64_t>& count) {
  if (!inner)
    return nullptr;
  auto* c = new Counted{{inner->dl_tensor, nullptr, deleteCounted}, inner, &count};
  c->tensor.manager_ctx = c;
  return &c->tensor;
}

/// The graphs compiled so far, by text, and the last call's input pointers.
struct Compiled {
  std::mutex runs; ///< one run at a time: enqueue() and finish() belong to one thread
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<OptimizedExecutable>> byText;
  std::vector<uintptr_t> lastInputs;
};

Compiled& compiled() {
  static auto* c = new Compiled(); // never destroyed: the CUDA runtime may be gone at exit
  return *c;
}

/// The executable of the first graph of `gir`, compiled on first use.
OptimizedExecutable& executableOf(const std::string& gir) {
  Compiled& c = compiled();
  std::lock_guard<std::mutex> lock(c.mutex);
  std::unique_ptr<OptimizedExecutable>& exe = c.byText[gir];
  if (!exe)
    exe = compile(*ir::parseGraph(gir, "<graphc_dlpack_run>"), getBackend("cuda"));
  return *exe;
}

/// Runs the graph on the tensors in `pending`, which it takes one by one (each
/// entry it takes becomes null).
void run(const std::string& gir, std::vector<DLManagedTensor*>& pending, DLManagedTensor** outputs,
         int numOutputs, void* stream) {
  std::lock_guard<std::mutex> one(compiled().runs);
  std::vector<Array> ins;
  for (DLManagedTensor*& t : pending) {
    ins.push_back(fromDLPack(t));
    t = nullptr;
  }
  for (size_t i = 0; i < ins.size(); ++i)
    if (ins[i].device() != Device::Cuda)
      throw Error(fmt::format("graphc_dlpack_run: input {} is in host memory; it takes tensors "
                              "on CUDA device 0",
                              i));
  OptimizedExecutable& exe = executableOf(gir);
  const Signature& sig = exe.signature();
  if (numOutputs != static_cast<int>(sig.outputTypes.size()))
    throw Error(fmt::format("@{} has {} outputs; {} were asked for", sig.graphName,
                            sig.outputTypes.size(), numOutputs));
  std::vector<Array> outs;
  for (size_t i = 0; i < sig.outputTypes.size(); ++i)
    outs.push_back(exe.newOutput(i));
  exe.enqueue(ins, outs, stream);
  exe.finish();
  {
    Compiled& c = compiled();
    std::lock_guard<std::mutex> lock(c.mutex);
    c.lastInputs.clear();
    for (const Array& a : ins)
      c.lastInputs.push_back(reinterpret_cast<uintptr_t>(a.rawData()));
  }
  for (size_t i = 0; i < outs.size(); ++i)
    outputs[i] = counted(toDLPack(outs[i]), outputsDeleted);
}

} // namespace

extern "C" int graphc_dlpack_run(const char* gir, DLManagedTensor** inputs, int num_inputs,
                                 DLManagedTensor** outputs, int num_outputs, void* stream,
                                 char* error, size_t error_bytes) {
  std::vector<DLManagedTensor*> pending;
  for (int i = 0; i < num_inputs && inputs; ++i)
    pending.push_back(counted(inputs[i], inputsDeleted));
  try {
    if (!gir || !outputs || num_outputs < 0)
      throw Error("graphc_dlpack_run: no graph text or no outputs array");
    run(gir, pending, outputs, num_outputs, stream);
    return 0;
  } catch (const std::exception& e) {
    for (DLManagedTensor* t : pending) // the ones fromDLPack did not take
      if (t)
        t->deleter(t);
    if (error && error_bytes)
      std::snprintf(error, error_bytes, "%s", e.what());
    return 1;
  }
}

extern "C" uint64_t graphc_dlpack_inputs_deleted(void) {
  return inputsDeleted.load();
}

extern "C" uint64_t graphc_dlpack_outputs_deleted(void) {
  return outputsDeleted.load();
}

extern "C" uintptr_t graphc_dlpack_last_input(int i) {
  Compiled& c = compiled();
  std::lock_guard<std::mutex> lock(c.mutex);
  return i >= 0 && static_cast<size_t>(i) < c.lastInputs.size() ? c.lastInputs[i] : 0;
}
