//===- runtime/cpu/HostJit.cpp - LLVM IR to machine code, kept ------------===//
//
// A disk file is
//   "GRAPHCJ1", u64 key size, key, u64 size, object file, u64 FNV-1a of all before
// (support/DiskCache.h's putString/putU64). Each module links into a JITDylib
// of its own, so an object that fails to link is dropped whole.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/HostJit.h"

#include "support/DiskCache.h"
#include "support/Error.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Scalar/EarlyCSE.h"
#include "llvm/Transforms/Scalar/IndVarSimplify.h"
#include "llvm/Transforms/Scalar/LICM.h"
#include "llvm/Transforms/Scalar/LoopPassManager.h"
#include "llvm/Transforms/Scalar/LoopRotation.h"
#include "llvm/Transforms/Scalar/SimplifyCFG.h"
#include "llvm/Transforms/Vectorize/LoopVectorize.h"

#include <fmt/format.h>

#include <map>
#include <mutex>

namespace graphc::cpu {
namespace {

constexpr char kMagic[] = "GRAPHCJ1";

std::string message(llvm::Error e) {
  return llvm::toString(std::move(e));
}

/// The object file of a disk file of `key`, if it checks out.
std::unique_ptr<llvm::MemoryBuffer> decode(llvm::StringRef file, llvm::StringRef key) {
  if (file.size() < sizeof(uint64_t))
    return nullptr;
  RecordReader r{file};
  bool magic = r.take(8) == kMagic;
  bool sameKey = r.string() == key;
  std::string object = r.string();
  uint64_t sum = r.u64();
  if (!r.ok || !magic || !sameKey || !r.data.empty() ||
      sum != fnv1a(file.drop_back(sizeof(uint64_t))))
    return nullptr;
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(object, "graphc-kernel.o");
  auto parsed = llvm::object::ObjectFile::createObjectFile(buffer->getMemBufferRef());
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return nullptr;
  }
  return buffer;
}

/// The passes kernels need, not the whole O3 pipeline (whose inliner, IPO and
/// instrumentation passes would only grow the binaries): clean-up, loop rotation
/// and invariant code motion, induction variables, the loop vectorizer (its
/// interleaving: several partial sums), clean-up again.
llvm::ModulePassManager kernelPipeline() {
  llvm::FunctionPassManager f;
  f.addPass(llvm::EarlyCSEPass());
  f.addPass(llvm::InstCombinePass());
  f.addPass(llvm::SimplifyCFGPass());
  llvm::LoopPassManager loops;
  loops.addPass(llvm::LoopRotatePass());
  loops.addPass(llvm::LICMPass());
  f.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(loops), /*UseMemorySSA=*/true));
  llvm::LoopPassManager indvars;
  indvars.addPass(llvm::IndVarSimplifyPass());
  f.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(indvars)));
  f.addPass(llvm::LoopVectorizePass());
  f.addPass(llvm::EarlyCSEPass());
  f.addPass(llvm::InstCombinePass());
  f.addPass(llvm::SimplifyCFGPass());
  llvm::ModulePassManager m;
  m.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(f)));
  return m;
}

} // namespace

struct HostJit::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::TargetMachine> tm;
  std::string target, diskDir;
  struct Module {
    llvm::orc::JITDylib* dylib = nullptr;
    std::map<std::string, void*> symbols;
  };
  std::map<std::string, Module> memory; ///< by module text
  Counts counts;
  int dylibs = 0;
  mutable std::mutex mutex;

  std::string key(const std::string& ir) const {
    return fmt::format("graphc cpu kernel {}\nllvm {}\n{}\n{}", kCpuKernelVersion,
                       LLVM_VERSION_STRING, target, ir);
  }
  std::string path(const std::string& ir) const {
    return diskDir.empty() ? "" : fmt::format("{}/cpu-{:016x}.bin", diskDir, fnv1a(key(ir)));
  }
  std::unique_ptr<llvm::MemoryBuffer> compile(const std::string& ir);
  /// Links `object` into a new JITDylib and finds `names` there.
  llvm::Expected<Module> link(std::unique_ptr<llvm::MemoryBuffer> object,
                              llvm::ArrayRef<std::string> names);
};

std::unique_ptr<llvm::MemoryBuffer> HostJit::Impl::compile(const std::string& ir) {
  llvm::LLVMContext context;
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> m =
      llvm::parseIR(llvm::MemoryBufferRef(ir, "kernel.ll"), diagnostic, context);
  if (!m) {
    std::string text;
    llvm::raw_string_ostream os(text);
    diagnostic.print("kernel.ll", os);
    throw Error(fmt::format("cpu kernel: the generated LLVM IR does not parse: {}", os.str()));
  }
  m->setDataLayout(tm->createDataLayout());
  m->setTargetTriple(tm->getTargetTriple().str());
  for (llvm::Function& f : *m)
    if (!f.isDeclaration()) {
      f.addFnAttr("target-cpu", tm->getTargetCPU());
      f.addFnAttr("target-features", tm->getTargetFeatureString());
    }
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm.get());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  kernelPipeline().run(*m, mam);
  llvm::orc::SimpleCompiler compiler(*tm);
  auto object = compiler(*m);
  if (!object)
    throw Error(fmt::format("cpu kernel: code generation failed: {}", message(object.takeError())));
  return std::move(*object);
}

