//===- runtime/cuda/CudaBackend.cpp - The CUDA backend --------------------===//
//
// "cuda" runs the lowered program (passes/MemoryPlan.h). compile() prepares it
// once (runtime/cuda/PreparedProgram.h): NVRTC-compiled fused kernels, cuBLAS and
// cuSOLVER calls, the rare steps that run on the host, the constants, and where each
// step finds its buffers in a run.
//
// A run happens on a lane (runtime/cuda/Lane.h): a stream with its own library handles
// and workspace (made only when the program calls cuBLAS or cuSOLVER), the plan's slots,
// and the run's
// check words (library info words and kernel error words, zeroed at the start of a run
// and copied at its end into a pinned ring the host reads after waiting). Lanes are
// made once and kept: run() takes an idle one (concurrent callers get lanes of their
// own), enqueue() uses the deferred lanes, whose rings hold many runs' checks so that
// K runs wait once. Deferred runs go round the deferred lanes (up to
// passes::chooseDeferredLanes of them, by the memory a lane holds), so that runs that
// leave the GPU mostly idle (small factorizations) overlap; their library calls choose
// routes for throughput (LibraryContext::setSharing). A run that reads or writes what
// a run queued on another lane writes (or writes what it reads) waits for that lane
// first, so runs still act in the order they were enqueued. Where the program is a
// single fused kernel, deferred runs share launches on one lane instead (RunBatch.h).
// A run enqueued with the caller's stream is ordered on it by two events. A failed
// Cholesky the compiler chose becomes a FallbackError (the run is redone with LU; an
// ItemFallbackError naming the failed items, which alone are redone where compile()
// batched the graph: the items' info words come back with a batch of up to 1024, and
// are fetched after a larger one's summary reports a failure, where the lane's last
// run made them; an earlier run's are lost, and compile()'s executable runs it again
// alone), any other failure an Error naming the op.
//
// A run's steps go on the lane's stream through runtime/cuda/StepEnqueue.h. A lane
// captures its first run as a CUDA graph (runtime/cuda/CapturedRun.h) and replays it
// afterwards, its fused kernels and copies pointed at each run's buffers.
// Programs with host steps run without a graph. GRAPHC_CUDA_GRAPHS=0 turns graphs
// off.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaBackend.h"

#include "passes/RoutePolicy.h"

#include "runtime/cuda/CapturedRun.h"
#include "runtime/cuda/Check.h"
#include "runtime/cuda/DataMovement.h"
#include "runtime/cuda/Device.h"
#include "runtime/cuda/Lane.h"
#include "runtime/cuda/PrebuiltModules.h"
#include "runtime/cuda/PreparedProgram.h"
#include "runtime/cuda/RunBatch.h"
#include "runtime/cuda/StepEnqueue.h"
#include "runtime/cuda/StepProfile.h"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>

namespace graphc::cuda {
namespace {

/// A device array of type `t` owning `buffer`'s memory. The memory goes back to the
/// pool on the legacy stream when the array dies: runs synchronize before they
/// return, so no stream still uses it then, and the executable may be gone.
Array adoptDeviceBuffer(const ir::TensorType& t, DeviceBuffer buffer) {
  DevicePool* pool = buffer.pool();
  std::shared_ptr<void> owner(buffer.detach(), [pool](void* p) { pool->release(p, nullptr); });
  return Array::fromBuffer(t.dtype, t.shape, std::move(owner), Device::Cuda);
}

/// A new device array of type `t` from the pool, ready for work on stream `s`.
Array newDeviceArray(const ir::TensorType& t, cudaStream_t s) {
  return adoptDeviceBuffer(
      t, DeviceBuffer(DevicePool::forDevice(0), std::max<int64_t>(t.bytes(), 1), s));
}

/// The process's captures (captureCounts()).
struct {
  std::atomic<uint64_t> captured{0}, failed{0};
} captures;

/// True unless GRAPHC_CUDA_GRAPHS=0.
bool graphsEnabled() {
  const char* v = std::getenv("GRAPHC_CUDA_GRAPHS");
  return !v || std::strcmp(v, "0") != 0;
}

class CudaExecutable final : public Executable {
public:
  explicit CudaExecutable(const ir::Graph& g, std::shared_ptr<NcclCommunicator> nccl = nullptr,
                          int rank = 0)
      : Executable(Signature::of(g)), prepared_(g, std::move(nccl), rank),
        pool_(DevicePool::forDevice(0)), profile_(newProfile(g, prepared_)),
        steps_(prepared_, signature().paramTypes, profile_.get()) {
    idle_.push_back(newLane());
    try {
      prepared_.uploadConstants(pool_, idle_.back()->stream);
    } catch (...) {
      // The destructor does not run: the constants made so far go back on the
      // lane's stream before the lane (a member declared later) dies.
      prepared_.releaseConstants();
      throw;
    }
  }

