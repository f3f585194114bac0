//===- codegen/Cuda.cpp - CUDA C++ for a kernel ---------------------------===//
//
// The emitter prints instructions as `const T vN = expr;` lines and wraps them in
// one of the loop forms of Cuda.h. A load's offset `sum p[k] * strides[k]` is
// printed from the flat index of a point: unit axes are dropped, neighbouring axes
// that stay contiguous in the input are merged, and each remaining axis becomes
// `(i / inner % extent) * stride`. In a reduction the point is (segment s, position
// j): the part of an offset that depends on s is computed once per segment. A
// computed source (a Source instruction: full, eye, iota) is an expression of the
// flat index its strides give, printed the same way as a load's offset.
//
// A reduction kernel walks each segment once per stage (Kernel::stages): stage k's
// pass evaluates only the domain instructions its reductions read, which may read
// the `vN` of earlier stages' reduced values, already defined in the segment's
// scope. Each reduction has its own shared-memory array, so a later stage never
// overwrites what an earlier one is still reading.
//
//===----------------------------------------------------------------------===//
#include "codegen/Cuda.h"

#include "support/Error.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <fmt/format.h>
#include <functional>

namespace graphc::codegen {
namespace {

/// The most points of a segment a lane keeps in registers (row caching, in
/// Emitter::reduction).
constexpr int64_t kCachedPointsPerLane = 16;
/// Row-cached kernels moving more bytes than this (about an H100's or H200's L2)
/// load their rows and store their domain outputs with evict-first hints
/// (__ldcs, __stcs): nothing they touch would stay in the cache anyway. W4's
/// layernorm, 268 MB: 70.6 -> 69.5 us on an H200 (docs/benchmarks.md, session 5).
constexpr int64_t kStreamingBytes = int64_t{64} << 20;

using ir::DType;
using ir::Op;

/// Element types, spelled as in the IR (typedefs at the top of every source).
const char* ctype(DType t) {
  return ir::dtypeName(t).data(); // a string literal
}

/// The unsigned type integer arithmetic of `t` wraps in.
const char* utype(DType t) {
  return t == DType::I64 ? "u64" : "u32";
}

std::string val(int i) {
  return fmt::format("v{}", i);
}

/// Device helpers a kernel may need; each is printed once, in this order.
enum Helper : unsigned {
  kVec = 1,
  kBest = 2,
  kSigmoid = 4,
  kFloatRem = 8,
  kIntDiv = 16,
  kIntRem = 32,
  kIntPow = 64,
};

const char* kTypedefs = R"(typedef int i32;
typedef long long i64;
typedef unsigned u32;
typedef unsigned long long u64;
typedef float f32;
typedef double f64;
)";

const char* helperText(Helper h) {
  switch (h) {
  case kVec:
    return R"(// N consecutive elements, loaded and stored as one aligned vector.
template <typename T, int N> struct alignas(sizeof(T) * N) gc_vec { T x[N]; };
)";
  case kBest:
    return R"(// The running extreme of max/min/argmax/argmin: value and position (-1: none).
template <typename T> struct gc_best { T v; i64 i; };
// b replaces a when it comes first in the order: NaN, then the larger (Max) or
// smaller value; ties go to the lower position.
template <bool Max, typename T>
__device__ __forceinline__ gc_best<T> gc_pick(gc_best<T> a, gc_best<T> b) {
  if (b.i < 0) return a;
  if (a.i < 0) return b;
  bool an = a.v != a.v, bn = b.v != b.v;
  bool takeB = (an || bn) ? (an && bn ? b.i < a.i : bn)
                          : (b.v == a.v ? b.i < a.i : (Max ? b.v > a.v : b.v < a.v));
  return takeB ? b : a;
}
template <typename T> __device__ __forceinline__ gc_best<T> gc_shfl_xor(gc_best<T> a, int m) {
  return {__shfl_xor_sync(0xffffffffu, a.v, m), __shfl_xor_sync(0xffffffffu, a.i, m)};
}
)";
  case kSigmoid:
    return R"(// Never exponentiates a large positive number.
__device__ __forceinline__ f32 gc_sigmoid(f32 v) {
  if (v >= 0) return 1.0f / (1.0f + expf(-v));
  f32 e = expf(v);
  return e / (1.0f + e);
}
__device__ __forceinline__ f64 gc_sigmoid(f64 v) {
  if (v >= 0) return 1.0 / (1.0 + exp(-v));
  f64 e = exp(v);
  return e / (1.0 + e);
}
)";
  case kFloatRem:
    return R"(// Remainder with the sign of the divisor.
__device__ __forceinline__ f32 gc_rem(f32 a, f32 b) {
  f32 r = fmodf(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
__device__ __forceinline__ f64 gc_rem(f64 a, f64 b) {
  f64 r = fmod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
)";
  case kIntDiv:
    return R"(// Integer division truncating toward zero; MIN / -1 wraps; b == 0 is error `code`.
template <typename T, typename U>
__device__ T gc_div(T a, T b, int* error, int code) {
  if (b == 0) { atomicCAS(error, 0, code); return 0; }
  if (b == T(-1)) return (T)(U(0) - (U)a);
  return a / b;
}
)";
  case kIntRem:
    return R"(// Integer remainder with the sign of the divisor; b == 0 is error `code`.
template <typename T>
__device__ T gc_irem(T a, T b, int* error, int code) {
  if (b == 0) { atomicCAS(error, 0, code); return 0; }
  if (b == T(-1)) return 0;
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r;
}
)";
  case kIntPow:
    return R"(// Integer power by squaring, wrapping; a negative exponent is error `code`.
template <typename T, typename U>
__device__ T gc_pow(T base, T e, int* error, int code) {
  if (e < 0) { atomicCAS(error, 0, code); return 0; }
  U r = 1, b = (U)base;
  for (; e > 0; e >>= 1) {
    if (e & 1) r *= b;
    b *= b;
  }
  return (T)r;
}
)";
  }
  return "";
}

/// `x + y`, leaving out zeros.
std::string plus(const std::string& x, const std::string& y) {
  return x == "0" ? y : y == "0" ? x : x + " + " + y;
}

