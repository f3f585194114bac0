//===- runtime/cuda/Nvrtc.cpp - Compile CUDA C++ at run time --------------===//
#include "runtime/cuda/Nvrtc.h"

#include "runtime/cuda/Check.h"
#include "runtime/cuda/Device.h"
#include "support/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>
#include <memory>

namespace graphc::cuda {
namespace {

/// Owns an nvrtcProgram.
struct ProgramDeleter {
  void operator()(nvrtcProgram p) const { nvrtcDestroyProgram(&p); }
};
using Program = std::unique_ptr<std::remove_pointer_t<nvrtcProgram>, ProgramDeleter>;

/// `source` with line numbers, for error messages.
std::string numbered(llvm::StringRef source) {
  llvm::SmallVector<llvm::StringRef, 64> lines;
  source.split(lines, '\n');
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i)
    out += fmt::format("{:4} | {}\n", i + 1, lines[i].str());
  return out;
}

std::string programLog(nvrtcProgram p) {
  size_t size = 0;
  GRAPHC_CUDA_CHECK(nvrtcGetProgramLogSize(p, &size));
  std::string log(size, '\0');
  GRAPHC_CUDA_CHECK(nvrtcGetProgramLog(p, log.data()));
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
    log.pop_back();
  return log;
}

/// The current device's compute capability, or an error saying none is usable.
int currentComputeCapability() {
  if (!cudaAvailable())
    throw Error("compileCuda: no CUDA device; pass CompileOptions::computeCapability");
  int device = 0;
  GRAPHC_CUDA_CHECK(cudaGetDevice(&device));
  return deviceInfo(device).computeCapability();
}

/// Chooses "sm_XX" (CUBIN) when NVRTC supports the exact architecture, otherwise
/// "compute_XX" (PTX) for the newest supported one not above it.
std::pair<std::string, bool> chooseArchitecture(int cc, bool forcePtx) {
  std::vector<int> supported = nvrtcSupportedArchitectures();
  if (!forcePtx && llvm::is_contained(supported, cc))
    return {fmt::format("sm_{}", cc), true};
  int best = 0;
  for (int a : supported)
    if (a <= cc)
      best = a;
  if (best == 0)
    throw Error(fmt::format("compileCuda: NVRTC cannot target compute capability {} "
                            "(supported: {})",
                            cc, fmt::join(supported, ", ")));
  return {fmt::format("compute_{}", best), false};
}

} // namespace

std::vector<int> nvrtcSupportedArchitectures() {
  int count = 0;
  GRAPHC_CUDA_CHECK(nvrtcGetNumSupportedArchs(&count));
  std::vector<int> archs(count);
  GRAPHC_CUDA_CHECK(nvrtcGetSupportedArchs(archs.data()));
  llvm::sort(archs);
  return archs;
}

CompiledModule compileCuda(llvm::StringRef source, llvm::StringRef name,
                           const CompileOptions& options) {
  int cc = options.computeCapability ? options.computeCapability : currentComputeCapability();
  CompiledModule out;
  std::tie(out.architecture, out.isCubin) = chooseArchitecture(cc, options.forcePtx);

  nvrtcProgram raw = nullptr;
  std::string src = source.str(), file = name.str();
  GRAPHC_CUDA_CHECK(nvrtcCreateProgram(&raw, src.c_str(), file.c_str(), 0, nullptr, nullptr));
  Program program(raw);
  for (const std::string& expr : options.nameExpressions)
    GRAPHC_CUDA_CHECK(nvrtcAddNameExpression(raw, expr.c_str()));

  std::vector<std::string> flags = {"--gpu-architecture=" + out.architecture, "-std=c++17"};
  llvm::append_range(flags, options.flags);
  std::vector<const char*> argv;
  for (const std::string& f : flags)
    argv.push_back(f.c_str());

  nvrtcResult status = nvrtcCompileProgram(raw, static_cast<int>(argv.size()), argv.data());
  out.log = programLog(raw);
  if (status == NVRTC_ERROR_COMPILATION)
    throw Error(fmt::format("NVRTC failed to compile '{}' for {}:\n{}\nsource:\n{}", file,
                            out.architecture, out.log, numbered(source)));
  check(status, "nvrtcCompileProgram");

  size_t size = 0;
  if (out.isCubin) {
    GRAPHC_CUDA_CHECK(nvrtcGetCUBINSize(raw, &size));
    out.image.resize(size);
    GRAPHC_CUDA_CHECK(nvrtcGetCUBIN(raw, out.image.data()));
  } else {
    GRAPHC_CUDA_CHECK(nvrtcGetPTXSize(raw, &size)); // includes the terminating NUL
    out.image.resize(size);
    GRAPHC_CUDA_CHECK(nvrtcGetPTX(raw, out.image.data()));
  }
  for (const std::string& expr : options.nameExpressions) {
    const char* lowered = nullptr;
    GRAPHC_CUDA_CHECK(nvrtcGetLoweredName(raw, expr.c_str(), &lowered));
    out.loweredNames[expr] = lowered;
  }
  return out;
}

} // namespace graphc::cuda