  ~CudaExecutable() override {
    prepared_.releaseConstants(); // released on the stream of a lane, before the lanes go
    deferred_.clear();
    idle_.clear();
  }

  llvm::StringRef backendName() const override { return "cuda"; }
  Device device() const override { return Device::Cuda; }
  Array toDevice(const Array& a) const override { return cuda::toDevice(a); }
  Array toHost(const Array& a) const override { return cuda::toHost(a); }
  Array newOutput(size_t i) const override {
    const ir::TensorType& t = signature().outputTypes.at(i);
    return emptyOnDevice(t.dtype, t.shape);
  }

protected:
  std::vector<Array> execute(llvm::ArrayRef<Array> inputs) override {
    // Declared before the lane: when the run fails on the way, the lane waits for
    // its stream (LaneGuard) before these go.
    std::vector<Array> keep; // host inputs' dense copies and their uploads
    std::vector<Array> outs;
    LaneGuard lane(*this);
    llvm::SmallVector<const void*, 8> params;
    for (const Array& a : inputs) {
      requireDense(a, params.size());
      if (a.device() == Device::Cuda) {
        params.push_back(a.rawData());
        continue;
      }
      keep.push_back(a.contiguous());
      keep.push_back(newDeviceArray(a.type(), lane->stream));
      copyAsync(keep.back().rawData(), keep[keep.size() - 2].rawData(), a.type().bytes(),
                cudaMemcpyHostToDevice, lane->stream);
      params.push_back(keep.back().rawData());
    }
    llvm::SmallVector<void*, 4> outPtrs;
    for (const ir::TensorType& t : signature().outputTypes) {
      outs.push_back(newDeviceArray(t, lane->stream));
      outPtrs.push_back(outs.back().rawData());
    }
    runNow(*lane, {params, outPtrs});
    if (!inputs.empty() && inputs.front().device() == Device::Cuda)
      return outs;
    for (Array& o : outs) {
      Array host = Array::empty(o.dtype(), o.shape());
      copyAsync(host.rawData(), o.rawData(), o.type().bytes(), cudaMemcpyDeviceToHost,
                lane->stream);
      o = host;
    }
    GRAPHC_CUDA_CHECK(cudaStreamSynchronize(lane->stream));
    return outs;
  }

  void executeInto(llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs) override {
    LaneGuard lane(*this);
    Binding b = bind(inputs, outputs);
    runNow(*lane, {b.params, b.outputs});
  }

  void enqueueRun(size_t run, llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs,
                  void* callerStream) override {
    Binding b = bind(inputs, outputs);
    Lane& lane = deferredLane(run);
    auto stream = static_cast<cudaStream_t>(callerStream);
    if (stream) { // after the caller's work so far
      GRAPHC_CUDA_CHECK(cudaEventRecord(lane.callerReady, stream));
      GRAPHC_CUDA_CHECK(cudaStreamWaitEvent(lane.stream, lane.callerReady));
    }
    llvm::SmallVector<ByteRange, 8> reads = byteRanges(inputs), writes = byteRanges(outputs);
    if (lane.batch) {
      const PreparedStep& step = prepared_.steps().front();
      KernelCall c = steps_.kernelCall(lane, {b.params, b.outputs}, step);
      lane.batch->add(step.kernel->arguments(c.ins, c.outs, c.errorWord), reads, writes,
                      lane.stream);
      if (stream) // the caller's next work waits for this run: launch it now
        lane.batch->flush(lane.stream);
    } else {
      orderAfterOtherLanes(lane, reads, writes);
      enqueueOn(lane, {b.params, b.outputs}, run);
      lane.reads.append(reads.begin(), reads.end());
      lane.writes.append(writes.begin(), writes.end());
    }
    if (stream) { // before the caller's work from now on
      GRAPHC_CUDA_CHECK(cudaEventRecord(lane.runDone, lane.stream));
      GRAPHC_CUDA_CHECK(cudaStreamWaitEvent(stream, lane.runDone));
    }
  }

