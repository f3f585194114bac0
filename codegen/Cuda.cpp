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
//===----------------------------------------------------------------------===//
#include "codegen/Cuda.h"

#include "codegen/CudaEmitter.h"
#include "ir/Formulas.h"
#include "ir/OpCases.h"
#include "ir/Scalar.h"
#include "support/Error.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <fmt/format.h>

namespace graphc::codegen {
namespace detail {
namespace {

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
    return R"(// The running extreme of max/min/argmax/argmin: value and position (-1: none),
// the position of the kernel's index type I (i32 where every index fits).
template <typename T, typename I> struct gc_best { T v; I i; };
// b replaces a when it comes first in the order: NaN, then the larger (Max) or
// smaller value; ties go to the lower position.
template <bool Max, typename T, typename I>
__device__ __forceinline__ gc_best<T, I> gc_pick(gc_best<T, I> a, gc_best<T, I> b) {
  if (b.i < 0) return a;
  if (a.i < 0) return b;
  bool an = a.v != a.v, bn = b.v != b.v;
  bool takeB = (an || bn) ? (an && bn ? b.i < a.i : bn)
                          : (b.v == a.v ? b.i < a.i : (Max ? b.v > a.v : b.v < a.v));
  return takeB ? b : a;
}
// a with v at position j added, j after every position a has seen (a lane's
// points come in increasing j): the same order as gc_pick, in fewer steps.
template <bool Max, typename T, typename I>
__device__ __forceinline__ gc_best<T, I> gc_push(gc_best<T, I> a, T v, I j) {
  bool take = a.i < 0 || (a.v == a.v && !(Max ? v <= a.v : v >= a.v));
  return {take ? v : a.v, take ? j : a.i};
}
template <typename T, typename I>
__device__ __forceinline__ gc_best<T, I> gc_shfl_xor(gc_best<T, I> a, int m) {
  return {__shfl_xor_sync(0xffffffffu, a.v, m), __shfl_xor_sync(0xffffffffu, a.i, m)};
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
    return R"(// The integer remainder truncated toward zero (C's %); MIN % -1 is 0; b == 0 is
// error `code`.
template <typename T>
__device__ T gc_trem(T a, T b, int* error, int code) {
  if (b == 0) { atomicCAS(error, 0, code); return 0; }
  if (b == T(-1)) return 0;
  return a % b;
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
  case kMoments:
    return R"(// var: the count n of a lane's points and the sums s1, s2 of their deviations
// from a shift k (its first point) and of their squares; centered (gc_center), k
// is their mean and s2 the sum of squared deviations from it, the form states merge
// in (Chan, Golub and LeVeque).
struct gc_moments { f64 n, k, s1, s2; };
__device__ __forceinline__ gc_moments gc_push(gc_moments a, f64 x) {
  if (a.n == 0) a.k = x;
  const f64 d = x - a.k;
  return {a.n + 1, a.k, a.s1 + d, a.s2 + d * d};
}
__device__ __forceinline__ gc_moments gc_center(gc_moments a) {
  if (a.n == 0) return a;
  const f64 d = a.s1 / a.n;
  return {a.n, a.k + d, 0, a.s2 - a.s1 * d};
}
__device__ __forceinline__ gc_moments gc_merge(gc_moments a, gc_moments b) {
  if (b.n == 0) return a;
  if (a.n == 0) return b;
  const f64 n = a.n + b.n, d = b.k - a.k, f = b.n / n;
  return {n, a.k + d * f, 0, a.s2 + b.s2 + d * d * a.n * f};
}
// b (mean bk, squares bs2) holds as many points as a: no division.
__device__ __forceinline__ gc_moments gc_merge_even(gc_moments a, f64 bk, f64 bs2) {
  const f64 d = bk - a.k;
  return {a.n + a.n, (a.k + bk) * 0.5, 0, a.s2 + bs2 + d * d * (a.n * 0.5)};
}
__device__ __forceinline__ gc_moments gc_shfl_xor(gc_moments a, int m) {
  return {__shfl_xor_sync(0xffffffffu, a.n, m), __shfl_xor_sync(0xffffffffu, a.k, m), 0,
          __shfl_xor_sync(0xffffffffu, a.s2, m)};
}
// a merged with the state of lane ^ m, the lower lane's first: both lanes get the
// same bits (gc_merge is not symmetric in its rounding; gc_merge_even is).
__device__ __forceinline__ gc_moments gc_merge_lanes(gc_moments a, int m) {
  const gc_moments b = gc_shfl_xor(a, m);
  return threadIdx.x & m ? gc_merge(b, a) : gc_merge(a, b);
}
)";
  case kExtreme:
    return R"(// The running float max (Max) or min of max/min: NaN wins, then the first NaN.
template <bool Max, typename T> __device__ __forceinline__ T gc_extreme(T a, T b) {
  return a != a ? a : b != b ? b : Max ? (b > a ? b : a) : (b < a ? b : a);
}
)";
  case kOnline:
    return R"(// An online max and sum: m, the max of a segment's points y so far, and s, the sum
// of exp(y - m) over them, in one pass over the points. The points come G at a time
// (those past the segment's end as -inf), and s is rescaled where m grows. A point of
// -inf adds nothing; where every point is -inf, gc_online_sum gives NaN, as the sum
// of exp(y - max) does (exp(-inf + inf)).
// s, a sum kept against max m, kept against the max n >= m instead. The factor in
// T, as each exp(y - m) is: in f64, logsumexp over rows of 50257 f32 took 0.1594 ms
// on an H100, against 0.1512.
template <typename T> __device__ __forceinline__ f64 gc_online_scale(f64 s, T m, T n) {
  return s == 0 ? 0 : s * (f64)exp(m - n);
}
template <int G, typename T>
__device__ __forceinline__ void gc_online_push(T& m, f64& s, const T (&y)[G]) {
  T n = m;
#pragma unroll
  for (int g = 0; g < G; ++g) n = gc_extreme<true>(n, y[g]);
  if (!(n == m)) {
    s = gc_online_scale(s, m, n);
    m = n;
  }
  if (isinf(m) && m < 0) return; // every point so far is -inf
#pragma unroll
  for (int g = 0; g < G; ++g) s += (f64)exp(y[g] - m);
}
template <typename T> __device__ __forceinline__ f64 gc_online_sum(T m, f64 s, i64 points) {
  return points > 0 && isinf(m) && m < 0 ? __longlong_as_double(0x7ff8000000000000ULL) : s;
}
)";
  case kCopyAsync:
    return R"(// 16 bytes from global to shared memory, the thread going on while they come
// (cp.async, compute capability 8.0 on), and the wait for all of the thread's.
__device__ __forceinline__ void gc_copy_async(void* to, const void* from) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"((u32)__cvta_generic_to_shared(to)), "l"(from));
#else
  *(float4*)to = *(const float4*)from;
#endif
}
__device__ __forceinline__ void gc_copy_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}
)";
  }
  return "";
}

} // namespace

