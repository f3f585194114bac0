//===- codegen/CudaReduction.cpp - CUDA C++ for reduction kernels ---------===//
//
// A reduction kernel walks each segment once per stage (Kernel::stages): stage k's
// pass evaluates only the domain instructions its reductions read, which may read
// the `vN` of earlier stages' reduced values, already defined in the segment's
// scope. Each reduction has its own shared-memory array, so a later stage never
// overwrites what an earlier one is still reading. A sum of exp(y - m), m the max
// of y over the segment, takes its max's stage and pass (pairOnlineSums): softmax
// walks its row twice, logsumexp once. This file writes the kernel around its
// segment loop (CudaSegment.cpp): the accumulators, their combination across a
// unit's lanes and the launch form's unit and lane indices.
//
//===----------------------------------------------------------------------===//
#include "codegen/CudaReductionPlan.h"
#include "support/Error.h"

#include <algorithm>

namespace graphc::codegen::detail {

bool Emitter::pairOnlineSums() {
  bool paired = false;
  auto computes = [&](int i, Op op) {
    return k_.insts[i].kind == Inst::Kind::Compute && k_.insts[i].node->op() == op;
  };
  for (size_t i = 0; i < k_.insts.size(); ++i) {
    Inst& inst = k_.insts[i];
    inst.stage = Kernel::stageOf(k_.insts, inst);
    if (inst.kind != Inst::Kind::Reduce)
      continue;
    // sum(exp(sub(y, segment(max(y))))) over floats: the max first pushed with its sum.
    int e = inst.args[0];
    if (inst.node->op() != Op::Sum || !computes(e, Op::Exp) ||
        !computes(k_.insts[e].args[0], Op::Sub))
      continue;
    const Inst& d = k_.insts[k_.insts[e].args[0]];
    if (k_.insts[d.args[1]].kind != Inst::Kind::Segment)
      continue;
    int m = k_.insts[d.args[1]].args[0];
    const Inst& max = k_.insts[m];
    if (max.node->op() == Op::Max && ir::isFloat(max.dtype) && max.args[0] == d.args[0] &&
        online_[m] < 0) {
      online_[i] = m;
      online_[m] = static_cast<int>(i);
      inst.stage = max.stage;
      paired = true;
    }
  }
  return paired;
}

Accumulator Emitter::accumulator(int reduce) {
  Op op = k_.insts[reduce].node->op();
  DType t = k_.insts[k_.insts[reduce].args[0]].dtype;
  Accumulator a;
  if (online_[reduce] >= 0)
    helpers_ |= kOnline | kExtreme;
  if (op == Op::Sum || op == Op::Mean || op == Op::Prod) {
    a.type = ir::isFloat(t) ? "f64" : utype(t);
    a.init = op == Op::Prod ? "1" : "0";
    a.how = op == Op::Prod ? Accumulator::Multiply : Accumulator::Add;
    return a;
  }
  if (op == Op::Var && twoPassVar_) { // each pass a plain sum
    a.type = "f64";
    a.init = "0";
    return a;
  }
  if (op == Op::Var) {
    helpers_ |= kMoments;
    a.how = Accumulator::Moments;
    a.type = "gc_moments";
    a.init = "{0, 0, 0, 0}";
    return a;
  }
  a.max = op == Op::Max || op == Op::Argmax;
  if ((op == Op::Max || op == Op::Min) && ir::isFloat(t)) {
    helpers_ |= kExtreme;
    a.how = Accumulator::Extreme;
    a.type = ctype(t);
    // -inf for max, inf for min, from their bits (NVRTC has no INFINITY).
    a.init = t == DType::F32 ? (a.max ? "__int_as_float(0xff800000)" : "__int_as_float(0x7f800000)")
             : a.max         ? "__longlong_as_double(0xfff0000000000000ULL)"
                             : "__longlong_as_double(0x7ff0000000000000ULL)";
    return a;
  }
  helpers_ |= kBest;
  a.how = Accumulator::Best;
  a.type = fmt::format("gc_best<{}, idx>", ctype(t));
  a.init = fmt::format("{{({})0, -1}}", ctype(t));
  return a;
}

/// Combines the lanes' accumulators of `reduces` into every lane: a butterfly in
/// each warp, then (one block per segment) a butterfly over the warps' states,
/// which every warp reads from shared memory, W = BS / 32 of them, lane l taking
/// warp l % W's. Every lane of every warp ends with the same bits, and no thread
/// holds more than one state per reduction. var's moments are centered first and
/// merge in equal halves where the lanes are `even`. An online sum waits for its
/// max: each lane's sum is rescaled to the combined max once, then summed (merging
/// the pairs at every step took 20 f64 exponentials a lane).
void Emitter::combineLanes(Code& c, CudaKernel::Launch launch, bool even,
                           llvm::ArrayRef<int> reduces) {
  using L = CudaKernel::Launch;
  std::vector<int> sums; // online
  for (int r : reduces) {
    if (accumulator(r).how == Accumulator::Moments)
      c.line("a{0} = gc_center(a{0});", r);
    if (online_[r] >= 0 && !isOnlineMax(r))
      sums.push_back(r);
  }
  auto butterfly = [&](const char* first, bool online) {
    c.line("#pragma unroll");
    c.open(fmt::format("for (int m = {}; m > 0; m /= 2)", first));
    for (int r : online ? llvm::ArrayRef<int>(sums) : reduces) {
      if (!online && llvm::is_contained(sums, r))
        continue;
      Accumulator a = accumulator(r);
      if (a.how == Accumulator::Moments) {
        if (even)
          c.line("a{0} = gc_merge_even(a{0}, __shfl_xor_sync(0xffffffffu, a{0}.k, m), "
                 "__shfl_xor_sync(0xffffffffu, a{0}.s2, m));",
                 r);
        else
          c.line("a{0} = gc_merge_lanes(a{0}, m);", r);
        continue;
      }
      std::string other = a.how == Accumulator::Best
                              ? fmt::format("gc_shfl_xor(a{}, m)", r)
                              : fmt::format("__shfl_xor_sync(0xffffffffu, a{}, m)", r);
      c.line("a{} = {};", r, a.combine(fmt::format("a{}", r), other));
    }
    c.close();
  };
  auto both = [&](const char* first, bool declare) { // l<max>: the lane's max before
    for (int r : sums)
      c.line("{}l{} = a{};", declare ? fmt::format("{} ", ctype(k_.insts[online_[r]].dtype)) : "",
             online_[r], online_[r]);
    butterfly(first, false);
    if (sums.empty())
      return;
    for (int r : sums)
      c.line("a{0} = gc_online_scale(a{0}, l{1}, a{1});", r, online_[r]);
    butterfly(first, true);
  };
  if (launch != L::ThreadPerSegment)
    both("16", true);
  if (launch == L::BlockPerSegment) {
    c.open("if (threadIdx.x % 32 == 0)");
    for (int r : reduces)
      c.line("w{0}[threadIdx.x / 32] = a{0};", r);
    c.close();
    c.line("__syncthreads();");
    for (int r : reduces)
      c.line("a{0} = w{0}[threadIdx.x % (BS / 32)];", r);
    both("BS / 64", false);
  }
}

/// The value of reduction `r` from its combined accumulator `a<r>`.
std::string Emitter::reducedValue(int r) const {
  const Inst& inst = k_.insts[r];
  Op op = inst.node->op();
  DType t = k_.insts[inst.args[0]].dtype;
  const char* R = ctype(inst.dtype);
  if (op == Op::Argmax || op == Op::Argmin)
    return fmt::format("({})a{}.i", R, r);
  if ((op == Op::Max || op == Op::Min) && ir::isFloat(t))
    return fmt::format("({})a{}", R, r);
  if (op == Op::Max || op == Op::Min)
    return fmt::format("a{}.v", r);
  if (op == Op::Var)
    return fmt::format("({})(a{}{} / (f64)L)", R, r, twoPassVar_ ? "" : ".s2");
  if (op == Op::Mean && ir::isFloat(t))
    return fmt::format("({})(a{} / (f64)L)", R, r);
  if (online_[r] >= 0 && !isOnlineMax(r))
    return fmt::format("({})gc_online_sum(a{}, a{}, L)", R, online_[r], r);
  if (op == Op::Mean)
    return fmt::format("({})((i64)({})a{} / (i64)L)", R, ctype(t), r);
  return fmt::format("({})a{}", R, r);
}

void Emitter::reduction(Code& c, CudaKernel& ck) {
  // Online sums where a block's passes read memory: there they save one. Over rows
  // in registers or shared memory they save a barrier and cost exponentials; on an
  // H100 softmax over rows of 16384 f32 went from 0.0987 to 0.1073 ms so, over 50257
  // (shared memory) from 0.3957 to 0.4065. Rows of a warp or a thread, which the L1
  // may hold between passes, keep their passes until measured.
  auto plan = planReduction(ck);
  if (!plan.second.caching && ck.launch == CudaKernel::Launch::BlockPerSegment &&
      pairOnlineSums()) {
    plan = planReduction(ck);
    if (plan.second.caching) // fewer passes cache no more (planRows)
      throw Error("emitCuda: an online sum over cached rows");
  }
  auto& [ps, rows] = plan;
  using L = CudaKernel::Launch;
  int64_t segments = ir::numElements(k_.reducedShape);
  ck.sharedBytes = rows.sharedBytes;
  twoPassVar_ = rows.caching;
  sizeParameter_ = sizeIsAParameter(std::vector<bool>(k_.insts.size(), true));
  if (sizeParameter_)
    ck.size = segments;
  else
    c.line("constexpr idx S = {}; // segments", segments);
  c.line("constexpr idx L = {}; // points per segment", ps.length);
  c.open(signature(ck));
  switch (ck.launch) {
  case L::BlockPerSegment:
    // One array per reduction: no stage overwrites what another still reads, and
    // the barrier that ends a segment keeps the next segment's writes after it.
    for (int stage = 1; stage <= ps.stages; ++stage)
      for (int r : ps.reduces[stage])
        c.line("__shared__ {} w{}[BS / 32];", accumulator(r).type, r);
    ps.unitStart = "(idx)blockIdx.x", ps.unitStride = "(idx)gridDim.x";
    ps.laneStart = "(idx)threadIdx.x", ps.laneStride = "BS";
    break;
  case L::WarpPerSegment:
    ps.unitStart = "((idx)blockIdx.x * BS + (idx)threadIdx.x) / 32",
    ps.unitStride = "(idx)gridDim.x * (BS / 32)";
    ps.laneStart = "(idx)(threadIdx.x & 31)", ps.laneStride = "32";
    break;
  case L::ThreadPerSegment:
    ps.unitStart = "(idx)blockIdx.x * BS + (idx)threadIdx.x", ps.unitStride = "(idx)gridDim.x * BS";
    ps.laneStart = "0", ps.laneStride = "1";
    break;
  case L::Elementwise:
    break;
  }
  if (rows.width == 1) {
    segmentLoop(c, ck, ps, rows, false);
    c.close();
    return;
  }
  // The segment loop twice: by vectors where every wide buffer is aligned, one
  // point at a time otherwise.
  std::vector<std::string> pointers;
  for (size_t in = 0; in < rows.cached.size(); ++in)
    if (rows.cached[in])
      pointers.push_back(fmt::format("(u64)in{}", in));
  for (size_t o = 0; o < k_.outputs.size(); ++o)
    if (k_.outputs[o].space == Space::Domain)
      pointers.push_back(fmt::format("(u64)out{}", o));
  for (int i : rows.rowVectors)
    pointers.push_back(fmt::format("(u64)in{}", k_.insts[i].input));
  c.open(fmt::format("if ((({}) & 15) == 0)", fmt::join(pointers, " | ")));
  segmentLoop(c, ck, ps, rows, true);
  c.close();
  c.open("else");
  segmentLoop(c, ck, ps, rows, false);
  c.close();
  c.close();
}

} // namespace graphc::codegen::detail