  std::optional<RunFailure> finishRuns() override {
    std::optional<RunFailure> first;
    for (std::unique_ptr<Lane>& lane : deferred_) {
      if (lane->batch)
        lane->batch->flush(lane->stream);
      std::optional<RunFailure> f = finishLane(*lane);
      if (f && (!first || f->run < first->run))
        first = f;
      lane->reads.clear();
      lane->writes.clear();
    }
    return first;
  }

private:
  /// Storage for RunBuffers made from Arrays.
  struct Binding {
    llvm::SmallVector<const void*, 8> params;
    llvm::SmallVector<void*, 4> outputs;
  };

  /// The step profile of `prepared`, the program of `g`, with GRAPHC_PROFILE=steps.
  static std::unique_ptr<StepProfile> newProfile(const ir::Graph& g,
                                                 const PreparedProgram& prepared) {
    if (!StepProfile::enabled())
      return nullptr;
    std::vector<std::string> names;
    for (const PreparedStep& p : prepared.steps())
      names.push_back(p.step->name());
    return std::make_unique<StepProfile>(g.name(), std::move(names));
  }

  std::unique_ptr<Lane> newLane() const {
    return std::make_unique<Lane>(prepared_, pool_, signature().paramTypes);
  }

  /// Holds an idle lane (or a new one) for one synchronous run. A run that fails
  /// on the way (an exception leaves the guard's scope) leaves the lane settled:
  /// its stream waited for, no capture open, its ring empty.
  class LaneGuard {
  public:
    explicit LaneGuard(CudaExecutable& exe) : exe_(exe), exceptions_(std::uncaught_exceptions()) {
      {
        std::lock_guard<std::mutex> lock(exe.mutex_);
        if (!exe.idle_.empty()) {
          lane_ = std::move(exe.idle_.back());
          exe.idle_.pop_back();
        }
      }
      if (!lane_)
        lane_ = exe.newLane();
    }
    ~LaneGuard() {
      if (!lane_)
        return;
      if (std::uncaught_exceptions() > exceptions_)
        lane_->settle();
      std::lock_guard<std::mutex> lock(exe_.mutex_);
      exe_.idle_.push_back(std::move(lane_));
    }
    Lane* operator->() const { return lane_.get(); }
    Lane& operator*() const { return *lane_; }

  private:
    CudaExecutable& exe_;
    int exceptions_; ///< uncaught when the guard was made
    std::unique_ptr<Lane> lane_;
  };

  /// The bytes each of `arrays` (dense) covers.
  static llvm::SmallVector<ByteRange, 8> byteRanges(llvm::ArrayRef<Array> arrays) {
    llvm::SmallVector<ByteRange, 8> r;
    for (const Array& a : arrays)
      r.emplace_back(static_cast<const char*>(a.rawData()),
                     static_cast<const char*>(a.rawData()) + a.type().bytes());
    return r;
  }

  /// Throws when input `i`, `a`, is a strided device array: kernels and library
  /// calls read device inputs as dense arrays.
  void requireDense(const Array& a, size_t i) const {
    if (a.device() == Device::Cuda && !a.isContiguous())
      throw Error(fmt::format("@{}: input {} (%{}) is a strided device array; the cuda "
                              "backend needs dense device arrays",
                              signature().graphName, i, signature().paramNames[i]));
  }

  /// The raw buffers of the caller's arrays (dense: see requireDense).
  Binding bind(llvm::ArrayRef<Array> inputs, llvm::ArrayRef<Array> outputs) const {
    Binding b;
    for (const Array& a : inputs) {
      requireDense(a, b.params.size());
      b.params.push_back(a.rawData());
    }
    for (const Array& a : outputs)
      b.outputs.push_back(a.rawData());
    return b;
  }

