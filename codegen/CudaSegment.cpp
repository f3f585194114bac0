//===- codegen/CudaSegment.cpp - The segment loop of a reduction kernel ---===//
//
// Emitter::segmentLoop(): the loop over the segments of a reduction kernel
// (CudaReduction.cpp writes the kernel around it). Each segment's rows are loaded
// (into registers or shared memory where RowPlan caches them, the next row copied
// ahead where it says so), walked once per stage, the lanes' accumulators combined
// (combineLanes), then the domain outputs and the reduced outputs written.
//
//===----------------------------------------------------------------------===//
#include "codegen/CudaReductionPlan.h"

#include <functional>
#include <string>
#include <vector>

namespace graphc::codegen::detail {

/// The loop of segmentLoop() for one kernel.
class Emitter::Segment {
public:
  Segment(Emitter& e, Code& c, const CudaKernel& ck, const Passes& ps, const RowPlan& rows,
          bool vectors)
      : e_(e), k_(e.k_), c_(c), ck_(ck), ps_(ps), rows_(rows), w_(vectors ? rows.width : 1),
        peeled_(w_ > 1 && rows.peeled), ahead_(w_ > 1 && rows.ahead),
        run_(fmt::format("{} + v * {}", ps.laneStart, ps.laneStride)),
        everyLane_(rows.lanes > 0
                       ? (peeled_ ? (ps.length - w_ + 1) / w_ : ps.length / w_) / rows.lanes
                       : 0) {}

  void emit() {
    if (rows_.shared)
      c_.line("extern __shared__ __align__(16) unsigned char gc_rows[];");
    for (size_t in = 0; in < rows_.cached.size() && ahead_ && peeled_; ++in)
      if (rows_.cached[in])
        c_.line("{} q{} = 0;", ctype(k_.inputs[in].type().dtype), in);
    if (ahead_)
      copyAhead(ps_.unitStart);
    c_.open(fmt::format("for (idx s = {}; s < S; s += {})", ps_.unitStart, ps_.unitStride));
    offsets();
    // Rows into shared memory: stage 1's reductions take each point on its way there.
    llvm::ArrayRef<int> first;
    if (rows_.shared)
      first = ps_.reduces[1];
    declare(first);
    if (rows_.caching)
      loadRows(first);
    for (int stage = 1; stage <= ps_.stages; ++stage)
      reduce(stage, stage == 1 && !first.empty());
    if (ps_.domainOutputs && w_ > 1)
      storeRuns();
    else if (ps_.domainOutputs)
      storePoints();
    finish();
    if (ahead_ && !ps_.domainOutputs) // no output pass to copy in
      copyAhead(fmt::format("s + {}", ps_.unitStride));
    c_.close();
  }

private:
  /// Once per segment: the segment's part of every domain load's offset. At point
  /// (s, j) the domain's flat index is p_.
  void offsets() {
    // A peeled row: its first h points precede its first aligned one, its nv runs
    // follow, then the rest; the lane's one point of those, jp, is L where it has none.
    rowRuns("");
    p_ = ps_.contiguous
             ? "s * L + j"
             : plus(affine("s", ps_.keptExtents, pick(ps_.dense, k_.reduceAxes, true)),
                    affine("j", ps_.reducedExtents, pick(ps_.dense, k_.reduceAxes, false)));
    base_.assign(k_.insts.size(), "0");
    for (size_t i = 0; i < k_.insts.size(); ++i) {
      const Inst& inst = k_.insts[i];
      if ((inst.kind != Inst::Kind::Load && !readsIndex(inst)) || inst.space != Space::Domain ||
          e_.isIdentity(inst))
        continue;
      std::string offset = affine("s", ps_.keptExtents, pick(inst.strides, k_.reduceAxes, true));
      if (offset != "0") {
        base_[i] = fmt::format("b{}", i);
        c_.line("const idx b{} = {};", i, offset);
      }
    }
    domainIndex_ = [this](int i) {
      const Inst& inst = k_.insts[i];
      if (e_.isIdentity(inst))
        return std::string("p");
      return plus(base_[i],
                  affine("j", ps_.reducedExtents, pick(inst.strides, k_.reduceAxes, false)));
    };
    load_ = [this, fromMemory = e_.loadAt(domainIndex_)](int i) {
      const Inst& inst = k_.insts[i];
      if (inst.space != Space::Domain || !rows_.cached[inst.input] || !e_.isIdentity(inst))
        return fromMemory(i);
      return fmt::format("c{}[{}]", inst.input, rows_.shared ? "j" : "u");
    };
  }