const char* ctype(DType t) {
  return ir::dtypeName(t).data(); // a string literal
}

const char* utype(DType t) {
  return t == DType::I64 ? "u64" : "u32";
}

std::string val(int i) {
  return fmt::format("v{}", i);
}

std::string plus(const std::string& x, const std::string& y) {
  return x == "0" ? y : y == "0" ? x : x + " + " + y;
}

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

ir::Shape pick(llvm::ArrayRef<int64_t> v, llvm::ArrayRef<int64_t> axes, bool complement) {
  ir::Shape out;
  for (size_t a = 0; a < v.size(); ++a)
    if (llvm::is_contained(axes, static_cast<int64_t>(a)) != complement)
      out.push_back(v[a]);
  return out;
}

namespace {

/// A CUDA C++ expression, with the precedence of its outermost operator (C's, higher
/// binds tighter: 14 unary and casts, 13 * /, 12 + -, 10 < >, 9 == !=, 5 &&, 4 ||,
/// 3 ?:; 15 a name, literal or call) and whether it is a name or a literal, which a
/// formula may use several times without evaluating anything twice.
struct Expr {
  std::string text;
  int prec = 15;
  bool simple = false;

  static Expr name(std::string n) { return {std::move(n), 15, true}; }
  /// The text as an operand of an operator of precedence `p`: parenthesized where it
  /// binds less tightly, and a comparison inside a comparison (`(a < b) != (c < d)`).
  std::string operand(int p) const {
    bool compares = (p == 9 || p == 10) && (prec == 9 || prec == 10);
    return prec < p || compares ? "(" + text + ")" : text;
  }
};

} // namespace

