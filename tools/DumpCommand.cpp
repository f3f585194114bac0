//===- tools/DumpCommand.cpp - `graphc dump` -------------------------------===//
//
// Parses and verifies a .gir module and prints it again, in the text format (the
// canonical form: every type spelled out, one node per line) or as Graphviz DOT.
// With --after=PASS it runs the pass pipeline instead and prints each graph after
// every run of PASS (or, with --after=all, the input, the graph after every pass and
// the lowered program), each block under a comment line naming the stage and what
// it changed, so a single block still parses. With --lowered it runs the pipeline
// and prints the lowered program: fused kernels and library calls over planned
// buffer slots, with peak memory; --target=cuda prints the CUDA backend's. With --cuda it prints
// the CUDA C++ generated for each kernel step of that program (codegen/Cuda.h), with --llvm the
// LLVM IR the cpu backend compiles for it (codegen/Llvm.h). With --fusion it prints each optimized
// graph with the fusion decisions: every node's kernel group or library call, and
// why each operand edge between groups is not fused (passes/Fusion.h). --batch N prints (or runs
// the passes on) each graph batched N ways along a new leading axis (passes/Batch.h).
//
//===----------------------------------------------------------------------===//
#include "tools/ArgParser.h"
#include "tools/Commands.h"
#include "tools/Input.h"
#include "tools/Output.h"
#include "tools/Pipeline.h"

#include "codegen/Cuda.h"
#include "codegen/Kernel.h"
#include "codegen/Llvm.h"
#include "ir/Dot.h"
#include "passes/Fusion.h"
#include "passes/MemoryPlan.h"
#include "runtime/Backends.h"

#include <fmt/format.h>

