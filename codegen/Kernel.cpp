//===- codegen/Kernel.cpp - A fusion group as a loop body -----------------===//
//
// buildKernel walks from each output toward the group's inputs, carrying the index
// map from the current space to the value being visited. The map has two forms:
// per axis of the value, the space axis it follows (or none: index 0), which
// broadcasts need; or the value's flat index as an affine function of the space
// point, which a reshape that regroups axes produces. Instructions are memoized by
// (value, space, map), so a value read the same way twice is computed once (a full,
// whatever the map: once per space).
//
//===----------------------------------------------------------------------===//
#include "codegen/Kernel.h"

#include "ir/OpCases.h"
#include "ir/Printer.h"
#include "support/Error.h"

#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <tuple>

namespace graphc::codegen {
namespace {

using ir::Node;
using ir::Op;
using ir::Value;

/// An index map from a space point to a value's index.
struct Map {
  bool flat = false;
  ir::Shape axes;    ///< !flat: per value axis, the space axis it follows, or -1
  ir::Shape strides; ///< flat: the value's flat index is sum p[k] * strides[k]

  static Map identity(size_t rank) {
    Map m;
    for (size_t i = 0; i < rank; ++i)
      m.axes.push_back(static_cast<int64_t>(i));
    return m;
  }
  auto key() const { return std::tie(flat, axes, strides); }
};

/// The axes without the unit ones.
ir::Shape squeezed(llvm::ArrayRef<int64_t> shape) {
  ir::Shape s;
  for (int64_t d : shape)
    if (d != 1)
      s.push_back(d);
  return s;
}

struct Unsupported {
  std::string why;
};

/// A value to emit: `v` read in `space` through index map `m`.
struct Request {
  Value v;
  Space space;
  Map m;
};

/// The memo key of a request: the value, its space and its index map.
using MemoKey =
    std::tuple<const Node*, unsigned, Space, bool, std::vector<int64_t>, std::vector<int64_t>>;

/// How a pending request's instruction is formed from its operands' instructions.
enum class Finish : uint8_t {
  Compute, ///< an elementwise instruction over the operands
  Forward, ///< the request is its one operand (a relabel, a re-mapped reduction)
  Segment, ///< a Segment of the operand
  Reduce,  ///< a Reduce of the operand
};

/// A request waiting for the instructions of its operands.
struct Pending {
  MemoKey key;
  Request req;
  Finish finish;
  std::vector<Request> operands;
  std::vector<int> args; ///< the operands' instructions, in order, as they are emitted
};

/// Emits requests with an explicit stack (a chain of 100,000 ops is as deep: no
/// recursion), each value once per (space, map).
class Builder {
public:
  Builder(const std::vector<const Node*>& nodes, Kernel& k)
      : members_(nodes.begin(), nodes.end()), k_(k) {}

  int emitOutput(Value v, Space space) {
    Map m;
    m.flat = true;
    m.strides = denseStrides(k_.shape(space));
    return emit({v, space, m});
  }

private:
  bool isMember(const Node* n) const { return members_.count(n) != 0; }

  /// `m` in per-axis form for a value of `shape`, or Unsupported.
  Map toAxes(const Map& m, llvm::ArrayRef<int64_t> shape, Space space) const {
    if (!m.flat)
      return m;
    const ir::Shape& spaceShape = k_.shape(space);
    ir::Shape dense = denseStrides(shape);
    Map out;
    std::vector<bool> used(spaceShape.size(), false);
    for (size_t j = 0; j < shape.size(); ++j) {
      int64_t axis = -1;
      for (size_t a = 0; a < spaceShape.size() && shape[j] != 1; ++a)
        if (!used[a] && spaceShape[a] == shape[j] && m.strides[a] == dense[j]) {
          axis = static_cast<int64_t>(a);
          break;
        }
      if (axis < 0 && shape[j] != 1)
        throw Unsupported{"a broadcast below a reshape that regroups axes"};
      if (axis >= 0)
        used[axis] = true;
      out.axes.push_back(axis);
    }
    for (size_t a = 0; a < spaceShape.size(); ++a)
      if (!used[a] && spaceShape[a] != 1 && m.strides[a] != 0)
        throw Unsupported{"a broadcast below a reshape that regroups axes"};
    return out;
  }