  /// Where segment s<x>'s runs start, peeled: h<x>, and how many there are: nv<x>;
  /// a peeled row's point outside its runs that the lane takes: jp<x> (L for none).
  /// Where a lane's points in registers do not tile the segment, its runs in it (of
  /// w_ points, or of one): nr<x>. Each point then tests a constant against it rather
  /// than an index of its own (softmax over rows of 32000 f32: 0.205 -> 0.193 ms).
  void rowRuns(const std::string& x) {
    if (peeled_) {
      c_.line("const idx h{1} = ({0} - s{1} * L % {0}) % {0}, nv{1} = (L - h{1}) / {0};", w_, x);
      c_.line("const idx jp{2} = {0} < L - nv{2} * {1} ? ({0} < h{2} ? {0} : {0} + nv{2} * {1}) "
              ": L;",
              ps_.laneStart, w_, x);
    }
    if (rows_.ragged && (w_ > 1 || (rows_.caching && !rows_.shared)))
      c_.line("const int nr{3} = {0} > {1} ? (int)(({0} - {1} + {2} - 1) / {2}) : 0;", runsOf(x),
              ps_.laneStart, ps_.laneStride, x);
  }
  /// How many runs segment s<x> has.
  std::string runsOf(const std::string& x) const {
    return peeled_ ? "nv" + x : w_ > 1 ? fmt::format("L / {}", w_) : std::string("L");
  }
  /// Where segment s<x>'s first run starts.
  std::string rowOf(const std::string& x) const {
    return peeled_ ? fmt::format("s{0} * L + h{0}", x) : fmt::format("s{} * L", x);
  }

  /// Segment `row`, where it is one: the lane's runs copied into their slots (and a
  /// peeled row's point outside them into q<input>), all at once.
  void copyAhead(const std::string& row) {
    c_.open(fmt::format("if (const idx sn = {}; sn < S)", row));
    rowRuns("n");
    peelAhead("n");
    openRuns("n");
    copyRun("n");
    closeRuns();
    c_.close();
  }
  /// Lane's run v of segment s<x> into its slot, for each cached input.
  void copyRun(const std::string& x) {
    e_.helpers_ |= kCopyAsync;
    for (size_t in = 0; in < rows_.cached.size(); ++in)
      if (rows_.cached[in])
        c_.line("gc_copy_async({0} + {1}, (const {2}*)(in{3} + {4}) + {1});", slots(in), run_,
                vectorType(k_.inputs[in].type().dtype), in, rowOf(x));
  }
  /// A peeled segment s<x>'s point outside the runs into q<input>, where the lane has one.
  void peelAhead(const std::string& x) {
    if (!peeled_)
      return;
    c_.open(fmt::format("if (jp{} < L)", x));
    for (size_t in = 0; in < rows_.cached.size(); ++in)
      if (rows_.cached[in])
        c_.line("q{0} = in{0}[s{1} * L + jp{1}];", in, x);
    c_.close();
  }
  /// Where the runs of cached input `in` lie in shared memory, the same in every row
  /// (RowPlan::ahead).
  std::string slots(size_t in) const {
    return fmt::format("(({}*)(gc_rows + {}){})", vectorType(k_.inputs[in].type().dtype),
                       rows_.sharedOffsets[in], peeled_ ? " + 1" : "");
  }

