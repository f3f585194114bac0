//===- passes/Fusion.cpp - Partitioning a graph into fusion groups --------===//
//
// Two greedy phases over a FusionState. Phase 1 walks the live nodes from last to
// first: each fusible node joins the group of one of its users when canFuse allows
// it and the policy scores it best, or starts a group. Walking backwards lets a
// reduction claim its elementwise producers (prologue) and lets a reduction join the
// group of its elementwise users (epilogue); a group that reduces already takes it
// as a sibling or as an earlier stage over the same domain and axes (layernorm's
// mean before its variance). Phase 2 merges groups whose reductions are siblings. The
// groups and library calls are then put in a topological order and numbered.
//
//===----------------------------------------------------------------------===//
#include "passes/Fusion.h"

#include "ir/OpCases.h"
#include "passes/Rewrite.h"

#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <queue>
#include <tuple>

namespace graphc::passes {
namespace {

using ir::Node;
using ir::Op;
using ir::OpKind;

bool isReduction(const Node& n) {
  return n.kind() == OpKind::Reduce;
}

/// True when reductions `a` and `b` can share one reduction stage.
bool sameReduction(const Node& a, const Node& b) {
  return a.operand(0).type().shape == b.operand(0).type().shape &&
         a.attrs().getInts("axes") == b.attrs().getInts("axes") &&
         a.attrs().flag("keepdims") == b.attrs().flag("keepdims");
}

int64_t resultBytes(const Node& n) {
  int64_t bytes = 0;
  for (const ir::TensorType& t : n.types())
    bytes += t.bytes();
  return bytes;
}

/// Why `n` cannot be in any group, or "" when its role allows it.
std::string roleObstacle(const Node& n) {
  switch (fusionRole(n)) {
  case FusionRole::Source:
    return "a source is an input of kernels, not a member";
  case FusionRole::Library:
    return fmt::format("{} is a library call", ir::opName(n.op()));
  case FusionRole::Alone:
    return fmt::format("{} is not an index relabeling: it runs as its own kernel",
                       ir::opName(n.op()));
  default:
    return "";
  }
}

/// May the members of `g` that use reduction `r` read its value back on the domain,
/// segment by segment? Only through keepdims and broadcast_to, no reshape.
FusionDecision canBroadcastBack(const Node& r, const FusionGroup& g, const FusionState& state) {
  if (r.operand(0).type().shape == r.type().shape)
    return FusionDecision::yes();
  if (!r.attrs().flag("keepdims"))
    return FusionDecision::no("the reduction drops its axes (no keepdims): its epilogue cannot "
                              "broadcast it back segment by segment");
  for (const Node* m : g.nodes)
    if (m->op() == Op::Reshape && state.reaches(r, *m))
      return FusionDecision::no(
          fmt::format("{} reshapes the reduced value before the epilogue", state.name(*m)));
  return FusionDecision::yes();
}

/// True when reshape `n` does more than add or drop unit axes.
bool regroups(const Node& n) {
  auto squeezed = [](llvm::ArrayRef<int64_t> shape) {
    ir::Shape s;
    llvm::copy_if(shape, std::back_inserter(s), [](int64_t d) { return d != 1; });
    return s;
  };
  return squeezed(n.operand(0).type().shape) != squeezed(n.type().shape);
}

/// A transposed operand of up to this many bytes is read from cache, across rows
/// or not, in less time than a transpose step of its own takes to launch (2-3 us in
/// a captured run on the GPU): W6's antisymmetric C - C' of a 256 x 256 f64 matrix,
/// summed by rows.
constexpr int64_t kTransposedReadMaxBytes = int64_t{1} << 20;

/// True when a transpose of group `g` (or `producer`, joining it) reads more than
/// kTransposedReadMaxBytes.
bool transposesLargeValues(const FusionGroup& g, const Node& producer) {
  auto large = [](const Node* m) {
    return fusionRole(*m) == FusionRole::Permute &&
           m->operand(0).type().bytes() > kTransposedReadMaxBytes;
  };
  return large(&producer) || llvm::any_of(g.nodes, large);
}

/// Transposes of large values join groups without a reduction stage only, whose
/// segments they would make the kernel read across rows (small values, read from
/// cache, join any: kTransposedReadMaxBytes), and never below a reshape that regroups axes:
/// that reshape reads its operand by flat index, which no permutation of axes
/// follows. Nor does a group write a value it reads transposed: the kernel writes
/// its outputs at the domain's flat index.
FusionDecision canPermuteIn(const Node& producer, int id, const FusionState& state) {
  const FusionGroup& g = state.group(id);
  auto readTransposed = [&](const Node& n) {
    return llvm::any_of(g.nodes, [&](const Node* m) {
      return m != &n && fusionRole(*m) == FusionRole::Permute && state.reaches(n, *m);
    });
  };
  if (isReduction(producer) && transposesLargeValues(g, producer))
    return FusionDecision::no("the group reads a large value transposed: the reduction's "
                              "segments would be read across rows");
  if (state.escapes(producer, id) && readTransposed(producer))
    return FusionDecision::no("it is also needed outside the group, which reads it transposed");
  if (fusionRole(producer) != FusionRole::Permute)
    return FusionDecision::yes();
  if (!g.reductions.empty() && transposesLargeValues(g, producer))
    return FusionDecision::no("a transpose of a large value joins no group with a reduction "
                              "stage: the segments would be read across rows");
  for (const Node* m : g.nodes)
    if (m->op() == Op::Reshape && regroups(*m) && state.reaches(producer, *m))
      return FusionDecision::no(fmt::format(
          "{} regroups the transposed axes: no permutation of axes follows its flat index",
          state.name(*m)));
  return FusionDecision::yes();
}

/// The checks a reduction `r` joining group `id` needs beyond the common ones.
FusionDecision canJoinAsReduction(const Node& r, int id, const FusionState& state) {
  const FusionGroup& g = state.group(id);
  const ir::TensorType& in = r.operand(0).type();
  if (!g.reductions.empty()) {
    const Node& stage = *g.reductions.front();
    if (!sameReduction(r, stage))
      return FusionDecision::no(
          fmt::format("the group's reduction stage ({}) reduces another shape or other axes",
                      state.name(stage)));
    // An earlier stage (the mean before the variance): the later one reads its value
    // broadcast back along the reduced axes, at the same segment.
    bool earlier = std::any_of(g.reductions.begin(), g.reductions.end(),
                               [&](const Node* s) { return state.reaches(r, *s); });
    if (earlier)
      return canBroadcastBack(r, g, state);
    return FusionDecision::yes();
  }
  if (g.domain != in.shape && g.domain != r.type().shape)
    return FusionDecision::no(
        fmt::format("the group iterates over {}, neither the reduction's input nor its result "
                    "shape",
                    ir::shapeString(g.domain)));
  if (g.domain == in.shape && in.shape != r.type().shape)
    return canBroadcastBack(r, g, state);
  return FusionDecision::yes();
}

/// The live groups and the library calls, in a topological order.
std::vector<ScheduleEntry> scheduleUnits(const ir::Graph& g, const FusionState& state,
                                         const std::vector<int>& groupIds) {
  // Units: one per live group (in groupIds order), then one per library call.
  std::vector<int> unitOf(g.nodes().size(), -1);
  std::vector<ScheduleEntry> units;
  std::vector<unsigned> firstId;
  for (int id : groupIds) {
    for (const Node* n : state.group(id).nodes)
      unitOf[n->id()] = static_cast<int>(units.size());
    firstId.push_back(state.group(id).nodes.front()->id());
    units.push_back({id, nullptr});
  }
  for (const Node* n : g.nodes())
    if (state.isLive(*n) && fusionRole(*n) == FusionRole::Library) {
      unitOf[n->id()] = static_cast<int>(units.size());
      firstId.push_back(n->id());
      units.push_back({-1, n});
    }
  std::vector<std::vector<int>> succ(units.size());
  std::vector<int> pending(units.size(), 0);
  for (const Node* n : g.nodes())
    for (ir::Value v : n->operands()) {
      int from = unitOf[v.node->id()], to = unitOf[n->id()];
      if (from < 0 || to < 0 || from == to)
        continue;
      succ[from].push_back(to);
      ++pending[to];
    }
  // Kahn's algorithm, earliest first member first: the schedule follows the source.
  auto later = [&](int a, int b) { return firstId[a] > firstId[b]; };
  std::priority_queue<int, std::vector<int>, decltype(later)> ready(later);
  for (size_t u = 0; u < units.size(); ++u)
    if (pending[u] == 0)
      ready.push(static_cast<int>(u));
  std::vector<ScheduleEntry> order;
  while (!ready.empty()) {
    int u = ready.top();
    ready.pop();
    order.push_back(units[u]);
    for (int s : succ[u])
      if (--pending[s] == 0)
        ready.push(s);
  }
  if (order.size() != units.size())
    throw Error("fusion: the groups form a cycle (a fusion legality bug)");
  return order;
}

/// Fills the reasons of unfused edges the phases did not decide (roles).
void explainRemainingEdges(const ir::Graph& g, const FusionState& state, FusionPartition& p) {
  for (const Node* n : g.nodes()) {
    if (!state.isLive(*n))
      continue;
    for (unsigned i = 0; i < n->operands().size(); ++i) {
      const Node& producer = *n->operand(i).node;
      if (fusionRole(producer) == FusionRole::Source ||
          (p.group(producer) >= 0 && p.group(producer) == p.group(*n)))
        continue;
      std::string why = roleObstacle(*n);
      if (why.empty())
        why = roleObstacle(producer);
      p.reasons.try_emplace({n->id(), i}, why.empty() ? "not fused" : why);
    }
  }
}

} // namespace

FusionRole fusionRole(const Node& n) {
  switch (n.kind()) {
  case OpKind::Source:
    return FusionRole::Source;
  case OpKind::Reduce:
    return FusionRole::Reduction;
  case OpKind::Linalg:
  case OpKind::Collective: // a library call: the backend's communicator
    return FusionRole::Library;
  case OpKind::Shape:
    if (n.op() == Op::Transpose)
      return FusionRole::Permute;
    return n.op() == Op::BroadcastTo || n.op() == Op::Reshape ? FusionRole::Relabel
                                                              : FusionRole::Alone;
  case OpKind::Unary:
  case OpKind::Logical:
  case OpKind::Binary:
  case OpKind::Compare:
  case OpKind::Select:
  case OpKind::Cast:
  case OpKind::Assume:
    return ir::isElementwise(n.kind()) ? FusionRole::Elementwise : FusionRole::Alone;
  }
  ir::unknownOp();
}

bool isDataMovement(llvm::ArrayRef<const Node*> nodes) {
  if (nodes.size() != 1)
    return false;
  FusionRole role = fusionRole(*nodes.front());
  return role == FusionRole::Alone || role == FusionRole::Permute;
}

bool computedSource(const Node& n) {
  switch (n.op()) {
  case Op::Full:
  case Op::Eye:
  case Op::Iota:
    return true;
  case Op::Constant:
    return n.type().numel() == 1;
  case Op::Parameter:
  GRAPHC_ELEMENTWISE_CASES:
  GRAPHC_SHAPE_CASES:
  GRAPHC_REDUCE_CASES:
  GRAPHC_LINALG_CASES:
  GRAPHC_ASSUME_CASES:
  GRAPHC_COLLECTIVE_CASES:
    return false;
  }
  ir::unknownOp();
}

std::vector<ir::Value> groupInputs(const FusionGroup& group) {
  // Sets, not searches of the lists: a group of a 100,000-op chain is one kernel.
  llvm::DenseSet<const Node*> members(group.nodes.begin(), group.nodes.end());
  llvm::DenseSet<std::pair<const Node*, unsigned>> seen;
  std::vector<ir::Value> inputs;
  for (const Node* n : group.nodes)
    for (ir::Value v : n->operands())
      if (!members.count(v.node) && seen.insert({v.node, v.index}).second)
        inputs.push_back(v);
  return inputs;
}

//===----------------------------------------------------------------------===//
// FusionState
//===----------------------------------------------------------------------===//

FusionState::FusionState(const ir::Graph& g)
    : graph_(g), names_(g), users_(g.nodes().size()), isOutput_(g.nodes().size()),
      live_(liveNodes(g)), groupOf_(g.nodes().size(), -1) {
  for (const Node* n : g.nodes()) {
    if (!live_[n->id()])
      continue;
    for (ir::Value v : n->operands()) {
      auto& users = users_[v.node->id()];
      if (users.empty() || users.back() != n)
        users.push_back(n);
    }
  }
  for (ir::Value v : g.outputs())
    isOutput_[v.node->id()] = true;
}

bool FusionState::reaches(const Node& from, const Node& to) const {
  std::vector<const Node*> work{&from};
  std::vector<bool> seen(graph_.nodes().size());
  while (!work.empty()) {
    const Node* n = work.back();
    work.pop_back();
    if (n == &to)
      return true;
    for (const Node* u : users(*n))
      if (u->id() <= to.id() && !seen[u->id()]) {
        seen[u->id()] = true;
        work.push_back(u);
      }
  }
  return false;
}

const Node* FusionState::leadsInto(llvm::ArrayRef<const Node*> from, int id) const {
  std::vector<const Node*> work(from.begin(), from.end());
  std::vector<bool> seen(graph_.nodes().size()), groupSeen(groups_.size());
  for (const Node* n : from)
    seen[n->id()] = true;
  auto visit = [&](const Node* n) {
    if (!seen[n->id()])
      seen[n->id()] = true, work.push_back(n);
  };
  while (!work.empty()) {
    const Node* n = work.back();
    work.pop_back();
    int g = groupOf_[n->id()];
    if (g == id)
      return n;
    if (g >= 0 && !groupSeen[g]) {
      groupSeen[g] = true;
      for (const Node* m : groups_[g].nodes)
        visit(m);
    }
    for (const Node* u : users(*n))
      visit(u);
  }
  return nullptr;
}

bool FusionState::escapes(const Node& n, int id) const {
  return isOutput_[n.id()] || std::any_of(users(n).begin(), users(n).end(),
                                          [&](const Node* u) { return groupOf_[u->id()] != id; });
}

int FusionState::newGroup(const Node& n) {
  groups_.push_back({});
  int id = static_cast<int>(groups_.size()) - 1;
  groups_[id].domain = n.type().shape;
  join(n, id);
  return id;
}

void FusionState::join(const Node& n, int id) {
  FusionGroup& g = groups_[id];
  auto at = std::lower_bound(g.nodes.begin(), g.nodes.end(), &n,
                             [](const Node* a, const Node* b) { return a->id() < b->id(); });
  g.nodes.insert(at, &n);
  groupOf_[n.id()] = id;
  if (g.obstacle.empty())
    g.obstacle = roleObstacle(n);
  if (isReduction(n)) {
    g.reductions.push_back(&n);
    g.domain = n.operand(0).type().shape;
  }
}

void FusionState::merge(int from, int into) {
  for (const Node* n : std::vector<const Node*>(groups_[from].nodes))
    join(*n, into);
  groups_[from] = {};
}

std::vector<int> FusionState::liveGroups() const {
  std::vector<int> ids;
  for (size_t i = 0; i < groups_.size(); ++i)
    if (!groups_[i].nodes.empty())
      ids.push_back(static_cast<int>(i));
  return ids;
}

//===----------------------------------------------------------------------===//
// Legality
//===----------------------------------------------------------------------===//

FusionDecision canFuse(const Node& producer, int consumer, const FusionState& state) {
  if (std::string why = roleObstacle(producer); !why.empty())
    return FusionDecision::no(why);
  const FusionGroup& g = state.group(consumer);
  if (!g.obstacle.empty())
    return FusionDecision::no(g.obstacle);
  if (isReduction(producer))
    if (FusionDecision d = canJoinAsReduction(producer, consumer, state); !d)
      return d;
  if (FusionDecision d = canPermuteIn(producer, consumer, state); !d)
    return d;
  // A value the group writes must have one element per domain or reduced element.
  if (state.escapes(producer, consumer)) {
    const Node* stage = isReduction(producer)  ? &producer
                        : g.reductions.empty() ? nullptr
                                               : g.reductions.front();
    int64_t numel = producer.type().numel();
    int64_t domain = stage ? stage->operand(0).type().numel() : ir::numElements(g.domain);
    if (numel != domain && (!stage || numel != stage->type().numel()))
      return FusionDecision::no(fmt::format(
          "it is also needed outside the group, and the group would compute its {} elements "
          "once per element of {}",
          numel, ir::shapeString(stage ? stage->operand(0).type().shape : g.domain)));
  }
  // Acyclic: no user outside the group may lead back into it, through other groups
  // included.
  for (const Node* u : state.users(producer))
    if (state.groupOf(*u) != consumer)
      if (const Node* m = state.leadsInto({u}, consumer))
        return FusionDecision::no(
            fmt::format("its user {} feeds {} in the group: the group would wait for itself",
                        state.name(*u), state.name(*m)));
  return FusionDecision::yes();
}

FusionDecision canFuseSiblings(int a, int b, const FusionState& state) {
  const FusionGroup& ga = state.group(a);
  const FusionGroup& gb = state.group(b);
  if (ga.reductions.empty() || gb.reductions.empty())
    return FusionDecision::no("only groups with a reduction stage merge as siblings");
  if (!sameReduction(*ga.reductions.front(), *gb.reductions.front()))
    return FusionDecision::no("the reductions differ in shape, axes or keepdims");
  if (const Node* n = state.leadsInto(ga.nodes, b))
    return FusionDecision::no(fmt::format("{} depends on the other group", state.name(*n)));
  if (const Node* n = state.leadsInto(gb.nodes, a))
    return FusionDecision::no(fmt::format("{} depends on the other group", state.name(*n)));
  return FusionDecision::yes();
}

//===----------------------------------------------------------------------===//
// Policy and transform
//===----------------------------------------------------------------------===//

/// A group without reductions evaluates a member at every point of its domain, a
/// member feeding a broadcast as often. Past this many points per element of its
/// result, and over domains of at least kRecomputeMinPoints, an arithmetic producer
/// runs as a group of its own (a launch of a few microseconds) rather than again at
/// every point: the square root of colnorm's combined column variances at each of
/// the 2^26 points of f32[2^20, 64] made its kernel 0.29 ms on an H200, against the
/// 0.13 of a copy (commit 85535f7).
constexpr int64_t kRecomputePerElement = 4096, kRecomputeMinPoints = int64_t{1} << 20;

/// True when `n` is computed from a reduction over `domain`, within a few
/// elementwise or shape steps: that reduction may still join the group as a stage
/// (the walk goes backwards), and `n` is then computed once per segment (layernorm's
/// rsqrt of the variance).
bool fromReductionOver(const Node& n, llvm::ArrayRef<int64_t> domain) {
  std::vector<const Node*> work{&n};
  llvm::DenseSet<const Node*> seen{&n};
  for (size_t i = 0; i < work.size() && i < 32; ++i) {
    const Node& m = *work[i];
    if (m.kind() == OpKind::Reduce && llvm::ArrayRef<int64_t>(m.operand(0).type().shape) == domain)
      return true;
    if (m.kind() == OpKind::Linalg || m.kind() == OpKind::Reduce)
      continue;
    for (ir::Value v : m.operands())
      if (seen.insert(v.node).second)
        work.push_back(v.node);
  }
  return false;
}

/// True when `producer` joining `group` would be computed again at many points.
bool recomputedAtEveryPoint(const Node& producer, const FusionGroup& group) {
  OpKind kind = producer.kind();
  if (!group.reductions.empty() || (kind != OpKind::Unary && kind != OpKind::Binary &&
                                    kind != OpKind::Select && kind != OpKind::Compare))
    return false;
  int64_t points = ir::numElements(group.domain), elements = producer.type().numel();
  return points >= kRecomputeMinPoints &&
         points / std::max<int64_t>(elements, 1) >= kRecomputePerElement &&
         !fromReductionOver(producer, group.domain);
}

double defaultFusionPolicy(const FusionOption& option) {
  if (option.kind == FusionOption::Producer)
    return recomputedAtEveryPoint(*option.producer, option.state->group(option.group))
               ? 0
               : static_cast<double>(resultBytes(*option.producer));
  std::vector<ir::Value> a = groupInputs(option.state->group(option.group));
  double shared = 0;
  for (ir::Value v : groupInputs(option.state->group(option.other)))
    if (std::find(a.begin(), a.end(), v) != a.end())
      shared += static_cast<double>(v.type().bytes());
  return shared;
}

std::string FusionPartition::reason(const Node& consumer, unsigned i) const {
  auto it = reasons.find({consumer.id(), i});
  return it == reasons.end() ? "" : it->second;
}

FusionPartition partitionForFusion(const ir::Graph& g, const FusionPolicy& policy) {
  FusionState state(g);
  FusionPartition p;
  auto explain = [&](const Node& producer, int group, const std::string& why) {
    for (const Node* u : state.users(producer))
      if (state.groupOf(*u) == group)
        for (unsigned i = 0; i < u->operands().size(); ++i)
          if (u->operand(i).node == &producer)
            p.reasons[{u->id(), i}] = why;
  };
  // Phase 1: producers join a user's group, walking backwards.
  for (auto it = g.nodes().rbegin(); it != g.nodes().rend(); ++it) {
    const Node& n = **it;
    FusionRole role = fusionRole(n);
    if (!state.isLive(n) || role == FusionRole::Source || role == FusionRole::Library)
      continue;
    std::vector<int> candidates;
    for (const Node* u : state.users(n))
      if (int id = state.groupOf(*u);
          id >= 0 && std::find(candidates.begin(), candidates.end(), id) == candidates.end())
        candidates.push_back(id);
    int best = -1;
    double bestScore = 0;
    std::vector<int> legal;
    for (int id : candidates) {
      FusionDecision d = canFuse(n, id, state);
      if (!d) {
        explain(n, id, d.reason);
        continue;
      }
      double score = policy({FusionOption::Producer, &n, id, -1, &state});
      if (score <= 0) {
        explain(n, id, "the cost policy declined it");
        continue;
      }
      legal.push_back(id);
      if (score > bestScore)
        best = id, bestScore = score;
    }
    // Sibling reductions sharing this producer (the mean and the variance of one
    // value) merge first: the producer is then computed once in the merged group,
    // not written by one group and read back by the other.
    for (int id : legal)
      if (id != best && canFuseSiblings(best, id, state) &&
          policy({FusionOption::Siblings, nullptr, best, id, &state}) > 0)
        state.merge(id, best);
    for (int id : legal)
      if (id != best && !state.group(id).nodes.empty())
        explain(n, id, "it is computed in another group, and recomputing it is not allowed");
    if (best >= 0)
      state.join(n, best);
    else
      state.newGroup(n);
  }
  // Phase 2: sibling reduction stages merge when legal and worth it. Only groups
  // whose first reductions agree can (canFuseSiblings): the pairs are taken in the
  // same order, but only within such a class, so that a graph of many groups without
  // reductions stays linear.
  std::vector<int> ids = state.liveGroups();
  std::map<std::tuple<ir::Shape, std::vector<int64_t>, bool>, std::vector<size_t>> alike;
  std::vector<const std::vector<size_t>*> classOf(ids.size(), nullptr);
  for (size_t i = 0; i < ids.size(); ++i)
    if (const FusionGroup& gi = state.group(ids[i]); !gi.reductions.empty()) {
      const Node& r = *gi.reductions.front();
      std::vector<size_t>& c =
          alike[{r.operand(0).type().shape, r.attrs().getInts("axes"), r.attrs().flag("keepdims")}];
      c.push_back(i);
    }
  for (auto& [key, members] : alike)
    for (size_t i : members)
      classOf[i] = &members;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!classOf[i])
      continue;
    for (size_t j : *classOf[i]) {
      if (j <= i || state.group(ids[i]).nodes.empty() || state.group(ids[j]).nodes.empty() ||
          !canFuseSiblings(ids[i], ids[j], state) ||
          policy({FusionOption::Siblings, nullptr, ids[i], ids[j], &state}) <= 0)
        continue;
      state.merge(ids[j], ids[i]);
    }
  }
  // Number the groups in schedule order.
  p.schedule = scheduleUnits(g, state, state.liveGroups());
  p.groupOf.assign(g.nodes().size(), -1);
  for (ScheduleEntry& e : p.schedule) {
    if (e.group < 0)
      continue;
    const FusionGroup& group = state.group(e.group);
    e.group = static_cast<int>(p.groups.size());
    for (const Node* n : group.nodes)
      p.groupOf[n->id()] = e.group;
    p.groups.push_back(group);
  }
  explainRemainingEdges(g, state, p);
  return p;
}

std::string printWithFusion(const ir::Graph& g, const FusionPolicy& policy) {
  FusionPartition p = partitionForFusion(g, policy);
  std::vector<bool> live = liveNodes(g);
  ir::NameTable names(g);
  return ir::printGraph(g, [&](const Node& n) {
    if (fusionRole(n) == FusionRole::Source)
      return std::string();
    if (!live[n.id()])
      return std::string("dead");
    std::string note = p.group(n) >= 0 ? fmt::format("group {}", p.group(n)) : "library";
    for (unsigned i = 0; i < n.operands().size(); ++i) {
      std::string why = p.reason(n, i);
      bool repeated = std::find(n.operands().begin(), n.operands().begin() + i, n.operand(i)) !=
                      n.operands().begin() + i;
      if (!why.empty() && !repeated)
        note += fmt::format("; not fused with {}: {}", names(n.operand(i)), why);
    }
    return note;
  });
}

} // namespace graphc::passes
