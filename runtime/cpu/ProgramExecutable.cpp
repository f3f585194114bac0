//===- runtime/cpu/ProgramExecutable.cpp - Running a lowered program ------===//
//
// The "cpu" backend's executable. compile() copies the graph, lowers it
// (passes/MemoryPlan.h: fusion partition, steps, buffer slots) and prepares each
// step once:
//  - a kernel step becomes a FusedKernel (codegen::Kernel interpreted over blocks);
//    a group buildKernel cannot express runs node by node, and so do the data
//    movement ops that are groups alone (transpose, slice, ...);
//  - a library call runs through the BLAS/LAPACK kernels of Linalg.cpp; an
//    all_reduce meets the other ranks of a sharded run (runtime/core/Collective.h).
// A run walks the steps over the plan's slots. Fused kernels write into their
// slots, or over a dead input where the plan says so; library calls and lone ops
// return their own arrays (LAPACK works in place on a copy), which the step binds
// instead of its slot. A value's array is dropped after its last use. run(inputs)
// allocates the slots for its run, since its results are slot arrays handed to the
// caller; run(inputs, outputs) takes the slots of an idle run state, allocated at
// its first run and kept (one per concurrent run); a fused kernel or a library call
// whose output is a result writes it straight into the caller's output array (when
// that is dense, of the result's type, returned once and overlapping no input), the
// other results are copied out.
// A chosen Cholesky that fails on some batch items only does not stop the run
// (RunFailures, Kernels.h): the run finishes, writes its outputs and then throws the
// ItemFallbackError naming those items, so that only they are redone.
// enqueue() hands runs to the executable's own thread (runtime/core/WorkQueue.h)
// and returns at once; finish() waits for them.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/FusedKernel.h"

#include "passes/MemoryPlan.h"
#include "passes/Rewrite.h"
#include "runtime/core/WorkQueue.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace graphc::cpu {
namespace {

using ir::Value;
using passes::Storage;

/// One step, ready to run.
struct PreparedStep {
  const passes::Step* step;
  std::optional<FusedKernel> kernel; ///< a fused kernel step
  std::vector<Step> nodes;           ///< otherwise: its nodes, run one by one
};

class ProgramExecutable final : public Executable {
public:
  ProgramExecutable(const ir::Graph& g, std::optional<RankOf> rank)
      : Executable(Signature::of(g)), rank_(std::move(rank)), graph_(passes::copyLive(g)),
        program_(passes::lowerToProgram(*graph_)) {
    for (const ir::Node* c : program_.constants())
      constants_.push_back(runNode(Step::of(*c), {})[0]); // names what it cannot allocate
    for (const passes::Step& s : program_.steps())
      steps_.push_back(prepare(s));
    lastUse_.assign(graph_->nodes().size(), -1);
    for (size_t i = 0; i < program_.steps().size(); ++i)
      for (Value v : program_.steps()[i].inputs)
        lastUse_[v.node->id()] = static_cast<int>(i);
    for (Value v : graph_->outputs())
      lastUse_[v.node->id()] = static_cast<int>(program_.steps().size());
  }

  llvm::StringRef backendName() const override { return "cpu"; }

protected:
  /// Queues the run for the executable's own thread: enqueue() returns at once.
  void enqueueRun(size_t run, llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs,
                  void* stream) override {
    if (stream)
      return Executable::enqueueRun(run, inputs, outputs, stream); // throws
    deferred_.push(run, [this, in = inputs.vec(), out = outputs.vec()] { executeInto(in, out); });
  }

  std::optional<RunFailure> finishRuns() override {
    std::optional<WorkQueue::Failure> f = deferred_.wait();
    if (!f)
      return std::nullopt;
    return RunFailure{f->tag, f->error};
  }

  std::vector<Array> execute(llvm::ArrayRef<Array> inputs) override {
    Run run;
    RunFailures failures;
    runSteps(run, inputs, failures);
    std::vector<Array> outs;
    for (Value v : graph_->outputs()) {
      Array a = value(run, v);
      // Parameters and constants are not the run's own: hand out copies.
      outs.push_back(program_.storage(v).kind == Storage::Slot ? a : a.clone());
    }
    failures.throwIfFailed();
    return outs;
  }