/// `sum_k (var / inner_k % extents[k]) * strides[k]` for a flat index `var` over
/// `extents` (C order), simplified; "0" when no axis contributes.
std::string affine(llvm::StringRef var, llvm::ArrayRef<int64_t> extents,
                   llvm::ArrayRef<int64_t> strides) {
  struct Axis {
    int64_t extent, stride;
  };
  std::vector<Axis> axes; // outer to inner, unit axes dropped, contiguous runs merged
  for (size_t a = 0; a < extents.size(); ++a) {
    if (extents[a] == 1)
      continue;
    if (!axes.empty() && axes.back().stride == strides[a] * extents[a])
      axes.back() = {axes.back().extent * extents[a], strides[a]};
    else
      axes.push_back({extents[a], strides[a]});
  }
  std::string out = "0";
  int64_t inner = 1;
  for (size_t a = axes.size(); a-- > 0;) {
    const Axis& axis = axes[a];
    if (axis.stride != 0) {
      std::string coord = var.str();
      if (inner > 1)
        coord = fmt::format("{} / {}", coord, inner);
      if (a > 0)
        coord = fmt::format("{} % {}", coord, axis.extent);
      if (axis.stride != 1)
        coord = coord == var ? fmt::format("{} * {}", coord, axis.stride)
                             : fmt::format("({}) * {}", coord, axis.stride);
      out = plus(coord, out);
    }
    inner *= axis.extent;
  }
  return out;
}

/// The elements of `v` at `axes`, or at the other axes when `complement`.
ir::Shape pick(llvm::ArrayRef<int64_t> v, llvm::ArrayRef<int64_t> axes, bool complement) {
  ir::Shape out;
  for (size_t a = 0; a < v.size(); ++a)
    if (llvm::is_contained(axes, static_cast<int64_t>(a)) != complement)
      out.push_back(v[a]);
  return out;
}

/// Lines of code at an indentation depth.
struct Code {
  std::string text;
  int depth = 0;

  template <typename... Args> void line(fmt::format_string<Args...> f, Args&&... args) {
    text.append(2 * depth, ' ');
    text += fmt::format(f, std::forward<Args>(args)...);
    text += '\n';
  }
  void open(const std::string& head) {
    line("{} {{", head);
    ++depth;
  }
  void close() {
    --depth;
    line("}}");
  }
};

/// The running state of one reduction in a lane.
struct Accumulator {
  std::string type, init;
  enum { Add, Multiply, Best } how = Add;
  bool max = false; ///< Best: max/argmax rather than min/argmin

  /// The state combining states (or items) `x` and `y`, x first.
  std::string combine(const std::string& x, const std::string& y) const {
    if (how == Best)
      return fmt::format("gc_pick<{}>({}, {})", max ? "true" : "false", x, y);
    return fmt::format("{} {} {}", x, how == Add ? "+" : "*", y);
  }
};

class Emitter {
public:
  explicit Emitter(const Kernel& k) : k_(k) {
    int64_t most = ir::numElements(k.domain);
    for (const ir::Value& v : k.inputs)
      most = std::max(most, v.type().numel());
    wide_ = most > (int64_t{1} << 30);
    for (const Inst& inst : k.insts)
      if (inst.kind == Inst::Kind::Compute && !ir::isFloat(k.insts[inst.args[0]].dtype))
        error_ = error_ || inst.node->op() == Op::Div || inst.node->op() == Op::Remainder ||
                 inst.node->op() == Op::Pow;
  }

  CudaKernel emit(llvm::StringRef name);

private:
  /// How a body reads load instruction i, or the flat index of instruction i (a load
  /// or a Source of an index): an expression.
  using LoadFn = std::function<std::string(int)>;

  std::string compute(int i);
  /// Lines defining `vi` for Source instruction i; `index` gives its flat index.
  void source(Code& c, int i, const LoadFn& index);
  /// The instructions of `space` that `needed` marks; `load` reads loads, `index`
  /// gives the flat index of index-reading sources.
  void body(Code& c, codegen::Space space, const std::vector<bool>& needed, const LoadFn& load,
            const LoadFn& index);
  /// A parameter of the kernel: "const float* __restrict__ in0".
  struct Param {
    std::string type, name;
    bool restrict;
    std::string str() const;
  };
  std::vector<Param> parameters() const;
  /// The signature of the body every entry point calls.
  std::string signature(const CudaKernel& ck) const;
  /// The kernels around the body: `name` takes one run's buffers as parameters,
  /// runsName() a table of them (see CudaKernel::name).
  std::string entryPoints(const CudaKernel& ck) const;
  void elementwise(Code& c, CudaKernel& ck);
  struct Passes;
  struct RowPlan;
  class Segment;
  RowPlan planRows(const CudaKernel& ck, const Passes& ps, bool multiPass) const;
  void reduction(Code& c, CudaKernel& ck);
  void combineLanes(Code& c, CudaKernel::Launch launch, llvm::ArrayRef<int> reduces);
  std::string reducedValue(int r) const;
  Accumulator accumulator(int reduce);
  bool isIdentity(const Inst& load) const {
    return load.strides == denseStrides(k_.shape(load.space));
  }
  /// True when the loop count can be a parameter: no instruction that `needed`
  /// marks reads a point's coordinates. Then the domain's leading extent enters the
  /// source nowhere else (affine() gives the outermost axis no modulo, and the
  /// segments' offsets are affine in s the same way), and one source serves every
  /// leading extent: a chain or a row broadcast of any length, a row reduction over
  /// any number of rows.
  bool sizeIsAParameter(const std::vector<bool>& needed) const {
    for (size_t i = 0; i < k_.insts.size(); ++i)
      if (needed[i] && readsIndex(k_.insts[i]))
        return false;
    return true;
  }
  /// True for a Source instruction whose value depends on the point.
  static bool readsIndex(const Inst& inst) {
    return inst.kind == Inst::Kind::Source && SourceIndex::of(*inst.node).readsIndex();
  }
  /// `in<input>[index(i)]` for load i.
  LoadFn loadAt(LoadFn index) const {
    return [this, index](int i) { return fmt::format("in{}[{}]", k_.insts[i].input, index(i)); };
  }