  /// Enqueues run number `run` on `lane`: a replay of its captured graph where it
  /// has one (capturing it on the first run), step by step otherwise.
  void enqueueOn(Lane& lane, const RunBuffers& b, size_t run) {
    if (prepared_.checkWords() && lane.queued == kRingRuns)
      drain(lane);
    size_t slot = lane.queued;
    if (!profile_ && prepared_.capturable() && !lane.noGraph && !lane.graph && graphsEnabled())
      capture(lane, b, slot);
    if (lane.graph) {
      steps_.rebind(lane, b, slot);
      lane.graph->launch(lane.stream);
    } else if (profile_) {
      std::lock_guard<std::mutex> guard(profileMutex_); // one profiled run at a time
      steps_.enqueue(lane, b, slot, nullptr);
      profile_->finishRun(lane.stream);
    } else {
      steps_.enqueue(lane, b, slot, nullptr);
    }
    ++lane.queued;
    lane.runs.push_back(run);
  }

  /// The deferred lane of run number `run`: the one lane of a batched program (or of
  /// a profiled one), else the lanes in turn, made as they are first needed. Lanes
  /// that run beside others choose their library routes for throughput.
  Lane& deferredLane(size_t run) {
    if (deferred_.empty()) { // made whole before it is kept: making it may fail
      std::unique_ptr<Lane> first = newLane();
      if (prepared_.oneKernel())
        first->batch = std::make_unique<RunBatch>(*prepared_.steps().front().kernel, kRingRuns);
      deferredLanes_ =
          first->batch || profile_
              ? 1
              : passes::chooseDeferredLanes(passes::RoutePolicy::gpu(), laneBytes(*first));
      shareLibrary(*first);
      deferred_.push_back(std::move(first));
    }
    size_t i = run % deferredLanes_;
    while (deferred_.size() <= i) {
      deferred_.push_back(newLane());
      shareLibrary(*deferred_.back());
    }
    return *deferred_[i];
  }

  void shareLibrary(Lane& lane) const {
    if (lane.library && deferredLanes_ > 1)
      lane.library->setSharing(true);
  }

  /// The device memory `lane` holds: its slots, staging and library workspace.
  static int64_t laneBytes(const Lane& lane) {
    int64_t bytes = 0;
    for (const DeviceBuffer& d : lane.slots)
      bytes += static_cast<int64_t>(d.bytes());
    for (const DeviceBuffer& d : lane.staging)
      bytes += static_cast<int64_t>(d.bytes());
    return bytes + (lane.library ? static_cast<int64_t>(lane.library->workspaceBytes()) : 0);
  }

  /// Makes `lane` wait for each other deferred lane with a queued run whose writes
  /// overlap `reads` or `writes`, or whose reads overlap `writes`.
  void orderAfterOtherLanes(Lane& lane, llvm::ArrayRef<ByteRange> reads,
                            llvm::ArrayRef<ByteRange> writes) {
    for (std::unique_ptr<Lane>& other : deferred_)
      if (other.get() != &lane &&
          (anyOverlap(other->writes, reads) || anyOverlap(other->writes, writes) ||
           anyOverlap(other->reads, writes))) {
        GRAPHC_CUDA_CHECK(cudaEventRecord(other->tail, other->stream));
        GRAPHC_CUDA_CHECK(cudaStreamWaitEvent(lane.stream, other->tail));
      }
  }

  /// Captures a run of `lane` as its graph; a capture that fails leaves the lane
  /// running step by step, except one that ran out of device memory (e.g. while
  /// instantiating): the lane's next run tries again. The run itself is then
  /// enqueued step by step (enqueueOn).
  void capture(Lane& lane, const RunBuffers& b, size_t slot) {
    auto graph = std::make_unique<CapturedRun>();
    try {
      graph->begin(lane.stream);
      steps_.enqueue(lane, b, slot, graph.get());
      graph->end(lane.stream);
      lane.graph = std::move(graph);
      ++captures.captured;
    } catch (const DeviceOutOfMemory&) {
      graph->abandon(lane.stream);
      ++captures.failed;
    } catch (const Error&) {
      graph->abandon(lane.stream);
      lane.noGraph = true;
      ++captures.failed;
    } catch (...) { // not the capture's fault: the run fails, the stream is left usable
      graph->abandon(lane.stream);
      throw;
    }
  }

