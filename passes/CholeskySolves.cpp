//===- passes/CholeskySolves.cpp - Factor and solve in one step -----------===//
//
// A walk over the library steps: a match (the three steps, the uses of what they
// absorb), the target's say (`fits`), then the steps replaced by one.
//
//===----------------------------------------------------------------------===//
#include "passes/CholeskySolves.h"

#include "passes/Match.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <map>
#include <optional>

namespace graphc::passes {
namespace {

using ir::Node;
using ir::Value;

/// A lower, left-side, non-unit triangular solve, with the factor transposed or not.
bool isSolve(const Node& n, bool transposed) {
  const ir::Attrs& a = n.attrs();
  return n.op() == ir::Op::TriangularSolve && a.flag("lower") && !a.flag("right_side") &&
         !a.flag("unit_diagonal") && a.flag("transpose_a") == transposed;
}

class Fuser {
public:
  Fuser(Program& p, FitsCholeskySolve fits) : p_(p), fits_(fits), dead_(p.steps().size()) {
    for (const Step& s : p.steps())
      for (Value v : s.inputs)
        ++uses_[{v.node, v.index}];
    for (Value v : p.graph().outputs())
      ++uses_[{v.node, v.index}];
  }

  int run() {
    int made = 0;
    std::vector<Step>& steps = p_.steps();
    for (size_t i = 0; i + 2 < steps.size(); ++i)
      made += fuseAt(i);
    size_t kept = 0;
    for (size_t i = 0; i < steps.size(); ++i)
      if (!dead_[i] && kept++ != i)
        steps[kept - 1] = std::move(steps[i]);
    steps.resize(kept);
    if (made)
      p_.countTraffic();
    return made;
  }

private:
  bool usedOnly(Value v, int times) { return uses_[{v.node, v.index}] == times; }

  const Node* library(size_t i) const {
    const Step& s = p_.steps()[i];
    return !dead_[i] && s.kind == Step::Kind::Library && s.outputs.size() == 1 ? s.nodes.front()
                                                                               : nullptr;
  }

  /// The live step before `end` that writes `v`, or -1.
  int producer(Value v, size_t end) const {
    for (size_t j = end; j-- > 0;)
      if (!dead_[j])
        for (Value o : p_.steps()[j].outputs)
          if (o == v)
            return static_cast<int>(j);
    return -1;
  }

  /// Fuses the solve whose Cholesky is step i, if it is one; returns 1 if it did.
  int fuseAt(size_t i) {
    const Node *chol = library(i), *lower = library(i + 1), *upper = library(i + 2);
    if (!chol || !lower || !upper || chol->op() != ir::Op::Cholesky ||
        chol->attrs().flag("upper") || !isSolve(*lower, false) || !isSolve(*upper, true))
      return 0;
    std::vector<Step>& steps = p_.steps();
    Value a = chol->operand(0), l = steps[i].outputs[0], b = lower->operand(1),
          y = steps[i + 1].outputs[0], x = steps[i + 2].outputs[0];
    if (lower->operand(0) != l || upper->operand(0) != l || upper->operand(1) != y ||
        !usedOnly(l, 2) || !usedOnly(y, 1))
      return 0;
    int64_t cols = b.type().shape.back();
    size_t bytes = ir::dtypeSize(a.type().dtype);
    Step fused;
    fused.kind = Step::Kind::CholeskySolve;
    fused.spd = {SpdMatrices::Matrix, a.type().shape.back()};
    if (!fits_(fused.spd, cols, bytes))
      return 0;
    fused.inputs = {a, b};
    fused.outputs = {x};
    fused.inPlaceOf = {-1};
    std::vector<size_t> absorbed{i, i + 1, i + 2};
    if (auto formed = formingSteps(i, a, cols, bytes)) {
      fused.spd = formed->spd;
      fused.inputs[0] = formed->factor;
      absorbed.insert(absorbed.begin(), formed->steps.begin(), formed->steps.end());
    }
    for (size_t j : absorbed) {
      fused.nodes.insert(fused.nodes.end(), steps[j].nodes.begin(), steps[j].nodes.end());
      dead_[j] = true;
    }
    dead_[i] = false;
    steps[i] = std::move(fused);
    return 1;
  }

  /// A fused kernel writing only A (read by nothing else), from a Gram matrix a
  /// library step writes for that kernel alone: their steps, in order.
  struct Formed {
    SpdMatrices spd;
    Value factor;
    std::vector<size_t> steps;
  };
  std::optional<Formed> formingSteps(size_t solve, Value a, int64_t cols, size_t bytes) {
    int kernel = producer(a, solve);
    if (kernel < 0 || !usedOnly(a, 1))
      return std::nullopt;
    const Step& k = p_.steps()[kernel];
    if (k.kind != Step::Kind::Kernel || k.outputs.size() != 1)
      return std::nullopt;
    llvm::SmallPtrSet<const Node*, 16> inKernel(k.nodes.begin(), k.nodes.end());
    std::optional<ShiftedGram> m =
        matchShiftedGram(a, [&](const Node& n) { return inKernel.count(&n) != 0; });
    if (!m || !usedOnly(m->product, 1))
      return std::nullopt;
    int gram = producer(m->product, static_cast<size_t>(kernel));
    if (gram < 0 || !library(static_cast<size_t>(gram)))
      return std::nullopt;
    SpdMatrices spd{m->gram.transposed ? SpdMatrices::GramTransposed : SpdMatrices::Gram,
                    a.type().shape.back(), m->gram.rank(), m->scale, m->shift};
    if (!fits_(spd, cols, bytes))
      return std::nullopt;
    return Formed{spd, m->gram.factor, {static_cast<size_t>(gram), static_cast<size_t>(kernel)}};
  }

  Program& p_;
  FitsCholeskySolve fits_;
  std::vector<bool> dead_;
  std::map<std::pair<const Node*, unsigned>, int> uses_; // steps and outputs reading a value
};

} // namespace

int fuseCholeskySolves(Program& p, FitsCholeskySolve fits) {
  return Fuser(p, fits).run();
}

} // namespace graphc::passes