  void executeInto(llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs) override {
    std::unique_ptr<Run> run = idleRun();
    run->direct.assign(outputs.size(), Array());
    for (size_t i = 0; i < outputs.size(); ++i)
      if (directOutput(graph_->outputs()[i], outputs[i], inputs))
        run->direct[i] = outputs[i];
    RunFailures failures;
    runSteps(*run, inputs, failures);
    std::vector<Array> results;
    for (Value v : graph_->outputs())
      results.push_back(value(*run, v));
    copyResults(results, outputs);
    run->inputs.clear();
    run->direct.clear();
    for (Arrays& v : run->values)
      v.clear();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      idle_.push_back(std::move(run));
    }
    failures.throwIfFailed(); // after the outputs: the other items' results are right
  }

private:
  /// The arrays of one run.
  struct Run {
    std::vector<Array> inputs;  ///< the parameters, dense
    std::vector<Array> slots;   ///< allocated on first use
    std::vector<Arrays> values; ///< by node id, per result
    std::vector<Array> direct;  ///< per graph output: the caller's array kernels write
  };

  /// Whether graph output `v` may be written straight into `out` (see the file
  /// comment): returned once, dense, of v's type, overlapping none of `inputs`.
  bool directOutput(Value v, const Array& out, llvm::ArrayRef<Array> inputs) const {
    if (std::count(graph_->outputs().begin(), graph_->outputs().end(), v) != 1 ||
        program_.storage(v).kind != Storage::Slot || !out.isContiguous() || out.type() != v.type())
      return false;
    auto begin = static_cast<const char*>(out.rawData());
    const char* end = begin + out.type().bytes();
    for (const Array& a : inputs) {
      auto in = static_cast<const char*>(a.rawData());
      if (a.sharesBufferWith(out) || (in < end && begin < in + a.type().bytes()))
        return false;
    }
    return true;
  }