  /// `m` in flat form for a value of `shape`.
  Map toFlat(const Map& m, llvm::ArrayRef<int64_t> shape, Space space) const {
    if (m.flat)
      return m;
    Map out;
    out.flat = true;
    out.strides.assign(k_.shape(space).size(), 0);
    ir::Shape dense = denseStrides(shape);
    for (size_t j = 0; j < shape.size(); ++j)
      if (m.axes[j] >= 0)
        out.strides[m.axes[j]] += dense[j];
    return out;
  }

  int add(Inst inst) {
    inst.stage = Kernel::stageOf(k_.insts, inst);
    k_.insts.push_back(std::move(inst));
    return static_cast<int>(k_.insts.size()) - 1;
  }

  MemoKey keyOf(const Request& r) const {
    const Node* n = r.v.node;
    bool uniform = isMember(n) && passes::computedSource(*n) && !SourceIndex::of(*n).readsIndex();
    Map keyMap = uniform ? Map{} : r.m;
    return {n,
            r.v.index,
            r.space,
            keyMap.flat,
            std::vector<int64_t>(keyMap.axes.begin(), keyMap.axes.end()),
            std::vector<int64_t>(keyMap.strides.begin(), keyMap.strides.end())};
  }

  /// The instruction of `root`, emitting what it reads first (operands in order,
  /// depth first, as a recursive walk would).
  int emit(const Request& root) {
    std::vector<Pending> stack;
    // Starts request `r`: its instruction when it needs no operands (or is memoized),
    // else -1 with a Pending pushed.
    auto start = [&](const Request& r) {
      MemoKey key = keyOf(r);
      if (auto it = memo_.find(key); it != memo_.end())
        return it->second;
      Pending p{std::move(key), r, Finish::Compute, {}, {}};
      std::optional<int> now = plan(p);
      if (!now) {
        stack.push_back(std::move(p));
        return -1;
      }
      memo_.emplace(std::move(p.key), *now);
      return *now;
    };
    if (int id = start(root); id >= 0)
      return id;
    while (true) {
      Pending& top = stack.back();
      if (top.args.size() < top.operands.size()) {
        Request next = top.operands[top.args.size()];
        if (int id = start(next); id >= 0)
          stack.back().args.push_back(id);
        continue;
      }
      int id = finish(top);
      memo_.emplace(std::move(top.key), id);
      stack.pop_back();
      if (stack.empty())
        return id;
      stack.back().args.push_back(id);
    }
  }

  /// Fills in how `p` is computed: its instruction now when it reads no other value
  /// of the kernel, else its operands and how to finish (returns nullopt).
  std::optional<int> plan(Pending& p) {
    const Request& r = p.req;
    const Node& n = *r.v.node;
    const ir::Shape& shape = r.v.type().shape;
    if (!isMember(&n)) {
      Inst load{Inst::Kind::Load, r.space, r.v.type().dtype};
      auto [it, fresh] = inputIndex_.try_emplace({r.v.node, r.v.index}, k_.inputs.size());
      if (fresh)
        k_.inputs.push_back(r.v);
      load.input = static_cast<int>(it->second);
      load.strides = toFlat(r.m, shape, r.space).strides;
      return add(std::move(load));
    }
    switch (passes::fusionRole(n)) {
    case passes::FusionRole::Elementwise:
      p.finish = Finish::Compute;
      for (Value operand : n.operands())
        p.operands.push_back({operand, r.space, r.m});
      return std::nullopt;
    case passes::FusionRole::Relabel:
    case passes::FusionRole::Permute:
      p.finish = Finish::Forward;
      p.operands.push_back({n.operand(0), r.space, relabel(n, r.m, r.space)});
      return std::nullopt;
    case passes::FusionRole::Reduction:
      planReduction(p);
      return std::nullopt;
    case passes::FusionRole::Source: {
      if (!passes::computedSource(n))
        throw Unsupported{fmt::format("{} is read, not computed", ir::opName(n.op()))};
      Inst src{Inst::Kind::Source, r.space, r.v.type().dtype, &n};
      if (SourceIndex::of(n).readsIndex())
        src.strides = toFlat(r.m, shape, r.space).strides;
      return add(std::move(src));
    }
    default:
      throw Unsupported{fmt::format("{} cannot be part of a kernel", ir::opName(n.op()))};
    }
  }

