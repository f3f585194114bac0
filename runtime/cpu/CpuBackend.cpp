//===- runtime/cpu/CpuBackend.cpp - The CPU backends ----------------------===//
//
// Two backends share the kernels of this folder:
//  - "cpu" runs the lowered program (runtime/cpu/ProgramExecutable.cpp): fused
//    kernels over planned buffers, library calls through BLAS/LAPACK.
//  - "cpu-unfused" runs the graph node by node, each op's own kernel writing a new
//    array: the reference the fused backend is tested against, and the baseline of
//    the fusion benchmarks. compile() copies the live nodes into a list of Steps in
//    topological order and notes each one's last use; run() walks the steps and
//    drops intermediate arrays after their last use.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CpuBackend.h"

#include "ir/OpCases.h"

#include "runtime/cpu/Kernels.h"

#include <fmt/format.h>

#include <cstring>

namespace graphc {
namespace cpu {

Step Step::of(const ir::Node& n) {
  Step s{n.op(), n.attrs(), {}, {}, n.name(), n.loc()};
  s.types.assign(n.types().begin(), n.types().end());
  return s;
}

std::string Step::who() const {
  std::string who = ir::opName(op).str();
  if (!name.empty())
    who += fmt::format(" (%{})", name);
  return who;
}

void Step::fail(const std::string& message) const {
  std::string who = this->who();
  if (op == ir::Op::Cholesky && attrs.flag("fallback")) // the compiler chose it: fall back
    throw FallbackError(fmt::format("{}: {}", who, message), loc);
  throw Error(fmt::format("{}: {}", who, message), loc);
}

namespace {

Arrays runNodeOfKind(const Step& s, llvm::ArrayRef<Array> operands, const Array& into) {
  switch (ir::opInfo(s.op).kind) {
  case ir::OpKind::Source:
    return runSource(s);
  case ir::OpKind::Shape:
    return runShapeOp(s, operands);
  case ir::OpKind::Reduce:
    return runReduce(s, operands);
  case ir::OpKind::Linalg:
    return runLinalg(s, operands, into);
  case ir::OpKind::Assume: // the identity: the result shares the operand's memory
    return {operands[0]};
  case ir::OpKind::Collective:
    return {allReduce(s.rank, operands[0], reductionOf(s.attrs))};
  case ir::OpKind::Unary:
  case ir::OpKind::Logical:
  case ir::OpKind::Binary:
  case ir::OpKind::Compare:
  case ir::OpKind::Select:
  case ir::OpKind::Cast:
    return runElementwise(s, operands);
  }
  ir::unknownOp();
}

} // namespace

bool ranksShareThisProcess(const std::optional<RankOf>& rank) {
  return rank && rank->comm && rank->comm->inProcess() && rank->comm->size() > 1;
}

Arrays runNode(const Step& s, llvm::ArrayRef<Array> operands, const Array& into) {
  try {
    return runNodeOfKind(s, operands, into);
  } catch (const AllocationError& e) {
    throw AllocationError(fmt::format("{}: {}", s.who(), e.message()), s.loc);
  }
}

Arrays RunFailures::step(const Step& s, llvm::ArrayRef<Array> operands, const Array& into) {
  try {
    return runNode(s, operands, into);
  } catch (const ItemsFailed& e) {
    failed_ = failed_ ? ItemFallbackError::merged(*failed_, e) : ItemFallbackError(e);
    return {e.result()};
  } catch (const Error&) {
    rethrow();
  }
}

void RunFailures::rethrow() const {
  if (failed_)
    throw failed_->wholeRun();
  throw;
}

void RunFailures::throwIfFailed() const {
  if (failed_)
    throw *failed_;
}

void copyResults(llvm::ArrayRef<Array> results, llvm::ArrayRef<Array> outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    Array r = results[i].contiguous();
    if (int64_t bytes = r.type().bytes(); bytes && r.rawData() != outputs[i].rawData())
      std::memcpy(outputs[i].rawData(), r.rawData(), bytes);
  }
}

namespace {

class NodeExecutable final : public Executable {
public:
  NodeExecutable(const ir::Graph& g, std::optional<RankOf> rank)
      : Executable(Signature::of(g)), rank_(std::move(rank)) {
    // Liveness: the nodes the outputs reach.
    std::vector<bool> live(g.nodes().size(), false);
    for (ir::Value v : g.outputs())
      live[v.node->id()] = true;
    for (auto it = g.nodes().rbegin(); it != g.nodes().rend(); ++it)
      if (live[(*it)->id()])
        for (ir::Value v : (*it)->operands())
          live[v.node->id()] = true;

    std::vector<unsigned> stepOf(g.nodes().size(), 0);
    for (const ir::Node* n : g.nodes()) {
      if (!live[n->id()])
        continue;
      Step s = Step::of(*n);
      s.rank = rank_ ? &*rank_ : nullptr;
      for (ir::Value v : n->operands())
        s.operands.push_back({stepOf[v.node->id()], v.index});
      stepOf[n->id()] = static_cast<unsigned>(steps_.size());
      steps_.push_back(std::move(s));
    }
    lastUse_.assign(steps_.size(), 0);
    for (unsigned i = 0; i < steps_.size(); ++i)
      for (auto [step, result] : steps_[i].operands)
        lastUse_[step] = i;
    for (ir::Value v : g.outputs()) {
      outputs_.push_back({stepOf[v.node->id()], v.index});
      lastUse_[stepOf[v.node->id()]] = static_cast<unsigned>(steps_.size());
    }
  }

