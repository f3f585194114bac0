//===- runtime/cuda/CudaBackend.cpp - The CUDA backend --------------------===//
//
// "cuda" runs the lowered program (passes/MemoryPlan.h) on one stream:
//  - kernel steps are NVRTC-compiled fused kernels (codegen/Cuda.h through the
//    kernel cache), compiled in parallel when the executable is made;
//  - library steps are cuBLAS/cuSOLVER calls (runtime/cuda/Library.h) whose
//    handles and workspaces are made once, at compile time;
//  - the data-movement ops that are groups alone (transpose, slice, concat, diag,
//    triu, ...) and the rare groups without an affine kernel run on the host
//    through the cpu backend: the one place a run synchronizes and copies (none of
//    the EnKF, chain, layernorm or batched-solve programs has such a step).
// The slots come from the stream-ordered pool once and serve every run (so one
// executable runs one call at a time). A run enqueues every step and synchronizes
// once at the end, when it reads the solvers' info words: a failed
// Cholesky the compiler chose becomes a FallbackError (the run is redone with LU),
// any other failure an Error naming the op. Inputs may be host arrays (uploaded;
// outputs come back on the host) or device arrays (outputs stay on the device and
// own their pool memory).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaBackend.h"

#include "passes/MemoryPlan.h"
#include "passes/Rewrite.h"
#include "runtime/cuda/Check.h"
#include "runtime/cuda/Device.h"
#include "runtime/cuda/FusedKernel.h"
#include "runtime/cuda/KernelCache.h"
#include "runtime/cuda/Library.h"
#include "runtime/cuda/Pool.h"

#include <fmt/format.h>
#include <map>
#include <optional>

namespace graphc::cuda {
namespace {

using ir::Value;
using passes::Storage;

/// A step that runs on the host: its one-node graph compiled on the cpu backend.
struct HostStep {
  std::unique_ptr<ir::Graph> graph;
  std::unique_ptr<Executable> exe;
};

/// One step, ready to enqueue.
struct PreparedStep {
  const passes::Step* step;
  std::unique_ptr<CudaFusedKernel> kernel;
  std::vector<HostStep> host; ///< host steps, one per node, when not a kernel or library call
  int64_t infoOffset = -1;    ///< a library call's info words in the run's info array
};

/// A copy of `n` alone in a graph whose parameters are its operands.
std::unique_ptr<ir::Graph> graphOfNode(const ir::Node& n) {
  auto g = std::make_unique<ir::Graph>(n.name().empty() ? "step" : n.name());
  llvm::SmallVector<Value, 3> operands;
  for (size_t i = 0; i < n.operands().size(); ++i)
    operands.push_back(g->addParameter(fmt::format("in{}", i), n.operand(i).type()));
  ir::Node* copy = g->create(n.op(), operands, n.attrs(),
                             llvm::SmallVector<ir::TensorType, 1>(n.types().begin(), n.types().end()),
                             n.loc(), n.name());
  for (unsigned r = 0; r < copy->numResults(); ++r)
    g->addOutput(copy->result(r));
  return g;
}

void copyAsync(void* dst, const void* src, int64_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
  if (bytes > 0)
    GRAPHC_CUDA_CHECK(cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), kind, s));
}

/// A device array of type `t` owning `buffer`'s memory. The memory goes back to the
/// pool on the legacy stream when the array dies: runs synchronize before they
/// return, so no stream still uses it then, and the executable (and its stream) may
/// be gone.
Array adoptDeviceBuffer(const ir::TensorType& t, DeviceBuffer buffer) {
  DevicePool* pool = buffer.pool();
  std::shared_ptr<void> owner(buffer.detach(), [pool](void* p) { pool->release(p, nullptr); });
  return Array::fromBuffer(t.dtype, t.shape, std::move(owner), Device::Cuda);
}

/// A new device array of type `t` from the pool, ready for work on stream `s`.
Array newDeviceArray(const ir::TensorType& t, cudaStream_t s) {
  return adoptDeviceBuffer(t, DeviceBuffer(DevicePool::forDevice(0), std::max<int64_t>(t.bytes(), 1), s));
}

