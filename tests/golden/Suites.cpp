//===- tests/golden/Suites.cpp - The registered golden suites -------------===//
//
// One line per suite: the name is the folder under tests/golden, the function maps
// the parsed and verified module to the text the CHECK lines run on.
//
//===----------------------------------------------------------------------===//
#include "golden/Golden.h"

#include "ir/Printer.h"
#include "passes/Canonicalize.h"
#include "passes/Centering.h"
#include "passes/Derivative.h"
#include "passes/Fusion.h"
#include "passes/LinalgForms.h"
#include "passes/LowerLinalg.h"
#include "passes/Masks.h"
#include "passes/MatmulChains.h"
#include "passes/MemoryPlan.h"
#include "passes/Shard.h"
#include "passes/Structure.h"

#include <fmt/format.h>

namespace graphc::golden {

GRAPHC_GOLDEN_SUITE(dump, [](ir::Module& m) { return ir::printModule(m); });

/// Runs `pass` on every graph of the module and prints the results.
static std::string runPass(ir::Module& m, std::unique_ptr<ir::Graph> (*pass)(const ir::Graph&,
                                                                             passes::PassStats&)) {
  for (auto& g : m.graphs) {
    passes::PassStats stats;
    g = pass(*g, stats);
  }
  return ir::printModule(m);
}

GRAPHC_GOLDEN_SUITE(canonicalize, [](ir::Module& m) { return runPass(m, passes::canonicalize); });
GRAPHC_GOLDEN_SUITE(center, [](ir::Module& m) { return runPass(m, passes::centerCovariances); });
GRAPHC_GOLDEN_SUITE(matmul_chains,
                    [](ir::Module& m) { return runPass(m, passes::reassociateMatmuls); });
GRAPHC_GOLDEN_SUITE(linalg_forms,
                    [](ir::Module& m) { return runPass(m, passes::rewriteLinalgForms); });
GRAPHC_GOLDEN_SUITE(lower_linalg, [](ir::Module& m) { return runPass(m, passes::lowerLinalg); });
GRAPHC_GOLDEN_SUITE(masks, [](ir::Module& m) { return runPass(m, passes::masksAsSelects); });

GRAPHC_GOLDEN_SUITE(structure, [](ir::Module& m) {
  std::string out;
  for (const auto& g : m.graphs)
    out += passes::printWithStructure(*g);
  return out;
});

/// The concatenated `print(g)` of every graph of the module.
static std::string printEach(const ir::Module& m, std::string (*print)(const ir::Graph&)) {
  std::string out;
  for (const auto& g : m.graphs)
    out += print(*g);
  return out;
}

GRAPHC_GOLDEN_SUITE(fuse, [](ir::Module& m) {
  return printEach(m, [](const ir::Graph& g) { return passes::printWithFusion(g); });
});

/// The lowered program; a parameter named `..._donated` is donated.
GRAPHC_GOLDEN_SUITE(lower, [](ir::Module& m) {
  return printEach(m, [](const ir::Graph& g) {
    passes::PlanOptions options;
    for (const ir::Node* p : g.params())
      options.donated.push_back(llvm::StringRef(p->name()).endswith("_donated"));
    return passes::printLoweredProgram(g, options);
  });
});

/// The derivative graph of each graph after the default pipeline: @jvp_*, @vjp_* and
/// @grad_* graphs are differentiated in that mode with respect to every float input.
GRAPHC_GOLDEN_SUITE(autodiff, [](ir::Module& m) {
  for (auto& g : m.graphs) {
    llvm::StringRef name = g->name();
    passes::DerivativeMode mode = name.startswith("jvp_")   ? passes::DerivativeMode::Jvp
                                  : name.startswith("vjp_") ? passes::DerivativeMode::Vjp
                                                            : passes::DerivativeMode::Grad;
    std::vector<unsigned> wrt;
    for (unsigned i = 0; i < g->params().size(); ++i)
      if (ir::isFloat(g->params()[i]->type().dtype))
        wrt.push_back(i);
    g = passes::runPipeline(*passes::derivative(*g, mode, wrt), passes::defaultPipeline());
  }
  return ir::printModule(m);
});

/// Each graph as rank 0 of 4 runs it (passes/Shard.h), then the axes its outputs are
/// split along. A parameter named `..._split<k>` is split along axis k; every rank
/// gets the others whole.
GRAPHC_GOLDEN_SUITE(shard, [](ir::Module& m) {
  std::string out;
  for (const auto& g : m.graphs) {
    std::vector<int> axes;
    for (const ir::Node* p : g->params()) {
      llvm::StringRef name = p->attrs().getStr("name");
      size_t at = name.rfind("_split");
      int axis = passes::kReplicated;
      if (at != llvm::StringRef::npos && name.substr(at + 6).getAsInteger(10, axis))
        axis = passes::kReplicated;
      axes.push_back(axis);
    }
    passes::ShardedGraph s = passes::shardGraph(*g, axes, 4, 0);
    out += ir::printGraph(*s.graph) + "// output axes:";
    for (int a : s.outputAxes)
      out += a == passes::kReplicated ? " replicated" : fmt::format(" {}", a);
    out += "\n";
  }
  return out;
});

} // namespace graphc::golden
