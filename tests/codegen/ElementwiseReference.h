//===- tests/codegen/ElementwiseReference.h - Every elementwise op in f64 -*- C++ -*-===//
//
// Every elementwise op of ir/Ops.def as a one-op graph in each operand dtype its
// typing rule accepts (casts: to every dtype), random inputs inside the op's domain
// (with NaNs among float inputs, but not where a cast to an integer would make them
// undefined), and the op's value computed plainly in double. Shared by the tests
// that run these graphs on the interpreter and the CPU JIT
// (tests/codegen/CpuCodegenTest.cpp) and as CUDA kernels (tests/gpu/CudaKernelTest.cpp).
// The reference is a switch over every op without `default:`, so a new elementwise
// op needs its reference here before it builds.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Kernel.h"
#include "ir/Graph.h"
#include "ir/OpCases.h"
#include "ir/Parser.h"
#include "tests/codegen/KernelCases.h"
#include "tests/codegen/KernelInputs.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace graphc::testing {

/// One elementwise op on operands of one dtype, as a graph of that op alone.
struct ElementwiseCase {
  ir::Op op;
  ir::DType operand, result;
  std::string name; ///< e.g. "remainder i32", "cast f32 -> i64"
  std::shared_ptr<ir::Graph> graph;
  codegen::Kernel kernel; ///< points into graph
};

/// The value of elementwise `op` on `x` (select: condition, then the two values),
/// computed in double; `result` is the result dtype (for casts).
inline double elementwiseReference(ir::Op op, ir::DType result, const std::vector<double>& x) {
  using ir::Op;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  double a = x[0], b = x.size() > 1 ? x[1] : 0;
  bool anyNan = std::isnan(a) || std::isnan(b);
  switch (op) {
  case Op::Neg:
    return -a;
  case Op::Abs:
    return std::fabs(a);
  case Op::Sign:
    return std::isnan(a) ? a : a > 0 ? 1 : a < 0 ? -1 : 0;
  case Op::Exp:
    return std::exp(a);
  case Op::Log:
    return std::log(a);
  case Op::Log1p:
    return std::log1p(a);
  case Op::Expm1:
    return std::expm1(a);
  case Op::Sqrt:
    return std::sqrt(a);
  case Op::Rsqrt:
    return 1 / std::sqrt(a);
  case Op::Square:
    return a * a;
  case Op::Reciprocal:
    return 1 / a;
  case Op::Sin:
    return std::sin(a);
  case Op::Cos:
    return std::cos(a);
  case Op::Tanh:
    return std::tanh(a);
  case Op::Sigmoid:
    return 1 / (1 + std::exp(-a));
  case Op::Relu:
    return std::isnan(a) ? a : a > 0 ? a : 0;
  case Op::Erf:
    return std::erf(a);
  case Op::Floor:
    return std::floor(a);
  case Op::Ceil:
    return std::ceil(a);
  case Op::Round: // half to even
    return std::nearbyint(a);
  case Op::Not:
    return a == 0;
  case Op::Add:
    return a + b;
  case Op::Sub:
    return a - b;
  case Op::Mul:
    return a * b;
  case Op::Div:
    return ir::isFloat(result) ? a / b : std::trunc(a / b);
  case Op::Pow:
    return std::pow(a, b);
  case Op::Maximum:
    return anyNan ? nan : std::max(a, b);
  case Op::Minimum:
    return anyNan ? nan : std::min(a, b);
  case Op::Atan2:
    return std::atan2(a, b);
  case Op::Remainder: // the sign of the divisor
    return anyNan ? nan : a - b * std::floor(a / b);
  case Op::Eq:
    return a == b;
  case Op::Ne:
    return a != b;
  case Op::Lt:
    return a < b;
  case Op::Le:
    return a <= b;
  case Op::Gt:
    return a > b;
  case Op::Ge:
    return a >= b;
  case Op::And:
    return a != 0 && b != 0;
  case Op::Or:
    return a != 0 || b != 0;
  case Op::Select:
    return a != 0 ? b : x[2];
  case Op::Cast:
    return result == ir::DType::Bool ? a != 0 : ir::isFloat(result) ? a : std::trunc(a);
  GRAPHC_SOURCE_CASES:
  GRAPHC_SHAPE_CASES:
  GRAPHC_REDUCE_CASES:
  GRAPHC_LINALG_CASES:
  GRAPHC_ASSUME_CASES:
  GRAPHC_COLLECTIVE_CASES:
    break;
  }
  throw Error(fmt::format("elementwiseReference: {} is not elementwise", ir::opName(op).str()));
}

