//===- runtime/cpu/CompiledKernel.cpp - A kernel as machine code ----------===//
#include "runtime/cpu/CompiledKernel.h"

#include "runtime/cpu/HostJit.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>

namespace graphc::cpu {

using codegen::CpuLoop;
using codegen::CpuSlots;
using codegen::Inst;
using codegen::Space;

CompiledKernel::CompiledKernel(const codegen::Kernel& k) : code_(codegen::emitCpu(k, "k")) {
  std::string why;
  HostJit* jit = HostJit::get(&why);
  if (!jit)
    throw Error("cpu kernels: LLVM cannot compile for this machine: " + why);
  std::vector<std::string> names;
  auto add = [&](const CpuLoop& l) {
    if (l)
      names.push_back(l.function);
  };
  for (const codegen::CpuStage& s : code_.stages) {
    add(s.accumulate);
    add(s.means);
    add(s.deviations);
    add(s.finish);
  }
  add(code_.outputs);
  std::vector<void*> addresses = jit->load(code_.ir, names);
  size_t next = 0;
  auto take = [&](const CpuLoop& l) {
    return l ? reinterpret_cast<Function>(addresses[next++]) : nullptr;
  };
  for (const codegen::CpuStage& s : code_.stages) {
    Stage st;
    st.accumulate = take(s.accumulate);
    st.means = take(s.means);
    st.deviations = take(s.deviations);
    st.finish = take(s.finish);
    stages_.push_back(st);
  }
  outputs_ = take(code_.outputs);
}

/// Per output of `k`, whether it can be its reduced value's buffer: a reduced
/// output, the only one of its instruction, that overlaps no input (the domain
/// outputs, written last, may still read an input it is written over; otherwise it
/// is copied from the value's scratch at the end).
static std::vector<bool> directOutputs(const codegen::Kernel& k, llvm::ArrayRef<const void*> inputs,
                                       llvm::ArrayRef<void*> outputs) {
  std::vector<bool> direct(k.outputs.size(), false);
  for (size_t o = 0; o < k.outputs.size(); ++o) {
    const codegen::KernelOutput& out = k.outputs[o];
    if (out.space != Space::Reduced)
      continue;
    auto begin = static_cast<const char*>(outputs[o]);
    const char* end = begin + out.value.type().numel() * ir::dtypeSize(k.insts[out.inst].dtype);
    bool alone = true;
    for (size_t p = 0; p < k.outputs.size(); ++p)
      alone = alone && (p == o || k.outputs[p].inst != out.inst);
    for (size_t i = 0; i < inputs.size() && alone; ++i) {
      auto in = static_cast<const char*>(inputs[i]);
      const char* inEnd = in + k.inputs[i].type().numel() * ir::dtypeSize(k.inputs[i].type().dtype);
      alone = inEnd <= begin || end <= in;
    }
    direct[o] = alone;
  }
  return direct;
}

int64_t CompiledKernel::parts(const codegen::Kernel& k) const {
  if (!code_.partials)
    return 1;
  int64_t points = ir::numElements(k.domain);
  int64_t segments = std::max<int64_t>(code_.segments, 1);
  int64_t p = std::clamp<int64_t>(points >> 17, 1, 64);
  p = std::min(p, std::max<int64_t>(1, (int64_t{1} << 16) / segments));
  for (const codegen::CpuStage& s : code_.stages)
    for (const CpuLoop* l : {&s.accumulate, &s.deviations})
      if (*l)
        p = std::min(p, std::max<int64_t>(l->extent, 1));
  return p;
}

void CompiledKernel::run(const codegen::Kernel& k, const std::vector<Step>& steps,
                         llvm::ArrayRef<const void*> inputs, llvm::ArrayRef<void*> outputs,
                         const ParallelFor& parallel) const {
  const CpuSlots& slots = code_.slots;
  int64_t segments = std::max<int64_t>(code_.segments, 1), parts = this->parts(k);
  std::vector<void*> table(slots.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i)
    table[slots.input(i)] = const_cast<void*>(inputs[i]);
  for (size_t o = 0; o < outputs.size(); ++o)
    table[slots.output(o)] = outputs[o];

  // Scratch: the reduced values, and per part the accumulators (uninitialized: each
  // is written before it is read, or filled here).
  std::vector<std::unique_ptr<uint64_t[]>> scratch;
  auto alloc = [&](int64_t bytes) -> void* {
    scratch.emplace_back(new uint64_t[static_cast<size_t>((bytes + 7) / 8)]);
    return scratch.back().get();
  };
  std::vector<bool> direct = directOutputs(k, inputs, outputs);
  std::vector<std::pair<int, int64_t>> partSlots; // (slot, bytes per part)
  for (size_t o = 0; o < k.outputs.size(); ++o)
    if (direct[o])
      table[slots.of(CpuSlots::Reduced, k.outputs[o].inst)] = outputs[o];
  for (size_t i = 0; i < k.insts.size(); ++i) {
    if (k.insts[i].space == Space::Reduced && !table[slots.of(CpuSlots::Reduced, i)])
      table[slots.of(CpuSlots::Reduced, i)] = alloc(segments * ir::dtypeSize(k.insts[i].dtype));
    const std::optional<codegen::CpuAccumulator>& a = code_.accumulators[i];
    if (!a || code_.stages[k.insts[i].stage - 1].finishedByAccumulate)
      continue; // the accumulate function's own buffers
    int64_t size = ir::dtypeSize(a->value);
    void* value = table[slots.of(CpuSlots::Value, i)] = alloc(parts * segments * size);
    visitDType(a->value, [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::fill_n(static_cast<T*>(value), parts * segments, fromDouble<T>(a->init));
    });
    partSlots.emplace_back(slots.of(CpuSlots::Value, i), segments * size);
    if (a->position) {
      void* pos = table[slots.of(CpuSlots::Position, i)] = alloc(parts * segments * 8);
      std::fill_n(static_cast<int64_t*>(pos), parts * segments, -1);
      partSlots.emplace_back(slots.of(CpuSlots::Position, i), segments * 8);
    }
    if (a->var) {
      void* squares = table[slots.of(CpuSlots::Squares, i)] = alloc(parts * segments * 8);
      std::fill_n(static_cast<double*>(squares), parts * segments, 0.0);
      partSlots.emplace_back(slots.of(CpuSlots::Squares, i), segments * 8);
      table[slots.of(CpuSlots::Mean, i)] = alloc(segments * 8);
    }
  }

  std::atomic<int32_t> failed{0};
  auto call = [&](Function f, const CpuLoop& l, bool perPart) {
    if (!f)
      return;
    auto once = [&](int64_t part, int64_t begin, int64_t end) {
      std::vector<void*> t = table;
      int32_t error = 0;
      t[slots.error()] = &error;
      if (part > 0)
        for (auto [slot, bytes] : partSlots)
          t[slot] = static_cast<char*>(t[slot]) + part * bytes;
      f(t.data(), begin, end, perPart ? 1 : parts);
      int32_t none = 0;
      if (error)
        failed.compare_exchange_strong(none, error);
    };
    int64_t points = l.extent * l.unitPoints;
    if (perPart && code_.partials)
      parallel(parts, points, [&](int64_t first, int64_t last) {
        for (int64_t p = first; p < last; ++p)
          once(p, l.extent * p / parts, l.extent * (p + 1) / parts);
      });
    else
      parallel(l.extent, points, [&](int64_t begin, int64_t end) { once(0, begin, end); });
    if (int32_t code = failed.load()) {
      const codegen::Inst& inst = k.insts[code - 1];
      ir::Op op = inst.node->op();
      steps[code - 1].fail(op == ir::Op::Div         ? "integer division by zero"
                           : op == ir::Op::Remainder ? "integer remainder by zero"
                                                     : "integers to negative integer powers "
                                                       "are not allowed");
    }
  };
  for (size_t s = 0; s < stages_.size(); ++s) {
    call(stages_[s].accumulate, code_.stages[s].accumulate, true);
    call(stages_[s].means, code_.stages[s].means, false);
    call(stages_[s].deviations, code_.stages[s].deviations, true);
    if (!code_.stages[s].finishedByAccumulate)
      call(stages_[s].finish, code_.stages[s].finish, false);
  }
  call(outputs_, code_.outputs, false);
  // Last: the domain outputs may still read an input a reduced output replaces.
  for (size_t o = 0; o < k.outputs.size(); ++o)
    if (k.outputs[o].space == Space::Reduced && !direct[o]) {
      int inst = k.outputs[o].inst;
      std::memmove(outputs[o], table[slots.of(CpuSlots::Reduced, inst)],
                   code_.segments * ir::dtypeSize(k.insts[inst].dtype));
    }
}

} // namespace graphc::cpu
