//===- passes/Program.cpp - The lowered program ---------------------------===//
//
// Builds the steps from a fusion partition's schedule (a kernel step writes the
// members other steps read or the graph returns; a library call writes all its
// results) and prints a program with its plan.
//
//===----------------------------------------------------------------------===//
#include "passes/Program.h"

#include "ir/Printer.h"

#include <algorithm>
#include <fmt/format.h>

namespace graphc::passes {
namespace {

using ir::Node;
using ir::Value;

/// The members of `group` and, unless it is a lone data-movement node, the sources
/// of computedSource() they read, in node order: the kernel computes those.
std::vector<const Node*> withComputedSources(const FusionGroup& group) {
  std::vector<const Node*> nodes = group.nodes;
  if (isDataMovement(nodes))
    return nodes;
  for (Value v : groupInputs(group))
    if (computedSource(*v.node))
      nodes.push_back(v.node);
  std::sort(nodes.begin(), nodes.end(),
            [](const Node* a, const Node* b) { return a->id() < b->id(); });
  return nodes;
}

/// Steps from the schedule; `stepOf` gets the step of every node a step runs
/// (computed sources aside: each kernel reading one computes its own).
std::vector<Step> buildSteps(const FusionPartition& partition, std::vector<int>& stepOf) {
  std::vector<Step> steps;
  for (const ScheduleEntry& e : partition.schedule) {
    Step s;
    if (e.library) {
      s.kind = Step::Kind::Library;
      s.nodes = {e.library};
      s.inputs.assign(e.library->operands().begin(), e.library->operands().end());
    } else {
      s.nodes = withComputedSources(partition.groups[e.group]);
      s.inputs = groupInputs(FusionGroup{s.nodes, {}, {}, {}});
    }
    for (const Node* n : s.nodes)
      if (n->kind() != ir::OpKind::Source)
        stepOf[n->id()] = static_cast<int>(steps.size());
    steps.push_back(std::move(s));
  }
  return steps;
}

/// Marks as step outputs the values read by another step or returned, and every
/// result of a library call (those read by nothing in its `unread`).
void collectOutputs(const ir::Graph& g, const std::vector<int>& stepOf, std::vector<Step>& steps) {
  auto addOutput = [&](Value v) {
    std::vector<Value>& outs = steps[stepOf[v.node->id()]].outputs;
    if (std::find(outs.begin(), outs.end(), v) == outs.end())
      outs.push_back(v);
  };
  for (size_t i = 0; i < steps.size(); ++i)
    for (Value v : steps[i].inputs)
      if (stepOf[v.node->id()] >= 0)
        addOutput(v);
  for (Value v : g.outputs())
    if (stepOf[v.node->id()] >= 0)
      addOutput(v);
  for (Step& s : steps)
    if (s.kind == Step::Kind::Library)
      for (unsigned i = 0; i < s.nodes.front()->numResults(); ++i) {
        Value v{const_cast<Node*>(s.nodes.front()), i};
        if (std::find(s.outputs.begin(), s.outputs.end(), v) == s.outputs.end())
          s.unread |= 1u << i;
        addOutput(v);
      }
  // Outputs in node order, so a step's line reads like the graph.
  for (Step& s : steps) {
    std::sort(s.outputs.begin(), s.outputs.end(), [](Value a, Value b) {
      return a.node->id() != b.node->id() ? a.node->id() < b.node->id() : a.index < b.index;
    });
    s.inPlaceOf.assign(s.outputs.size(), -1);
  }
}

std::string bytesString(int64_t bytes) {
  return fmt::format("{} B", bytes);
}

/// "slot 2 (f64[3,1], 24 B)" or "%xi (f64[3,1], 24 B, in place of %a)".
std::string outputString(const Program& p, const ir::NameTable& names, const Step& s, size_t i) {
  Value v = s.outputs[i];
  Storage st = p.storage(v);
  std::string where = st.kind == Storage::Slot ? fmt::format("slot {}", st.index) : "unplanned";
  std::string note = fmt::format("{}, {}", v.type().str(), bytesString(v.type().bytes()));
  if (s.inPlaceOf[i] >= 0)
    note += ", in place of " + names(s.inputs[s.inPlaceOf[i]]);
  if (s.unread >> v.index & 1)
    note += ", unread";
  return fmt::format("{} : {} ({})", names(v), where, note);
}

} // namespace

std::string Step::name() const {
  if (kind == Kind::Library) {
    const Node& n = *nodes.front();
    return n.attrs().empty() ? ir::opName(n.op()).str()
                             : fmt::format("{} {}", ir::opName(n.op()), ir::attrsString(n.attrs()));
  }
  std::string ops;
  for (const Node* n : nodes)
    ops += (ops.empty() ? "" : ", ") + ir::opName(n->op()).str();
  if (kind != Kind::CholeskySolve)
    return "fused[" + ops + "]";
  if (spd.form == SpdMatrices::Matrix)
    return "cholesky_solve[" + ops + "]";
  return fmt::format("cholesky_solve[{}] {{A = {} * {} + {} * I}}", ops, spd.scale,
                     spd.form == SpdMatrices::Gram ? "X X'" : "X' X", spd.shift);
}

Program::Program(const ir::Graph& g, const FusionPartition& partition) : graph_(&g) {
  storage_.resize(g.nodes().size());
  for (const Node* n : g.nodes())
    storage_[n->id()].resize(n->numResults());
  for (size_t i = 0; i < g.params().size(); ++i)
    storage_[g.params()[i]->id()][0] = {Storage::Param, static_cast<int>(i)};
  std::vector<int> stepOf(g.nodes().size(), -1);
  steps_ = buildSteps(partition, stepOf);
  collectOutputs(g, stepOf, steps_);
  countTraffic();
  // Constants: the sources steps read or the graph returns, in node order.
  std::vector<bool> read(g.nodes().size());
  for (const Step& s : steps_)
    for (Value v : s.inputs)
      read[v.node->id()] = true;
  for (Value v : g.outputs())
    read[v.node->id()] = true;
  for (const Node* n : g.nodes())
    if (read[n->id()] && n->kind() == ir::OpKind::Source && n->op() != ir::Op::Parameter) {
      storage_[n->id()][0] = {Storage::Constant, static_cast<int>(constants_.size())};
      constants_.push_back(n);
    }
}

void Program::countTraffic() {
  stats_.trafficBytes = 0;
  for (const Step& s : steps_)
    for (const std::vector<Value>* values : {&s.inputs, &s.outputs})
      for (Value v : *values)
        stats_.trafficBytes += v.type().bytes();
}

std::string printProgram(const Program& p) {
  const ir::Graph& g = p.graph();
  ir::NameTable names(g);
  std::string out = fmt::format("program @{}(", g.name());
  for (const Node* param : g.params()) {
    out += fmt::format("{}%{}: {}", param == g.params().front() ? "" : ", ", names.base(param),
                       param->type().str());
    for (const Slot& s : p.slots())
      if (s.donatedParam >= 0 && g.params()[s.donatedParam] == param)
        out += " donated";
  }
  out += ") {\n";
  for (const Node* c : p.constants())
    out += fmt::format("  const %{} = {}{} : {} ({})\n", names.base(c), ir::opName(c->op()),
                       c->attrs().empty() ? "" : " " + ir::attrsString(c->attrs()), c->type().str(),
                       bytesString(c->type().bytes()));
  for (size_t i = 0; i < p.steps().size(); ++i) {
    const Step& s = p.steps()[i];
    out += fmt::format("  step {}: {} ({}) ->", i, s.name(), ir::printValues(names, s.inputs));
    for (size_t o = 0; o < s.outputs.size(); ++o)
      out += (o ? ", " : " ") + outputString(p, names, s, o);
    out += "\n";
  }
  out += "  return " + ir::printValues(names, g.outputs()) + "\n";
  for (size_t i = 0; i < p.slots().size(); ++i) {
    const Slot& s = p.slots()[i];
    std::string kind = s.donatedParam >= 0
                           ? fmt::format(", donated %{}", names.base(g.params()[s.donatedParam]))
                           : "";
    out += fmt::format("  slot {} ({}{}): {}\n", i, bytesString(s.bytes), kind,
                       ir::printValues(names, s.values));
  }
  const MemoryStats& m = p.stats();
  auto planned = std::count_if(p.slots().begin(), p.slots().end(),
                               [](const Slot& s) { return s.donatedParam < 0; });
  out += fmt::format("  memory: peak {} in use; {} planned slot(s) of {} in all; {} if every "
                     "intermediate had its own buffer; constants {}; traffic {}\n}}\n",
                     bytesString(m.peakBytes), planned, bytesString(m.slotBytes),
                     bytesString(m.intermediateBytes), bytesString(m.constantBytes),
                     bytesString(m.trafficBytes));
  return out;
}

} // namespace graphc::passes