namespace graphc::tools {
namespace {

/// Throws UsageError unless `after` is "all" or a pass of `pipeline`.
void checkAfter(llvm::StringRef after, llvm::ArrayRef<const passes::Pass*> pipeline) {
  if (after == "all")
    return;
  const passes::Pass* pass = passes::findPass(after);
  if (!pass)
    parsePassList(after); // throws the unknown-pass error, listing the known passes
  if (!pass || !llvm::is_contained(pipeline, pass))
    throw UsageError(fmt::format("--after={}: the pipeline ({}) does not run it", after.str(),
                                 pipelineSpelling(pipeline)));
}

/// `graphc dump --after=PASS|all`, once the flags are checked.
void dumpAfter(std::FILE* out, const ir::Module& module, const PipelineFlags& flags,
               llvm::StringRef after) {
  bool all = after == "all", first = true;
  // `// ----- title -----` and the graph, after a blank line unless it is the first block.
  auto printBlock = [&](const std::string& title, const ir::Graph& g) {
    fmt::print(out, "{}// ----- {} -----\n{}", first ? "" : "\n", title,
               printGraphText(g, flags.facts()));
    first = false;
  };
  ir::Module optimized = flags.run(
      module,
      [&](const ir::Graph& g) {
        if (all)
          printBlock("input", g);
      },
      [&](const passes::Pass& pass, const ir::Graph& g, const passes::PassStats& stats) {
        if (all || pass.name == after)
          printBlock(fmt::format("after {}: {}", pass.name.str(), stats.str()), g);
      });
  if (all) // the last stage: the lowered program of each graph
    for (const auto& g : optimized.graphs)
      fmt::print(out, "\n// ----- lowered -----\n{}", passes::printLoweredProgram(*g));
}

/// `graphc dump --lowered`: the program of each optimized graph; parameters named in
/// `donate` ("a,b") give their buffers to the program.
void dumpLowered(std::FILE* out, const ir::Module& module, const PipelineFlags& flags,
                 llvm::StringRef donate, llvm::StringRef target) {
  llvm::SmallVector<llvm::StringRef, 4> names;
  donate.split(names, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef& name : names)
    name = name.trim().ltrim('%');
  ir::Module optimized = flags.run(module);
  for (const auto& g : optimized.graphs) {
    passes::PlanOptions options;
    for (const ir::Node* p : g->params())
      options.donated.push_back(llvm::is_contained(names, p->attrs().getStr("name")));
    fmt::print(out, "{}{}", g == optimized.graphs.front() ? "" : "\n",
               printLoweredProgramFor(target, *g, options));
  }
}

/// `graphc dump --cuda` (or `--llvm`): per graph, the generated CUDA C++ for a
/// compute capability 9.0 device (or the cpu
/// backend's LLVM IR, before optimization) of each kernel step of its lowered
/// program, under a `// ----- @graph step N: fused[...] -----` line.
void dumpKernels(std::FILE* out, const ir::Module& module, const PipelineFlags& flags, bool llvm) {
  ir::Module optimized = flags.run(module);
  bool first = true;
  for (const auto& g : optimized.graphs) {
    passes::Program program = passes::lowerToProgram(*g);
    for (size_t i = 0; i < program.steps().size(); ++i) {
      const passes::Step& step = program.steps()[i];
      if (step.kind != passes::Step::Kind::Kernel)
        continue;
      const char* comment = llvm ? ";" : "//"; // LLVM IR comments start with ';'
      fmt::print(out, "{}{} ----- @{} step {}: {} -----\n", first ? "" : "\n", comment, g->name(),
                 i, step.name());
      first = false;
      bool moves = passes::isDataMovement(step.nodes);
      auto kernel = codegen::buildKernel(step.nodes, step.outputs);
      if (const auto* k = std::get_if<codegen::Kernel>(&kernel); k && !moves) {
        llvm::SmallVector<llvm::StringRef, 16> lines; // the kernel's listing, as comments
        std::string listing = codegen::printKernel(*k);
        llvm::StringRef(listing).rtrim('\n').split(lines, '\n');
        for (llvm::StringRef l : lines)
          fmt::print(out, "{}   {}\n", comment, l.str());
        std::string name = fmt::format("{}_step{}", g->name(), i);
        fmt::print(out, "{}",
                   llvm ? codegen::emitCpu(*k, name).ir
                        : codegen::emitCuda(*k, name, codegen::CudaTarget::sm90()).source);
      } else
        fmt::print(out, "{} not generated: {}\n", comment,
                   moves ? "a data-movement op runs node by node" : std::get<std::string>(kernel));
    }
  }
}

/// `graphc dump --fusion`: each optimized graph with its fusion decisions.
void dumpFusion(std::FILE* out, const ir::Module& module, const PipelineFlags& flags) {
  ir::Module optimized = flags.run(module);
  for (const auto& g : optimized.graphs)
    fmt::print(out, "{}{}", g == optimized.graphs.front() ? "" : "\n", passes::printWithFusion(*g));
}

} // namespace

int runDump(llvm::ArrayRef<std::string> args) {
  std::string format = "text", after;
  PipelineFlags flags;
  ArgParser parser("graphc dump", "FILE",
                   "Parses and verifies the graphs in FILE ('-' reads standard input) and\n"
                   "prints them to standard output. With --after it runs the passes and\n"
                   "prints the graphs between them, each under a `// ----- after PASS: what\n"
                   "changed -----` line.\n\n"
                   "passes:\n" +
                       describePasses());
  parser.option("format", "FMT", "output format: text (the .gir format, default) or dot", &format,
                {"text", "dot"});
  parser.option("after", "PASS",
                "print the graphs after each run of PASS, or after every pass "
                "('all'; the input first)",
                &after);
  bool lowered = false;
  std::string donate;
  parser.flag("lowered",
              "run the passes, then print the lowered program: fused kernels and library "
              "calls over planned buffer slots, with peak memory",
              &lowered);
  parser.option("donate", "NAMES",
                "with --lowered: parameters (a,b) whose buffers the program may overwrite",
                &donate);
  std::string target = "cpu";
  parser.option("target", "BACKEND",
                "with --lowered: the program of the cpu backend (default) or of the cuda "
                "backend for a compute capability 9.0 GPU (large reductions split, small "
                "Cholesky solves fused into one step)",
                &target, {"cpu", "cuda"});
  bool cuda = false;
  parser.flag("cuda",
              "run the passes, then print the CUDA C++ generated for each kernel step of "
              "the lowered program (for a compute capability 9.0 GPU)",
              &cuda);
  bool llvmIr = false;
  parser.flag("llvm",
              "run the passes, then print the LLVM IR the cpu backend generates (and "
              "JIT-compiles) for each kernel step of the lowered program",
              &llvmIr);
  bool fusion = false;
  parser.flag("fusion",
              "run the passes, then print each graph with its fusion decisions: every node's "
              "kernel group (// group N) or library call, and why each edge between groups "
              "is not fused (the cuda backend splits large reductions first: "
              "--passes=...,split-reductions shows it)",
              &fusion);
  flags.declare(parser);
  std::string output;
  declareOutput(parser, &output);

  std::optional<std::string> file = parser.parseOneFile(args);
  if (!file) {
    fmt::print("{}", parser.help());
    return kExitOk;
  }
  if (format == "dot" && (!after.empty() || flags.facts()))
    throw UsageError("--after and --facts print text, not --format=dot");
  if (lowered && (!after.empty() || format == "dot"))
    throw UsageError("--lowered prints the program alone: not with --after or --format=dot");
  if (cuda && llvmIr)
    throw UsageError("--cuda and --llvm: one kind of kernel code at a time");
  if ((cuda || llvmIr) && (lowered || !after.empty() || format == "dot"))
    throw UsageError(fmt::format("--{} prints the kernels alone: not with --lowered, --after or "
                                 "--format=dot",
                                 cuda ? "cuda" : "llvm"));
  if (fusion && (lowered || cuda || llvmIr || !after.empty() || format == "dot"))
    throw UsageError("--fusion prints the fusion decisions alone: not with --lowered, --cuda, "
                     "--llvm, --after or --format=dot");
  if (!donate.empty() && !lowered)
    throw UsageError("--donate goes with --lowered");
  if (target != "cpu" && !lowered)
    throw UsageError("--target goes with --lowered");
  if (after.empty() && !lowered && !cuda && !llvmIr && !fusion && flags.passesGiven())
    throw UsageError(
        "--passes needs --after, --lowered, --cuda, --llvm or --fusion (or use 'graphc opt')");
  if (!after.empty())
    checkAfter(after, flags.pipeline()); // before reading the input
  Output out(output);

  ir::Module module = flags.transformed(loadModule(*file));
  if (lowered) {
    checkParamNames(module, donate, "--donate " + donate);
    dumpLowered(out.stream(), module, flags, donate, target);
  } else if (fusion) {
    dumpFusion(out.stream(), module, flags);
  } else if (cuda || llvmIr) {
    dumpKernels(out.stream(), module, flags, llvmIr);
  } else if (!after.empty()) {
    dumpAfter(out.stream(), module, flags, after);
  } else {
    fmt::print(out.stream(), "{}",
               format == "dot" ? ir::printDot(module) : printModuleText(module, flags.facts()));
  }
  out.commit();
  return kExitOk;
}

} // namespace graphc::tools