  /// Runs one call on `lane` and waits for it; throws its failure.
  void runNow(Lane& lane, const RunBuffers& b) {
    enqueueOn(lane, b, 0);
    if (std::optional<RunFailure> f = finishLane(lane))
      std::rethrow_exception(f->error);
  }

  /// Waits for the lane's queued runs and reads their checks.
  void drain(Lane& lane) {
    GRAPHC_CUDA_CHECK(cudaStreamSynchronize(lane.stream));
    for (size_t r = 0; r < lane.queued && !lane.failure; ++r) {
      // The device's info words are the last run's: the earlier runs' are gone.
      PreparedProgram::DeviceInfo deviceInfo;
      if (r + 1 == lane.queued)
        deviceInfo = [&](const PreparedStep& p) -> std::optional<std::vector<int>> {
          std::vector<int> words(static_cast<size_t>(p.infoCount));
          GRAPHC_CUDA_CHECK(cudaMemcpy(words.data(), lane.checks.as<int>() + prepared_.infoWord(p),
                                       words.size() * sizeof(int), cudaMemcpyDeviceToHost));
          return words;
        };
      if (std::exception_ptr e =
              prepared_.failureOf(lane.ring.data() + r * prepared_.checkWords(), deviceInfo))
        lane.failure = {lane.runs[r], e};
    }
    lane.runs.clear();
    lane.queued = 0;
  }

  std::optional<RunFailure> finishLane(Lane& lane) {
    drain(lane);
    if (auto f = std::exchange(lane.failure, std::nullopt))
      return RunFailure{f->first, f->second};
    return std::nullopt;
  }

  PreparedProgram prepared_;
  DevicePool& pool_;
  std::unique_ptr<StepProfile> profile_; ///< with GRAPHC_PROFILE=steps
  StepEnqueuer steps_;
  std::mutex profileMutex_;

  std::mutex mutex_; ///< guards idle_
  std::vector<std::unique_ptr<Lane>> idle_;
  std::vector<std::unique_ptr<Lane>> deferred_;
  size_t deferredLanes_ = 1; ///< how many deferred_ may grow to
};

class CudaBackend final : public Backend {
public:
  llvm::StringRef name() const override { return "cuda"; }
  std::unique_ptr<Executable> compile(const ir::Graph& g) override {
    return std::make_unique<CudaExecutable>(g);
  }
  /// Ranks meet through NCCL, rank r on GPU r; rank 0 alone so far, as every lane
  /// and pool of an executable is on GPU 0 (docs/sharding.md). One rank needs no
  /// NCCL: where it cannot be loaded, an all_reduce over one rank is its operand.
  std::shared_ptr<Communicator> communicator(int ranks) override {
    if (ranks > 1)
      throw Error(fmt::format("the cuda backend runs one rank per process so far ({} asked): "
                              "its executables use GPU 0 alone",
                              ranks));
    if (!ncclUnavailableReason().empty())
      return Backend::communicator(ranks);
    return std::make_shared<NcclCommunicator>(ranks);
  }
  std::unique_ptr<Executable> compileRank(const ir::Graph& g, const RankOf& rank) override {
    auto nccl = std::dynamic_pointer_cast<NcclCommunicator>(rank.comm);
    if (!nccl && (!rank.comm || rank.comm->size() == 1)) // the identity
      return compile(g);
    if (!nccl)
      throw Error("the cuda backend's ranks meet through NCCL: compile with the communicator "
                  "that its communicator() makes");
    if (rank.rank != 0)
      throw Error(fmt::format("rank {} of the cuda backend: its executables use GPU 0 alone so "
                              "far, rank 0",
                              rank.rank));
    return std::make_unique<CudaExecutable>(g, std::move(nccl), rank.rank);
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

Array emptyOnDevice(DType dtype, llvm::ArrayRef<int64_t> shape) {
  return newDeviceArray(ir::TensorType(dtype, shape), nullptr);
}

CaptureCounts captureCounts() {
  return {captures.captured.load(), captures.failed.load()};
}

std::unique_ptr<Backend> createCudaBackend() {
  if (!cudaAvailable())
    return nullptr;
  static std::once_flag table;
  std::call_once(table, [] { setPrebuiltTable(builtInPrebuiltTable()); });
  return std::make_unique<CudaBackend>();
}

} // namespace graphc::cuda
