//===- runtime/cuda/StepEnqueue.cpp - One run's steps on a lane's stream --===//
//
// The order of a run's work on the stream: check words zeroed, staged inputs
// copied, the steps in the program's order (each between two profile marks when
// the steps are timed), then the outputs and check words copied. A capture
// records the kernels and copies in the same order, so that rebind() finds node
// `id` where enqueue() put it.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/StepEnqueue.h"

#include "runtime/cuda/Check.h"
#include "runtime/cuda/DataMovement.h"
#include "runtime/cuda/Device.h"

#include <map>
#include <utility>
#include <vector>

namespace graphc::cuda {

using ir::Value;

StepEnqueuer::StepEnqueuer(const PreparedProgram& prepared,
                           llvm::ArrayRef<ir::TensorType> paramTypes, StepProfile* profile)
    : prepared_(prepared), paramTypes_(paramTypes), profile_(profile) {
  for (const PreparedStep& p : prepared_.steps())
    if (p.infoOffset >= 0) {
      ScopedDevice on(0);
      helpers_ = &HelperKernels::forCurrentDevice();
    }
}

void* StepEnqueuer::resolve(const Lane& lane, const RunBuffers& b, Source s) const {
  switch (s.kind) {
  case Source::Param:
    return const_cast<void*>(b.params[s.index]);
  case Source::Staged:
    return lane.staging[s.index].data();
  case Source::Constant:
    return prepared_.constant(s.index);
  case Source::Slot:
    return lane.slots[s.index].data();
  case Source::Output:
    return b.outputs[s.index];
  }
  return nullptr;
}

llvm::SmallVector<const void*, 4> StepEnqueuer::resolveAll(const Lane& lane, const RunBuffers& b,
                                                           llvm::ArrayRef<Source> sources) const {
  llvm::SmallVector<const void*, 4> buffers;
  for (Source s : sources)
    buffers.push_back(resolve(lane, b, s));
  return buffers;
}

KernelCall StepEnqueuer::kernelCall(const Lane& lane, const RunBuffers& b,
                                    const PreparedStep& p) const {
  KernelCall c{{}, {}, p.checkOffset >= 0 ? lane.checks.as<int>() + p.checkOffset : nullptr};
  for (Source s : p.ins)
    c.ins.push_back(resolve(lane, b, s));
  for (Source s : p.outs)
    c.outs.push_back(resolve(lane, b, s));
  return c;
}

KernelLaunch StepEnqueuer::choleskySolveLaunch(const Lane& lane, const RunBuffers& b,
                                               const PreparedStep& p) const {
  return prepared_.choleskySolveLaunch(p, {resolve(lane, b, p.ins[0]), resolve(lane, b, p.ins[1])},
                                       resolve(lane, b, p.outs[0]),
                                       lane.checks.as<int>() + prepared_.infoWord(p));
}

template <typename F>
void StepEnqueuer::forEachCopy(const Lane& lane, const RunBuffers& b, size_t ringSlot,
                               F&& f) const {
  size_t id = 0;
  const std::vector<int>& staged = prepared_.staged();
  for (size_t i = 0; i < staged.size(); ++i, ++id)
    f(id, lane.staging[i].data(), b.params[staged[i]], paramTypes_[staged[i]].bytes(),
      cudaMemcpyDeviceToDevice);
  for (const OutputCopy& c : prepared_.copies()) {
    f(id++, b.outputs[c.output], resolve(lane, b, c.from), c.bytes, cudaMemcpyDeviceToDevice);
  }
  if (int64_t words = prepared_.checkWords())
    f(id, lane.ring.data() + ringSlot * words, lane.checks.data(), words * int64_t{sizeof(int)},
      cudaMemcpyDeviceToHost);
}

void StepEnqueuer::enqueue(Lane& lane, const RunBuffers& b, size_t ringSlot,
                           CapturedRun* record) const {
  if (int64_t words = prepared_.deviceWords())
    GRAPHC_CUDA_CHECK(cudaMemsetAsync(lane.checks.data(), 0, words * sizeof(int), lane.stream));
  bool inputsCopied = false; // staged inputs before the steps, the rest after
  auto copy = [&](size_t id, void* dst, const void* src, int64_t bytes, cudaMemcpyKind kind) {
    if (bytes == 0 || (id < prepared_.staged().size()) == inputsCopied)
      return;
    copyAsync(dst, src, bytes, kind, lane.stream);
    if (record)
      record->recordCopy(id, dst, src, bytes, kind, lane.stream);
  };
  forEachCopy(lane, b, ringSlot, copy);
  inputsCopied = true;
  size_t kernelId = 0, stepId = 0;
  for (const PreparedStep& p : prepared_.steps()) {
    if (profile_)
      profile_->mark(stepId++, lane.stream);
    switch (p.how) {
    case PreparedStep::How::Kernel: {
      KernelCall c = kernelCall(lane, b, p);
      KernelLaunch l = p.kernel->launchOf(c.ins, c.outs, c.errorWord);
      l.enqueue(lane.stream);
      if (record)
        record->recordKernel(kernelId, l, lane.stream);
      ++kernelId;
      break;
    }
    case PreparedStep::How::Library:
      runLibrary(lane, b, p);
      summarizeInfo(lane, p);
      break;
    case PreparedStep::How::Move:
      enqueueMove(*p.step->nodes.front(), resolveAll(lane, b, p.ins), resolve(lane, b, p.outs[0]),
                  lane.stream);
      break;
    case PreparedStep::How::Host:
      runOnHost(lane, b, p);
      break;
    case PreparedStep::How::Collective:
      prepared_.enqueueAllReduce(p, resolve(lane, b, p.ins[0]), resolve(lane, b, p.outs[0]),
                                 lane.stream);
      break;
    case PreparedStep::How::CholeskySolve: {
      KernelLaunch l = choleskySolveLaunch(lane, b, p);
      l.enqueue(lane.stream);
      if (record)
        record->recordKernel(kernelId, l, lane.stream);
      ++kernelId;
      summarizeInfo(lane, p);
      break;
    }
    }
  }
  if (profile_)
    profile_->mark(stepId, lane.stream);
  forEachCopy(lane, b, ringSlot, copy);
}

void StepEnqueuer::rebind(Lane& lane, const RunBuffers& b, size_t ringSlot) const {
  size_t kernelId = 0;
  for (const PreparedStep& p : prepared_.steps())
    if (p.how == PreparedStep::How::Kernel) {
      KernelCall c = kernelCall(lane, b, p);
      lane.graph->bindKernel(kernelId++, p.kernel->arguments(c.ins, c.outs, c.errorWord));
    } else if (p.how == PreparedStep::How::CholeskySolve) {
      lane.graph->bindKernel(kernelId++, choleskySolveLaunch(lane, b, p).args);
    }
  forEachCopy(lane, b, ringSlot,
              [&](size_t id, void* dst, const void* src, int64_t bytes, cudaMemcpyKind) {
                if (bytes > 0)
                  lane.graph->bindCopy(id, dst, src);
              });
}

void StepEnqueuer::runLibrary(Lane& lane, const RunBuffers& b, const PreparedStep& p) const {
  llvm::SmallVector<const void*, 4> ins = resolveAll(lane, b, p.ins);
  llvm::SmallVector<void*, 4> outs;
  for (Source s : p.outs)
    outs.push_back(resolve(lane, b, s));
  lane.library->run(*p.step->nodes.front(), ins, outs,
                    lane.checks.as<int>() + prepared_.infoWord(p), p.step->unread);
}

void StepEnqueuer::summarizeInfo(Lane& lane, const PreparedStep& p) const {
  if (p.infoOffset >= 0)
    helpers_->summarizeInfo(p.infoCount, lane.checks.as<int>() + prepared_.infoWord(p),
                            lane.checks.as<int>() + p.checkOffset, lane.stream);
}

void StepEnqueuer::runOnHost(Lane& lane, const RunBuffers& b, const PreparedStep& p) const {
  const passes::Step& s = *p.step;
  std::map<std::pair<const ir::Node*, unsigned>, Array> local;
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    Value v = s.inputs[i];
    Array a = Array::empty(v.type().dtype, v.type().shape);
    copyAsync(a.rawData(), resolve(lane, b, p.ins[i]), v.type().bytes(), cudaMemcpyDeviceToHost,
              lane.stream);
    local[{v.node, v.index}] = a;
  }
  GRAPHC_CUDA_CHECK(cudaStreamSynchronize(lane.stream));
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const ir::Node& n = *s.nodes[i];
    std::vector<Array> operands;
    for (Value v : n.operands())
      operands.push_back(local.at({v.node, v.index}));
    std::vector<Array> results = p.host[i].exe->run(operands);
    for (unsigned r = 0; r < results.size(); ++r)
      local[{&n, r}] = results[r];
  }
  for (size_t i = 0; i < s.outputs.size(); ++i) {
    Value v = s.outputs[i];
    Array a = local.at({v.node, v.index}).contiguous();
    copyAsync(resolve(lane, b, p.outs[i]), a.rawData(), v.type().bytes(), cudaMemcpyHostToDevice,
              lane.stream);
    GRAPHC_CUDA_CHECK(cudaStreamSynchronize(lane.stream)); // `a` dies here
  }
}

} // namespace graphc::cuda