  /// A run state whose slots earlier runs allocated, or a new one.
  std::unique_ptr<Run> idleRun() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        std::unique_ptr<Run> run = std::move(idle_.back());
        idle_.pop_back();
        return run;
      }
    }
    return std::make_unique<Run>();
  }

  /// Runs the steps on `inputs` over `run`'s slots (allocating any it lacks), going
  /// on after the failures `failures` notes.
  void runSteps(Run& run, llvm::ArrayRef<Array> inputs, RunFailures& failures) const {
    std::optional<SingleThreadedBlas> serial;
    if (ranksShareThisProcess(rank_))
      serial.emplace();
    for (const Array& a : inputs) // kernels read dense arrays
      run.inputs.push_back(a.contiguous());
    run.slots.resize(program_.slots().size());
    run.values.resize(graph_->nodes().size());
    for (size_t i = 0; i < steps_.size(); ++i) {
      try {
        runStep(run, steps_[i], failures);
      } catch (const Error&) {
        failures.rethrow();
      }
      for (Value v : steps_[i].step->inputs)
        if (lastUse_[v.node->id()] == static_cast<int>(i))
          run.values[v.node->id()].clear();
    }
  }

  PreparedStep prepare(const passes::Step& s) const {
    PreparedStep p{&s, std::nullopt, {}};
    if (s.kind == passes::Step::Kind::Kernel && !passes::isDataMovement(s.nodes)) {
      auto built = codegen::buildKernel(s.nodes, s.outputs);
      if (auto* k = std::get_if<codegen::Kernel>(&built)) {
        p.kernel.emplace(std::move(*k));
        return p;
      }
    }
    for (const ir::Node* n : s.nodes) {
      p.nodes.push_back(Step::of(*n));
      p.nodes.back().rank = rank_ ? &*rank_ : nullptr;
      p.nodes.back().unread = s.unread;
    }
    return p;
  }

  Array value(const Run& run, Value v) const {
    Storage st = program_.storage(v);
    if (st.kind == Storage::Param)
      return run.inputs[st.index];
    if (st.kind == Storage::Constant)
      return constants_[st.index];
    return run.values[v.node->id()][v.index];
  }

  void bind(Run& run, Value v, Array a) const {
    Arrays& results = run.values[v.node->id()];
    if (results.size() <= v.index)
      results.resize(v.node->numResults());
    results[v.index] = std::move(a);
  }

  /// The caller's output array that `v` is written into directly, if any.
  Array directArray(const Run& run, Value v) const {
    for (size_t i = 0; i < run.direct.size(); ++i)
      if (run.direct[i].valid() && graph_->outputs()[i] == v)
        return run.direct[i];
    return Array();
  }

  /// The array a kernel writes output `o` of `s` into: the dead input the plan
  /// names, the caller's output, or the output's slot.
  Array destination(Run& run, const passes::Step& s, size_t o) const {
    Value v = s.outputs[o];
    if (s.inPlaceOf[o] >= 0)
      return value(run, s.inputs[s.inPlaceOf[o]]).reinterpret(v.type().dtype, v.type().shape);
    if (Array direct = directArray(run, v); direct.valid())
      return direct;
    int slot = program_.storage(v).index;
    Array& buffer = run.slots[slot];
    int64_t bytes = program_.slots()[slot].bytes;
    if (!buffer.valid()) {
      try {
        buffer = Array::empty(DType::F64, {bytes / 8 + (bytes % 8 != 0)});
      } catch (const AllocationError&) {
        Step step = Step::of(*v.node);
        throw AllocationError(fmt::format("{}: {}", step.who(), describeAllocation(v.type())),
                              step.loc);
      }
    }
    return buffer.reinterpret(v.type().dtype, v.type().shape);
  }

  void runStep(Run& run, const PreparedStep& p, RunFailures& failures) const {
    const passes::Step& s = *p.step;
    if (p.kernel) {
      std::vector<const void*> ins;
      for (Value v : p.kernel->kernel().inputs)
        ins.push_back(value(run, v).rawData());
      std::vector<Array> outs;
      std::vector<void*> outData;
      for (const codegen::KernelOutput& o : p.kernel->kernel().outputs) {
        size_t pos = std::find(s.outputs.begin(), s.outputs.end(), o.value) - s.outputs.begin();
        outs.push_back(destination(run, s, pos));
        outData.push_back(outs.back().rawData());
      }
      p.kernel->run(ins, outData);
      for (size_t i = 0; i < outs.size(); ++i)
        bind(run, p.kernel->kernel().outputs[i].value, outs[i]);
      return;
    }
    for (size_t i = 0; i < p.nodes.size(); ++i) {
      const ir::Node& n = *s.nodes[i];
      Arrays operands;
      for (Value v : n.operands())
        operands.push_back(value(run, v));
      // A library call writes a result the caller gets straight into its array.
      Arrays results = failures.step(p.nodes[i], operands,
                                     directArray(run, Value{const_cast<ir::Node*>(&n), 0}));
      for (unsigned r = 0; r < results.size(); ++r) {
        // Slots are written again later: never keep a view into an operand's memory
        // (a slice starts inside it).
        bool shares = std::any_of(operands.begin(), operands.end(),
                                  [&](const Array& a) { return viewsInto(results[r], a); });
        bind(run, Value{const_cast<ir::Node*>(&n), r}, shares ? results[r].clone() : results[r]);
      }
    }
  }

  /// True when `r` views memory of the dense array `a`.
  static bool viewsInto(const Array& r, const Array& a) {
    const char* p = static_cast<const char*>(r.rawData());
    const char* begin = static_cast<const char*>(a.rawData());
    return r.sharesBufferWith(a) || (p >= begin && p < begin + a.type().bytes());
  }

  std::optional<RankOf> rank_; ///< the rank the steps run as, if sharded
  std::unique_ptr<ir::Graph> graph_;
  passes::Program program_;
  std::vector<Array> constants_;
  std::vector<PreparedStep> steps_;
  std::vector<int> lastUse_; ///< by node id: the last step reading it (steps for outputs)
  std::mutex mutex_;         ///< guards idle_
  std::vector<std::unique_ptr<Run>> idle_; ///< run states of finished runs into outputs
  /// Enqueued runs. Declared last: it waits for them before the rest goes.
  WorkQueue deferred_;
};

} // namespace

std::unique_ptr<Executable> compileProgram(const ir::Graph& g, std::optional<RankOf> rank) {
  return std::make_unique<ProgramExecutable>(g, std::move(rank));
}

} // namespace graphc::cpu
