//===- tools/RunCommand.cpp - `graphc run` ---------------------------------===//
//
// Runs one graph of a .gir file on a backend: inputs from .npy files (--input
// NAME=PATH, repeatable) or random (--random-inputs, seeded), outputs written as
// `<output-dir>/<graph>_out<i>.npy`. --batch N runs the graph batched N ways
// (every parameter and output with a leading axis of N), --passes picks the passes
// as `graphc opt` does. Prints the backend (and, for auto, why it was chosen), the
// time of the upload, the median time of a run on arrays already in the backend's
// memory, the time of the download, and each output's type and checksums (sum and
// sum of absolute values), as text or --json (tools/RunReport.h). The options are
// checked before the input is read: the backend must run here, the output
// directory must be made, and each --input must name a parameter.
// --ranks N runs the graph as N ranks (docs/sharding.md) with the parameters split
// along --split's axes: in this process (host threads), or with --connect ADDR as
// rank --rank of N processes that meet at ADDR, each reading the whole inputs and
// running on its share, writing and reporting its own share of each output.
//
//===----------------------------------------------------------------------===//
#include "passes/Shard.h"
#include "runtime/Backends.h"
#include "tools/ArgParser.h"
#include "tools/Commands.h"
#include "tools/Input.h"
#include "tools/Pipeline.h"
#include "tools/RunReport.h"
#include "tools/ShardFlags.h"

#include "runtime/core/Backend.h"
#include "runtime/core/Compile.h"
#include "runtime/core/Npy.h"
#include "runtime/core/Sharded.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <map>

namespace graphc::tools {
namespace {

/// Takes every `--input NAME=PATH` (or `--input=NAME=PATH`) out of `args`: the flag
/// repeats, which ArgParser options do not.
std::map<std::string, std::string> takeInputs(std::vector<std::string>& args) {
  std::map<std::string, std::string> inputs;
  std::vector<std::string> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string spec;
    if (args[i] == "--")
      break;
    if (args[i] == "--input") {
      if (i + 1 == args.size())
        throw UsageError("--input needs a value NAME=PATH.npy");
      spec = args[++i];
    } else if (llvm::StringRef(args[i]).startswith("--input=")) {
      spec = args[i].substr(8);
    } else {
      rest.push_back(args[i]);
      continue;
    }
    auto [name, path] = llvm::StringRef(spec).split('=');
    if (name.empty() || path.empty())
      throw UsageError(fmt::format("--input '{}' is not NAME=PATH.npy", spec));
    auto [it, added] = inputs.emplace(name.ltrim('%').str(), path.str());
    if (!added)
      throw UsageError(fmt::format("--input {} is given twice ({}, then {})", it->first, it->second,
                                   path.str()));
  }
  args = std::move(rest);
  return inputs;
}

/// A random array for parameter `type`: normal for floats, integers in [-10, 10),
/// coin flips for bool.
Array randomInput(const ir::TensorType& type, uint64_t seed) {
  if (ir::isFloat(type.dtype))
    return Array::randomNormal(type.dtype, type.shape, seed);
  return Array::randomUniform(type.dtype, type.shape, seed, -10, 10);
}

/// Throws unless every name of `files` is a parameter of `g`.
void checkInputNames(const ir::Graph& g, const std::map<std::string, std::string>& files) {
  for (const auto& [name, path] : files) {
    bool found = false;
    for (const ir::Node* p : g.params())
      found = found || p->attrs().getStr("name") == name;
    if (!found)
      throw Error(fmt::format("--input {}={}: @{} has no parameter %{} (its parameters: {})", name,
                              path, g.name(), name, paramList(g)));
  }
}

/// The arrays for the parameters of `g`: from the .npy files of `files` (whose names
/// checkInputNames() accepted), else random.
std::vector<Array> gatherInputs(const ir::Graph& g, const std::map<std::string, std::string>& files,
                                bool random, uint64_t seed, int& numRandom) {
  std::vector<Array> inputs;
  for (const ir::Node* p : g.params()) {
    const std::string& name = p->attrs().getStr("name");
    auto it = files.find(name);
    if (it != files.end()) {
      Array a = readNpy(it->second);
      if (a.type() != p->type())
        throw Error(fmt::format("input %{} of @{} is {}, but {} holds {}", name, g.name(),
                                p->type().str(), it->second, a.type().str()));
      inputs.push_back(a);
    } else if (random) {
      try {
        inputs.push_back(randomInput(p->type(), seed + inputs.size()));
      } catch (const AllocationError& e) {
        throw Error(
            fmt::format("random input for parameter %{} of @{}: {}", name, g.name(), e.message()),
            p->loc());
      }
      ++numRandom;
    } else {
      throw Error(fmt::format("no input for parameter %{} ({}) of @{}: give --input {}=PATH.npy "
                              "or --random-inputs",
                              name, p->type().str(), g.name(), name));
    }
  }
  return inputs;
}

/// Sum and sum of absolute values, in float64.
std::pair<double, double> checksums(const Array& a) {
  double sum = 0, abs = 0;
  Array c = a.contiguous();
  visitDType(c.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = c.data<T>();
    for (int64_t i = 0; i < c.numel(); ++i) {
      sum += static_cast<double>(p[i]);
      abs += std::abs(static_cast<double>(p[i]));
    }
  });
  return {sum, abs};
}

