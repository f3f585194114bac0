//===- runtime/cpu/FusedKernel.cpp - Running a kernel on the CPU ----------===//
//
// Reductions follow runtime/cpu/Reduce.cpp exactly: floating-point sums and
// products accumulate in double, integer ones wrap around in their own type, and
// the domain is visited in C order, so argmax/argmin keep the first extreme.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/FusedKernel.h"

#include "runtime/cpu/ThreadPool.h"
#if GRAPHC_CPU_JIT
#include "runtime/cpu/CompiledKernel.h"
#include "runtime/cpu/HostJit.h"
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace graphc::cpu {

bool hasCompiledKernels() {
  return GRAPHC_CPU_JIT;
}

using codegen::Inst;
using codegen::Space;
using ir::Op;

namespace {

/// The most instructions of a kernel that is compiled.
constexpr size_t kMaxCompiledInstructions = 2000;

/// Points per block: the per-instruction scratch of a block stays in the L1/L2 cache.
constexpr int64_t kBlock = 2048;

/// The offsets sum p[k] * strides[k] of the `n` points of `shape` from flat `start`.
void affineOffsets(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> strides, int64_t start,
                   int64_t n, int64_t* out) {
  size_t rank = shape.size();
  if (rank == 0) {
    std::fill(out, out + n, 0);
    return;
  }
  ir::Shape index(rank);
  int64_t rest = start, offset = 0;
  for (size_t a = rank; a-- > 0;) {
    index[a] = rest % shape[a];
    rest /= shape[a];
    offset += index[a] * strides[a];
  }
  int64_t last = shape[rank - 1], step = strides[rank - 1];
  for (int64_t e = 0; e < n;) {
    int64_t run = std::min(n - e, last - index[rank - 1]);
    for (int64_t j = 0; j < run; ++j)
      out[e + j] = offset + j * step;
    e += run;
    offset += run * step;
    index[rank - 1] += run;
    for (size_t a = rank - 1; a > 0 && index[a] == shape[a]; --a) {
      offset += strides[a - 1] - shape[a] * strides[a];
      index[a] = 0;
      ++index[a - 1];
    }
  }
}

/// dst[e] = src[index[e]] for elements of `size` bytes.
void gather(const void* src, const int64_t* index, int64_t n, int64_t size, void* dst) {
  auto typed = [&](auto tag) {
    using T = decltype(tag);
    const T* s = static_cast<const T*>(src);
    T* d = static_cast<T*>(dst);
    for (int64_t e = 0; e < n; ++e)
      d[e] = s[index[e]];
  };
  if (size == 8)
    typed(uint64_t{});
  else if (size == 4)
    typed(uint32_t{});
  else
    typed(uint8_t{});
}

/// out[e] = the value of computed source `inst` at the `n` points of `shape` from
/// flat `start` (its flat indices go through `offsets`).
void computeSource(const Inst& inst, llvm::ArrayRef<int64_t> shape, int64_t start, int64_t n,
                   int64_t* offsets, void* out) {
  using codegen::SourceIndex;
  SourceIndex src = SourceIndex::of(*inst.node);
  if (src.readsIndex())
    affineOffsets(shape, inst.strides, start, n, offsets);
  auto coord = [](int64_t f, SourceIndex::Axis x) { return f / x.inner % x.extent; };
  visitDType(inst.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = static_cast<T*>(out);
    T value = fromDouble<T>(src.value);
    switch (src.form) {
    case SourceIndex::Uniform:
      std::fill(o, o + n, value);
      break;
    case SourceIndex::Diagonal:
      for (int64_t e = 0; e < n; ++e)
        o[e] = coord(offsets[e], src.a) == coord(offsets[e], src.b) ? value : T(0);
      break;
    case SourceIndex::Coordinate:
      for (int64_t e = 0; e < n; ++e)
        o[e] = static_cast<T>(coord(offsets[e], src.a));
      break;
    }
  });
}

/// Points below which a kernel runs on the calling thread alone.
constexpr int64_t kParallelPoints = int64_t{1} << 18;

/// f(start, n) for the blocks of [from, to).
template <typename F> void forBlocks(int64_t from, int64_t to, F&& f) {
  for (int64_t start = from; start < to; start += kBlock)
    f(start, std::min(kBlock, to - start));
}

/// f(begin, end) on contiguous parts of [0, units), one per thread of the shared
/// pool when `points` pay for the threads; rethrows the first part's error. Parts
/// are independent (disjoint outputs, each segment reduced by one thread in order),
/// so results do not depend on the number of threads.
template <typename F> void parallelFor(int64_t units, int64_t points, F&& f) {
  if (points < kParallelPoints)
    return f(0, units);
  ThreadPool& pool = ThreadPool::global();
  pool.parallelFor(units, pool.threads(), f);
}

bool needsElements(Op op) {
  return op != Op::Sum && op != Op::Prod;
}

} // namespace