  /// Opens (and closePoints() closes) the loop over a lane's points j of segment s.
  void openPoints() {
    if (!rows_.caching || rows_.shared)
      return c_.open(
          fmt::format("for (idx j = {}; j < L; j += {})", ps_.laneStart, ps_.laneStride));
    c_.line("#pragma unroll");
    c_.open(fmt::format("for (int u = 0; u < {}; ++u)", rows_.perLane));
    // A pass over registers may not read the point's index.
    std::string run = fmt::format("({} + u / {} * {})", ps_.laneStart, w_, ps_.laneStride);
    if (peeled_) // the last register holds jp
      c_.line("[[maybe_unused]] const idx j = u == {} ? jp : h + {} * {} + u % {};",
              rows_.perLane - 1, run, w_, w_);
    else if (w_ > 1)
      c_.line("[[maybe_unused]] const idx j = {} * {} + u % {};", run, w_, w_);
    else
      c_.line("[[maybe_unused]] const idx j = {} + u * {};", ps_.laneStart, ps_.laneStride);
    // u's run is the lane's (u / w)-th: once unrolled, a test of a constant.
    if (peeled_)
      c_.open(fmt::format("if (u == {} ? jp < L : {})", rows_.perLane - 1,
                          inSegment(fmt::format("u / {}", w_))));
    else if (rows_.ragged && w_ > 1)
      c_.open(fmt::format("if ({})", inSegment(fmt::format("u / {}", w_))));
    else if (rows_.ragged)
      c_.open(fmt::format("if ({})", inSegment("u")));
  }
  /// Whether the lane's run `v` lies in the segment: a test of the lane's count nr
  /// only past the runs every lane has, which unrolled is a constant. Under a test
  /// of nr, the first run's loads and uses came before the other loads: softmax
  /// over rows of 32000 f32 in registers took 0.2097 ms, 0.1860 so (a copy: 0.1777;
  /// docs/bench/sweep.md).
  std::string inSegment(const std::string& v, const std::string& x = "") const {
    return everyLane_ > 0 ? fmt::format("{0} < {1} || {0} < nr{2}", v, everyLane_, x)
                          : fmt::format("{} < nr{}", v, x);
  }
  void closePoints() {
    if (rows_.caching && !rows_.shared && rows_.ragged)
      c_.close();
    c_.close();
  }
  /// Opens (and closeRuns() closes) the loop over a lane's runs v of w_ points, those
  /// inside the segment.
  void openRuns(const std::string& x = "") {
    c_.line("#pragma unroll");
    c_.open(fmt::format("for (int v = 0; v < {}; ++v)", rows_.perLane / w_));
    if (rows_.ragged)
      c_.open(fmt::format("if ({})", inSegment("v", x)));
  }
  void closeRuns() {
    if (rows_.ragged)
      c_.close();
    c_.close();
  }
  /// Where the runs of cached input `in`'s row lie in shared memory.
  std::string sharedRuns(size_t in) const {
    return peeled_ ? fmt::format("(c{} + h)", in) : fmt::format("c{}", in);
  }
  /// Reads the cached rows' point e of the run whose vectors are in t<input>.
  LoadFn fromRunVectors() const {
    return [this](int i) {
      const Inst& inst = k_.insts[i];
      if (inst.kind == Inst::Kind::Load && inst.space == Space::Domain &&
          rows_.cached[inst.input] && e_.isIdentity(inst))
        return fmt::format("((const {}*)&t{})[e]", ctype(inst.dtype), inst.input);
      return load_(i);
    };
  }
  /// Opens the loop over the points e of run v (the caller closes it).
  void openRunPoints() {
    c_.line("#pragma unroll");
    c_.open(fmt::format("for (int e = 0; e < {}; ++e)", w_));
    c_.line("const int u = v * {} + e;", w_);
    c_.line("const idx j = {}({}) * {} + e;", peeled_ ? "h + " : "", run_, w_);
  }