  const Kernel& k_;
  bool wide_ = false; ///< 64-bit indices
  unsigned helpers_ = 0;
  bool error_ = false; ///< some instruction may store an error code
  /// The last parameter is the count of the kernel's loop (N points, or S segments
  /// of a reduction): set when no instruction reads a point's coordinates, so that
  /// the source depends on the inner extents only (see sizeIsAParameter).
  bool sizeParameter_ = false;
};

/// Marks `inst` and what it reads in its own space (a Segment's operand is not).
void markNeeded(const Kernel& k, int inst, std::vector<bool>& needed) {
  if (needed[inst])
    return;
  needed[inst] = true;
  if (k.insts[inst].kind != Inst::Kind::Segment)
    for (int a : k.insts[inst].args)
      markNeeded(k, a, needed);
}

Accumulator Emitter::accumulator(int reduce) {
  Op op = k_.insts[reduce].node->op();
  DType t = k_.insts[k_.insts[reduce].args[0]].dtype;
  Accumulator a;
  if (op == Op::Sum || op == Op::Mean || op == Op::Prod) {
    a.type = ir::isFloat(t) ? "f64" : utype(t);
    a.init = op == Op::Prod ? "1" : "0";
    a.how = op == Op::Prod ? Accumulator::Multiply : Accumulator::Add;
    return a;
  }
  helpers_ |= kBest;
  a.how = Accumulator::Best;
  a.max = op == Op::Max || op == Op::Argmax;
  a.type = fmt::format("gc_best<{}>", ctype(t));
  a.init = fmt::format("{{({})0, -1}}", ctype(t));
  return a;
}

std::string Emitter::compute(int i) {
  const Inst& inst = k_.insts[i];
  Op op = inst.node->op();
  DType t = k_.insts[inst.args[op == Op::Select ? 1 : 0]].dtype;
  bool isFloat = ir::isFloat(t);
  std::string T = ctype(t), R = ctype(inst.dtype);
  std::string a = val(inst.args[0]), b = inst.args.size() > 1 ? val(inst.args[1]) : "";
  int code = i + 1;
  auto needFloat = [&] {
    if (!isFloat)
      throw Error(fmt::format("emitCuda: {} of {} has no CUDA form", ir::opName(op).str(), T));
  };
  auto math = [&](const char* fn) {
    needFloat();
    return fmt::format("{}{}({}{}{})", fn, t == DType::F32 ? "f" : "", a, b.empty() ? "" : ", ", b);
  };
  // a op b, wrapping for integers.
  auto wrap = [&](const char* o, const std::string& x, const std::string& y) {
    if (isFloat)
      return fmt::format("{} {} {}", x, o, y);
    return fmt::format("({})(({}){} {} ({}){})", T, utype(t), x, o, utype(t), y);
  };
  std::string zero = fmt::format("({})0", T);
  switch (op) {
  case Op::Neg:
    return isFloat ? "-" + a : wrap("-", zero, a);
  case Op::Abs:
    return fmt::format("{} < {} ? {} : {}", a, zero, isFloat ? "-" + a : wrap("-", zero, a), a);
  case Op::Sign: // NaN stays NaN
    return fmt::format("{}({})(({} < {}) - ({} < {}))",
                       isFloat ? a + " != " + a + " ? " + a + " : " : "", T, zero, a, a, zero);
  case Op::Square:
    return wrap("*", a, a);
  case Op::Relu: // NaN stays NaN
    return fmt::format("{} < {} ? {} : {}", a, zero, zero, a);
  case Op::Exp:
    return math("exp");
  case Op::Log:
    return math("log");
  case Op::Log1p:
    return math("log1p");
  case Op::Expm1:
    return math("expm1");
  case Op::Sqrt:
    return math("sqrt");
  case Op::Rsqrt:
    return fmt::format("({})1 / {}", T, math("sqrt"));
  case Op::Reciprocal:
    needFloat();
    return fmt::format("({})1 / {}", T, a);
  case Op::Sin:
    return math("sin");
  case Op::Cos:
    return math("cos");
  case Op::Tanh:
    return math("tanh");
  case Op::Sigmoid:
    needFloat();
    helpers_ |= kSigmoid;
    return fmt::format("gc_sigmoid({})", a);
  case Op::Erf:
    return math("erf");
  case Op::Floor:
    return math("floor");
  case Op::Ceil:
    return math("ceil");
  case Op::Round: // half to even
    return math("rint");
  case Op::Add:
    return wrap("+", a, b);
  case Op::Sub:
    return wrap("-", a, b);
  case Op::Mul:
    return wrap("*", a, b);
  case Op::Div:
    if (isFloat)
      return a + " / " + b;
    helpers_ |= kIntDiv;
    error_ = true;
    return fmt::format("gc_div<{}, {}>({}, {}, error, {})", T, utype(t), a, b, code);
  case Op::Pow:
    if (isFloat)
      return math("pow");
    helpers_ |= kIntPow;
    error_ = true;
    return fmt::format("gc_pow<{}, {}>({}, {}, error, {})", T, utype(t), a, b, code);
  case Op::Maximum: // NaN propagates
    return fmt::format("({0} != {0} || {0} > {1}) ? {0} : {1}", a, b);
  case Op::Minimum:
    return fmt::format("({0} != {0} || {0} < {1}) ? {0} : {1}", a, b);
  case Op::Atan2:
    return math("atan2");
  case Op::Remainder:
    if (isFloat) {
      helpers_ |= kFloatRem;
      return fmt::format("gc_rem({}, {})", a, b);
    }
    helpers_ |= kIntRem;
    error_ = true;
    return fmt::format("gc_irem<{}>({}, {}, error, {})", T, a, b, code);
  case Op::Eq:
    return a + " == " + b;
  case Op::Ne:
    return a + " != " + b;
  case Op::Lt:
    return a + " < " + b;
  case Op::Le:
    return a + " <= " + b;
  case Op::Gt:
    return a + " > " + b;
  case Op::Ge:
    return a + " >= " + b;
  case Op::Not:
    return "!" + a;
  case Op::And:
    return a + " && " + b;
  case Op::Or:
    return a + " || " + b;
  case Op::Select:
    return fmt::format("{} ? {} : {}", a, b, val(inst.args[2]));
  case Op::Cast:
    if (inst.dtype == DType::Bool)
      return fmt::format("{} != {}", a, zero);
    return fmt::format("({}){}", R, a);
  default:
    throw Error(fmt::format("emitCuda: {} cannot be part of a kernel", ir::opName(op).str()));
  }
}