/// Per-call state of run().
struct FusedKernel::Scratch {
  llvm::ArrayRef<const void*> inputs;
  llvm::ArrayRef<void*> outputs;
  std::vector<std::vector<uint64_t>> buffers; ///< per instruction (8-byte aligned)
  std::vector<const void*> data;              ///< per instruction: the current block
  std::vector<int64_t> offsets, segment, position;
  /// Per reduce instruction and segment of the chunk: the running sum or product
  /// (double for floats, the wrapped integer otherwise), or the extreme so far; for
  /// var, the sum, then (a second sweep) the squared deviations from the mean.
  struct Accumulator {
    std::vector<double> f, mean, squares;
    std::vector<int64_t> i, best;
    std::vector<uint8_t> seen;
  };
  std::vector<Accumulator> acc;
};

KernelMode kernelModeFromEnvironment() {
  const char* v = std::getenv("GRAPHC_CPU_KERNELS");
  std::string mode = v ? v : "";
  if (mode.empty())
    return KernelMode::Default;
  if (mode == "compile")
    return KernelMode::Compile;
  if (mode == "interpret")
    return KernelMode::Interpret;
  throw Error("GRAPHC_CPU_KERNELS=" + mode + ": expected compile or interpret");
}

FusedKernel::FusedKernel(codegen::Kernel kernel, KernelMode mode) : k_(std::move(kernel)) {
  size_t n = k_.insts.size();
  for (const Inst& inst : k_.insts)
    steps_.push_back(inst.node ? Step::of(*inst.node) : Step{});
  forDomainOutputs_.assign(n, false);
  forStage_.assign(k_.stages(), std::vector<bool>(n, false));
  reducedAtStage_ = forStage_;
  varAtStage_.assign(k_.stages(), false);
  for (size_t i = 0; i < n; ++i) {
    const Inst& inst = k_.insts[i];
    if (inst.space == Space::Reduced) // stage-0 values (loads) with the first stage's
      reducedAtStage_[std::max(inst.stage, 1) - 1][i] = true;
    if (inst.kind == Inst::Kind::Reduce) {
      codegen::markNeeded(k_, inst.args[0], forStage_[inst.stage - 1]);
      if (inst.node->op() == Op::Var)
        varAtStage_[inst.stage - 1] = true;
    }
  }
  for (const codegen::KernelOutput& o : k_.outputs)
    if (o.space == Space::Domain) {
      codegen::markNeeded(k_, o.inst, forDomainOutputs_);
      hasDomainOutputs_ = true;
    }
  if (k_.hasReduction()) {
    segmentStrides_ = k_.segmentStrides();
    // The position within a segment: C order over the reduced axes.
    ir::Shape reducedExtents;
    for (int64_t a : k_.reduceAxes)
      reducedExtents.push_back(k_.domain[a]);
    ir::Shape dense = codegen::denseStrides(reducedExtents);
    positionStrides_.assign(k_.domain.size(), 0);
    for (size_t j = 0; j < k_.reduceAxes.size(); ++j)
      positionStrides_[k_.reduceAxes[j]] = dense[j];
  }
  // Kernels of thousands of instructions (a chain of 10^5 ops) are interpreted: LLVM's
  // compile time grows faster than the run time falls.
  if (mode == KernelMode::Interpret || k_.insts.size() > kMaxCompiledInstructions)
    return;
#if !GRAPHC_CPU_JIT
  if (mode == KernelMode::Compile)
    throw Error("GRAPHC_CPU_KERNELS=compile, but this graphc was built without the JIT "
                "(GRAPHC_CPU_JIT=OFF): its cpu kernels are interpreted");
#else
  std::string why;
  if (!HostJit::get(&why)) {
    if (mode == KernelMode::Compile)
      throw Error("GRAPHC_CPU_KERNELS=compile, but LLVM cannot compile for this machine: " + why);
    static bool said = [&] {
      std::fprintf(stderr,
                   "graphc: cpu kernels are interpreted: LLVM cannot compile for this "
                   "machine (%s)\n",
                   why.c_str());
      return true;
    }();
    (void)said;
    return;
  }
  try {
    compiled_ = std::make_shared<CompiledKernel>(k_);
  } catch (const Error&) {
    // An op without a host form: the interpreter runs it (and reports its errors).
  }
#endif
}