/// Whether the double reference of `op` rounded to the result dtype is the exact
/// result (one correctly rounded operation or none); otherwise results agree within
/// a few ulp (math library functions, rsqrt's two roundings, remainder's fix-up).
inline bool isExactlyRounded(ir::Op op, ir::DType operand) {
  using ir::Op;
  const Op libraryMath[] = {Op::Exp, Op::Log,  Op::Log1p,   Op::Expm1, Op::Rsqrt, Op::Sin,
                            Op::Cos, Op::Tanh, Op::Sigmoid, Op::Erf,   Op::Atan2};
  if (std::find(std::begin(libraryMath), std::end(libraryMath), op) != std::end(libraryMath))
    return false;
  return !((op == Op::Pow || op == Op::Remainder) && ir::isFloat(operand));
}

/// Random operand `k` of `c`'s op: floats in [-2, 2] (positive for log, sqrt,
/// rsqrt and pow's base; above -1 for log1p; nonzero for reciprocal) with one NaN in
/// 16 (none for a cast to an integer, where NaN is undefined); integers in
/// [-1000, 1000] (nonzero divisors; bases in [-3, 3] and exponents in [0, 9] for pow),
/// bools either way.
inline HostArray elementwiseInput(const ElementwiseCase& c, size_t k, int64_t n,
                                  std::mt19937_64& rng) {
  using ir::Op;
  ir::DType t = c.op == Op::Select && k == 0 ? ir::DType::Bool : c.operand;
  HostArray a(t, n);
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  std::uniform_int_distribution<int> coin(0, 1), sixteenth(0, 15), wide(-1000, 1000), base(-3, 3),
      exponent(0, 9);
  bool positive =
      c.op == Op::Log || c.op == Op::Sqrt || c.op == Op::Rsqrt || (c.op == Op::Pow && k == 0);
  bool nonzero = c.op == Op::Reciprocal || ((c.op == Op::Div || c.op == Op::Remainder) && k == 1);
  bool nans = !(c.op == Op::Cast && ir::isInteger(c.result));
  for (int64_t i = 0; i < n; ++i) {
    double v = uniform(rng);
    if (positive)
      v = 0.05 + std::abs(v);
    if (c.op == Op::Log1p)
      v = std::max(v, -0.9);
    if (nonzero && std::abs(v) < 0.05)
      v = 0.5;
    if (nans && sixteenth(rng) == 0)
      v = std::numeric_limits<double>::quiet_NaN();
    int64_t w = c.op == Op::Pow ? (k == 0 ? base(rng) : exponent(rng)) : wide(rng);
    if (nonzero && w == 0)
      w = 7;
    a.set(i, t == ir::DType::Bool ? coin(rng) : ir::isFloat(t) ? v : static_cast<double>(w));
  }
  return a;
}

/// Random inputs for every operand of `c`, seeded by its name.
inline std::vector<HostArray> elementwiseInputs(const ElementwiseCase& c) {
  std::mt19937_64 rng(std::hash<std::string>()(c.name));
  std::vector<HostArray> inputs;
  for (size_t k = 0; k < c.kernel.inputs.size(); ++k)
    inputs.push_back(elementwiseInput(c, k, c.kernel.inputs[k].type().numel(), rng));
  return inputs;
}