class CudaExecutable final : public Executable {
public:
  explicit CudaExecutable(const ir::Graph& g)
      : Executable(Signature::of(g)),
        graph_(passes::copyLive(g)),
        program_(passes::lowerToProgram(*graph_)), pool_(DevicePool::forDevice(0)) {
    GRAPHC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    library_.emplace(0, stream_);
    uploadConstants();
    prepareSteps();
    slots_.resize(program_.slots().size());
    info_ = DeviceBuffer(pool_, std::max<int64_t>(infoWords_, 1) * sizeof(int), stream_);
  }

  ~CudaExecutable() override {
    constants_.clear();
    slots_.clear();
    info_.reset();
    library_.reset();
    cudaStreamDestroy(stream_);
  }

  llvm::StringRef backendName() const override { return "cuda"; }

protected:
  std::vector<Array> execute(llvm::ArrayRef<Array> inputs) override {
    bool onDevice = !inputs.empty() && inputs.front().device() == Device::Cuda;
    Run run;
    for (size_t i = 0; i < inputs.size(); ++i)
      run.params.push_back(paramBuffer(run, inputs[i], i));
    for (size_t i = 0; i < slots_.size(); ++i) // again where an output took the last one
      if (!slots_[i])
        slots_[i] = DeviceBuffer(pool_, std::max<int64_t>(program_.slots()[i].bytes, 1), stream_);
    for (const CudaFusedKernel* k : errorKernels_)
      k->resetError(stream_);
    for (const PreparedStep& p : steps_)
      enqueue(run, p);
    std::vector<int> info(infoWords_), errors(errorKernels_.size());
    copyAsync(info.data(), info_.data(), infoWords_ * sizeof(int), cudaMemcpyDeviceToHost,
              stream_);
    for (size_t i = 0; i < errorKernels_.size(); ++i)
      copyAsync(&errors[i], errorKernels_[i]->errorWord(), sizeof(int), cudaMemcpyDeviceToHost,
                stream_);
    std::vector<Array> outs = collectOutputs(run, onDevice);
    GRAPHC_CUDA_CHECK(cudaStreamSynchronize(stream_));
    for (size_t i = 0; i < errorKernels_.size(); ++i)
      errorKernels_[i]->throwIfFailed(errors[i]);
    checkInfo(info);
    return outs;
  }

private:
  /// The device memory of one run.
  struct Run {
    std::vector<DeviceBuffer> uploads; ///< host inputs copied to the device
    std::vector<const void*> params;
  };

