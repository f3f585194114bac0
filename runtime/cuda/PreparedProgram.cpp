//===- runtime/cuda/PreparedProgram.cpp - A program ready to enqueue -----===//
#include "runtime/cuda/PreparedProgram.h"

#include "passes/CholeskySolves.h"
#include "passes/Fusion.h"
#include "passes/Masks.h"
#include "passes/MemoryPlan.h"
#include "passes/Rewrite.h"
#include "passes/SplitReductions.h"
#include "runtime/core/ItemFailures.h"
#include "runtime/cpu/CpuBackend.h"
#include "runtime/cuda/Check.h"
#include "runtime/cuda/DataMovement.h"
#include "runtime/cuda/HelperKernels.h"
#include "runtime/cuda/KernelCache.h"

#include <fmt/format.h>

#include <map>

namespace graphc::cuda {
namespace {

using ir::Value;
using passes::Storage;

/// The most bytes of parameters a run copies so that library calls in a captured
/// graph find them in place: past it the copies (about 5 us at 16 MB on an H200)
/// cost more than the launches a graph saves, so the run is not captured and the
/// calls read the caller's arrays.
constexpr int64_t kMaxStagedBytes = int64_t{16} << 20;

/// A `cholesky {fallback}` of at most this many items copies every item's info
/// word back, so that a failure names the items (only they are redone with LU:
/// runtime/core/Compile.h); a larger batch copies a summary, and when it reports a
/// failure the item words are fetched from the device if it still holds them (the
/// lane's last run). 256 runs of a ring then hold at most 1 MB of them.
constexpr int64_t kItemInfoWords = 1024;

/// True for a Cholesky the compiler chose (it falls back to LU when it fails).
bool isChosenCholesky(const ir::Node& n) {
  return n.op() == ir::Op::Cholesky && n.attrs().flag("fallback");
}

/// The ItemFallbackError of chosen Cholesky `n` (`who` names it) whose per-item info
/// words `hostInfo` report a failure: the failed items named, as on the CPU.
ItemFallbackError choleskyFailure(const ir::Node& n, const std::string& who, const int* hostInfo) {
  llvm::ArrayRef<int64_t> shape = n.operand(0).type().shape;
  int64_t count = LibraryContext::infoCount(n);
  std::vector<int64_t> items;
  std::vector<std::pair<int64_t, std::string>> details;
  for (int64_t b = 0; b < count; ++b) {
    if (hostInfo[b] < 0 || shape.size() < 3) // an argument error, or no batch
      return ItemFallbackError(fmt::format("{}: {}", who, *LibraryContext::failure(n, hostInfo)),
                               n.loc());
    if (hostInfo[b] > 0) {
      items.push_back(b);
      details.emplace_back(b, fmt::format("leading minor {}", hostInfo[b]));
    }
  }
  std::string message = fmt::format(
      "{}: {}", who, describeItemFailures("matrix is not positive definite", count, details));
  return ItemFallbackError(message, n.loc(), items, shape.drop_back(2).vec());
}

/// The node whose info words step `s` writes: a CholeskySolve step's Cholesky (the
/// step may absorb the steps forming its matrix before it), else its first node.
const ir::Node& infoNodeOf(const passes::Step& s) {
  if (s.kind != passes::Step::Kind::CholeskySolve)
    return *s.nodes.front();
  return **llvm::find_if(s.nodes, [](const ir::Node* n) { return n->op() == ir::Op::Cholesky; });
}

/// A copy of `n` alone in a graph whose parameters are its operands.
std::unique_ptr<ir::Graph> graphOfNode(const ir::Node& n) {
  auto g = std::make_unique<ir::Graph>(n.name().empty() ? "step" : n.name());
  llvm::SmallVector<Value, 3> operands;
  for (size_t i = 0; i < n.operands().size(); ++i)
    operands.push_back(g->addParameter(fmt::format("in{}", i), n.operand(i).type()));
  ir::Node* copy = g->create(
      n.op(), operands, n.attrs(),
      llvm::SmallVector<ir::TensorType, 1>(n.types().begin(), n.types().end()), n.loc(), n.name());
  for (unsigned r = 0; r < copy->numResults(); ++r)
    g->addOutput(copy->result(r));
  return g;
}

} // namespace

std::unique_ptr<ir::Graph> graphForGpu(const ir::Graph& g) {
  passes::PassStats stats;
  return passes::splitReductions(*passes::masksAsSelects(g, stats), stats);
}

passes::Program lowerForGpu(const ir::Graph& g, const codegen::CudaTarget& target,
                            const passes::PlanOptions& options) {
  passes::Program p(g, passes::partitionForFusion(g));
  passes::fuseCholeskySolves(p, [&](const SpdMatrices& a, int64_t cols, size_t elementSize) {
    return SmallBatched::fitsCholeskySolve(a, cols, elementSize, target.sharedBytes);
  });
  passes::planMemory(p, options);
  return p;
}

PreparedProgram::PreparedProgram(const ir::Graph& g, std::shared_ptr<NcclCommunicator> nccl,
                                 int rank)
    : graph_(graphForGpu(g)), program_(lowerForGpu(*graph_, currentTarget())),
      nccl_(std::move(nccl)), rank_(rank) {
  prepareSteps();
  planBindings();
}

void PreparedProgram::prepareSteps() {
  std::vector<codegen::CudaKernel> sources;
  std::vector<codegen::Kernel> kernels;
  const codegen::CudaTarget target = currentTarget();
  for (const passes::Step& s : program_.steps()) {
    PreparedStep p{
        PreparedStep::How::Host, &s, s.inputs, s.outputs, {}, {}, nullptr, {}, -1, -1, 0, {}};
    const ir::Node& first = *s.nodes.front();
    if (s.kind == passes::Step::Kind::CholeskySolve) {
      p.how = PreparedStep::How::CholeskySolve;
      reserveInfo(p, infoNodeOf(s));
      const ir::TensorType& tb = s.inputs[1].type();
      int64_t batch = ir::numElements(llvm::ArrayRef<int64_t>(tb.shape).drop_back(2));
      p.solve = (small_ ? *small_ : small_.emplace())
                    .choleskySolveLaunch(batch, s.spd, tb.shape.back(), ir::dtypeSize(tb.dtype),
                                         nullptr, nullptr, nullptr, nullptr);
    } else if (s.kind == passes::Step::Kind::Library && LibraryContext::supports(first)) {
      p.how = PreparedStep::How::Library;
      reserveInfo(p, first);
    } else if (nccl_ && first.op() == ir::Op::AllReduce) {
      p.how = PreparedStep::How::Collective;
    } else if (s.nodes.size() == 1 && movesOnDevice(first)) {
      p.how = PreparedStep::How::Move;
      p.inputs.assign(first.operands().begin(), first.operands().end()); // repeats kept
    } else if (s.kind == passes::Step::Kind::Kernel && !passes::isDataMovement(s.nodes)) {
      auto built = codegen::buildKernel(s.nodes, s.outputs);
      if (auto* k = std::get_if<codegen::Kernel>(&built)) {
        p.how = PreparedStep::How::Kernel;
        sources.push_back(codegen::emitCuda(*k, "graphc_kernel", target));
        kernels.push_back(std::move(*k));
      }
    }
    steps_.push_back(std::move(p));
  }
  // Compile every kernel in parallel into the cache, with the modules of the
  // library's kernels (every lane's LibraryContext loads them), then load each
  // kernel from it.
  KernelCache::global().compileAll(sources, HelperKernels::moduleSources());
  size_t next = 0;
  for (PreparedStep& p : steps_) {
    if (p.how == PreparedStep::How::Kernel) {
      p.kernel = std::make_unique<CudaFusedKernel>(std::move(kernels[next]), sources[next]);
      ++next;
      p.inputs = p.kernel->kernel().inputs; // the kernel's own parameter order
      p.outputs.clear();
      for (const codegen::KernelOutput& o : p.kernel->kernel().outputs)
        p.outputs.push_back(o.value);
      if (p.kernel->hasErrorWord())
        p.checkOffset = checkWords_++;
      capturable_ = capturable_ && p.kernel->alwaysFails().empty();
    } else if (p.how == PreparedStep::How::Collective) {
      capturable_ = false;
    } else if (p.how == PreparedStep::How::Host) {
      capturable_ = false;
      for (const ir::Node* n : p.step->nodes) {
        HostStep h{graphOfNode(*n), nullptr};
        h.exe = cpuBackend().compile(*h.graph);
        p.host.push_back(std::move(h));
      }
    }
  }
}

void PreparedProgram::reserveInfo(PreparedStep& p, const ir::Node& call) {
  int64_t count = LibraryContext::infoCount(call);
  if (count > 1 && !(isChosenCholesky(call) && count <= kItemInfoWords)) {
    checkWords_ += checkWords_ % 2; // the summary is 8-byte aligned
    p.checkOffset = checkWords_;
    checkWords_ += LibraryContext::kSummaryWords;
    p.infoOffset = infoWords_;
    p.infoCount = count;
    infoWords_ += count;
  } else {
    p.checkOffset = checkWords_;
    checkWords_ += count;
  }
}

KernelLaunch PreparedProgram::choleskySolveLaunch(const PreparedStep& p,
                                                  llvm::ArrayRef<const void*> ins, void* out,
                                                  int* info) const {
  KernelLaunch l = p.solve;
  // Every SPD solve kernel ends its parameters with (a, b, x, info).
  void** buffers = l.args.end() - 4;
  buffers[0] = const_cast<void*>(ins[0]);
  buffers[1] = const_cast<void*>(ins[1]);
  buffers[2] = out;
  buffers[3] = info;
  return l;
}

void PreparedProgram::enqueueAllReduce(const PreparedStep& p, const void* in, void* out,
                                       cudaStream_t stream) const {
  const ir::Node& n = *p.step->nodes.front();
  nccl_->enqueue(rank_, in, out, n.type().numel(), n.type().dtype, reductionOf(n.attrs()), stream);
}

void PreparedProgram::planBindings() {
  std::map<std::pair<const ir::Node*, unsigned>, bool> readByCall; // by a library or host step
  std::map<std::pair<const ir::Node*, unsigned>, bool> byKernel;
  std::vector<bool> paramReadByCall(graph_->params().size());
  for (const PreparedStep& p : steps_) {
    for (Value v : p.inputs) {
      if (p.rebound())
        continue;
      readByCall[{v.node, v.index}] = true;
      if (Storage st = program_.storage(v); st.kind == Storage::Param)
        paramReadByCall[st.index] = true;
    }
    for (Value v : p.outputs)
      byKernel[{v.node, v.index}] = p.rebound();
  }
  int64_t stagedBytes = 0;
  for (size_t i = 0; i < paramReadByCall.size(); ++i)
    if (paramReadByCall[i])
      stagedBytes += graph_->params()[i]->type().bytes();
  capturable_ = capturable_ && stagedBytes <= kMaxStagedBytes;
  std::vector<int> stagedIndex(graph_->params().size(), -1);
  std::map<std::pair<const ir::Node*, unsigned>, int> direct; // value -> output it is
  const auto& outputs = graph_->outputs();
  for (size_t j = 0; j < outputs.size(); ++j) {
    std::pair<const ir::Node*, unsigned> key{outputs[j].node, outputs[j].index};
    if (program_.storage(outputs[j]).kind == Storage::Slot && byKernel[key] && !readByCall[key] &&
        !direct.count(key))
      direct[key] = static_cast<int>(j);
  }
  auto source = [&](Value v, bool call) {
    Storage st = program_.storage(v);
    auto d = direct.find({v.node, v.index});
    if (d != direct.end())
      return Source{Source::Output, d->second};
    if (st.kind == Storage::Param && call && capturable_) {
      if (stagedIndex[st.index] < 0) {
        stagedIndex[st.index] = static_cast<int>(staged_.size());
        staged_.push_back(st.index);
      }
      return Source{Source::Staged, stagedIndex[st.index]};
    }
    if (st.kind == Storage::Param)
      return Source{Source::Param, st.index};
    return Source{st.kind == Storage::Constant ? Source::Constant : Source::Slot, st.index};
  };
  for (PreparedStep& p : steps_) {
    bool call = !p.rebound();
    for (Value v : p.inputs)
      p.ins.push_back(source(v, call));
    for (Value v : p.outputs)
      p.outs.push_back(source(v, false));
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    auto d = direct.find({outputs[j].node, outputs[j].index});
    if (d == direct.end() || d->second != static_cast<int>(j))
      copies_.push_back(
          {static_cast<int>(j), source(outputs[j], false), outputs[j].type().bytes()});
  }
}

void PreparedProgram::uploadConstants(DevicePool& pool, cudaStream_t stream) {
  Backend& cpu = cpuBackend(false);
  for (const ir::Node* c : program_.constants()) {
    constants_.emplace_back(pool, std::max<int64_t>(c->type().bytes(), 1), stream);
    if (LibraryContext::materialize(*c, constants_.back().data(), pool.device(), stream))
      continue;
    HostStep h{graphOfNode(*c), nullptr};
    Array host = cpu.compile(*h.graph)->run({})[0];
    copyAsync(constants_.back().data(), host.rawData(), c->type().bytes(), cudaMemcpyHostToDevice,
              stream);
    GRAPHC_CUDA_CHECK(cudaStreamSynchronize(stream)); // `host` dies here
  }
  GRAPHC_CUDA_CHECK(cudaStreamSynchronize(stream));
}

bool PreparedProgram::callsLibrary() const {
  return llvm::any_of(steps_,
                      [](const PreparedStep& p) { return p.how == PreparedStep::How::Library; });
}

std::string PreparedProgram::hows() const {
  static const char* names[] = {"Kernel", "Library", "Move", "Host", "CholeskySolve", "Collective"};
  static_assert(static_cast<int>(PreparedStep::How::Collective) == 5);
  std::string text;
  for (const PreparedStep& p : steps_)
    text += std::string(text.empty() ? "" : " ") + names[static_cast<int>(p.how)];
  return text;
}

bool PreparedProgram::oneKernel() const {
  return steps_.size() == 1 && steps_.front().how == PreparedStep::How::Kernel && capturable_ &&
         checkWords_ == 0 && staged_.empty() && copies_.empty();
}

std::exception_ptr PreparedProgram::failureOf(const int* words,
                                              const DeviceInfo& deviceInfo) const {
  // The chosen Choleskies' failures so far: any other failure after one may come
  // from the failed items' values, and redoes the whole run.
  std::optional<ItemFallbackError> chosen;
  auto after = [&](std::exception_ptr e) {
    return chosen ? std::make_exception_ptr(chosen->wholeRun()) : std::move(e);
  };
  for (const PreparedStep& p : steps_) {
    if (p.checkOffset < 0)
      continue;
    if (p.how == PreparedStep::How::Kernel) {
      try {
        p.kernel->throwIfFailed(words[p.checkOffset]);
      } catch (const Error&) {
        return after(std::current_exception());
      }
      continue;
    }
    const ir::Node& n = infoNodeOf(*p.step);
    std::optional<std::string> failure =
        p.infoOffset >= 0 ? LibraryContext::summaryFailure(n, words + p.checkOffset)
                          : LibraryContext::failure(n, words + p.checkOffset);
    if (!failure)
      continue;
    std::string who = ir::opName(n.op()).str();
    if (!n.name().empty())
      who += fmt::format(" (%{})", n.name());
    if (!isChosenCholesky(n))
      return after(std::make_exception_ptr(Error(fmt::format("{}: {}", who, *failure), n.loc())));
    std::optional<std::vector<int>> items;
    if (p.infoOffset >= 0 && deviceInfo)
      items = deviceInfo(p);
    ItemFallbackError e =
        p.infoOffset < 0 ? choleskyFailure(n, who, words + p.checkOffset)
        : items          ? choleskyFailure(n, who, items->data())
                         : ItemFallbackError::lost(fmt::format("{}: {}", who, *failure), n.loc());
    chosen = chosen ? ItemFallbackError::merged(*chosen, e) : e;
  }
  return chosen ? std::make_exception_ptr(*chosen) : nullptr;
}

} // namespace graphc::cuda
