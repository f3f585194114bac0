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
  s += typedefsText();
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