/// A C++ literal of double `v`, exact (non-finite values by their bits).
std::string doubleLiteral(double v) {
  if (!std::isfinite(v))
    return fmt::format("__longlong_as_double(0x{:016x}ULL)", std::bit_cast<uint64_t>(v));
  std::string s = fmt::format("{}", v); // the shortest text that reads back as v
  return s.find_first_of(".e") == std::string::npos ? s + ".0" : s;
}

void Emitter::source(Code& c, int i, const LoadFn& index) {
  const Inst& inst = k_.insts[i];
  SourceIndex src = SourceIndex::of(*inst.node);
  const char* T = ctype(inst.dtype);
  std::string value = fmt::format("({}){}", T, doubleLiteral(src.value));
  if (!src.readsIndex())
    return c.line("const {} v{} = {};", T, i, value);
  // coord(f, x) = f / x.inner % x.extent, without the modulo on the outermost axis.
  int64_t numel = inst.node->type().numel();
  auto coord = [&](SourceIndex::Axis x) {
    std::string e = fmt::format("f{}", i);
    if (x.inner != 1)
      e += fmt::format(" / {}", x.inner);
    if (x.inner * x.extent < numel)
      e += fmt::format(" % {}", x.extent);
    return e;
  };
  c.line("const idx f{} = {};", i, index(i));
  if (src.form == SourceIndex::Diagonal)
    c.line("const {} v{} = {} == {} ? {} : ({})0;", T, i, coord(src.a), coord(src.b), value, T);
  else
    c.line("const {} v{} = ({})({});", T, i, T, coord(src.a));
}

void Emitter::body(Code& c, Space space, const std::vector<bool>& needed, const LoadFn& load,
                   const LoadFn& index) {
  for (size_t i = 0; i < k_.insts.size(); ++i) {
    const Inst& inst = k_.insts[i];
    if (inst.space != space || !needed[i])
      continue;
    const char* T = ctype(inst.dtype);
    switch (inst.kind) {
    case Inst::Kind::Load:
      c.line("const {} v{} = {};", T, i, load(static_cast<int>(i)));
      break;
    case Inst::Kind::Compute:
      c.line("const {} v{} = {};", T, i, compute(static_cast<int>(i)));
      break;
    case Inst::Kind::Segment:
      c.line("const {} v{} = v{};", T, i, inst.args[0]);
      break;
    case Inst::Kind::Source:
      source(c, static_cast<int>(i), index);
      break;
    case Inst::Kind::Reduce: // defined when the segment's reduction finishes
      break;
    }
  }
}

std::vector<Emitter::Param> Emitter::parameters() const {
  std::vector<Param> params;
  for (size_t i = 0; i < k_.inputs.size(); ++i)
    params.push_back(
        {fmt::format("const {}*", ctype(k_.inputs[i].type().dtype)), fmt::format("in{}", i), true});
  for (size_t o = 0; o < k_.outputs.size(); ++o)
    params.push_back({fmt::format("{}*", ctype(k_.insts[k_.outputs[o].inst].dtype)),
                      fmt::format("out{}", o),
                      false}); // an output may be written in place of an input
  if (error_)
    params.push_back({"int*", "error", true});
  if (sizeParameter_)
    params.push_back({"idx", k_.hasReduction() ? "S" : "N", false});
  return params;
}

std::string Emitter::Param::str() const {
  return fmt::format("{}{} {}", type, restrict ? " __restrict__" : "", name);
}

std::string Emitter::signature(const CudaKernel& ck) const {
  std::vector<std::string> params;
  for (const Param& p : parameters())
    params.push_back(p.str());
  return fmt::format("static __device__ __forceinline__ void {}_body({})", ck.name,
                     fmt::join(params, ", "));
}

std::string Emitter::entryPoints(const CudaKernel& ck) const {
  std::vector<Param> params = parameters();
  std::vector<std::string> declared, names, fromTable;
  for (size_t i = 0; i < params.size(); ++i) {
    declared.push_back(params[i].str());
    names.push_back(params[i].name);
    // Table entries are pointer-sized: the point count is an integer in one.
    fromTable.push_back(params[i].type == "idx" ? fmt::format("(idx)(i64)row[{}]", i)
                                                : fmt::format("({})row[{}]", params[i].type, i));
  }
  Code c;
  c.open(fmt::format("extern \"C\" __global__ void __launch_bounds__(BS) {}({})", ck.name,
                     fmt::join(declared, ", ")));
  c.line("{}_body({});", ck.name, fmt::join(names, ", "));
  c.close();
  c.line("// Several runs in one launch: run y's buffers are row y of `table`.");
  c.open(fmt::format("extern \"C\" __global__ void __launch_bounds__(BS) {}(void* const* "
                     "__restrict__ table)",
                     runsName(ck)));
  c.line("void* const* row = table + (idx)blockIdx.y * {};", params.size());
  c.line("{}_body({});", ck.name, fmt::join(fromTable, ", "));
  c.close();
  return c.text;
}

/// Blocks for `items` work units of `perBlock` each, at most 2^20 (the loops
/// stride over the rest).
unsigned blocksFor(int64_t items, int64_t perBlock) {
  return static_cast<unsigned>(std::clamp<int64_t>((items + perBlock - 1) / perBlock, 1, 1 << 20));
}