/// The primitives of ir/Formulas.h on values of dtype `t` as expressions of CUDA
/// C++; let() names a value `v<i>_<n>` in a line of its own.
class Emitter::Primitives {
public:
  Primitives(Emitter& e, Code& c, int inst, DType t) : e_(e), c_(c), inst_(inst), t_(t) {}

  bool isFloat() const { return ir::isFloat(t_); }
  Expr constant(double v) const { // 0, 1 and -1
    return {fmt::format("({}){}", ctype(t_), static_cast<int64_t>(v)), 14, true};
  }
  Expr neg(const Expr& x) const {
    return isFloat() ? Expr{"-" + x.operand(14), 14} : wrap("-", constant(0), x);
  }
  Expr add(const Expr& x, const Expr& y) const { return wrap("+", x, y); }
  Expr sub(const Expr& x, const Expr& y) const { return wrap("-", x, y); }
  Expr mul(const Expr& x, const Expr& y) const { return wrap("*", x, y); }
  Expr div(const Expr& x, const Expr& y) {
    if (isFloat())
      return binary(x, "/", 13, y);
    return checked(kIntDiv, fmt::format("gc_div<{}, {}>", ctype(t_), utype(t_)), x, y);
  }
  Expr exp(const Expr& x) const { return call("exp", {x}); }
  Expr sqrt(const Expr& x) const { return call("sqrt", {x}); }
  Expr lt(const Expr& x, const Expr& y) const { return binary(x, "<", 10, y); }
  Expr gt(const Expr& x, const Expr& y) const { return binary(x, ">", 10, y); }
  Expr ge(const Expr& x, const Expr& y) const { return binary(x, ">=", 10, y); }
  Expr ne(const Expr& x, const Expr& y) const { return binary(x, "!=", 9, y); }
  Expr isNan(const Expr& x) const { return binary(x, "!=", 9, x); }
  Expr either(const Expr& x, const Expr& y) const { return binary(x, "||", 4, y); }
  Expr both(const Expr& x, const Expr& y) const { return binary(x, "&&", 5, y); }
  Expr differ(const Expr& x, const Expr& y) const { return binary(x, "!=", 9, y); }
  Expr select(const Expr& c, const Expr& x, const Expr& y) const {
    // The condition in parentheses unless it is one comparison, as CUDA code reads.
    std::string cond = c.prec >= 9 ? c.operand(4) : "(" + c.text + ")";
    return {fmt::format("{} ? {} : {}", cond, x.operand(4), y.operand(3)), 3};
  }
  Expr truncRem(const Expr& x, const Expr& y) {
    if (isFloat())
      return call("fmod", {x, y});
    return checked(kIntRem, fmt::format("gc_trem<{}>", ctype(t_)), x, y);
  }
  Expr let(const Expr& x) {
    if (x.simple)
      return x;
    std::string name = fmt::format("v{}_{}", inst_, lets_++);
    c_.line("const auto {} = {};", name, x.text);
    return Expr::name(name);
  }