/// "axis 0: [14, 27) of 40": rank `rank`'s share of output type `whole`.
std::string shareText(const ir::TensorType& whole, int axis, int ranks, int rank) {
  passes::Share s = passes::Share::of(whole.shape[axis], ranks, rank);
  return fmt::format("axis {}: [{}, {}) of {}", axis, s.offset, s.offset + s.extent,
                     whole.shape[axis]);
}

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace

int runRun(llvm::ArrayRef<std::string> argsIn) {
  std::string graphName, backendName = "auto", seedText = "0", outputDir, repeatText = "1";
  std::string batchText, passesText, unused;
  bool random = false, json = false;
  ArgParser parser("graphc run", "FILE",
                   "Compiles one graph of FILE on a backend and runs it. Inputs come from\n"
                   ".npy files or are random; outputs are written as\n"
                   "<output-dir>/<graph>_out<i>.npy. Prints the time of the upload of the\n"
                   "inputs, the median time of a run on arrays in the backend's memory,\n"
                   "the time of the download, and each output's type and checksums.");
  parser.option("graph", "NAME", "the graph to run (needed when FILE holds several)", &graphName);
  std::vector<std::string> backends;
  for (const BackendInfo& b : knownBackends())
    backends.push_back(b.name);
  if (std::find(backends.begin(), backends.end(), "cuda") == backends.end()) // says why not
    backends.push_back("cuda");
  backends.push_back("auto");
  parser.option(
      "backend", "NAME",
      fmt::format("{} (default: auto: cuda where it runs, else cpu)", fmt::join(backends, ", ")),
      &backendName, backends);
  parser.option("input", "NAME=PATH", "the .npy file for parameter NAME (repeatable)", &unused);
  parser.flag("random-inputs", "make the inputs not given by --input random", &random);
  parser.option("seed", "N", "seed of the random inputs (default 0)", &seedText);
  parser.option("output-dir", "DIR", "write the outputs as .npy files into DIR", &outputDir);
  parser.option("repeat", "N", "runs to time; the median is printed (default 1)", &repeatText);
  parser.option("batch", "N",
                "run the graph batched N ways: every parameter and output gets a leading axis "
                "of size N",
                &batchText);
  parser.flag("json", "print the times and checksums as one JSON object", &json);
  ShardFlags shard;
  shard.declare(parser, ShardFlags::Use::Run);
  parser.option("passes", "A,B,...",
                fmt::format("the passes to run, in order, or 'none' (default: {})",
                            pipelineSpelling(passes::defaultPipeline())),
                &passesText);

  std::vector<std::string> args(argsIn.begin(), argsIn.end());
  std::map<std::string, std::string> files = takeInputs(args);
  std::optional<std::string> file = parser.parseOneFile(args);
  if (!file) {
    fmt::print("{}", parser.help());
    return kExitOk;
  }
  uint64_t seed = 0;
  int64_t repeat = 0;
  if (llvm::StringRef(seedText).getAsInteger(10, seed))
    throw UsageError(fmt::format("--seed '{}' is not a number", seedText));
  if (llvm::StringRef(repeatText).getAsInteger(10, repeat) || repeat < 1)
    throw UsageError(fmt::format("--repeat '{}' is not a positive number", repeatText));

  if (!passesText.empty())
    parsePassList(passesText); // a bad pass name is a usage error
  CompileOptions options{passesText};
  int rank = 0;
  if (shard.given()) {
    options.ranks = shard.ranks();
    options.splitAxes = shard.axes();
    rank = shard.rank();
    if (options.splitAxes.empty() && batchText.empty())
      throw UsageError("--ranks needs --split (or --batch, which splits the batch axis)");
  }

  // What the options name outside the input, before it is read.
  Backend& backend = getBackend(backendName);
  RunReport report;
  report.backend = backend.name().str();
  if (backendName == "auto")
    report.autoReason = autoBackend().reason;
  if (!outputDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(outputDir, ec);
    if (ec)
      throw Error(
          fmt::format("--output-dir {}: cannot create the directory: {}", outputDir, ec.message()));
  }

  ir::Module module = batchedModule(loadModule(*file), batchText);
  const ir::Graph* g = nullptr;
  std::vector<std::string> names;
  for (const auto& graph : module.graphs)
    names.push_back("@" + graph->name());
  if (!graphName.empty()) {
    graphName = llvm::StringRef(graphName).ltrim('@').str(); // --graph @g names @g too
    g = module.find(graphName);
    if (!g)
      throw Error(fmt::format("{} has no graph @{} (its graphs: {})", *file, graphName,
                              fmt::join(names, ", ")));
  } else if (module.graphs.size() == 1) {
    g = module.graphs.front().get();
  } else {
    throw UsageError(fmt::format("{} holds {} graphs ({}); choose one with --graph", *file,
                                 module.graphs.size(), fmt::join(names, ", ")));
  }
  checkInputNames(*g, files);

  int numRandom = 0;
  std::vector<Array> inputs = gatherInputs(*g, files, random, seed, numRandom);
  report.graph = g->name();
  report.passes = passesText;
  report.inputs = inputs.size();
  report.randomInputs = numRandom;
  report.seed = seed;
  if (options.ranks > 0 && options.splitAxes.empty()) // --batch: every batch axis
    options.splitAxes.assign(g->params().size(), 0);
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<Executable> exe;
  std::vector<int> outputAxes; // a rank's own outputs: how they lie
  if (shard.connect().empty()) {
    exe = compile(*g, backend, options);
    if (options.ranks > 0)
      report.ranks = fmt::format("{} ranks in this process", options.ranks);
  } else {
    RankOf me{socketCommunicator(shard.connect(), options.ranks, rank), rank};
    RankProgram p = compileRank(*g, backend, options, me);
    for (size_t i = 0; i < inputs.size(); ++i)
      inputs[i] = shareOf(inputs[i], p.paramAxes[i], options.ranks, rank).contiguous();
    exe = std::move(p.exe);
    outputAxes = std::move(p.outputAxes);
    report.ranks = fmt::format("rank {} of {} at {}", rank, options.ranks, shard.connect());
  }
  report.compileMs = msSince(start);

  // The upload, the runs on arrays in the backend's memory and the download, apart.
  start = std::chrono::steady_clock::now();
  std::vector<Array> resident, results;
  for (const Array& in : inputs)
    resident.push_back(exe->toDevice(in));
  report.uploadMs = msSince(start);
  try {
    for (size_t i = 0; i < exe->signature().outputTypes.size(); ++i)
      results.push_back(exe->newOutput(i));
  } catch (const AllocationError&) {
    exe->run(resident); // fails where the output is computed, naming the node
    throw;
  }
  for (int64_t i = 0; i < repeat; ++i) {
    start = std::chrono::steady_clock::now();
    exe->run(resident, results); // returns when the run is done
    report.runMs.push_back(msSince(start));
  }
  start = std::chrono::steady_clock::now();
  std::vector<Array> outputs;
  for (const Array& r : results)
    outputs.push_back(exe->toHost(r));
  report.downloadMs = msSince(start);

  for (size_t i = 0; i < outputs.size(); ++i) {
    auto [sum, abs] = checksums(outputs[i]);
    RunReport::Output o{outputs[i].type().str(), sum, abs, "", ""};
    if (!outputAxes.empty())
      o.share = outputAxes[i] == passes::kReplicated
                    ? "replicated"
                    : shareText(g->outputs()[i].type(), outputAxes[i], options.ranks, rank);
    if (!outputDir.empty()) {
      o.file = fmt::format("{}/{}_out{}.npy", outputDir, g->name(), i);
      writeNpy(o.file, outputs[i]);
    }
    report.outputs.push_back(o);
  }
  fmt::print("{}", json ? report.json() : report.text());
  return kExitOk;
}

} // namespace graphc::tools
