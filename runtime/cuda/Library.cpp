//===- runtime/cuda/Library.cpp - Linear algebra through cuBLAS/cuSOLVER --===//
//
// LibraryContext: the handles, the workspace, and the dispatch of a node to its
// Call<T> method (LibraryCall.h: BlasCalls.cpp and SolverCalls.cpp), in f64 for
// the f32 calls that widen, with the info words decoded into the CPU backend's
// messages. The workspace of a node is planned by plan() (LibraryPlan.h), the same
// function for reserve() and run(), so run() can check that the reserved workspace
// is large enough.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Library.h"

#include "ir/OpCases.h"
#include "passes/RoutePolicy.h"

#include "runtime/cuda/Check.h"
#include "runtime/cuda/Device.h"
#include "runtime/cuda/HelperKernels.h"
#include "runtime/cuda/LibraryCall.h"
#include "runtime/cuda/LibraryPlan.h"
#include "runtime/cuda/LibraryRoute.h"
#include "support/Error.h"

#include <cstring>
#include <fmt/format.h>
#include <optional>
#include <vector>

namespace graphc::cuda {

namespace {

using ir::Op;
using library::Call;
using library::Matrices;
using library::plan;
using library::Scratch;
using library::visitFloat;
using library::widens;

/// Runs one float node of a supported op; results in `unread` (LibraryContext::run)
/// that the op can skip are passed as null.
template <typename T>
void runFloat(Call<T>& call, Op op, llvm::ArrayRef<const void*> in, llvm::ArrayRef<void*> out,
              unsigned unread) {
  auto i = [&](unsigned k) { return static_cast<const T*>(in[k]); };
  auto o = [&](unsigned k) { return static_cast<T*>(out[k]); };
  auto skippable = [&](unsigned k) { return unread >> k & 1 ? nullptr : o(k); };
  switch (op) {
  case Op::Matmul:
    return call.matmul(i(0), i(1), o(0));
  case Op::Syrk:
    return call.syrk(i(0), o(0));
  case Op::Solve:
    return call.solve(i(0), i(1), o(0));
  case Op::Cholesky:
    return call.cholesky(i(0), o(0));
  case Op::TriangularSolve:
    return call.triangularSolve(i(0), i(1), o(0));
  case Op::Lu:
    return call.lu(i(0), o(0), o(1), o(2));
  case Op::Qr:
    return call.qr(i(0), skippable(0), o(1));
  case Op::Inverse:
    return call.inverse(i(0), o(0));
  case Op::Det:
  case Op::Logdet:
    return call.determinant(i(0), o(0));
  case Op::Trace:
  GRAPHC_ALL_BUT_LINALG_CASES:
    throw Error(fmt::format("internal error: {} is not a library op", ir::opName(op).str()));
  }
}

/// Runs the f32 node `n` in f64 (widens()): its operands converted into the
/// workspace, the f64 call, its results converted back.
void runWidened(const LibraryContext& ctx, const HelperKernels& kernels, const ir::Node& n,
                const Scratch& s, llvm::ArrayRef<const void*> inputs, llvm::ArrayRef<void*> outputs,
                int* info, unsigned unread) {
  auto convert = [&](const char* kernel, int64_t count, const void* from, void* to) {
    if (count > 0)
      kernels[kernel].launch(LaunchConfig::linear(count, 256, ctx.stream()), {&count, &from, &to});
  };
  double* at = static_cast<double*>(s.widened);
  std::vector<const void*> in;
  for (unsigned i = 0; i < inputs.size(); ++i) {
    convert("convert<float, double>", n.operand(i).type().numel(), inputs[i], at);
    in.push_back(at);
    at += n.operand(i).type().numel();
  }
  std::vector<void*> out;
  for (const ir::TensorType& t : n.types()) {
    out.push_back(at);
    at += t.numel();
  }
  Call<double> call(ctx, kernels, n, s, info);
  runFloat(call, n.op(), in, out, unread);
  for (unsigned i = 0; i < outputs.size(); ++i)
    if (!(unread >> i & 1))
      convert("convert<double, float>", n.type(i).numel(), out[i], outputs[i]);
}

/// trace for any numeric dtype.
void runTrace(const HelperKernels& kernels, const ir::Node& n, const void* a, void* out,
              cudaStream_t stream) {
  Matrices m(n.operand(0).type());
  const char* name = nullptr;
  switch (n.type().dtype) {
  case ir::DType::F32:
    name = "trace<float, double>";
    break;
  case ir::DType::F64:
    name = "trace<double, double>";
    break;
  case ir::DType::I32:
    name = "trace<int, unsigned>";
    break;
  default:
    name = "trace<long long, unsigned long long>";
    break;
  }
  if (m.batch > 0)
    kernels[name].launch(LaunchConfig::linear(m.batch, 256, stream),
                         {&m.batch, &m.rows, &m.cols, &a, &out});
}

/// The CPU backend's message for the info word `info` (not 0) of batch item `b` of
/// `n` (without the "op (%name): " prefix).
std::string itemFailure(const ir::Node& n, int64_t b, int info) {
  if (info < 0)
    return fmt::format("internal error: argument {} of the library call was invalid "
                       "(batch item {})",
                       -info, b);
  switch (n.op()) {
  case Op::Cholesky:
    return fmt::format("matrix is not positive definite (batch item {}, leading minor {})", b,
                       info);
  case Op::TriangularSolve:
    return fmt::format("matrix is singular (batch item {}, A({},{}) = 0)", b, info, info);
  case Op::Matmul:
  case Op::Solve:
  case Op::Lu:
  case Op::Qr:
  case Op::Inverse:
  case Op::Det:
  case Op::Logdet:
  case Op::Trace:
  case Op::Syrk:
  GRAPHC_ALL_BUT_LINALG_CASES:
    break;
  }
  return fmt::format("matrix is singular (batch item {}, U({},{}) = 0)", b, info, info);
}

} // namespace

//===----------------------------------------------------------------------===//
// LibraryContext
//===----------------------------------------------------------------------===//

/// cuBLAS's own workspace (the size NVIDIA recommends for Hopper), given to it so
/// that it never allocates while a graph runs.
constexpr size_t kCublasWorkspaceBytes = 32u << 20;

LibraryContext::LibraryContext(int device, cudaStream_t stream)
    : device_(device), stream_(stream),
      // sm_90 (H100, H200): dgemm at 58.8 TFLOP/s on the f64 tensor cores, sgemm at
      // 41.7 on the FMA units. Other GPUs either lack f64 tensor cores or run f64 at
      // a fraction of f32 (sm_80's are even, sm_100's f64 is half its f32).
      singleInDouble_(deviceInfo(device).major == 9) {
  ScopedDevice on(device);
  try {
    kernels_ = &HelperKernels::forCurrentDevice();
    GRAPHC_CUDA_CHECK(cublasCreate(&cublas_));
    GRAPHC_CUDA_CHECK(cusolverDnCreate(&cusolver_));
    GRAPHC_CUDA_CHECK(cublasSetStream(cublas_, stream));
    GRAPHC_CUDA_CHECK(cusolverDnSetStream(cusolver_, stream));
    cublasWorkspace_ = DeviceBuffer(DevicePool::forDevice(device), kCublasWorkspaceBytes, stream);
    GRAPHC_CUDA_CHECK(cublasSetWorkspace(cublas_, cublasWorkspace_.data(), kCublasWorkspaceBytes));
  } catch (...) { // e.g. out of device memory: no destructor runs for this one
    destroyHandles();
    throw;
  }
}

LibraryContext::~LibraryContext() {
  destroyHandles();
}

void LibraryContext::destroyHandles() noexcept {
  // Errors at teardown have nowhere to go.
  if (cusolver_)
    cusolverDnDestroy(cusolver_);
  if (cublas_)
    cublasDestroy(cublas_);
  cusolver_ = nullptr;
  cublas_ = nullptr;
}

bool LibraryContext::supports(const ir::Node& n) {
  if (n.kind() != ir::OpKind::Linalg || n.operands().empty())
    return false;
  ir::DType dtype = n.operand(0).type().dtype;
  return n.op() == Op::Trace ? ir::isNumeric(dtype) : ir::isFloat(dtype);
}

int64_t LibraryContext::infoCount(const ir::Node& n) {
  switch (n.op()) {
  case Op::Cholesky:
  case Op::Solve:
  case Op::Inverse:
  case Op::TriangularSolve:
    return Matrices(n.operand(0).type()).batch;
  case Op::Matmul:
  case Op::Lu:
  case Op::Qr:
  case Op::Det:
  case Op::Logdet:
  case Op::Trace:
  case Op::Syrk:
  GRAPHC_ALL_BUT_LINALG_CASES:
    return 0;
  }
  ir::unknownOp();
}

void LibraryContext::reserve(const ir::Node& n) {
  if (!supports(n))
    throw Error(fmt::format("internal error: {} on {} is not a CUDA library call",
                            ir::opName(n.op()).str(), n.operand(0).type().str()));
  ScopedDevice on(device_);
  size_t need = plan(cusolver_, n, nullptr, singleInDouble_).bytes;
  if (need > workspace_.bytes())
    workspace_ = DeviceBuffer(DevicePool::forDevice(device_), need, stream_);
}

void LibraryContext::run(const ir::Node& n, llvm::ArrayRef<const void*> inputs,
                         llvm::ArrayRef<void*> outputs, int* deviceInfo, unsigned unread) {
  if (!supports(n) || inputs.size() != n.operands().size() || outputs.size() != n.numResults())
    throw Error(fmt::format("internal error: bad library call of {} ({} inputs, {} outputs)",
                            ir::opName(n.op()).str(), inputs.size(), outputs.size()));
  ScopedDevice on(device_);
  Scratch s = plan(cusolver_, n, workspace_.data(), singleInDouble_);
  if (s.bytes > workspace_.bytes())
    throw Error(fmt::format("internal error: {} needs {} bytes of workspace, {} are reserved "
                            "(LibraryContext::reserve was not called for it)",
                            ir::opName(n.op()).str(), s.bytes, workspace_.bytes()));
  int64_t count = infoCount(n);
  if (count > 0) {
    if (!deviceInfo)
      throw Error(
          fmt::format("internal error: {} needs a deviceInfo array", ir::opName(n.op()).str()));
    GRAPHC_CUDA_CHECK(cudaMemsetAsync(deviceInfo, 0, count * sizeof(int), stream_));
  }
  if (n.op() == Op::Trace)
    return runTrace(*kernels_, n, inputs[0], outputs[0], stream_);
  if (passes::logRoutes() && logged_.insert(&n).second)
    logRoute(n);
  int* info = count > 0 ? deviceInfo : s.info;
  if (widens(n, singleInDouble_))
    return runWidened(*this, *kernels_, n, s, inputs, outputs, info, unread);
  visitFloat(n.operand(0).type().dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    Call<T> call(*this, *kernels_, n, s, info);
    runFloat(call, n.op(), inputs, outputs, unread);
  });
}