llvm::Expected<HostJit::Impl::Module>
HostJit::Impl::link(std::unique_ptr<llvm::MemoryBuffer> object, llvm::ArrayRef<std::string> names) {
  auto dylib = jit->createJITDylib(fmt::format("graphc-kernel-{}", dylibs++));
  if (!dylib)
    return dylib.takeError();
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      jit->getDataLayout().getGlobalPrefix());
  if (!process)
    return process.takeError();
  dylib->addGenerator(std::move(*process));
  Module m;
  m.dylib = &*dylib;
  llvm::Error e = jit->addObjectFile(*dylib, std::move(object));
  for (const std::string& name : names) {
    if (e)
      break;
    auto symbol = jit->lookup(*dylib, name);
    if (!symbol)
      e = symbol.takeError();
    else
      m.symbols[name] = reinterpret_cast<void*>(static_cast<uintptr_t>(symbol->getAddress()));
  }
  if (e) {
    llvm::consumeError(jit->getExecutionSession().removeJITDylib(*dylib));
    return e;
  }
  return m;
}

HostJit::HostJit() : impl_(std::make_unique<Impl>()) {}
HostJit::~HostJit() = default;

HostJit* HostJit::get(std::string* why) {
  static std::string failure;
  static HostJit* jit = []() -> HostJit* {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!builder) {
      failure = message(builder.takeError());
      return nullptr;
    }
    builder->setCodeGenOptLevel(llvm::CodeGenOpt::Aggressive);
    auto tm = builder->createTargetMachine();
    if (!tm) {
      failure = message(tm.takeError());
      return nullptr;
    }
    auto lljit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*builder).create();
    if (!lljit) {
      failure = message(lljit.takeError());
      return nullptr;
    }
    auto* j = new HostJit(); // lives as long as the process: kernels point into it
    j->impl_->jit = std::move(*lljit);
    j->impl_->tm = std::move(*tm);
    j->impl_->target = fmt::format("{} {} {}", builder->getTargetTriple().str(), builder->getCPU(),
                                   builder->getFeatures().getString());
    j->setDiskDir(kernelCacheDir());
    return j;
  }();
  if (!jit && why)
    *why = failure;
  return jit;
}

std::vector<void*> HostJit::load(const std::string& ir, llvm::ArrayRef<std::string> names) {
  Impl& d = *impl_;
  std::lock_guard<std::mutex> lock(d.mutex);
  auto found = d.memory.find(ir);
  if (found != d.memory.end()) {
    ++d.counts.fromMemory;
  } else {
    std::string key = d.key(ir), path = d.path(ir);
    std::optional<Impl::Module> linked;
    if (!path.empty())
      if (std::optional<std::string> file = readWholeFile(path))
        if (auto object = decode(*file, key)) {
          auto m = d.link(std::move(object), names);
          if (m) {
            linked = std::move(*m);
            ++d.counts.fromDisk;
          } else {
            llvm::consumeError(m.takeError()); // a stale or damaged entry: compile again
          }
        }
    if (!linked) {
      std::unique_ptr<llvm::MemoryBuffer> object = d.compile(ir);
      ++d.counts.compiled;
      if (!path.empty()) {
        std::string file = kMagic;
        putString(file, key);
        putString(file, object->getBuffer());
        putU64(file, fnv1a(file));
        writeFileAtomically(path, file);
      }
      auto m = d.link(std::move(object), names);
      if (!m)
        throw Error(fmt::format("cpu kernel: linking failed: {}", message(m.takeError())));
      linked = std::move(*m);
    }
    found = d.memory.emplace(ir, std::move(*linked)).first;
  }
  std::vector<void*> out;
  for (const std::string& name : names) {
    auto it = found->second.symbols.find(name);
    if (it == found->second.symbols.end())
      throw Error(fmt::format("cpu kernel: no function {} in the module", name));
    out.push_back(it->second);
  }
  return out;
}

const std::string& HostJit::target() const {
  return impl_->target;
}

const std::string& HostJit::diskDir() const {
  return impl_->diskDir;
}

void HostJit::setDiskDir(const std::string& dir) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->diskDir = usableCacheDir(dir) ? dir : "";
}

std::string HostJit::diskPath(const std::string& ir) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->path(ir);
}

void HostJit::forgetMemory() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->memory.clear(); // their code stays linked: running kernels may hold it
}

HostJit::Counts HostJit::counts() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->counts;
}

} // namespace graphc::cpu