  llvm::StringRef backendName() const override { return "cpu-unfused"; }

protected:
  std::vector<Array> execute(llvm::ArrayRef<Array> inputs) override {
    RunFailures failures;
    std::vector<Array> outs = runSteps(inputs, failures);
    failures.throwIfFailed();
    return outs;
  }

  /// The outputs are written before a failure of some batch items is thrown.
  void executeInto(llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs) override {
    RunFailures failures;
    copyResults(runSteps(inputs, failures), outputs);
    failures.throwIfFailed();
  }

private:
  std::vector<Array> runSteps(llvm::ArrayRef<Array> inputs, RunFailures& failures) const {
    std::optional<SingleThreadedBlas> serial;
    if (ranksShareThisProcess(rank_))
      serial.emplace();
    std::vector<Arrays> values(steps_.size());
    for (unsigned i = 0; i < steps_.size(); ++i) {
      const Step& s = steps_[i];
      llvm::SmallVector<Array, 2> operands;
      for (auto [step, result] : s.operands)
        operands.push_back(values[step][result]);
      if (s.op == ir::Op::Parameter) // kernels read contiguous arrays only
        values[i] = {inputs[s.attrs.getInt("index")].contiguous()};
      else
        values[i] = failures.step(s, operands);
      for (auto [step, result] : s.operands)
        if (lastUse_[step] == i)
          values[step].clear();
    }
    std::vector<Array> outs;
    for (auto [step, result] : outputs_)
      outs.push_back(values[step][result]);
    return outs;
  }

  std::optional<RankOf> rank_; ///< the rank the steps run as, if sharded
  std::vector<Step> steps_;
  /// The last step that reads each step's results (steps_.size() for outputs).
  std::vector<unsigned> lastUse_;
  std::vector<std::pair<unsigned, unsigned>> outputs_;
};

class CpuBackend final : public Backend {
public:
  explicit CpuBackend(bool fuse) : fuse_(fuse) {}
  llvm::StringRef name() const override { return fuse_ ? "cpu" : "cpu-unfused"; }
  std::unique_ptr<Executable> compile(const ir::Graph& g) override {
    if (fuse_)
      return compileProgram(g);
    return std::make_unique<NodeExecutable>(g, std::nullopt);
  }
  /// Ranks that are threads of this process.
  std::shared_ptr<Communicator> communicator(int ranks) override { return hostCommunicator(ranks); }
  std::unique_ptr<Executable> compileRank(const ir::Graph& g, const RankOf& rank) override {
    if (fuse_)
      return compileProgram(g, rank);
    return std::make_unique<NodeExecutable>(g, rank);
  }

private:
  bool fuse_;
};

} // namespace
} // namespace cpu

std::unique_ptr<Backend> createCpuBackend(bool fuse) {
  return std::make_unique<cpu::CpuBackend>(fuse);
}

Backend& cpuBackend(bool fuse) {
  static cpu::CpuBackend fused(true), unfused(false);
  return fuse ? fused : unfused;
}

} // namespace graphc
