//===- passes/MemoryPlan.cpp - Buffer slots for a lowered program ---------===//
//
// One walk over the steps. A Planner keeps, per slot, whether a live value holds
// it; outputs take a dying input's slot (in place), else the smallest free slot
// that fits, else a new one; a step's dead inputs free their slots after it runs.
//
//===----------------------------------------------------------------------===//
#include "passes/MemoryPlan.h"

#include <algorithm>
#include <cstdint>

namespace graphc::passes {
namespace {

using ir::Node;
using ir::Value;

/// Adds `bytes` to a byte total, saturating at INT64_MAX (each value's bytes fit,
/// checked by ir::TensorType::bytes; a sum of many need not).
void addBytes(int64_t& total, int64_t bytes) {
  if (__builtin_add_overflow(total, bytes, &total))
    total = INT64_MAX;
}

/// The state of one planning walk.
class Planner {
public:
  Planner(Program& p, const PlanOptions& options) : p_(p), options_(options) {
    const ir::Graph& g = p.graph();
    lastUse_.resize(g.nodes().size());
    slotOf_.resize(g.nodes().size());
    for (const Node* n : g.nodes()) {
      lastUse_[n->id()].assign(n->numResults(), -1);
      slotOf_[n->id()].assign(n->numResults(), -1);
    }
    for (size_t i = 0; i < p.steps().size(); ++i)
      for (Value v : p.steps()[i].inputs)
        lastUse(v) = static_cast<int>(i);
    for (Value v : g.outputs())
      lastUse(v) = static_cast<int>(p.steps().size());
    for (size_t i = 0; i < g.params().size() && i < options.donated.size(); ++i)
      if (options.donated[i]) {
        Value param = g.params()[i]->result();
        slotOf(param) = addSlot(param.type().bytes(), static_cast<int>(i));
        hold(slotOf(param), param);
      }
  }

  void run() {
    for (size_t i = 0; i < p_.steps().size(); ++i)
      planStep(static_cast<int>(i), p_.steps()[i]);
  }

private:
  int& lastUse(Value v) { return lastUse_[v.node->id()][v.index]; }
  int& slotOf(Value v) { return slotOf_[v.node->id()][v.index]; }

  int addSlot(int64_t bytes, int donatedParam = -1) {
    p_.slots().push_back({bytes, donatedParam, {}});
    busy_.push_back(false);
    return static_cast<int>(p_.slots().size()) - 1;
  }

  void hold(int slot, Value v) {
    busy_[slot] = true;
    p_.slots()[slot].values.push_back(v);
  }

  /// True when the kernel of `s` may write over its inputs: it reads each input
  /// element only at the points it writes (no data movement, no transposed reads).
  static bool mayWriteInPlace(const Step& s) {
    return s.kind == Step::Kind::Kernel && std::none_of(s.nodes.begin(), s.nodes.end(), [](auto n) {
             FusionRole role = fusionRole(*n);
             return role == FusionRole::Alone || role == FusionRole::Permute;
           });
  }

  /// The input of `s` whose buffer output `v` may take at step `i`, or -1.
  int inPlaceInput(int i, const Step& s, Value v, const std::vector<int>& taken) {
    if (!options_.inPlace || !mayWriteInPlace(s))
      return -1;
    for (size_t k = 0; k < s.inputs.size(); ++k) {
      Value in = s.inputs[k];
      int slot = slotOf(in);
      if (slot >= 0 && lastUse(in) == i &&
          std::find(taken.begin(), taken.end(), slot) == taken.end() &&
          in.type().numel() == v.type().numel() &&
          ir::dtypeSize(in.type().dtype) == ir::dtypeSize(v.type().dtype))
        return static_cast<int>(k);
    }
    return -1;
  }

  /// The smallest free slot of at least `bytes`, or a new one.
  int freeSlot(int64_t bytes) {
    int best = -1;
    for (size_t s = 0; s < busy_.size(); ++s)
      if (!busy_[s] && p_.slots()[s].bytes >= bytes &&
          (best < 0 || p_.slots()[s].bytes < p_.slots()[best].bytes))
        best = static_cast<int>(s);
    return best >= 0 ? best : addSlot(bytes);
  }

  void planStep(int i, Step& s) {
    std::vector<int> taken;
    for (size_t o = 0; o < s.outputs.size(); ++o) {
      Value v = s.outputs[o];
      int k = inPlaceInput(i, s, v, taken);
      int slot = k >= 0 ? slotOf(s.inputs[k]) : freeSlot(v.type().bytes());
      if (k >= 0)
        taken.push_back(slot);
      s.inPlaceOf[o] = k;
      slotOf(v) = slot;
      hold(slot, v);
      p_.setStorage(v, {Storage::Slot, slot});
      addBytes(p_.stats().intermediateBytes, v.type().bytes());
    }
    int64_t inUse = 0;
    for (size_t slot = 0; slot < busy_.size(); ++slot)
      if (busy_[slot] && p_.slots()[slot].donatedParam < 0)
        addBytes(inUse, p_.slots()[slot].bytes);
    p_.stats().peakBytes = std::max(p_.stats().peakBytes, inUse);
    for (Value in : s.inputs)
      if (int slot = slotOf(in); slot >= 0 && lastUse(in) == i &&
                                 std::find(taken.begin(), taken.end(), slot) == taken.end())
        busy_[slot] = false;
    for (Value v : s.outputs)
      if (lastUse(v) < i)
        busy_[slotOf(v)] = false;
  }

  Program& p_;
  const PlanOptions& options_;
  std::vector<std::vector<int>> lastUse_, slotOf_; // by node id, result index
  std::vector<bool> busy_;                         // by slot
};

} // namespace

void planMemory(Program& p, const PlanOptions& options) {
  p.slots().clear();
  p.stats() = {.trafficBytes = p.stats().trafficBytes}; // a property of the steps
  Planner(p, options).run();
  for (const Slot& s : p.slots())
    if (s.donatedParam < 0)
      addBytes(p.stats().slotBytes, s.bytes);
  for (const Node* c : p.constants())
    addBytes(p.stats().constantBytes, c->type().bytes());
}

Program lowerToProgram(const ir::Graph& g, const PlanOptions& options) {
  Program p(g, partitionForFusion(g));
  planMemory(p, options);
  return p;
}

std::string printLoweredProgram(const ir::Graph& g, const PlanOptions& options) {
  return printProgram(lowerToProgram(g, options));
}

} // namespace graphc::passes