/// Every elementwise op of ir/Ops.def in every operand dtype whose one-op graph
/// type-checks (and every cast between two dtypes), over `n` points. Throws for an
/// op that type-checks in no dtype, so that none is left out.
inline std::vector<ElementwiseCase> elementwiseCases(int64_t n) {
  using ir::DType;
  const DType dtypes[] = {DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64};
  std::vector<ElementwiseCase> out;
  for (const ir::OpInfo& info : ir::allOps()) {
    if (!ir::isElementwise(info.kind))
      continue;
    size_t before = out.size();
    for (DType t : dtypes) {
      for (DType to : dtypes) {
        if (info.op != ir::Op::Cast && to != dtypes[0])
          break; // one result type but for casts
        if (info.op == ir::Op::Cast && to == t)
          continue; // the identity, which the passes drop
        std::string T = ir::dtypeName(t).str(), params, args;
        for (int k = 0; k < info.numOperands; ++k) {
          std::string pt = info.op == ir::Op::Select && k == 0 ? "bool" : T;
          params += fmt::format("{}%x{}: {}[{}]", k ? ", " : "", k, pt, n);
          args += fmt::format("{}%x{}", k ? ", " : "", k);
        }
        std::string attrs =
            info.op == ir::Op::Cast ? fmt::format(" {{dtype={}}}", ir::dtypeName(to).str()) : "";
        std::string name = info.op == ir::Op::Cast
                               ? fmt::format("cast {} -> {}", T, ir::dtypeName(to).str())
                               : fmt::format("{} {}", info.name.str(), T);
        std::string text = fmt::format("graph @g({}) {{\n  %r = {} {}{}\n  return %r\n}}\n", params,
                                       info.name.str(), args, attrs);
        std::shared_ptr<ir::Graph> g;
        try {
          g = ir::parseGraph(text, name);
        } catch (const Error&) {
          continue; // the op does not take this dtype
        }
        std::vector<codegen::Kernel> kernels = kernelsOf(*g);
        if (kernels.size() != 1)
          throw Error(fmt::format("{}: {} kernels, not 1", name, kernels.size()));
        const codegen::Kernel& k = kernels[0];
        for (size_t i = 0; i < k.inputs.size(); ++i)
          if (k.inputs[i].node->op() != ir::Op::Parameter ||
              k.inputs[i].node->attrs().getInt("index") != static_cast<int64_t>(i))
            throw Error(fmt::format("{}: kernel input {} is not operand {}", name, i, i));
        DType result = g->outputs()[0].type().dtype;
        out.push_back({info.op, t, result, name, g, std::move(kernels[0])});
      }
    }
    if (out.size() == before)
      throw Error(fmt::format("elementwiseCases: {} type-checks in no dtype", info.name.str()));
  }
  return out;
}

/// Checks the outputs `got` of case `c` on `inputs` against the reference: exactly
/// (NaN where NaN) for exactly rounded ops, else within a few ulp; `who` names the
/// target in failures. Returns the number of wrong elements.
inline int64_t checkElementwise(const ElementwiseCase& c, const std::vector<HostArray>& inputs,
                                const HostArray& got, const char* who) {
  bool f32 = c.result == ir::DType::F32, exact = isExactlyRounded(c.op, c.operand);
  double rtol = exact ? 0 : f32 ? 2e-6 : 1e-13, atol = exact ? 0 : f32 ? 1e-6 : 1e-14;
  int64_t wrong = 0;
  std::vector<double> x(inputs.size());
  for (int64_t i = 0; i < got.numel; ++i) {
    for (size_t k = 0; k < inputs.size(); ++k)
      x[k] = inputs[k].at(i);
    double want = elementwiseReference(c.op, c.result, x);
    if (f32)
      want = static_cast<float>(want);
    double g = got.at(i);
    bool ok = (std::isnan(g) && std::isnan(want)) || g == want ||
              std::abs(g - want) <= atol + rtol * std::abs(want);
    if (!ok && wrong++ < 3)
      ADD_FAILURE() << c.name << " on the " << who << ", element " << i << " of (" << x[0]
                    << (x.size() > 1 ? ", " + std::to_string(x[1]) : std::string()) << "): got "
                    << g << ", want " << want;
  }
  return wrong;
}

} // namespace graphc::testing