  /// The instruction of `p` from its operands' instructions.
  int finish(const Pending& p) {
    const Request& r = p.req;
    switch (p.finish) {
    case Finish::Forward:
      return p.args[0];
    case Finish::Compute: {
      Inst c{Inst::Kind::Compute, r.space, r.v.type().dtype, r.v.node};
      c.args = p.args;
      return add(std::move(c));
    }
    case Finish::Segment: {
      Inst seg{Inst::Kind::Segment, Space::Domain, r.v.type().dtype};
      seg.args = p.args;
      return add(std::move(seg));
    }
    case Finish::Reduce: {
      Inst red{Inst::Kind::Reduce, Space::Reduced, r.v.type().dtype, r.v.node};
      red.args = p.args;
      return add(std::move(red));
    }
    }
    return -1;
  }

  /// The map of the operand of broadcast_to, reshape or transpose `n` read through
  /// `m`.
  Map relabel(const Node& n, const Map& m, Space space) const {
    const ir::Shape& from = n.operand(0).type().shape;
    const ir::Shape& to = n.type().shape;
    if (n.op() == Op::Transpose) { // result axis i is operand axis perm[i]
      Map am = toAxes(m, to, space), out;
      std::vector<int64_t> perm = n.attrs().getInts("perm");
      out.axes.assign(from.size(), -1);
      for (size_t i = 0; i < perm.size(); ++i)
        out.axes[perm[i]] = am.axes[i];
      return out;
    }
    if (n.op() == Op::BroadcastTo) {
      Map am = toAxes(m, to, space), out;
      size_t offset = to.size() - from.size();
      for (size_t j = 0; j < from.size(); ++j)
        out.axes.push_back(from[j] == 1 ? -1 : am.axes[j + offset]);
      return out;
    }
    if (m.flat || squeezed(from) != squeezed(to))
      return toFlat(m, to, space); // a reshape keeps the flat index
    // Only unit axes come or go: the other axes keep their space axes, in order. A
    // non-unit axis of `from` has its equal in `to` at or after j.
    Map out;
    size_t j = 0;
    for (int64_t d : from) {
      while (d != 1 && to[j] == 1)
        ++j;
      out.axes.push_back(d == 1 ? -1 : m.axes[j++]);
    }
    return out;
  }

  /// The operands of reduction value `p.req`: in the domain its accumulator in the
  /// reduced space, read at the segment; in the reduced space its operand over the
  /// domain (or, reached through another map, itself through the identity).
  void planReduction(Pending& p) {
    const Request& r = p.req;
    const ir::Shape& shape = r.v.type().shape;
    Map am = toAxes(r.m, shape, r.space);
    // In the reduced space each axis of the value follows itself; in the domain, the
    // kept domain axis it stands for (a keepdims unit axis follows none).
    bool keepdims = shape.size() == k_.domain.size();
    ir::Shape follows;
    for (size_t a = 0; a < k_.domain.size(); ++a) {
      bool reduced = std::count(k_.reduceAxes.begin(), k_.reduceAxes.end(), a) != 0;
      if (!reduced || keepdims)
        follows.push_back(reduced ? -1 : static_cast<int64_t>(a));
    }
    for (size_t j = 0; j < shape.size(); ++j) {
      int64_t want = r.space == Space::Reduced ? static_cast<int64_t>(j) : follows[j];
      if (shape[j] != 1 && am.axes[j] != want)
        throw Unsupported{"a reduced value is read outside its segment"};
    }
    Map identity = Map::identity(shape.size());
    if (r.space == Space::Domain) {
      p.finish = Finish::Segment;
      p.operands.push_back({r.v, Space::Reduced, identity});
    } else if (am.key() != identity.key()) { // one accumulator however it is reached
      p.finish = Finish::Forward;
      p.operands.push_back({r.v, Space::Reduced, identity});
    } else {
      p.finish = Finish::Reduce;
      p.operands.push_back({r.v.node->operand(0), Space::Domain, Map::identity(k_.domain.size())});
    }
  }