void Emitter::elementwise(Code& c, CudaKernel& ck) {
  int64_t n = ir::numElements(k_.domain);
  std::vector<bool> needed(k_.insts.size(), false);
  for (const KernelOutput& o : k_.outputs)
    markNeeded(k_, o.inst, needed);
  // Vectors of `width` points when every load is the identity: 16 bytes of the
  // widest element type.
  bool vector = true;
  int64_t widest = 1;
  for (const Inst& inst : k_.insts)
    if (inst.kind == Inst::Kind::Load) {
      vector = vector && isIdentity(inst);
      widest = std::max(widest, ir::dtypeSize(inst.dtype));
    }
  for (const KernelOutput& o : k_.outputs)
    widest = std::max(widest, ir::dtypeSize(k_.insts[o.inst].dtype));
  int64_t width = vector ? 16 / widest : 1;
  sizeParameter_ = sizeIsAParameter(needed);
  vector = vector && (sizeParameter_ || n >= width);
  ck.launch = CudaKernel::Launch::Elementwise;
  ck.blockSize = 256;
  ck.gridSize = blocksFor(vector ? std::max<int64_t>(n / width, 1) : n, ck.blockSize);
  if (sizeParameter_)
    ck.size = n;

  Code inner;
  inner.depth = 2;
  auto at = [&](llvm::StringRef point) {
    return [this, point](int i) { return affine(point, k_.domain, k_.insts[i].strides); };
  };
  body(inner, Space::Domain, needed, loadAt(at("p")), at("p"));
  for (size_t o = 0; o < k_.outputs.size(); ++o)
    inner.line("out{}[p] = v{};", o, k_.outputs[o].inst);

  if (!sizeParameter_)
    c.line("constexpr idx N = {};", n);
  c.open(signature(ck));
  c.line("const idx stride = (idx)gridDim.x * BS;");
  c.line("idx p = (idx)blockIdx.x * BS + (idx)threadIdx.x;");
  if (vector) {
    helpers_ |= kVec;
    std::vector<std::string> pointers;
    for (size_t i = 0; i < k_.inputs.size(); ++i)
      pointers.push_back(fmt::format("(u64)in{}", i));
    for (size_t o = 0; o < k_.outputs.size(); ++o)
      pointers.push_back(fmt::format("(u64)out{}", o));
    c.line("// {} points at a time where every buffer is 16-byte aligned", width);
    c.line("const bool aligned = (({}) & 15) == 0;", fmt::join(pointers, " | "));
    c.line("const idx vectors = aligned ? N / {} : 0;", width);
    c.open("for (idx q = p; q < vectors; q += stride)");
    auto vec = [&](DType t) { return fmt::format("gc_vec<{}, {}>", ctype(t), width); };
    for (size_t i = 0; i < k_.insts.size(); ++i)
      if (k_.insts[i].kind == Inst::Kind::Load)
        c.line("const {0} l{1} = ((const {0}*)in{2})[q];", vec(k_.insts[i].dtype), i,
               k_.insts[i].input);
    for (size_t o = 0; o < k_.outputs.size(); ++o)
      c.line("{} o{};", vec(k_.insts[k_.outputs[o].inst].dtype), o);
    c.line("#pragma unroll");
    c.open(fmt::format("for (int u = 0; u < {}; ++u)", width));
    for (size_t i = 0; i < k_.insts.size(); ++i)
      if (needed[i] && readsIndex(k_.insts[i])) {
        c.line("const idx pu = q * {} + u;", width);
        break;
      }
    auto lane = [](int i) { return fmt::format("l{}.x[u]", i); };
    body(c, Space::Domain, needed, lane, at("pu"));
    for (size_t o = 0; o < k_.outputs.size(); ++o)
      c.line("o{}.x[u] = v{};", o, k_.outputs[o].inst);
    c.close();
    for (size_t o = 0; o < k_.outputs.size(); ++o)
      c.line("(({}*)out{})[q] = o{};", vec(k_.insts[k_.outputs[o].inst].dtype), o, o);
    c.close();
    c.line("// the tail, or everything when a buffer is not aligned");
    c.line("p += vectors * {};", width);
  }
  c.open("for (; p < N; p += stride)");
  c.text += inner.text;
  c.close();
  c.close();
}

/// Combines the lanes' accumulators of `reduces` into every lane: a butterfly in
/// each warp, then (one block per segment) the warps through shared memory.
void Emitter::combineLanes(Code& c, CudaKernel::Launch launch, llvm::ArrayRef<int> reduces) {
  using L = CudaKernel::Launch;
  if (launch != L::ThreadPerSegment) {
    c.line("#pragma unroll");
    c.open("for (int m = 16; m > 0; m /= 2)");
    for (int r : reduces) {
      Accumulator a = accumulator(r);
      std::string other = a.how == Accumulator::Best
                              ? fmt::format("gc_shfl_xor(a{}, m)", r)
                              : fmt::format("__shfl_xor_sync(0xffffffffu, a{}, m)", r);
      c.line("a{} = {};", r, a.combine(fmt::format("a{}", r), other));
    }
    c.close();
  }
  if (launch == L::BlockPerSegment) {
    c.open("if (threadIdx.x % 32 == 0)");
    for (int r : reduces)
      c.line("w{0}[threadIdx.x / 32] = a{0};", r);
    c.close();
    c.line("__syncthreads();");
    for (int r : reduces)
      c.line("a{0} = w{0}[0];", r);
    c.open("for (int w = 1; w < BS / 32; ++w)");
    for (int r : reduces) {
      Accumulator a = accumulator(r);
      c.line("a{} = {};", r, a.combine(fmt::format("a{}", r), fmt::format("w{}[w]", r)));
    }
    c.close();
  }
}

/// The value of reduction `r` from its combined accumulator `a<r>`.
std::string Emitter::reducedValue(int r) const {
  const Inst& inst = k_.insts[r];
  Op op = inst.node->op();
  DType t = k_.insts[inst.args[0]].dtype;
  const char* R = ctype(inst.dtype);
  if (op == Op::Argmax || op == Op::Argmin)
    return fmt::format("({})a{}.i", R, r);
  if (op == Op::Max || op == Op::Min)
    return fmt::format("a{}.v", r);
  if (op == Op::Mean && ir::isFloat(t))
    return fmt::format("({})(a{} / (f64)L)", R, r);
  if (op == Op::Mean)
    return fmt::format("({})((i64)({})a{} / (i64)L)", R, ctype(t), r);
  return fmt::format("({})a{}", R, r);
}

/// What the passes over a segment of a reduction kernel compute: per stage its Reduce
/// instructions and the domain instructions they read, the domain outputs' instructions,
/// and the loop expressions of the launch form.
struct Emitter::Passes {
  int64_t length = 0;      ///< points per segment
  bool contiguous = false; ///< segments are contiguous runs of the domain
  int stages = 1;
  std::vector<std::vector<int>> reduces;        ///< by stage
  std::vector<std::vector<bool>> forReductions; ///< by stage
  std::vector<bool> forOutputs;
  bool domainOutputs = false, reducedOutputs = false;
  ir::Shape keptExtents, reducedExtents, dense;
  std::string unitStart, unitStride, laneStart, laneStride;
};