  /// Fills and identities are made on the device; other constants on the host.
  void uploadConstants() {
    auto& cpu = getBackend("cpu-unfused");
    for (const ir::Node* c : program_.constants()) {
      constants_.emplace_back(pool_, std::max<int64_t>(c->type().bytes(), 1), stream_);
      if (library_->materialize(*c, constants_.back().data()))
        continue;
      HostStep h{graphOfNode(*c), nullptr};
      Array host = cpu.compile(*h.graph)->run({})[0];
      copyAsync(constants_.back().data(), host.rawData(), c->type().bytes(),
                cudaMemcpyHostToDevice, stream_);
    }
    GRAPHC_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void prepareSteps() {
    std::vector<codegen::Kernel> kernels;
    std::vector<size_t> kernelStep;
    for (const passes::Step& s : program_.steps()) {
      PreparedStep p{&s, nullptr, {}, -1};
      const ir::Node& first = *s.nodes.front();
      if (s.kind == passes::Step::Kind::Library && LibraryContext::supports(first)) {
        library_->reserve(first);
        p.infoOffset = infoWords_;
        infoWords_ += LibraryContext::infoCount(first);
      } else if (s.kind == passes::Step::Kind::Kernel &&
                 passes::fusionRole(first) != passes::FusionRole::Alone) {
        auto built = codegen::buildKernel(s.nodes, s.outputs);
        if (auto* k = std::get_if<codegen::Kernel>(&built)) {
          kernels.push_back(std::move(*k));
          kernelStep.push_back(steps_.size());
        }
      }
      steps_.push_back(std::move(p));
    }
    // Compile every kernel in parallel into the cache, then load each from it.
    std::vector<codegen::CudaKernel> sources;
    for (const codegen::Kernel& k : kernels)
      sources.push_back(codegen::emitCuda(k, "graphc_kernel"));
    KernelCache::global().compileAll(sources);
    for (size_t i = 0; i < kernels.size(); ++i) {
      auto& k = steps_[kernelStep[i]].kernel;
      k = std::make_unique<CudaFusedKernel>(std::move(kernels[i]));
      if (k->errorWord())
        errorKernels_.push_back(k.get());
    }
    for (PreparedStep& p : steps_)
      if (!p.kernel && p.infoOffset < 0)
        for (const ir::Node* n : p.step->nodes) {
          HostStep h{graphOfNode(*n), nullptr};
          h.exe = getBackend("cpu").compile(*h.graph);
          p.host.push_back(std::move(h));
        }
  }

  const void* paramBuffer(Run& run, const Array& a, size_t i) {
    if (a.device() == Device::Cuda) {
      if (!a.isContiguous())
        throw Error(fmt::format("@{}: input {} (%{}) is a strided device array; the cuda backend "
                                "needs dense device arrays",
                                signature().graphName, i, signature().paramNames[i]));
      return a.rawData();
    }
    Array dense = a.contiguous();
    run.uploads.emplace_back(pool_, std::max<int64_t>(dense.type().bytes(), 1), stream_);
    copyAsync(run.uploads.back().data(), dense.rawData(), dense.type().bytes(),
              cudaMemcpyHostToDevice, stream_);
    GRAPHC_CUDA_CHECK(cudaStreamSynchronize(stream_)); // `dense` may be a temporary copy
    return run.uploads.back().data();
  }

  void* address(Run& run, Value v) const {
    Storage st = program_.storage(v);
    switch (st.kind) {
    case Storage::Param:
      return const_cast<void*>(run.params[st.index]);
    case Storage::Constant:
      return constants_[st.index].data();
    default:
      return slots_[st.index].data();
    }
  }

  void enqueue(Run& run, const PreparedStep& p) {
    const passes::Step& s = *p.step;
    std::vector<const void*> ins;
    std::vector<void*> outs;
    if (p.kernel) {
      for (Value v : p.kernel->kernel().inputs)
        ins.push_back(address(run, v));
      for (const codegen::KernelOutput& o : p.kernel->kernel().outputs)
        outs.push_back(address(run, o.value));
      p.kernel->launch(ins, outs, stream_);
      return;
    }
    if (p.infoOffset >= 0) {
      for (Value v : s.inputs)
        ins.push_back(address(run, v));
      for (Value v : s.outputs)
        outs.push_back(address(run, v));
      library_->run(*s.nodes.front(), ins, outs, info_.as<int>() + p.infoOffset);
      return;
    }
    runOnHost(run, p);
  }

  /// Runs a step's nodes on the host: downloads their operands, uploads results.
  void runOnHost(Run& run, const PreparedStep& p) {
    const passes::Step& s = *p.step;
    std::map<std::pair<const ir::Node*, unsigned>, Array> local;
    auto hostValue = [&](Value v) {
      auto it = local.find({v.node, v.index});
      if (it != local.end())
        return it->second;
      Array a = Array::empty(v.type().dtype, v.type().shape);
      copyAsync(a.rawData(), address(run, v), v.type().bytes(), cudaMemcpyDeviceToHost, stream_);
      GRAPHC_CUDA_CHECK(cudaStreamSynchronize(stream_));
      return local[{v.node, v.index}] = a;
    };
    for (size_t i = 0; i < s.nodes.size(); ++i) {
      const ir::Node& n = *s.nodes[i];
      std::vector<Array> operands;
      for (Value v : n.operands())
        operands.push_back(hostValue(v));
      std::vector<Array> results = p.host[i].exe->run(operands);
      for (unsigned r = 0; r < results.size(); ++r)
        local[{&n, r}] = results[r];
    }
    for (Value v : s.outputs) {
      Array a = local.at({v.node, v.index}).contiguous();
      copyAsync(address(run, v), a.rawData(), v.type().bytes(), cudaMemcpyHostToDevice, stream_);
      GRAPHC_CUDA_CHECK(cudaStreamSynchronize(stream_)); // `a` dies here
    }
  }

  std::vector<Array> collectOutputs(Run& run, bool onDevice) {
    std::vector<Array> outs;
    std::map<int, Array> handedOut; // slot -> the device output that took it
    for (Value v : graph_->outputs()) {
      const ir::TensorType& t = v.type();
      Storage st = program_.storage(v);
      if (!onDevice) {
        outs.push_back(Array::empty(t.dtype, t.shape));
        copyAsync(outs.back().rawData(), address(run, v), t.bytes(), cudaMemcpyDeviceToHost,
                  stream_);
      } else if (st.kind == Storage::Slot) {
        // The output takes its slot's buffer (values sharing a slot at the end are one).
        auto it = handedOut.find(st.index);
        if (it == handedOut.end()) {
          it = handedOut.emplace(st.index, adoptDeviceBuffer(t, std::move(slots_[st.index]))).first;
        }
        outs.push_back(it->second);
      } else { // a parameter or constant: a copy the caller owns
        outs.push_back(newDeviceArray(t, stream_));
        copyAsync(outs.back().rawData(), address(run, v), t.bytes(), cudaMemcpyDeviceToDevice,
                  stream_);
      }
    }
    return outs;
  }

  /// Throws for the first library call whose info words report a failure.
  void checkInfo(const std::vector<int>& info) const {
    for (const PreparedStep& p : steps_) {
      if (p.infoOffset < 0)
        continue;
      const ir::Node& n = *p.step->nodes.front();
      std::optional<std::string> failure = LibraryContext::failure(n, info.data() + p.infoOffset);
      if (!failure)
        continue;
      std::string who = ir::opName(n.op()).str();
      if (!n.name().empty())
        who += fmt::format(" (%{})", n.name());
      std::string message = fmt::format("{}: {}", who, *failure);
      if (n.attrs().flag("fallback"))
        throw FallbackError(message, n.loc());
      throw Error(message, n.loc());
    }
  }

  std::unique_ptr<ir::Graph> graph_;
  passes::Program program_;
  DevicePool& pool_;
  cudaStream_t stream_ = nullptr;
  std::optional<LibraryContext> library_;
  std::vector<DeviceBuffer> constants_;
  /// The plan's slots and the library calls' info words, kept from run to run (a
  /// device output takes its slot, which the next run allocates again).
  std::vector<DeviceBuffer> slots_;
  DeviceBuffer info_;
  std::vector<PreparedStep> steps_;
  std::vector<const CudaFusedKernel*> errorKernels_; ///< kernels with an error word
  int64_t infoWords_ = 0;
};

class CudaBackend final : public Backend {
public:
  llvm::StringRef name() const override { return "cuda"; }
  std::unique_ptr<Executable> compile(const ir::Graph& g) override {
    return std::make_unique<CudaExecutable>(g);
  }
};

} // namespace