  /// The math library's `fn` (f32: `fn` + "f") on `args`.
  Expr call(const char* fn, std::initializer_list<Expr> args) const {
    std::string text = fmt::format("{}{}(", fn, t_ == DType::F32 ? "f" : "");
    const char* sep = "";
    for (const Expr& a : args) {
      text += sep + a.text;
      sep = ", ";
    }
    return {text + ")"};
  }
  /// The helper `fn` of integer division, remainder or power, which stores this
  /// instruction's error code (its number + 1) when it fails.
  Expr checked(Helper h, const std::string& fn, const Expr& x, const Expr& y) {
    e_.helpers_ |= h;
    e_.error_ = true;
    return {fmt::format("{}({}, {}, error, {})", fn, x.text, y.text, inst_ + 1)};
  }

private:
  static Expr binary(const Expr& x, const char* o, int prec, const Expr& y) {
    return {fmt::format("{} {} {}", x.operand(prec), o, y.operand(prec + 1)), prec};
  }
  /// x o y, wrapping (in the unsigned type) for integers.
  Expr wrap(const char* o, const Expr& x, const Expr& y) const {
    if (isFloat())
      return binary(x, o, *o == '*' ? 13 : 12, y);
    const char* u = utype(t_);
    return {fmt::format("({})(({}){} {} ({}){})", ctype(t_), u, x.operand(14), o, u, y.operand(14)),
            14};
  }

  Emitter& e_;
  Code& c_;
  int inst_;
  DType t_;
  int lets_ = 0;
};

std::string Emitter::compute(Code& c, int i) {
  const Inst& inst = k_.insts[i];
  Op op = inst.node->op();
  DType t = k_.insts[inst.args[op == Op::Select ? 1 : 0]].dtype;
  bool isFloat = ir::isFloat(t);
  Primitives p(*this, c, i, t);
  Expr a = Expr::name(val(inst.args[0]));
  Expr b = Expr::name(inst.args.size() > 1 ? val(inst.args[1]) : "");
  auto needFloat = [&] {
    if (!isFloat)
      throw Error(
          fmt::format("emitCuda: {} of {} has no CUDA form", ir::opName(op).str(), ctype(t)));
  };
  auto math = [&](const char* fn) {
    needFloat();
    return inst.args.size() > 1 ? p.call(fn, {a, b}).text : p.call(fn, {a}).text;
  };
  namespace formula = ir::formula;
  switch (op) {
  case Op::Neg:
    return p.neg(a).text;
  case Op::Abs:
    return formula::abs(p, a).text;
  case Op::Sign:
    return formula::sign(p, a).text;
  case Op::Square:
    return formula::square(p, a).text;
  case Op::Relu:
    return formula::relu(p, a).text;
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
    needFloat();
    return formula::rsqrt(p, a).text;
  case Op::Reciprocal:
    needFloat();
    return formula::reciprocal(p, a).text;
  case Op::Sin:
    return math("sin");
  case Op::Cos:
    return math("cos");
  case Op::Tanh:
    return math("tanh");
  case Op::Sigmoid:
    needFloat();
    return formula::sigmoid(p, a).text;
  case Op::Erf:
    return math("erf");
  case Op::Floor:
    return math("floor");
  case Op::Ceil:
    return math("ceil");
  case Op::Round: // half to even
    return math("rint");
  case Op::Add:
    return p.add(a, b).text;
  case Op::Sub:
    return p.sub(a, b).text;
  case Op::Mul:
    return p.mul(a, b).text;
  case Op::Div:
    return p.div(a, b).text;
  case Op::Pow:
    if (isFloat)
      return math("pow");
    return p.checked(kIntPow, fmt::format("gc_pow<{}, {}>", ctype(t), utype(t)), a, b).text;
  case Op::Maximum:
    return formula::maximum(p, a, b).text;
  case Op::Minimum:
    return formula::minimum(p, a, b).text;
  case Op::Atan2:
    return math("atan2");
  case Op::Remainder:
    return formula::remainder(p, a, b).text;
  case Op::Eq:
    return a.text + " == " + b.text;
  case Op::Ne:
    return a.text + " != " + b.text;
  case Op::Lt:
    return a.text + " < " + b.text;
  case Op::Le:
    return a.text + " <= " + b.text;
  case Op::Gt:
    return a.text + " > " + b.text;
  case Op::Ge:
    return a.text + " >= " + b.text;
  case Op::Not:
    return "!" + a.text;
  case Op::And:
    return a.text + " && " + b.text;
  case Op::Or:
    return a.text + " || " + b.text;
  case Op::Select:
    return fmt::format("{} ? {} : {}", a.text, b.text, val(inst.args[2]));
  case Op::Cast:
    if (inst.dtype == DType::Bool)
      return formula::toBool(p, a).text;
    return fmt::format("({}){}", ctype(inst.dtype), a.text);
  GRAPHC_SOURCE_CASES:
  GRAPHC_SHAPE_CASES:
  GRAPHC_REDUCE_CASES:
  GRAPHC_LINALG_CASES:
  GRAPHC_ASSUME_CASES:
  GRAPHC_COLLECTIVE_CASES:
    throw Error(fmt::format("emitCuda: {} cannot be part of a kernel", ir::opName(op).str()));
  }
  ir::unknownOp();
}