/// How a lane holds its share of a segment.
///
/// Row caching: when the segment is read in more than one pass and a lane's share
/// of it is a few points, each input read at every point is loaded once into the
/// lane's registers (c<input>[u], its u-th point), all loads in flight at once, and
/// every pass reads the registers. Streaming: the cached rows and the domain
/// outputs, floating point, past the L2. Vectors: streamed rows in runs of `width`
/// points per lane, loaded and stored 16 bytes at a time where every streamed
/// buffer is aligned (W4 on an H200: 71 us against 76 with one point per access); a
/// lane's u-th point is then point u % width of its u / width-th run, and loads the
/// same at every segment and contiguous along it (layernorm's g and b) are read by
/// vectors too in the output pass.
struct Emitter::RowPlan {
  int64_t lanes = 0, perLane = 0;
  std::vector<bool> cached; ///< by input
  bool caching = false, streaming = false, ragged = false;
  int64_t width = 1;
  std::vector<int> rowVectors;
};

Emitter::RowPlan Emitter::planRows(const CudaKernel& ck, const Passes& ps, bool multiPass) const {
  using L = CudaKernel::Launch;
  RowPlan r;
  r.lanes = ck.launch == L::BlockPerSegment  ? ck.blockSize
            : ck.launch == L::WarpPerSegment ? 32
                                             : 0;
  r.perLane = r.lanes ? (ps.length + r.lanes - 1) / r.lanes : 0;
  r.cached.assign(k_.inputs.size(), false);
  r.caching = ps.contiguous && multiPass && r.lanes && r.perLane <= kCachedPointsPerLane;
  for (size_t i = 0; r.caching && i < k_.insts.size(); ++i) {
    const Inst& inst = k_.insts[i];
    if (inst.kind == Inst::Kind::Load && inst.space == Space::Domain && isIdentity(inst))
      r.cached[inst.input] = true;
  }
  r.caching = r.caching && llvm::is_contained(r.cached, true);
  int64_t streamed = 0;
  std::vector<int64_t> sizes; // of the streamed elements
  r.streaming = r.caching;
  for (size_t in = 0; in < r.cached.size(); ++in)
    if (r.cached[in]) {
      streamed += k_.inputs[in].type().bytes();
      r.streaming = r.streaming && ir::isFloat(k_.inputs[in].type().dtype);
      sizes.push_back(ir::dtypeSize(k_.inputs[in].type().dtype));
    }
  for (const KernelOutput& o : k_.outputs)
    if (o.space == Space::Domain) {
      streamed += o.value.type().bytes();
      r.streaming = r.streaming && ir::isFloat(k_.insts[o.inst].dtype);
      sizes.push_back(ir::dtypeSize(k_.insts[o.inst].dtype));
    }
  r.streaming = r.streaming && streamed > kStreamingBytes;
  r.ragged = ps.length % std::max<int64_t>(r.lanes, 1) != 0;
  if (r.streaming && !r.ragged &&
      std::adjacent_find(sizes.begin(), sizes.end(), std::not_equal_to<>()) == sizes.end() &&
      (sizes[0] == 4 || sizes[0] == 8) && r.perLane % (16 / sizes[0]) == 0)
    r.width = 16 / sizes[0];
  for (size_t i = 0; i < k_.insts.size() && r.width > 1; ++i) {
    const Inst& inst = k_.insts[i];
    ir::Shape kept = pick(inst.strides, k_.reduceAxes, true);
    if (ps.forOutputs[i] && inst.kind == Inst::Kind::Load && inst.space == Space::Domain &&
        !r.cached[inst.input] && ir::dtypeSize(inst.dtype) * r.width == 16 &&
        std::all_of(kept.begin(), kept.end(), [](int64_t d) { return d == 0; }) &&
        pick(inst.strides, k_.reduceAxes, false) == denseStrides(ps.reducedExtents))
      r.rowVectors.push_back(static_cast<int>(i));
  }
  return r;
}

/// One loop over the segments of a reduction kernel: its rows loaded (cached), a
/// pass per stage, the domain outputs, the reduced outputs. With `vectors`, the
/// streamed rows go by RowPlan::width points (the buffers must be aligned).
class Emitter::Segment {
public:
  Segment(Emitter& e, Code& c, const CudaKernel& ck, const Passes& ps, const RowPlan& rows,
          bool vectors)
      : e_(e), k_(e.k_), c_(c), ck_(ck), ps_(ps), rows_(rows), w_(vectors ? rows.width : 1),
        run_(fmt::format("{} + v * {}", ps.laneStart, ps.laneStride)) {}

