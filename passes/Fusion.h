//===- passes/Fusion.h - Partitioning a graph into fusion groups -*- C++ -*-===//
//
// Decides which nodes of a graph run together in one generated kernel. The result
// is a partition (the graph itself is not changed): every live compute node is in
// one kernel group or is a library call, and every producer-consumer edge between
// two steps keeps the reason it was not fused.
//
// What one kernel can run (the contract codegen and the backends rely on):
//  - Members are elementwise ops, broadcast_to, reshape (a pure relabeling: arrays are
//    dense and row-major, so it keeps the flat index), reductions, and transposes in
//    groups without a reduction (an index permutation; not below a reshape that
//    regroups axes, whose flat index it could not follow). A transpose no group
//    takes, and every other data-movement op (slice, concat, diag, triu, ...), is a
//    group alone (isDataMovement).
//  - The reductions of a group have the same input shape (the group's domain), axes
//    and keepdims. They come in stages: siblings share one; a reduction whose operand
//    reads another's value, broadcast back along the reduced axes (keepdims, no
//    reshape), is a later stage (layernorm's variance after its mean). Members
//    upstream of the reductions are the prologue; members downstream run on the
//    reduced shape or, after broadcasting back, on the domain: the epilogue. A kernel
//    therefore walks the domain segment by segment (a row, for a last-axis
//    reduction), reduces the segment once per stage, then writes its epilogue.
//  - Without a reduction the domain is the shape of the group's last node.
//  - Every value the group writes (a group output) has the domain's or the reduced
//    shape's element count, so no output is written redundantly.
//  - Sources (parameters, constants, full, iota, eye) and library ops (Linalg) are in
//    no group; the groups and library calls form an acyclic graph. A kernel computes
//    the sources of computedSource() at each point instead of reading them: the
//    lowered program (passes/Program.h) adds those a group reads to its kernel step.
//
// Legality (canFuse), policy (a FusionPolicy scoring legal options) and the
// transform (partitionForFusion) are kept apart; printWithFusion shows the result.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "ir/Printer.h"

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace graphc::passes {

/// How a node may take part in fusion; follows from its OpKind and op alone.
enum class FusionRole {
  Source,      ///< a parameter or constant: an input of groups, never a member
  Elementwise, ///< any elementwise op
  Relabel,     ///< broadcast_to, reshape: an index map a kernel applies on the fly
  Permute,     ///< transpose: an index map too, in groups without a reduction
  Reduction,   ///< a reduction over axes
  Alone,       ///< other data movement: its own single-node kernel
  Library,     ///< a library call (matmul, cholesky, ...): never in a group
};

/// The role of `n`.
FusionRole fusionRole(const ir::Node& n);

/// True when a kernel step of `nodes` is one data-movement node (a transpose or
/// slice alone, ...), which the backends run node by node, not as a kernel.
bool isDataMovement(llvm::ArrayRef<const ir::Node*> nodes);

/// True for the sources whose value at an index a kernel computes in registers: full,
/// eye, iota and a one-element constant. The others (parameters, constant arrays)
/// are read from memory.
bool computedSource(const ir::Node& n);

/// A legality decision: whether a fusion may happen and, if not, why.
struct FusionDecision {
  bool legal = false;
  std::string reason; ///< why not; empty when legal

  static FusionDecision yes() { return {true, {}}; }
  static FusionDecision no(std::string why) { return {false, std::move(why)}; }
  explicit operator bool() const { return legal; }
};

/// A kernel group: member nodes in topological order and its reductions.
struct FusionGroup {
  std::vector<const ir::Node*> nodes;
  std::vector<const ir::Node*> reductions; ///< every stage's; empty if none
  ir::Shape domain;                        ///< the shape a kernel iterates over
  /// Why no producer may join: the first member's obstacle to fusion (members that
  /// joined had none), kept so legality need not look at every member again.
  std::string obstacle;
};

/// The values the members of `group` read that no member produces, each once, in
/// order of first use.
std::vector<ir::Value> groupInputs(const FusionGroup& group);

/// What a kernel group and the rest of the graph look like while partitioning:
/// canFuse asks it about users and membership.
class FusionState {
public:
  explicit FusionState(const ir::Graph& g);

  /// The live nodes using `n`'s results, each once, in topological order.
  const std::vector<const ir::Node*>& users(const ir::Node& n) const { return users_[n.id()]; }
  /// True when a graph output is one of `n`'s results.
  bool isGraphOutput(const ir::Node& n) const { return isOutput_[n.id()]; }
  /// True when the graph's outputs depend on `n`.
  bool isLive(const ir::Node& n) const { return live_[n.id()]; }
  /// The group of `n`, or -1.
  int groupOf(const ir::Node& n) const { return groupOf_[n.id()]; }
  const FusionGroup& group(int id) const { return groups_[id]; }
  /// True when a path of uses leads from `from` to `to`.
  bool reaches(const ir::Node& from, const ir::Node& to) const;
  /// The member of group `id` that a path of uses from one of `from` leads to, or
  /// null. A group runs as one kernel, after all its inputs: a path reaching one
  /// member of another group goes on from all of them.
  const ir::Node* leadsInto(llvm::ArrayRef<const ir::Node*> from, int id) const;
  /// True when `n` would be written by group `id` if it joined it: it has a user
  /// outside the group or is a graph output.
  bool escapes(const ir::Node& n, int id) const;

  /// Starts a group holding `n`; returns its id.
  int newGroup(const ir::Node& n);
  /// Adds `n` to group `id`.
  void join(const ir::Node& n, int id);
  /// Moves every member of group `from` into group `into`.
  void merge(int from, int into);
  /// The ids of the groups that still have members.
  std::vector<int> liveGroups() const;
  /// "%m": the printing name of `n`, for reasons.
  std::string name(const ir::Node& n) const { return "%" + names_.base(&n); }

private:
  const ir::Graph& graph_;
  ir::NameTable names_;
  std::vector<std::vector<const ir::Node*>> users_;
  std::vector<bool> isOutput_, live_;
  std::vector<int> groupOf_;
  std::vector<FusionGroup> groups_;
};

/// May `producer` join group `consumer` (which holds at least one of its users)?
/// Checks the roles, the one-reduction-stage rule, output shapes and acyclicity.
FusionDecision canFuse(const ir::Node& producer, int consumer, const FusionState& state);
/// May groups `a` and `b`, whose reduction stages are siblings, merge into one?
FusionDecision canFuseSiblings(int a, int b, const FusionState& state);

/// One legal fusion, as the policy sees it.
struct FusionOption {
  enum Kind { Producer, Siblings } kind;
  const ir::Node* producer = nullptr; ///< Producer: the node joining `group`
  int group = -1;                     ///< the group it joins (Siblings: one of the two)
  int other = -1;                     ///< Siblings: the other group
  const FusionState* state = nullptr;
};

/// Scores a legal option: the estimated bytes of memory traffic it saves. An option
/// scoring <= 0 is declined; among a producer's options the highest score wins.
using FusionPolicy = std::function<double(const FusionOption&)>;

/// The default policy: a producer is worth its result's bytes (not written and read
/// back), unless a group without reductions would compute it again at thousands of
/// points per element (an arithmetic op feeding a broadcast); siblings are worth the
/// bytes of the inputs they share (read once, not twice).
double defaultFusionPolicy(const FusionOption& option);

/// One unit of the schedule: a kernel group or a library call.
struct ScheduleEntry {
  int group = -1;                    ///< a kernel group, or -1
  const ir::Node* library = nullptr; ///< a library call, when group is -1
};

/// The partition of a graph's live nodes into kernel groups and library calls.
struct FusionPartition {
  /// Kernel groups, numbered in schedule order.
  std::vector<FusionGroup> groups;
  /// Every group and library call in a topological order.
  std::vector<ScheduleEntry> schedule;
  /// Node id -> group, -1 for sources, library calls and dead nodes.
  std::vector<int> groupOf;
  /// (consumer id, operand index) -> why that edge is not fused.
  std::map<std::pair<unsigned, unsigned>, std::string> reasons;

  int group(const ir::Node& n) const { return groupOf[n.id()]; }
  /// Why operand `i` of `consumer` is not fused into it; "" when it is, or when the
  /// operand is a source.
  std::string reason(const ir::Node& consumer, unsigned i) const;
};

/// Partitions `g` into fusion groups, taking the legal options `policy` scores best.
FusionPartition partitionForFusion(const ir::Graph& g,
                                   const FusionPolicy& policy = defaultFusionPolicy);

/// The text of `g` with each node's group (`// group 2`) or `library`, and each
/// unfused edge with its reason (`not fused: %m: ...`), as trailing comments.
std::string printWithFusion(const ir::Graph& g, const FusionPolicy& policy = defaultFusionPolicy);

} // namespace graphc::passes