  /// The cached rows into registers or shared memory. The reductions `first` (into
  /// shared memory: stage 1's) take each point from the registers that brought it, so
  /// that their pass reads no shared memory and needs no barrier of its own (on an
  /// H100, softmax over rows of 50257 f32 0.399 -> 0.374 ms, row normalization over
  /// 56000 0.393 -> 0.367, over 16385 0.102 -> 0.105: docs/bench/sweep.md).
  void loadRows(llvm::ArrayRef<int> first) {
    const std::vector<bool>& cached = rows_.cached;
    for (size_t in = 0; in < cached.size(); ++in) {
      const char* t = ctype(k_.inputs[in].type().dtype);
      if (cached[in] && rows_.shared && peeled_) // c<in> + h: the slots
        c_.line("{0}* const c{1} = ({0}*)(gc_rows + {2}) + {3} - h;", t, in,
                rows_.sharedOffsets[in], w_);
      else if (cached[in] && rows_.shared)
        c_.line("{0}* const c{1} = ({0}*)(gc_rows + {2});", t, in, rows_.sharedOffsets[in]);
      else if (cached[in])
        c_.line("{} c{}[{}];", t, in, rows_.perLane);
    }
    auto take = [&](const std::function<void()>& open, const LoadFn& load, bool inOrder) {
      pass(ps_.forReductions[1], false, open, load);
      push(first, inOrder);
    };
    if (w_ > 1) {
      if (ahead_) // the runs were copied into their slots
        c_.line("gc_copy_wait();");
      openRuns();
      for (size_t in = 0; in < cached.size(); ++in) {
        if (!cached[in])
          continue;
        const char* vt = vectorType(k_.inputs[in].type().dtype);
        if (ahead_)
          c_.line("const {} t{} = {}[{}];", vt, in, slots(in), run_);
        else
          c_.line("const {0} t{1} = ((const {0}*)(in{1} + {2}))[{3}];", vt, in, rowOf(""), run_);
        if (rows_.shared && !ahead_)
          c_.line("(({0}*){1})[{2}] = t{3};", vt, sharedRuns(in), run_, in);
        else if (!rows_.shared)
          for (int64_t e = 0; e < w_; ++e)
            c_.line("c{0}[v * {1} + {2}] = t{0}.{3};", in, w_, e, "xyzw"[e]);
      }
      if (!first.empty()) {
        take([this] { openRunPoints(); }, fromRunVectors(), true);
        c_.close();
      }
      closeRuns();
      if (peeled_) {
        c_.open("if (jp < L)");
        for (size_t in = 0; in < cached.size(); ++in)
          if (cached[in])
            c_.line("c{0}[{1}] = {2};", in,
                    rows_.shared ? std::string("jp") : std::to_string(rows_.perLane - 1),
                    ahead_ ? fmt::format("q{}", in) : fmt::format("in{}[s * L + jp]", in));
        if (!first.empty()) // jp may come before the runs
          take([this] { c_.line("const idx j = jp;"); }, load_, false);
        c_.close();
      }
      return;
    }
    if (rows_.shared) // several loads in flight per lane
      c_.line("#pragma unroll 8");
    openPoints();
    for (size_t in = 0; in < cached.size(); ++in)
      if (cached[in])
        c_.line("c{0}[{1}] = in{0}[{2}];", in, rows_.shared ? "j" : "u", p_);
    if (!first.empty())
      take([] {}, load_, true);
    closePoints();
  }

  /// A pass over the points `open` opens, computing what `needed` marks.
  void pass(const std::vector<bool>& needed, bool writes, const std::function<void()>& open,
            const LoadFn& load) {
    open();
    bool usesP = writes;
    for (size_t i = 0; i < k_.insts.size(); ++i) {
      const Inst& inst = k_.insts[i];
      bool fromMemory = inst.kind == Inst::Kind::Load && !rows_.cached[inst.input];
      usesP = usesP || (needed[i] && (fromMemory || readsIndex(inst)) &&
                        inst.space == Space::Domain && e_.isIdentity(inst));
    }
    if (usesP)
      c_.line("const idx p = {};", p_);
    e_.body(c_, Space::Domain, needed, load, domainIndex_);
  }

  /// A pass over the lane's own points of a row in shared memory by vectors: its runs
  /// from their slots, then its point outside them. `each` emits what is done with
  /// each point after the instructions `needed` marks; it is told whether the points
  /// come in increasing j. The passes read nothing another lane loaded, so they need
  /// no barrier after the load, and the slots may take the next row's runs as soon as
  /// the lane is done with them (RowPlan::ahead).
  void ownRuns(const std::vector<bool>& needed, const std::function<void(bool)>& each) {
    openRuns();
    for (size_t in = 0; in < rows_.cached.size(); ++in)
      if (rows_.cached[in])
        c_.line("const {0} t{1} = ((const {0}*){2})[{3}];", vectorType(k_.inputs[in].type().dtype),
                in, sharedRuns(in), run_);
    pass(
        needed, false, [this] { openRunPoints(); }, fromRunVectors());
    each(true);
    c_.close();
    closeRuns();
    if (!peeled_)
      return;
    pass(
        needed, false,
        [this] {
          c_.open("if (jp < L)");
          c_.line("const idx j = jp;");
        },
        load_);
    each(false);
    c_.close();
  }