void FusedKernel::evaluate(Scratch& sc, Space space, const std::vector<bool>& needed, int64_t start,
                           int64_t n, int64_t firstSegment) const {
  const ir::Shape& shape = k_.shape(space);
  ir::Shape dense = codegen::denseStrides(shape);
  bool segmentsKnown = false;
  for (size_t i = 0; i < k_.insts.size(); ++i) {
    const Inst& inst = k_.insts[i];
    if (inst.space != space || !needed[i])
      continue;
    int64_t size = ir::dtypeSize(inst.dtype);
    void* out = sc.buffers[i].data();
    switch (inst.kind) {
    case Inst::Kind::Load: {
      const char* in = static_cast<const char*>(sc.inputs[inst.input]);
      if (inst.strides == dense) { // the input in the space's own order: no copy
        sc.data[i] = in + start * size;
        continue;
      }
      affineOffsets(shape, inst.strides, start, n, sc.offsets.data());
      gather(in, sc.offsets.data(), n, size, out);
      break;
    }
    case Inst::Kind::Compute: {
      llvm::SmallVector<const void*, 3> args;
      for (int a : inst.args)
        args.push_back(sc.data[a]);
      DType operandType = k_.insts[inst.args[inst.node->op() == Op::Select ? 1 : 0]].dtype;
      applyElementwise(steps_[i], operandType, args, out, n);
      break;
    }
    case Inst::Kind::Source:
      computeSource(inst, shape, start, n, sc.offsets.data(), out);
      break;
    case Inst::Kind::Reduce: // finishReductions filled the chunk's values
      break;
    case Inst::Kind::Segment:
      if (!segmentsKnown) {
        affineOffsets(shape, segmentStrides_, start, n, sc.segment.data());
        for (int64_t e = 0; e < n; ++e)
          sc.segment[e] -= firstSegment;
        segmentsKnown = true;
      }
      gather(sc.data[inst.args[0]], sc.segment.data(), n, size, out);
      break;
    }
    sc.data[i] = out;
  }
}

void FusedKernel::accumulate(Scratch& sc, int stage, int64_t start, int64_t n, int64_t firstSegment,
                             bool deviations) const {
  affineOffsets(k_.domain, segmentStrides_, start, n, sc.segment.data());
  affineOffsets(k_.domain, positionStrides_, start, n, sc.position.data());
  const int64_t* seg = sc.segment.data();
  const int64_t* pos = sc.position.data();
  for (size_t r = 0; r < k_.insts.size(); ++r) {
    const Inst& inst = k_.insts[r];
    if (inst.kind != Inst::Kind::Reduce || inst.stage != stage ||
        (deviations && inst.node->op() != Op::Var))
      continue;
    const Step& s = steps_[r];
    Scratch::Accumulator& acc = sc.acc[r];
    visitNumeric(s, k_.insts[inst.args[0]].dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = static_cast<const T*>(sc.data[inst.args[0]]);
      for (int64_t e = 0; e < n; ++e) {
        int64_t g = seg[e] - firstSegment;
        if (deviations) {
          double d = static_cast<double>(x[e]) - acc.mean[g];
          acc.squares[g] += d * d;
        } else if (s.op == Op::Sum || s.op == Op::Mean || s.op == Op::Prod || s.op == Op::Var) {
          bool add = s.op != Op::Prod;
          if constexpr (std::is_floating_point_v<T>)
            acc.f[g] = add ? acc.f[g] + x[e] : acc.f[g] * x[e];
          else
            acc.i[g] = add ? wrapAdd(static_cast<T>(acc.i[g]), x[e])
                           : wrapMul(static_cast<T>(acc.i[g]), x[e]);
        } else {
          T best =
              std::is_floating_point_v<T> ? static_cast<T>(acc.f[g]) : static_cast<T>(acc.i[g]);
          if (acc.seen[g] && !reductionPrefers(s.op, x[e], best))
            continue;
          acc.seen[g] = 1;
          acc.best[g] = pos[e];
          if constexpr (std::is_floating_point_v<T>)
            acc.f[g] = x[e];
          else
            acc.i[g] = x[e];
        }
      }
    });
  }
}