void LibraryContext::logRoute(const ir::Node& n) const {
  bool wide = widens(n, singleInDouble_);
  size_t elementSize = wide ? sizeof(double) : ir::dtypeSize(n.operand(0).type().dtype);
  std::string why;
  library::Route route = library::chooseRoute(
      n, elementSize, {*kernels_, batchedFactorizations_, qrRoute_, sharing_}, &why);
  std::string operands;
  for (ir::Value v : n.operands())
    operands += (operands.empty() ? "" : ", ") + v.type().str();
  fmt::print(stderr, "[graphc] route: {} of {}{}: {} ({})\n", ir::opName(n.op()).str(), operands,
             wide ? " (in f64)" : "", library::routeName(route), why);
}

bool LibraryContext::materialize(const ir::Node& n, void* out, int device, cudaStream_t stream) {
  const ir::TensorType& t = n.type();
  if ((n.op() != Op::Full && (n.op() != Op::Eye || t.shape.size() < 2)) || !ir::isFloat(t.dtype))
    return false;
  if (t.numel() == 0)
    return true;
  ScopedDevice on(device);
  const HelperKernels& kernels = HelperKernels::forCurrentDevice();
  const char* type = t.dtype == ir::DType::F32 ? "float" : "double";
  int64_t count = t.numel();
  auto config = LaunchConfig::linear(count, 256, stream);
  if (n.op() == Op::Full) {
    double value = n.attrs().getFloat("value");
    kernels[fmt::format("fill<{}>", type)].launch(config, {&count, &value, &out});
  } else {
    Matrices m(t);
    kernels[fmt::format("eye<{}>", type)].launch(config, {&m.batch, &m.rows, &m.cols, &out});
  }
  return true;
}

std::optional<std::string> LibraryContext::failure(const ir::Node& n, const int* hostInfo) {
  int64_t count = infoCount(n);
  for (int64_t b = 0; b < count; ++b)
    if (hostInfo[b] != 0)
      return itemFailure(n, b, hostInfo[b]);
  return std::nullopt;
}

std::optional<std::string> LibraryContext::summaryFailure(const ir::Node& n,
                                                          const int* hostSummary) {
  uint64_t key = 0; // ~(item << 32 | word), as firstFailure leaves it
  std::memcpy(&key, hostSummary, sizeof(key));
  if (key == 0)
    return std::nullopt;
  key = ~key;
  return itemFailure(n, static_cast<int64_t>(key >> 32), static_cast<int>(key & 0xffffffffu));
}

} // namespace graphc::cuda