  void emit() {
    c_.open(fmt::format("for (idx s = {}; s < S; s += {})", ps_.unitStart, ps_.unitStride));
    offsets();
    if (rows_.caching)
      loadRows();
    for (int stage = 1; stage <= ps_.stages; ++stage)
      reduce(stage);
    if (ps_.domainOutputs && w_ > 1)
      storeRuns();
    else if (ps_.domainOutputs)
      storePoints();
    finish();
    c_.close();
  }

private:
  /// Once per segment: the segment's part of every domain load's offset. At point
  /// (s, j) the domain's flat index is p_.
  void offsets() {
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
      return inst.space == Space::Domain && rows_.cached[inst.input] && e_.isIdentity(inst)
                 ? fmt::format("c{}[u]", inst.input)
                 : fromMemory(i);
    };
  }

  /// Opens (and closePoints() closes) the loop over a lane's points j of segment s.
  void openPoints() {
    if (!rows_.caching)
      return c_.open(
          fmt::format("for (idx j = {}; j < L; j += {})", ps_.laneStart, ps_.laneStride));
    c_.line("#pragma unroll");
    c_.open(fmt::format("for (int u = 0; u < {}; ++u)", rows_.perLane));
    if (w_ > 1)
      c_.line("const idx j = ({} + u / {} * {}) * {} + u % {};", ps_.laneStart, w_, ps_.laneStride,
              w_, w_);
    else
      c_.line("const idx j = {} + u * {};", ps_.laneStart, ps_.laneStride);
    if (rows_.ragged)
      c_.open("if (j < L)");
  }
  void closePoints() {
    if (rows_.caching && rows_.ragged)
      c_.close();
    c_.close();
  }
  /// Opens the loop over a lane's runs v of w_ points.
  void openRuns() {
    c_.line("#pragma unroll");
    c_.open(fmt::format("for (int v = 0; v < {}; ++v)", rows_.perLane / w_));
  }

  /// The cached rows into registers.
  void loadRows() {
    const std::vector<bool>& cached = rows_.cached;
    for (size_t in = 0; in < cached.size(); ++in)
      if (cached[in])
        c_.line("{} c{}[{}];", ctype(k_.inputs[in].type().dtype), in, rows_.perLane);
    if (w_ > 1) {
      openRuns();
      for (size_t in = 0; in < cached.size(); ++in)
        if (cached[in]) {
          const char* vt = vectorType(k_.inputs[in].type().dtype);
          c_.line("const {0} t{1} = __ldcs((const {0}*)(in{1} + s * L) + {2});", vt, in, run_);
          for (int64_t e = 0; e < w_; ++e)
            c_.line("c{0}[v * {1} + {2}] = t{0}.{3};", in, w_, e, "xyzw"[e]);
        }
      c_.close();
      return;
    }
    openPoints();
    for (size_t in = 0; in < cached.size(); ++in)
      if (cached[in])
        c_.line("{}", rows_.streaming ? fmt::format("c{0}[u] = __ldcs(in{0} + {1});", in, p_)
                                      : fmt::format("c{0}[u] = in{0}[{1}];", in, p_));
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

  /// Stage `stage`'s pass: each lane accumulates its points in increasing j (reading
  /// the reduced values of earlier stages), the lanes are combined, and the stage's
  /// reduced values and reduced-space instructions follow.
  void reduce(int stage) {
    const std::vector<int>& now = ps_.reduces[stage];
    for (int r : now) {
      Accumulator a = e_.accumulator(r);
      c_.line("{} a{} = {};", a.type, r, a.init);
    }
    pass(
        ps_.forReductions[stage], false, [this] { openPoints(); }, load_);
    for (int r : now) {
      Accumulator a = e_.accumulator(r);
      std::string x = val(k_.insts[r].args[0]);
      std::string item = a.how == Accumulator::Best ? fmt::format("{}{{{}, (i64)j}}", a.type, x)
                                                    : fmt::format("({}){}", a.type, x);
      c_.line("a{0} = {1};", r, a.combine(fmt::format("a{}", r), item));
    }
    closePoints();
    e_.combineLanes(c_, ck_.launch, now);
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

  /// The domain outputs, a point at a time.
  void storePoints() {
    pass(
        ps_.forOutputs, true, [this] { openPoints(); }, load_);
    for (size_t o = 0; o < k_.outputs.size(); ++o)
      if (k_.outputs[o].space == Space::Domain) {
        int v = k_.outputs[o].inst;
        c_.line("{}", rows_.streaming ? fmt::format("__stcs(out{} + p, v{});", o, v)
                                      : fmt::format("out{}[p] = v{};", o, v));
      }
    closePoints();
  }

  /// The domain outputs by runs of w_ points: a run's values gathered in registers,
  /// then stored as one vector.
  void storeRuns() {
    const std::vector<int>& rowVectors = rows_.rowVectors;
    LoadFn runLoad = [&](int i) {
      if (!llvm::is_contained(rowVectors, i))
        return load_(i);
      return fmt::format("((const {}*)&g{})[e]", ctype(k_.insts[i].dtype), i);
    };
    auto openRun = [&] {
      openRuns();
      for (int i : rowVectors)
        c_.line("const {0} g{1} = ((const {0}*)in{2})[{3}];", vectorType(k_.insts[i].dtype), i,
                k_.insts[i].input, run_);
      for (size_t o = 0; o < k_.outputs.size(); ++o)
        if (k_.outputs[o].space == Space::Domain)
          c_.line("{} r{}[{}];", ctype(k_.insts[k_.outputs[o].inst].dtype), o, w_);
      c_.line("#pragma unroll");
      c_.open(fmt::format("for (int e = 0; e < {}; ++e)", w_));
      c_.line("const int u = v * {} + e;", w_);
      c_.line("const idx j = ({}) * {} + e;", run_, w_);
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
        c_.line("__stcs(({0}*)(out{1} + s * L) + {2}, make_{0}({3}));", vt, o, run_,
                fmt::join(parts, ", "));
      }
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

  /// float4 / double2 for the streamed f32 / f64 buffers.
  static const char* vectorType(DType t) { return t == DType::F32 ? "float4" : "double2"; }

  Emitter& e_;
  const Kernel& k_;
  Code& c_;
  const CudaKernel& ck_;
  const Passes& ps_;
  const RowPlan& rows_;
  int64_t w_;
  std::string run_; ///< a run's index among the segment's vectors
  std::string p_;
  std::vector<std::string> base_;
  LoadFn domainIndex_, load_;
};

void Emitter::reduction(Code& c, CudaKernel& ck) {
  Passes ps;
  int64_t segments = ir::numElements(k_.reducedShape);
  ps.length = k_.segmentSize();
  ps.contiguous = k_.segmentsContiguous();
  using L = CudaKernel::Launch;
  ck.launch = !ps.contiguous || ps.length <= 16 ? L::ThreadPerSegment
              : ps.length <= 2048               ? L::WarpPerSegment
                                                : L::BlockPerSegment;
  // A block per segment: 256 threads where a segment read in several passes fits
  // their registers (row caching, RowPlan; on an H200, W4's layernorm at 4096 points
  // runs in 80 us with 256 threads against 88 with 512), else more for long rows.
  bool multiPass = k_.stages() > 1 ||
                   std::any_of(k_.outputs.begin(), k_.outputs.end(),
                               [](const KernelOutput& o) { return o.space == Space::Domain; });
  ck.blockSize = ck.launch != L::BlockPerSegment                        ? 256
                 : multiPass && ps.length <= 256 * kCachedPointsPerLane ? 256
                 : ps.length >= 16384                                   ? 1024
                                                                        : 512;
  int64_t perBlock = ck.launch == L::ThreadPerSegment ? ck.blockSize
                     : ck.launch == L::WarpPerSegment ? ck.blockSize / 32
                                                      : 1;
  ck.gridSize = blocksFor(segments, perBlock);

  ps.stages = std::max(1, k_.stages());
  ps.reduces.resize(ps.stages + 1);
  ps.forReductions.assign(ps.stages + 1, std::vector<bool>(k_.insts.size(), false));
  ps.forOutputs.assign(k_.insts.size(), false);
  for (size_t i = 0; i < k_.insts.size(); ++i)
    if (k_.insts[i].kind == Inst::Kind::Reduce) {
      int stage = k_.insts[i].stage;
      ps.reduces[stage].push_back(static_cast<int>(i));
      markNeeded(k_, k_.insts[i].args[0], ps.forReductions[stage]);
    }
  for (const KernelOutput& o : k_.outputs)
    if (o.space == Space::Domain) {
      markNeeded(k_, o.inst, ps.forOutputs);
      ps.domainOutputs = true;
    } else {
      ps.reducedOutputs = true;
    }
  ps.keptExtents = pick(k_.domain, k_.reduceAxes, true);
  ps.reducedExtents = pick(k_.domain, k_.reduceAxes, false);
  ps.dense = denseStrides(k_.domain);

  sizeParameter_ = sizeIsAParameter(std::vector<bool>(k_.insts.size(), true));
  if (sizeParameter_)
    ck.size = segments;
  else
    c.line("constexpr idx S = {}; // segments", segments);
  c.line("constexpr idx L = {}; // points per segment", ps.length);
  c.open(signature(ck));
  switch (ck.launch) {
  case L::BlockPerSegment:
    // One array per reduction: no stage overwrites what another still reads, and
    // the barrier that ends a segment keeps the next segment's writes after it.
    for (int stage = 1; stage <= ps.stages; ++stage)
      for (int r : ps.reduces[stage])
        c.line("__shared__ {} w{}[BS / 32];", accumulator(r).type, r);
    ps.unitStart = "(idx)blockIdx.x", ps.unitStride = "(idx)gridDim.x";
    ps.laneStart = "(idx)threadIdx.x", ps.laneStride = "BS";
    break;
  case L::WarpPerSegment:
    ps.unitStart = "((idx)blockIdx.x * BS + (idx)threadIdx.x) / 32",
    ps.unitStride = "(idx)gridDim.x * (BS / 32)";
    ps.laneStart = "(idx)(threadIdx.x & 31)", ps.laneStride = "32";
    break;
  case L::ThreadPerSegment:
    ps.unitStart = "(idx)blockIdx.x * BS + (idx)threadIdx.x", ps.unitStride = "(idx)gridDim.x * BS";
    ps.laneStart = "0", ps.laneStride = "1";
    break;
  case L::Elementwise:
    break;
  }
  RowPlan rows = planRows(ck, ps, multiPass);
  if (rows.width == 1) {
    Segment(*this, c, ck, ps, rows, false).emit();
    c.close();
    return;
  }
  // The segment loop twice: by vectors where every streamed buffer is aligned, one
  // point at a time otherwise.
  std::vector<std::string> pointers;
  for (size_t in = 0; in < rows.cached.size(); ++in)
    if (rows.cached[in])
      pointers.push_back(fmt::format("(u64)in{}", in));
  for (size_t o = 0; o < k_.outputs.size(); ++o)
    if (k_.outputs[o].space == Space::Domain)
      pointers.push_back(fmt::format("(u64)out{}", o));
  for (int i : rows.rowVectors)
    pointers.push_back(fmt::format("(u64)in{}", k_.insts[i].input));
  c.open(fmt::format("if ((({}) & 15) == 0)", fmt::join(pointers, " | ")));
  Segment(*this, c, ck, ps, rows, true).emit();
  c.close();
  c.open("else");
  Segment(*this, c, ck, ps, rows, false).emit();
  c.close();
  c.close();
}

CudaKernel Emitter::emit(llvm::StringRef name) {
  CudaKernel ck;
  ck.name = name.str();
  Code kernel;
  if (k_.hasReduction())
    reduction(kernel, ck);
  else
    elementwise(kernel, ck);
  ck.hasErrorWord = error_;

  std::string& s = ck.source;
  s += fmt::format("// graphc kernel {}: {}{}\n", ck.name, launchName(ck.launch).str(),
                   !sizeParameter_     ? ""
                   : k_.hasReduction() ? ", S segments (a parameter)"
                                       : ", N points (a parameter)");
  s += kTypedefs;
  for (unsigned h = 1; h <= kIntPow; h <<= 1)
    if (helpers_ & h)
      s += helperText(static_cast<Helper>(h));
  s +=
      fmt::format("typedef {} idx;\nconstexpr int BS = {};\n", wide_ ? "i64" : "i32", ck.blockSize);
  s += kernel.text;
  s += entryPoints(ck);
  return ck;
}

} // namespace

CudaKernel emitCuda(const Kernel& k, llvm::StringRef name) {
  return Emitter(k).emit(name);
}

std::string runsName(const CudaKernel& k) {
  return k.name + "_runs";
}

std::string cudaErrorMessage(const Kernel& k, int code) {
  if (code <= 0 || code > static_cast<int>(k.insts.size()) || !k.insts[code - 1].node)
    return fmt::format("kernel error {}", code);
  const ir::Node& n = *k.insts[code - 1].node;
  const char* what = n.op() == Op::Div ? "integer division by zero"
                     : n.op() == Op::Remainder
                         ? "integer remainder by zero"
                         : "integers to negative integer powers are not allowed";
  std::string who = ir::opName(n.op()).str();
  if (!n.name().empty())
    who += fmt::format(" (%{})", n.name());
  return fmt::format("{}: {}", who, what);
}

llvm::StringRef launchName(CudaKernel::Launch launch) {
  switch (launch) {
  case CudaKernel::Launch::Elementwise:
    return "elementwise";
  case CudaKernel::Launch::BlockPerSegment:
    return "block-per-segment";
  case CudaKernel::Launch::WarpPerSegment:
    return "warp-per-segment";
  case CudaKernel::Launch::ThreadPerSegment:
    return "thread-per-segment";
  }
  return "?";
}

} // namespace graphc::codegen
