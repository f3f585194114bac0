//===- codegen/CudaReductionPlan.cpp - The plan of a reduction kernel -----===//
//
// A reduction kernel's launch form (a thread, a warp or a block per segment, the
// block's size and the grid), its passes and where its lanes hold their rows:
// registers, shared memory or neither, by vectors or point by point.
//
//===----------------------------------------------------------------------===//
#include "codegen/CudaReductionPlan.h"

#include <algorithm>

namespace graphc::codegen::detail {

std::vector<bool> Emitter::rowLoads() const {
  std::vector<bool> rows(k_.inputs.size(), false);
  for (const Inst& inst : k_.insts)
    if (inst.kind == Inst::Kind::Load && inst.space == Space::Domain && isIdentity(inst))
      rows[inst.input] = true;
  return rows;
}

int64_t Emitter::vectorWidth(const std::vector<bool>& cached) const {
  int64_t moved = 0;
  std::vector<DType> types; // of the cached rows and the domain outputs
  for (size_t in = 0; in < cached.size(); ++in)
    if (cached[in]) {
      moved += k_.inputs[in].type().bytes();
      types.push_back(k_.inputs[in].type().dtype);
    }
  for (const KernelOutput& o : k_.outputs)
    if (o.space == Space::Domain) {
      moved += o.value.type().bytes();
      types.push_back(k_.insts[o.inst].dtype);
    }
  bool same = !types.empty() && std::all_of(types.begin(), types.end(), [&](DType t) {
    return t == types[0] && (t == DType::F32 || t == DType::F64);
  });
  int64_t width = same ? 16 / ir::dtypeSize(types[0]) : 1;
  return moved > kWideBytes ? width : 1;
}

Emitter::RowPlan Emitter::planRows(const CudaKernel& ck, const Passes& ps, bool multiPass) const {
  using L = CudaKernel::Launch;
  RowPlan r;
  r.lanes = ck.launch == L::BlockPerSegment  ? ck.blockSize
            : ck.launch == L::WarpPerSegment ? 32
                                             : 0;
  r.perLane = r.lanes ? (ps.length + r.lanes - 1) / r.lanes : 0;
  bool rereads = ps.contiguous && multiPass && r.lanes;
  r.cached = rereads ? rowLoads() : std::vector<bool>(k_.inputs.size(), false);
  rereads = rereads && llvm::is_contained(r.cached, true);
  int reads = ps.stages + ps.varStages + (ps.domainOutputs ? 1 : 0);
  // By vectors, a lane holds whole runs, the last ones past the segment's end where
  // the runs do not tile it: up to kCachedPointsPerLane points, or up to
  // kCachedRegisters where a thread has registers to spare, a peeled row's point
  // outside its runs included. A block of 1024 threads has 64 a thread: there only
  // a kernel of one cached row, no var and at most three reads (a softmax) takes
  // more, and only for a row that shared memory would hold but once an SM. On an
  // H200, rows of f32: softmax over 20000 points 0.119 ms from shared memory, 0.152
  // from registers; row normalization over 32768 (var's two passes spill) 0.208 and
  // 0.412 (bench/results/2026-12-03-h200-f703fb3-rows.jsonl).
  int64_t width = rereads ? vectorWidth(r.cached) : 1, registers = 0, rowBytes = 0;
  for (size_t in = 0; in < r.cached.size(); ++in)
    if (r.cached[in]) {
      registers += ir::dtypeSize(k_.inputs[in].type().dtype) / 4;
      rowBytes += ps.length * ir::dtypeSize(k_.inputs[in].type().dtype);
    }
  bool spare = ck.blockSize <= 512 || (registers == 1 && ps.varStages == 0 && reads <= 3 &&
                                       2 * rowBytes > target_.sharedBytes);
  int64_t runs = (ps.length / width + r.lanes - 1) / std::max<int64_t>(r.lanes, 1);
  bool peeled = ps.length % width != 0;
  int64_t held = runs * width + (peeled ? 1 : 0); // the points a lane caches
  auto byVectors = [&] {
    r.width = width;
    r.peeled = peeled;
    r.perLane = held;
    r.ragged = peeled || ps.length / width % r.lanes != 0;
  };
  if (width > 1 && held <= (spare ? std::max(kCachedPointsPerLane, kCachedRegisters / registers)
                                  : kCachedPointsPerLane)) {
    r.caching = true;
    byVectors();
  } else {
    r.caching = rereads && r.perLane <= kCachedPointsPerLane;
    r.ragged = ps.length % std::max<int64_t>(r.lanes, 1) != 0;
  }
  // Shared memory holds one row per block where registers cannot: past 113 KB a row
  // the SM runs one block, which waits for its row before it computes, so it pays
  // only where it saves two reads of the row or more. On an H200, rows of 50257 f32:
  // softmax (three reads) 0.45 -> 0.38 ms, logsumexp (two) 0.18 -> 0.24. A var
  // counts twice (its passes over a cached row). A peeled row lies in shared memory
  // with its runs 16 bytes in (RowPlan::ahead), its first points before them.
  if (rereads && !r.caching && ck.launch == L::BlockPerSegment && reads >= 3) {
    r.sharedOffsets.assign(r.cached.size(), -1);
    for (size_t in = 0; in < r.cached.size(); ++in)
      if (r.cached[in]) {
        r.sharedOffsets[in] = r.sharedBytes;
        r.sharedBytes += (ps.length * ir::dtypeSize(k_.inputs[in].type().dtype) + 15) / 16 * 16 +
                         (width > 1 && peeled ? 16 : 0);
      }
    int64_t reductions = std::count_if(k_.insts.begin(), k_.insts.end(), [](const Inst& inst) {
      return inst.kind == Inst::Kind::Reduce;
    });
    r.shared = r.caching = r.sharedBytes + reductions * kSharedPerReduction <= target_.sharedBytes;
    if (!r.shared)
      r.sharedBytes = 0;
    if (r.shared && width > 1) // loaded and stored by vectors too
      byVectors();
  }
  if (r.shared && width > 1 && 2 * r.sharedBytes > target_.sharedBytes &&
      target_.multiprocessors > 0)
    r.ahead = true;
  if (!r.caching)
    r.cached.assign(r.cached.size(), false);
  for (size_t i = 0; i < k_.insts.size() && r.width > 1 && !r.peeled; ++i) {
    const Inst& inst = k_.insts[i];
    ir::Shape kept = pick(inst.strides, k_.reduceAxes, true);
    if (ps.forOutputs[i] && inst.kind == Inst::Kind::Load && inst.space == Space::Domain &&
        !r.cached[inst.input] && ir::dtypeSize(inst.dtype) * r.width == 16 &&
        std::all_of(kept.begin(), kept.end(), [](int64_t d) { return d == 0; }) &&
        pick(inst.strides, k_.reduceAxes, false) == denseStrides(ps.reducedExtents))
      r.rowVectors.push_back(static_cast<int>(i));
  }
  return r;
}

std::pair<Emitter::Passes, Emitter::RowPlan> Emitter::planReduction(CudaKernel& ck) const {
  Passes ps;
  int64_t segments = ir::numElements(k_.reducedShape);
  ps.length = k_.segmentSize();
  ps.contiguous = k_.segmentsContiguous();
  using L = CudaKernel::Launch;
  ck.launch = !ps.contiguous || ps.length <= 16 ? L::ThreadPerSegment
              : ps.length <= 2048               ? L::WarpPerSegment
                                                : L::BlockPerSegment;
  // A block per segment: 256 threads where a segment read in several passes fits
  // their registers (row caching, RowPlan; on an H200, W4's layernorm at 4096 points
  // runs in 80 us with 256 threads against 88 with 512), else more for long rows.
  bool multiPass = k_.stages() > 1 ||
                   std::any_of(k_.outputs.begin(), k_.outputs.end(),
                               [](const KernelOutput& o) { return o.space == Space::Domain; }) ||
                   std::any_of(k_.insts.begin(), k_.insts.end(), [](const Inst& inst) {
                     return inst.kind == Inst::Kind::Reduce && inst.node->op() == Op::Var;
                   });
  // Rows by vectors count their whole runs only (RowPlan): a row of 4097 f32 is 1024
  // runs and a peeled point, 17 registers a lane of 256.
  int64_t width = ps.contiguous && multiPass ? vectorWidth(rowLoads()) : 1;
  ck.blockSize = ck.launch != L::BlockPerSegment                                        ? 256
                 : multiPass && ps.length / width * width <= 256 * kCachedPointsPerLane ? 256
                 : ps.length >= 16384                                                   ? 1024
                                                                                        : 512;
  int64_t perBlock = ck.launch == L::ThreadPerSegment ? ck.blockSize
                     : ck.launch == L::WarpPerSegment ? ck.blockSize / 32
                                                      : 1;
  ck.gridSize = blocksFor(segments, perBlock);

  ps.stages = std::max(1, k_.stages());
  ps.reduces.resize(ps.stages + 1);
  ps.forReductions.assign(ps.stages + 1, std::vector<bool>(k_.insts.size(), false));
  ps.forOutputs.assign(k_.insts.size(), false);
  for (size_t i = 0; i < k_.insts.size(); ++i)
    if (k_.insts[i].kind == Inst::Kind::Reduce) {
      int stage = k_.insts[i].stage;
      ps.reduces[stage].push_back(static_cast<int>(i));
      if (online_[i] < 0 || isOnlineMax(static_cast<int>(i))) // an online sum reads its max's
        markNeeded(k_, k_.insts[i].args[0], ps.forReductions[stage]);
    }
  for (int stage = 1; stage <= ps.stages; ++stage)
    ps.varStages +=
        llvm::any_of(ps.reduces[stage], [&](int r) { return k_.insts[r].node->op() == Op::Var; });
  for (const KernelOutput& o : k_.outputs)
    if (o.space == Space::Domain) {
      markNeeded(k_, o.inst, ps.forOutputs);
      ps.domainOutputs = true;
    } else {
      ps.reducedOutputs = true;
    }
  ps.keptExtents = pick(k_.domain, k_.reduceAxes, true);
  ps.reducedExtents = pick(k_.domain, k_.reduceAxes, false);
  ps.dense = denseStrides(k_.domain);

  RowPlan rows = planRows(ck, ps, multiPass);
  if (rows.ahead) // a block an SM walks the rows
    ck.gridSize = blocksFor(std::min(segments, target_.multiprocessors), 1);
  return {std::move(ps), std::move(rows)};
}

} // namespace graphc::codegen::detail