void FusedKernel::finishReductions(Scratch& sc, int stage, int64_t segments) const {
  double count = static_cast<double>(k_.segmentSize());
  for (size_t r = 0; r < k_.insts.size(); ++r) {
    const Inst& inst = k_.insts[r];
    if (inst.kind != Inst::Kind::Reduce || inst.stage != stage)
      continue;
    const Scratch::Accumulator& acc = sc.acc[r];
    Op op = inst.node->op();
    bool isFloat = ir::isFloat(k_.insts[inst.args[0]].dtype);
    visitDType(inst.dtype, [&](auto tag) {
      using R = typename decltype(tag)::type;
      R* out = reinterpret_cast<R*>(sc.buffers[r].data());
      for (int64_t g = 0; g < segments; ++g) {
        if (op == Op::Argmax || op == Op::Argmin)
          out[g] = static_cast<R>(acc.best[g]);
        else if (op == Op::Var)
          out[g] = static_cast<R>(acc.squares[g] / count);
        else if (!isFloat)
          out[g] =
              static_cast<R>(op == Op::Mean ? acc.i[g] / static_cast<int64_t>(count) : acc.i[g]);
        else
          out[g] = static_cast<R>(op == Op::Mean ? acc.f[g] / count : acc.f[g]);
      }
    });
    sc.data[r] = sc.buffers[r].data();
  }
}

void FusedKernel::writeOutputs(Scratch& sc, Space space, int64_t start, int64_t n) const {
  // Outputs that are an input's own memory go first: an output written in place of
  // that input must not change them.
  for (int pass = 0; pass < 2; ++pass)
    for (size_t o = 0; o < k_.outputs.size(); ++o) {
      const codegen::KernelOutput& out = k_.outputs[o];
      bool isLoad = k_.insts[out.inst].kind == Inst::Kind::Load;
      if (out.space != space || isLoad != (pass == 0))
        continue;
      int64_t size = ir::dtypeSize(k_.insts[out.inst].dtype);
      char* dst = static_cast<char*>(sc.outputs[o]) + start * size;
      if (dst != sc.data[out.inst])
        std::memmove(dst, sc.data[out.inst], n * size);
    }
}

FusedKernel::Scratch FusedKernel::newScratch(llvm::ArrayRef<const void*> inputs,
                                             llvm::ArrayRef<void*> outputs, int64_t chunk) const {
  Scratch sc;
  sc.inputs = inputs;
  sc.outputs = outputs;
  sc.buffers.resize(k_.insts.size());
  for (size_t i = 0; i < k_.insts.size(); ++i) {
    int64_t points = k_.insts[i].space == Space::Domain ? kBlock : chunk;
    sc.buffers[i].resize((points * ir::dtypeSize(k_.insts[i].dtype) + 7) / 8);
  }
  sc.data.assign(k_.insts.size(), nullptr);
  sc.offsets.resize(std::max(kBlock, chunk));
  sc.segment.resize(kBlock);
  sc.position.resize(kBlock);
  sc.acc.resize(k_.insts.size());
  return sc;
}