  /// The pass of reductions `now` over the lane's points, computing what `needed` marks.
  void passOf(llvm::ArrayRef<int> now, const std::vector<bool>& needed) {
    declare(now);
    if (rows_.shared && w_ > 1) // no online sums over cached rows (Emitter::reduction)
      return ownRuns(needed, [&](bool inOrder) { push(now, inOrder); });
    // An online sum's points go to gc_online_push kOnlineGroup at a time (y<r>, -inf
    // past the end); its rows are not in registers (Emitter::reduction).
    std::vector<int> online;
    for (int r : now)
      if (e_.online_[r] >= 0 && !e_.isOnlineMax(r))
        online.push_back(r);
    bool grouped = !online.empty();
    if (grouped)
      c_.open(fmt::format("for (idx j0 = {0}; j0 < L; j0 += {1} * {2})", ps_.laneStart,
                          kOnlineGroup, ps_.laneStride));
    for (int r : online) {
      int m = e_.online_[r];
      c_.line("{} y{}[{}];", ctype(k_.insts[m].dtype), r, kOnlineGroup);
      c_.line("#pragma unroll");
      c_.line("for (int g = 0; g < {}; ++g) y{}[g] = {};", kOnlineGroup, r, e_.accumulator(m).init);
    }
    auto open = [&] {
      if (!grouped)
        return openPoints();
      c_.line("#pragma unroll");
      c_.open(fmt::format("for (int g = 0; g < {}; ++g)", kOnlineGroup));
      c_.line("const idx j = j0 + g * {};", ps_.laneStride);
      c_.open("if (j < L)");
    };
    pass(needed, false, open, load_);
    push(now, true);
    if (grouped) {
      c_.close();
      c_.close();
    } else {
      closePoints();
    }
    for (int r : online)
      c_.line("gc_online_push(a{}, a{}, y{});", e_.online_[r], r, r);
    if (grouped)
      c_.close();
  }

  /// The accumulators of reductions `now`, empty.
  void declare(llvm::ArrayRef<int> now) {
    for (int r : now) {
      Accumulator a = e_.accumulator(r);
      c_.line("{} a{} = {};", a.type, r, a.init);
    }
  }

  /// Reductions `now` take the point j of the pass that is open: after every point
  /// their accumulators have seen where `inOrder` (what gc_push asks of positions).
  void push(llvm::ArrayRef<int> now, bool inOrder) {
    for (int r : now) {
      int m = e_.online_[r];
      Accumulator a = e_.accumulator(r);
      std::string x = fmt::format("a{}", r), y = val(k_.insts[r].args[0]);
      if (e_.isOnlineMax(r)) // pushed with its sum
        continue;
      if (m >= 0)
        c_.line("y{}[g] = {};", r, val(k_.insts[m].args[0]));
      else if (inOrder || a.how != Accumulator::Best)
        c_.line("{} = {};", x, a.push(x, y));
      else
        c_.line("{0} = {1};", x,
                a.combine(x, fmt::format("{}{{(decltype({}.v)){}, j}}", a.type, x, y)));
    }
  }

  /// Stage `stage`'s pass (unless the points were `taken` as they were loaded): each
  /// lane accumulates its points in increasing j (reading the reduced values of
  /// earlier stages), the lanes are combined, and the stage's reduced values and
  /// reduced-space instructions follow.
  void reduce(int stage, bool taken) {
    const std::vector<int>& now = ps_.reduces[stage];
    if (!taken)
      passOf(now, ps_.forReductions[stage]);
    bool even = rows_.lanes && ps_.length % rows_.lanes == 0;
    e_.combineLanes(c_, ck_.launch, even, now);
    if (rows_.caching)
      deviations(now, even);
    for (int r : now)
      c_.line("const {} v{} = {};", ctype(k_.insts[r].dtype), r, e_.reducedValue(r));
    // The reduced-space instructions of this stage (the first stage also takes those
    // of the inputs alone).
    std::vector<bool> ofStage(k_.insts.size(), false);
    for (size_t i = 0; i < k_.insts.size(); ++i)
      ofStage[i] = k_.insts[i].stage == stage || (stage == 1 && k_.insts[i].stage == 0);
    LoadFn reducedIndex = [this](int i) {
      return affine("s", k_.reducedShape, k_.insts[i].strides);
    };
    e_.body(c_, Space::Reduced, ofStage, e_.loadAt(reducedIndex), reducedIndex);
  }