  llvm::DenseSet<const Node*> members_;
  Kernel& k_;
  std::map<MemoKey, int> memo_;
  std::map<std::pair<const Node*, unsigned>, size_t> inputIndex_;
};

/// The space an output of `k` lives in: the reduced space when its element count is
/// the reduced one (and, when both counts agree, when it is a reduction's result).
Space outputSpace(const Kernel& k, Value v) {
  if (!k.hasReduction())
    return Space::Domain;
  int64_t count = v.type().numel();
  int64_t domain = ir::numElements(k.domain), reduced = ir::numElements(k.reducedShape);
  if (count != reduced)
    return Space::Domain;
  if (count != domain)
    return Space::Reduced;
  return passes::fusionRole(*v.node) == passes::FusionRole::Reduction ? Space::Reduced
                                                                      : Space::Domain;
}

} // namespace

SourceIndex SourceIndex::of(const Node& n) {
  const ir::Shape& shape = n.type().shape;
  // An axis of `shape`; extents of 0 become 1 (a source without elements is never read).
  auto axis = [&](size_t a) {
    return Axis{ir::numElements(llvm::ArrayRef<int64_t>(shape).drop_front(a + 1)),
                std::max<int64_t>(shape[a], 1)};
  };
  SourceIndex s;
  switch (n.op()) {
  case Op::Full:
    s.value = n.attrs().getFloat("value");
    break;
  case Op::Constant:
    s.value = n.attrs().getFloats("value").front();
    break;
  case Op::Eye:
    s.form = Diagonal;
    s.a = axis(shape.size() - 2);
    s.b = axis(shape.size() - 1);
    break;
  case Op::Iota:
    s.form = Coordinate;
    s.a = axis(static_cast<size_t>(n.attrs().getInt("axis")));
    break;
  case Op::Parameter:
  GRAPHC_ELEMENTWISE_CASES:
  GRAPHC_SHAPE_CASES:
  GRAPHC_REDUCE_CASES:
  GRAPHC_LINALG_CASES:
  GRAPHC_ASSUME_CASES:
  GRAPHC_COLLECTIVE_CASES:
    throw Error(fmt::format("{} is not a computed source", ir::opName(n.op()).str()));
  }
  return s;
}

ir::Shape denseStrides(llvm::ArrayRef<int64_t> shape) {
  ir::Shape strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

void markNeeded(const Kernel& k, int inst, std::vector<bool>& needed) {
  std::vector<int> work{inst};
  while (!work.empty()) {
    int i = work.back();
    work.pop_back();
    if (needed[i])
      continue;
    needed[i] = true;
    if (k.insts[i].kind != Inst::Kind::Segment)
      work.insert(work.end(), k.insts[i].args.begin(), k.insts[i].args.end());
  }
}

int Kernel::stageOf(const std::vector<Inst>& insts, const Inst& inst) {
  int stage = 0;
  for (int a : inst.args)
    stage = std::max(stage, insts[a].stage);
  return inst.kind == Inst::Kind::Reduce ? stage + 1 : stage;
}

int Kernel::stages() const {
  int n = 0;
  for (const Inst& inst : insts)
    n = std::max(n, inst.stage);
  return n;
}

int64_t Kernel::segmentSize() const {
  int64_t n = 1;
  for (int64_t a : reduceAxes)
    n *= domain[a];
  return n;
}

ir::Shape Kernel::segmentStrides() const {
  ir::Shape kept;
  for (size_t a = 0; a < domain.size(); ++a)
    if (std::count(reduceAxes.begin(), reduceAxes.end(), a) == 0)
      kept.push_back(domain[a]);
  ir::Shape dense = denseStrides(kept), out;
  for (size_t a = 0, j = 0; a < domain.size(); ++a)
    out.push_back(std::count(reduceAxes.begin(), reduceAxes.end(), a) ? 0 : dense[j++]);
  return out;
}

bool Kernel::segmentsContiguous() const {
  for (size_t i = 0; i < reduceAxes.size(); ++i)
    if (reduceAxes[reduceAxes.size() - 1 - i] != static_cast<int64_t>(domain.size() - 1 - i))
      return false;
  return true;
}

std::variant<Kernel, std::string> buildKernel(const std::vector<const Node*>& nodes,
                                              const std::vector<Value>& outputs) {
  Kernel k;
  k.domain = nodes.back()->type().shape;
  for (const Node* n : nodes) {
    if (n->kind() != ir::OpKind::Reduce)
      continue;
    // The reduction stage: sibling reductions share their input shape, axes, keepdims.
    k.reduces = true;
    k.domain = n->operand(0).type().shape;
    k.reducedShape = n->type().shape;
    k.reduceAxes = n->attrs().getInts("axes");
    std::sort(k.reduceAxes.begin(), k.reduceAxes.end());
    break;
  }
  // An empty shape's other extents may multiply past 64 bits (f32[0, 2^48, 2^32]):
  // no kernel addresses it (the runtime says why it cannot hold such an array).
  int64_t span = 1;
  for (int64_t d : k.domain)
    if (d != 0 && __builtin_mul_overflow(span, d, &span))
      return std::string("the kernel's domain has extents past 64 bits");
  Builder b(nodes, k);
  try {
    for (Value v : outputs) {
      Space space = outputSpace(k, v);
      k.outputs.push_back({v, b.emitOutput(v, space), space});
    }
  } catch (const Unsupported& u) {
    return u.why;
  }
  return k;
}

std::string printKernel(const Kernel& k) {
  std::string out = fmt::format("kernel domain {}", ir::shapeString(k.domain));
  if (k.hasReduction())
    out += fmt::format(" reduced {} axes {}", ir::shapeString(k.reducedShape),
                       ir::shapeString(k.reduceAxes));
  out += "\n";
  for (size_t i = 0; i < k.inputs.size(); ++i)
    out += fmt::format("  in{}: {}\n", i, k.inputs[i].type().str());
  for (size_t i = 0; i < k.insts.size(); ++i) {
    const Inst& inst = k.insts[i];
    std::string args;
    for (int a : inst.args)
      args += fmt::format("{}%{}", args.empty() ? "" : ", ", a);
    std::string what;
    switch (inst.kind) {
    case Inst::Kind::Load:
      what = fmt::format("load in{} {}", inst.input, ir::shapeString(inst.strides));
      break;
    case Inst::Kind::Compute:
    case Inst::Kind::Reduce:
      what = fmt::format("{} {}", ir::opName(inst.node->op()), args);
      break;
    case Inst::Kind::Segment:
      what = "segment " + args;
      break;
    case Inst::Kind::Source:
      what =
          fmt::format("{}{} {}", ir::opName(inst.node->op()),
                      inst.node->attrs().empty() ? "" : " " + ir::attrsString(inst.node->attrs()),
                      inst.node->type().str());
      if (SourceIndex::of(*inst.node).readsIndex())
        what += " " + ir::shapeString(inst.strides);
      break;
    }
    out += fmt::format("  %{} = {} : {}{}\n", i, what, ir::dtypeName(inst.dtype),
                       inst.space == Space::Reduced ? " (reduced)" : "");
  }
  for (size_t i = 0; i < k.outputs.size(); ++i)
    out += fmt::format("  out{} = %{}{}\n", i, k.outputs[i].inst,
                       k.outputs[i].space == Space::Reduced ? " (reduced)" : "");
  return out;
}

} // namespace graphc::codegen