void FusedKernel::runChunk(Scratch& sc, int64_t first, int64_t count) const {
  int64_t length = k_.segmentSize();
  for (size_t i = 0; i < k_.insts.size(); ++i) {
    if (k_.insts[i].kind != Inst::Kind::Reduce)
      continue;
    bool product = k_.insts[i].node->op() == Op::Prod;
    sc.acc[i].f.assign(count, product ? 1.0 : 0.0);
    if (k_.insts[i].node->op() == Op::Var)
      sc.acc[i].squares.assign(count, 0.0);
    sc.acc[i].i.assign(count, product ? 1 : 0);
    sc.acc[i].best.assign(count, 0);
    sc.acc[i].seen.assign(count, 0);
  }
  bool contiguous = k_.segmentsContiguous();
  int64_t from = contiguous ? first * length : 0;
  int64_t to = contiguous ? (first + count) * length : ir::numElements(k_.domain);
  for (int stage = 1; stage <= k_.stages(); ++stage) {
    auto sweep = [&](bool deviations) {
      forBlocks(from, to, [&](int64_t start, int64_t n) {
        evaluate(sc, Space::Domain, forStage_[stage - 1], start, n, first);
        accumulate(sc, stage, start, n, first, deviations);
      });
    };
    sweep(false);
    if (varAtStage_[stage - 1]) { // var's second sweep, as in runtime/cpu/Reduce.cpp
      for (size_t i = 0; i < k_.insts.size(); ++i)
        if (k_.insts[i].stage == stage && k_.insts[i].kind == Inst::Kind::Reduce &&
            k_.insts[i].node->op() == Op::Var) {
          sc.acc[i].mean = sc.acc[i].f;
          for (double& m : sc.acc[i].mean)
            m /= static_cast<double>(length);
        }
      sweep(true);
    }
    finishReductions(sc, stage, count);
    evaluate(sc, Space::Reduced, reducedAtStage_[stage - 1], first, count, first);
  }
  if (hasDomainOutputs_)
    forBlocks(from, to, [&](int64_t start, int64_t n) {
      evaluate(sc, Space::Domain, forDomainOutputs_, start, n, first);
      writeOutputs(sc, Space::Domain, start, n);
    });
  // Last: the domain pass may still read an input a reduced output replaces.
  writeOutputs(sc, Space::Reduced, first, count);
}

void FusedKernel::failIfEmpty() const {
  if (!k_.hasReduction() || k_.segmentSize() != 0)
    return;
  for (size_t i = 0; i < k_.insts.size(); ++i)
    if (k_.insts[i].kind == Inst::Kind::Reduce && needsElements(k_.insts[i].node->op()))
      failEmptyReduction(steps_[i], k_.insts[i].node->operand(0).type());
}

void FusedKernel::run(llvm::ArrayRef<const void*> inputs, llvm::ArrayRef<void*> outputs) const {
  failIfEmpty();
#if GRAPHC_CPU_JIT
  if (compiled_)
    return compiled_->run(
        k_, steps_, inputs, outputs,
        [](int64_t units, int64_t points, const std::function<void(int64_t, int64_t)>& f) {
          parallelFor(units, points, f);
        });
#endif
  int64_t domainSize = ir::numElements(k_.domain);
  if (!k_.hasReduction()) {
    int64_t blocks = (domainSize + kBlock - 1) / kBlock;
    parallelFor(blocks, domainSize, [&](int64_t begin, int64_t end) {
      Scratch sc = newScratch(inputs, outputs, 0);
      forBlocks(begin * kBlock, std::min(end * kBlock, domainSize), [&](int64_t start, int64_t n) {
        evaluate(sc, Space::Domain, forDomainOutputs_, start, n, 0);
        writeOutputs(sc, Space::Domain, start, n);
      });
    });
    return;
  }
  int64_t segments = ir::numElements(k_.reducedShape), length = k_.segmentSize();
  // Chunks of about a block of points when segments are contiguous ranges; otherwise
  // every segment interleaves with the others: one chunk.
  int64_t chunk = k_.segmentsContiguous()
                      ? std::max<int64_t>(1, kBlock / std::max<int64_t>(length, 1))
                      : std::max<int64_t>(segments, 1);
  int64_t chunks = (segments + chunk - 1) / chunk;
  parallelFor(chunks, domainSize, [&](int64_t begin, int64_t end) {
    Scratch sc = newScratch(inputs, outputs, chunk);
    for (int64_t c = begin; c < end; ++c)
      runChunk(sc, c * chunk, std::min(chunk, segments - c * chunk));
  });
}

} // namespace graphc::cpu