  /// var's second pass over the cached rows (RowPlan::caching): each var's
  /// accumulator, the sum of its points, becomes the sum of their squared deviations
  /// from the mean.
  void deviations(llvm::ArrayRef<int> now, bool even) {
    std::vector<int> vars;
    std::vector<bool> needed(k_.insts.size(), false);
    for (int r : now)
      if (k_.insts[r].node->op() == Op::Var) {
        vars.push_back(r);
        markNeeded(k_, k_.insts[r].args[0], needed);
      }
    if (vars.empty())
      return;
    if (ck_.launch == CudaKernel::Launch::BlockPerSegment) // every warp has read w<r>
      c_.line("__syncthreads();");
    for (int r : vars)
      c_.line("const f64 m{0} = a{0} / (f64)L;", r);
    for (int r : vars)
      c_.line("a{} = 0;", r);
    // The same deviation either way; from registers as an fma, which keeps ptxas
    // from holding every point converted since the first pass (rows of 4097 f32 at
    // 256 lanes: 92 registers a lane as a difference, 60 so). From shared memory as a
    // difference: on an H200 rows of 56000 f32 took 0.34 ms so, 0.36 as an fma.
    const char* deviation = rows_.shared ? "(f64){1} - m{0}" : "__fma_rn((f64){1}, 1.0, -m{0})";
    auto each = [&](bool) {
      for (int r : vars) {
        c_.line("const f64 d{} = {};", r,
                fmt::format(fmt::runtime(deviation), r, val(k_.insts[r].args[0])));
        c_.line("a{0} = a{0} + d{0} * d{0};", r);
      }
    };
    if (rows_.shared && w_ > 1) {
      ownRuns(needed, each);
    } else {
      pass(
          needed, false, [this] { openPoints(); }, load_);
      each(true);
      closePoints();
    }
    e_.combineLanes(c_, ck_.launch, even, vars);
  }

  /// The domain outputs, a point at a time.
  void storePoints() {
    pass(
        ps_.forOutputs, true, [this] { openPoints(); }, load_);
    for (size_t o = 0; o < k_.outputs.size(); ++o)
      if (k_.outputs[o].space == Space::Domain)
        c_.line("out{}[p] = v{};", o, k_.outputs[o].inst);
    closePoints();
  }

  /// The domain outputs by runs of w_ points: a run's values gathered in registers,
  /// then stored as one vector. Where the next row goes ahead (RowPlan::ahead), the
  /// lane's point outside the runs comes first, from q<input> (a run of the next row
  /// may take its place in shared memory), and each run's slot, once stored from,
  /// takes the next row's run: the run's shared-memory loads have returned by then,
  /// as the store reads what they brought.
  void storeRuns() {
    if (ahead_) {
      if (peeled_)
        storePeel();
      c_.line("const bool more = s + {0} < S;", ps_.unitStride);
      c_.line("const idx sn = more ? s + {} : s;", ps_.unitStride);
      rowRuns("n");
      if (peeled_) {
        c_.open("if (more)");
        peelAhead("n");
        c_.close();
      }
    }
    // The run's vectors from shared memory (by points, a lane's four loads of one run
    // would hit four banks of one eighth of them) and of the row-long inputs.
    const std::vector<int>& rowVectors = rows_.rowVectors;
    LoadFn runLoad = [&, fromShared = rows_.shared ? fromRunVectors() : load_](int i) {
      if (!llvm::is_contained(rowVectors, i))
        return fromShared(i);
      return fmt::format("((const {}*)&g{})[e]", ctype(k_.insts[i].dtype), i);
    };
    auto openRun = [&] {
      openRuns();
      for (size_t in = 0; in < rows_.cached.size(); ++in)
        if (rows_.shared && rows_.cached[in])
          c_.line("const {0} t{1} = ((const {0}*){2})[{3}];",
                  vectorType(k_.inputs[in].type().dtype), in, sharedRuns(in), run_);
      for (int i : rowVectors)
        c_.line("const {0} g{1} = ((const {0}*)in{2})[{3}];", vectorType(k_.insts[i].dtype), i,
                k_.insts[i].input, run_);
      for (size_t o = 0; o < k_.outputs.size(); ++o)
        if (k_.outputs[o].space == Space::Domain)
          c_.line("{} r{}[{}];", ctype(k_.insts[k_.outputs[o].inst].dtype), o, w_);
      openRunPoints();
    };
    pass(ps_.forOutputs, true, openRun, runLoad);
    for (size_t o = 0; o < k_.outputs.size(); ++o)
      if (k_.outputs[o].space == Space::Domain)
        c_.line("r{}[e] = v{};", o, k_.outputs[o].inst);
    c_.close();
    for (size_t o = 0; o < k_.outputs.size(); ++o)
      if (k_.outputs[o].space == Space::Domain) {
        const char* vt = vectorType(k_.insts[k_.outputs[o].inst].dtype);
        std::vector<std::string> parts;
        for (int64_t e = 0; e < w_; ++e)
          parts.push_back(fmt::format("r{}[{}]", o, e));
        c_.line("(({0}*)(out{1} + {2}))[{3}] = make_{0}({4});", vt, o, rowOf(""), run_,
                fmt::join(parts, ", "));
      }
    if (!ahead_) {
      closeRuns();
      if (peeled_)
        storePeel();
      return;
    }
    if (rows_.ragged)
      c_.close();
    c_.open(rows_.ragged ? fmt::format("if (more && ({}))", inSegment("v", "n"))
                         : std::string("if (more)"));
    copyRun("n");
    c_.close();
    c_.close();
  }

