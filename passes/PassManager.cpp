//===- passes/PassManager.cpp - Passes, pipelines and their reports -------===//
#include "passes/PassManager.h"

#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "passes/Canonicalize.h"
#include "passes/Centering.h"
#include "passes/LinalgForms.h"
#include "passes/LowerLinalg.h"
#include "passes/Masks.h"
#include "passes/MatmulChains.h"
#include "passes/Rewrite.h"
#include "passes/ShareFactors.h"
#include "passes/SplitReductions.h"

#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

namespace graphc::passes {
namespace {

/// Every pass, once.
const Pass kPasses[] = {
    {"canonicalize", "fold constants, drop identities, CSE and DCE", canonicalize},
    {"center", "rewrite uncentered covariances as products of centered data", centerCovariances},
    {"matmul-chains",
     "re-associate matmul chains when another order costs much less; products only summed, "
     "or with a uniform factor, as sums",
     reassociateMatmuls},
    {"linalg-forms",
     "traces, quadratic forms, inverses and log-determinants through the Cholesky factor",
     rewriteLinalgForms},
    {"share-factors", "solves with one matrix and its transpose share one factorization",
     shareFactors},
    {"lower-linalg", "lower solves by structure: Cholesky, triangular, Woodbury, LU", lowerLinalg},
    {"masks", "triu and tril as elementwise selects, which fuse; the GPU backend runs it",
     masksAsSelects},
    {"split-reductions", "split reductions with few outputs in two; the GPU backend runs it",
     splitReductions},
};

/// The passes graphc runs by default, in order.
constexpr const char* kDefaultPipeline =
    "canonicalize,center,matmul-chains,linalg-forms,share-factors,lower-linalg,canonicalize";

bool logEnabled() {
  const char* log = std::getenv("GRAPHC_LOG");
  return log && (std::strstr(log, "passes") || std::strstr(log, "all"));
}

} // namespace

void PassStats::count(llvm::StringRef what, int64_t n) {
  for (auto& [name, value] : counters_)
    if (name == what) {
      value += n;
      return;
    }
  counters_.emplace_back(what.str(), n);
}

bool PassStats::changed() const {
  for (const auto& c : counters_)
    if (c.second != 0)
      return true;
  return false;
}

std::string PassStats::str() const {
  std::string out;
  for (const auto& [name, value] : counters_)
    if (value != 0)
      out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, value);
  return out.empty() ? "no change" : out;
}

llvm::ArrayRef<Pass> registeredPasses() {
  return kPasses;
}

const Pass* findPass(llvm::StringRef name) {
  for (const Pass& p : registeredPasses())
    if (p.name == name)
      return &p;
  return nullptr;
}

std::vector<const Pass*> defaultPipeline() {
  return parsePipeline(kDefaultPipeline);
}

std::vector<const Pass*> parsePipeline(llvm::StringRef spec) {
  std::vector<const Pass*> out;
  if (spec.trim() == "none")
    return out;
  llvm::SmallVector<llvm::StringRef, 8> names;
  spec.split(names, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef name : names) {
    const Pass* p = findPass(name.trim());
    if (!p) {
      std::string known;
      for (const Pass& q : registeredPasses())
        known += (known.empty() ? "" : ", ") + q.name.str();
      throw Error(fmt::format("unknown pass '{}' (known: {})", name.trim().str(), known));
    }
    out.push_back(p);
  }
  return out;
}

std::unique_ptr<ir::Graph> runPipeline(const ir::Graph& g, llvm::ArrayRef<const Pass*> passes,
                                       const PipelineOptions& options) {
  std::unique_ptr<ir::Graph> current;
  for (const Pass* pass : passes) {
    PassStats stats;
    std::unique_ptr<ir::Graph> next = pass->run(current ? *current : g, stats);
    if (options.verifyEach) {
      try {
        ir::verify(*next);
      } catch (const Error& e) {
        throw Error(fmt::format("after pass '{}': {}", pass->name.str(), e.message()), e.loc());
      }
    }
    if (logEnabled())
      fmt::print(stderr, "[graphc] @{}: {}: {}\n", g.name(), pass->name.str(), stats.str());
    if (options.afterPass)
      options.afterPass(*pass, *next, stats);
    current = std::move(next);
  }
  if (!current) // an empty pipeline still returns a fresh, dead-code-free copy
    current = rewrite(g, [](Rewriter&, const ir::Node&) { return std::nullopt; });
  return current;
}

} // namespace graphc::passes