Array toDevice(const Array& a) {
  Array dense = a.contiguous();
  Array device = newDeviceArray(dense.type(), nullptr);
  copyAsync(device.rawData(), dense.rawData(), dense.type().bytes(), cudaMemcpyHostToDevice,
            nullptr);
  GRAPHC_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  return device;
}

Array toHost(const Array& a) {
  if (a.device() == Device::Host)
    return a;
  if (!a.isContiguous())
    throw Error("toHost: the device array is not dense");
  Array host = Array::empty(a.dtype(), a.shape());
  copyAsync(host.rawData(), a.rawData(), a.type().bytes(), cudaMemcpyDeviceToHost, nullptr);
  GRAPHC_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  return host;
}

std::unique_ptr<Backend> createCudaBackend() {
  if (!cudaAvailable())
    return nullptr;
  return std::make_unique<CudaBackend>();
}

} // namespace graphc::cuda

/// Registers "cuda" at static-initialization time (the factory gives no backend
/// where no device is present). Kept in every binary linking graphc_cuda through
/// --undefined=graphc_cuda_backend_anchor.
extern "C" {
extern int graphc_cuda_backend_anchor;
int graphc_cuda_backend_anchor = [] {
  graphc::registerBackend("cuda", [] { return graphc::cuda::createCudaBackend(); });
  return 0;
}();
}