/// A C++ literal of double `v`, exact (non-finite values by their bits).
static std::string doubleLiteral(double v) {
  if (!std::isfinite(v))
    return fmt::format("__longlong_as_double(0x{:016x}ULL)", std::bit_cast<uint64_t>(v));
  std::string s = fmt::format("{}", v); // the shortest text that reads back as v
  return s.find_first_of(".e") == std::string::npos ? s + ".0" : s;
}

/// Attribute value `v` as a C++ expression of dtype `t`, converted on the host as
/// the CPU backends convert it (ir::scalar::fromDouble): a C conversion of NaN or an
/// out-of-range value to an integer is undefined.
static std::string valueOf(DType t, double v) {
  if (ir::isFloat(t))
    return fmt::format("({}){}", ctype(t), doubleLiteral(v));
  if (t == DType::Bool)
    return ir::scalar::fromDouble<bool>(v) ? "true" : "false";
  int64_t i =
      t == DType::I32 ? ir::scalar::toInteger<int32_t>(v) : ir::scalar::toInteger<int64_t>(v);
  return fmt::format("({})0x{:x}ULL", ctype(t),
                     static_cast<uint64_t>(i)); // the least i64 has no literal
}

void Emitter::source(Code& c, int i, const LoadFn& index) {
  const Inst& inst = k_.insts[i];
  SourceIndex src = SourceIndex::of(*inst.node);
  const char* T = ctype(inst.dtype);
  std::string value = valueOf(inst.dtype, src.value);
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
      c.line("const {} v{} = {};", T, i, compute(c, static_cast<int>(i)));
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

unsigned blocksFor(int64_t items, int64_t perBlock) {
  return static_cast<unsigned>(std::clamp<int64_t>((items + perBlock - 1) / perBlock, 1, 1 << 20));
}

struct Emitter::Tiles {
  int r = -1, c = -1;      ///< the tiled axes of the domain, r < c
  std::vector<int> staged; ///< the loads read through shared memory
};

Emitter::Tiles Emitter::tiles(const std::vector<bool>& needed) const {
  Tiles t;
  const ir::Shape& d = k_.domain;
  for (int a = static_cast<int>(d.size()) - 1; a >= 0 && t.c < 0; --a)
    if (d[a] > 1)
      t.c = a;
  if (t.c < 0 || d[t.c] < kTileMinExtent)
    return t;
  auto transposed = [&](const Inst& inst, int r) {
    return inst.kind == Inst::Kind::Load && inst.strides[r] == 1 && inst.strides[t.c] > 1;
  };
  for (size_t i = 0; i < k_.insts.size() && t.r < 0; ++i)
    for (int r = 0; r < t.c && t.r < 0; ++r)
      if (needed[i] && d[r] >= kTileMinExtent && transposed(k_.insts[i], r))
        t.r = r;
  for (size_t i = 0; t.r >= 0 && i < k_.insts.size() && t.staged.size() < kMostStagedLoads; ++i)
    if (needed[i] && transposed(k_.insts[i], t.r))
      t.staged.push_back(static_cast<int>(i));
  return t;
}

/// Tiles of kTile x kTile points over axes (r, c), one block at a time, b
/// numbering the other axes: each staged load's tile comes into shared memory with
/// lane x reading along r (contiguous there), then lane x computes the points of
/// column c0 + x, reading staged values from shared memory and the others directly.
void Emitter::tiledElementwise(Code& c, CudaKernel& ck, const std::vector<bool>& needed,
                               const Tiles& t) {
  const ir::Shape& d = k_.domain;
  ir::Shape others = d, dense = denseStrides(d);
  others[t.r] = others[t.c] = 1;
  int64_t rows = d[t.r], cols = d[t.c];
  int64_t tilesR = (rows + kTile - 1) / kTile, tilesC = (cols + kTile - 1) / kTile;
  // As many tiles along r as along c: slots 2u and 2u + 1 are tiles (i, j) and
  // (j, i) of pair u of the lower triangle, so the values one reads transposed the
  // other reads next, from the L2 (x + x' reads x once from memory).
  bool pairs = tilesR == tilesC;
  int64_t perBatch = pairs ? tilesR * (tilesR + 1) : tilesR * tilesC;
  int64_t tiles = ir::numElements(others) * perBatch;
  ck.launch = CudaKernel::Launch::Elementwise;
  ck.blockSize = 256;
  ck.gridSize = blocksFor(tiles, 1);
  // sum over axes of coordinate * stride: b's axes through affine(), then r and c.
  auto offset = [&](llvm::ArrayRef<int64_t> strides) {
    std::string out = affine("b", others, strides);
    for (auto [var, axis] : {std::pair{"r", t.r}, std::pair{"c", t.c}})
      if (strides[axis] != 0)
        out = plus(out, strides[axis] == 1 ? var : fmt::format("{} * {}", var, strides[axis]));
    return out;
  };
  auto at = [&](int i) { return offset(k_.insts[i].strides); };
  LoadFn direct = loadAt(at);
  auto load = [&](int i) {
    return llvm::is_contained(t.staged, i) ? fmt::format("s{}[x][y + k]", i) : direct(i);
  };
  constexpr int64_t rowsPerPass = 256 / kTile;

  c.line("constexpr idx TILES = {}, PER_BATCH = {};", tiles, perBatch);
  c.open(signature(ck));
  for (int i : t.staged)
    c.line("__shared__ {} s{}[{}][{}];", ctype(k_.insts[i].dtype), i, kTile, kTile + 1);
  c.line("const int x = threadIdx.x % {}, y = threadIdx.x / {};", kTile, kTile);
  c.open("for (idx tile = blockIdx.x; tile < TILES; tile += gridDim.x)");
  if (tiles > perBatch)
    c.line("const idx b = tile / PER_BATCH;");
  if (pairs) {
    c.line("// pair u = i (i + 1) / 2 + j, j <= i; the diagonal tile once");
    c.line("const idx u = tile % PER_BATCH / 2;");
    c.line("idx i = (idx)((sqrt(8.0 * (f64)u + 1.0) - 1.0) / 2.0);");
    c.line("i += (i + 1) * (i + 2) / 2 <= u ? 1 : i * (i + 1) / 2 > u ? -1 : 0;");
    c.line("const idx j = u - i * (i + 1) / 2;");
    c.line("const bool mirror = tile % 2 != 0;");
    c.line("if (mirror && i == j) continue;");
    c.line("const idx r0 = (mirror ? j : i) * {0}, c0 = (mirror ? i : j) * {0};", kTile);
  } else {
    c.line("const idx r0 = tile % PER_BATCH / {} * {}, c0 = tile % {} * {};", tilesC, kTile, tilesC,
           kTile);
  }
  c.line("// the staged loads' tiles: lane x reads along r");
  c.line("#pragma unroll");
  c.open(fmt::format("for (int k = 0; k < {}; k += {})", kTile, rowsPerPass));
  c.line("const idx r = r0 + x, c = c0 + y + k;");
  c.open(fmt::format("if (r < {} && c < {})", rows, cols));
  for (int i : t.staged)
    c.line("s{}[y + k][x] = {};", i, direct(i));
  c.close();
  c.close();
  c.line("__syncthreads();");
  c.line("// the points: lane x along c");
  c.line("#pragma unroll");
  c.open(fmt::format("for (int k = 0; k < {}; k += {})", kTile, rowsPerPass));
  c.line("const idx r = r0 + y + k, c = c0 + x;");
  c.open(fmt::format("if (r < {} && c < {})", rows, cols));
  c.line("const idx p = {};", offset(dense));
  body(c, Space::Domain, needed, load, at);
  for (size_t o = 0; o < k_.outputs.size(); ++o)
    c.line("out{}[p] = v{};", o, k_.outputs[o].inst);
  c.close();
  c.close();
  c.line("__syncthreads();");
  c.close();
  c.close();
}

void Emitter::elementwise(Code& c, CudaKernel& ck) {
  int64_t n = ir::numElements(k_.domain);
  std::vector<bool> needed(k_.insts.size(), false);
  for (const KernelOutput& o : k_.outputs)
    markNeeded(k_, o.inst, needed);
  if (Tiles t = tiles(needed); !t.staged.empty())
    return tiledElementwise(c, ck, needed, t);
  // Vectors of `width` points (16 bytes of the widest element type the identity
  // loads and the outputs move) when every other load reads along the inner axis
  // with stride 0 or 1 (a broadcast): those read their lanes one by one, from L1.
  // A thread then keeps 16 bytes of each stream in flight, not one element.
  int innerAxis = static_cast<int>(k_.domain.size()) - 1;
  bool vector = innerAxis >= 0;
  int64_t widest = 1;
  for (const Inst& inst : k_.insts)
    if (inst.kind == Inst::Kind::Load) {
      if (isIdentity(inst))
        widest = std::max(widest, ir::dtypeSize(inst.dtype));
      else
        vector = vector && (!needed[&inst - k_.insts.data()] || inst.strides[innerAxis] <= 1);
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
    auto whole = [&](const Inst& inst) {
      return inst.kind == Inst::Kind::Load && isIdentity(inst);
    };
    std::vector<bool> vectorInput(k_.inputs.size(), false);
    for (const Inst& inst : k_.insts)
      if (whole(inst))
        vectorInput[inst.input] = true;
    std::vector<std::string> pointers;
    for (size_t i = 0; i < k_.inputs.size(); ++i)
      if (vectorInput[i])
        pointers.push_back(fmt::format("(u64)in{}", i));
    for (size_t o = 0; o < k_.outputs.size(); ++o)
      pointers.push_back(fmt::format("(u64)out{}", o));
    c.line("// {} points at a time where every buffer is 16-byte aligned", width);
    c.line("const bool aligned = (({}) & 15) == 0;", fmt::join(pointers, " | "));
    c.line("const idx vectors = aligned ? N / {} : 0;", width);
    c.open("for (idx q = p; q < vectors; q += stride)");
    auto vec = [&](DType t) { return fmt::format("gc_vec<{}, {}>", ctype(t), width); };
    for (size_t i = 0; i < k_.insts.size(); ++i)
      if (whole(k_.insts[i]))
        c.line("const {0} l{1} = ((const {0}*)in{2})[q];", vec(k_.insts[i].dtype), i,
               k_.insts[i].input);
    for (size_t o = 0; o < k_.outputs.size(); ++o)
      c.line("{} o{};", vec(k_.insts[k_.outputs[o].inst].dtype), o);
    c.line("#pragma unroll");
    c.open(fmt::format("for (int u = 0; u < {}; ++u)", width));
    for (size_t i = 0; i < k_.insts.size(); ++i)
      if (needed[i] && (readsIndex(k_.insts[i]) ||
                        (k_.insts[i].kind == Inst::Kind::Load && !whole(k_.insts[i])))) {
        c.line("const idx pu = q * {} + u;", width);
        break;
      }
    LoadFn alone = loadAt(at("pu"));
    auto lane = [&](int i) { return whole(k_.insts[i]) ? fmt::format("l{}.x[u]", i) : alone(i); };
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
  for (unsigned h = 1; h <= kCopyAsync; h <<= 1)
    if (helpers_ & h)
      s += helperText(static_cast<Helper>(h));
  s +=
      fmt::format("typedef {} idx;\nconstexpr int BS = {};\n", wide_ ? "i64" : "i32", ck.blockSize);
  s += kernel.text;
  s += entryPoints(ck);
  return ck;
}

} // namespace detail

using detail::Emitter;
using ir::Op;

CudaKernel emitCuda(const Kernel& k, llvm::StringRef name, const CudaTarget& target) {
  return Emitter(k, target).emit(name);
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