  /// A peeled row's points outside its runs, the lane's jp (from q<input> where the
  /// next row goes ahead).
  void storePeel() {
    auto open = [this] {
      c_.open("if (jp < L)");
      if (rows_.caching && !rows_.shared)
        c_.line("[[maybe_unused]] const int u = {};", rows_.perLane - 1);
      c_.line("const idx j = jp;");
    };
    LoadFn fromAhead = [this](int i) {
      const Inst& inst = k_.insts[i];
      if (inst.kind == Inst::Kind::Load && inst.space == Space::Domain &&
          rows_.cached[inst.input] && e_.isIdentity(inst))
        return fmt::format("q{}", inst.input);
      return load_(i);
    };
    pass(ps_.forOutputs, true, open, ahead_ ? fromAhead : load_);
    for (size_t o = 0; o < k_.outputs.size(); ++o)
      if (k_.outputs[o].space == Space::Domain)
        c_.line("out{}[p] = v{};", o, k_.outputs[o].inst);
    c_.close();
  }

  /// Last, when every lane is done reading (an output may replace an input): the
  /// reduced outputs.
  void finish() {
    using L = CudaKernel::Launch;
    if (ck_.launch == L::BlockPerSegment)
      c_.line("__syncthreads();");
    else if (ck_.launch == L::WarpPerSegment)
      c_.line("__syncwarp();");
    if (!ps_.reducedOutputs)
      return;
    if (ck_.launch != L::ThreadPerSegment)
      c_.open(fmt::format("if ({} == 0)", ps_.laneStart));
    for (size_t o = 0; o < k_.outputs.size(); ++o)
      if (k_.outputs[o].space == Space::Reduced)
        c_.line("out{}[s] = v{};", o, k_.outputs[o].inst);
    if (ck_.launch != L::ThreadPerSegment)
      c_.close();
  }

  /// float4 / double2 for the wide rows' f32 / f64 buffers.
  static const char* vectorType(DType t) { return t == DType::F32 ? "float4" : "double2"; }

  Emitter& e_;
  const Kernel& k_;
  Code& c_;
  const CudaKernel& ck_;
  const Passes& ps_;
  const RowPlan& rows_;
  int64_t w_;
  bool peeled_;       ///< by vectors, over a peeled row (RowPlan::peeled)
  bool ahead_;        ///< the next row copied into shared memory (RowPlan::ahead)
  std::string run_;   ///< a run's index among the segment's vectors
  int64_t everyLane_; ///< the runs every lane has in every segment
  std::string p_;
  std::vector<std::string> base_;
  LoadFn domainIndex_, load_;
};

void Emitter::segmentLoop(Code& c, const CudaKernel& ck, const Passes& ps, const RowPlan& rows,
                          bool vectors) {
  Segment(*this, c, ck, ps, rows, vectors).emit();
}

} // namespace graphc::codegen::detail
