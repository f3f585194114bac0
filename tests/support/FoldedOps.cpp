//===- tests/support/FoldedOps.cpp - Folded constants against a backend ---===//
//
// One graph per op and dtype runs on the backend, over parameters holding every
// edge value (or pair of them); the folder sees one small graph per value: the op
// on `full` constants, canonicalized. A folded constant becomes an array as a
// `full` does: its double value converted to the dtype.
//
//===----------------------------------------------------------------------===//
#include "support/FoldedOps.h"

#include "ir/Graph.h"
#include "ir/Parser.h"
#include "ir/Scalar.h"
#include "passes/Canonicalize.h"
#include "passes/PassManager.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
#include "support/Numeric.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>

namespace graphc::testing {
namespace {

using ir::DType;
using ir::Op;

/// The edge values of T (f32 or f64), as doubles: the special values and negative
/// operands for sqrt and remainder.
template <typename T> std::vector<double> edgeValues() {
  std::vector<double> values;
  for (T v : specialValues<T>())
    values.push_back(v);
  values.insert(values.end(), {-2.5, 3, -7.25});
  return values;
}

/// The bits of `v` as a T, in hex; NaN for any NaN.
template <typename T> std::string bitsOf(T v) {
  if (std::isnan(v))
    return "NaN";
  std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t> bits;
  std::memcpy(&bits, &v, sizeof(T));
  return fmt::format("{:#0{}x}", bits, 2 + 2 * sizeof(T));
}

/// The folded value of `op` on uniform constants `x` (and `y`) of dtype `t`, or
/// nullopt where the folder leaves the op.
std::optional<double> folded(Op op, DType t, const std::vector<double>& x) {
  ir::Graph g("fold");
  std::vector<ir::Value> operands;
  for (double v : x)
    operands.push_back(g.apply(Op::Full, {}, ir::Attrs{{"value", v}}, {ir::TensorType(t, {})}));
  g.addOutput(g.apply(op, operands));
  passes::PassStats stats;
  std::unique_ptr<ir::Graph> out = passes::canonicalize(g, stats);
  const ir::Node& n = *out->outputs().front().node;
  if (n.op() != Op::Full)
    return std::nullopt;
  return n.attrs().getFloat("value");
}

/// True when the folder evaluates `op` on T: IEEE 754 fixes its result. The math
/// library's functions are left to the backends, whose last bits differ (CUDA's
/// pow(3, 1) is 0x1.7ffffffffffffp+1), and an identity such as pow(x, 1) = x is
/// an exact rewrite, not a fold.
template <typename T> bool evaluates(const ir::OpInfo& info) {
  auto fail = [](const auto&) {};
  ir::scalar::Primitives<T, decltype(fail)> b{fail};
  auto ignore = [](auto) {};
  auto which = ir::scalar::Which::Exact;
  return info.numOperands == 1 ? ir::scalar::unary(info.op, b, which, ignore)
                               : ir::scalar::binary(info.op, b, which, ignore);
}

/// Compares the folds of `op` in T with `backend`'s runs of it, into `result`.
template <typename T>
void compareOp(const ir::OpInfo& info, DType t, llvm::StringRef backend, FoldComparison& result) {
  if (!evaluates<T>(info))
    return;
  std::vector<double> values = edgeValues<T>();
  std::vector<std::vector<double>> cases; // one operand list per point
  for (double a : values) {
    if (info.numOperands == 1)
      cases.push_back({a});
    else
      for (double b : values)
        cases.push_back({a, b});
  }
  std::string name = fmt::format("{} {}", info.name.str(), ir::dtypeName(t).str());
  auto n = static_cast<int64_t>(cases.size());
  std::string params, args;
  std::vector<Array> inputs;
  for (int k = 0; k < info.numOperands; ++k) {
    params += fmt::format("{}%x{}: {}[{}]", k ? ", " : "", k, ir::dtypeName(t).str(), n);
    args += fmt::format("{}%x{}", k ? ", " : "", k);
    std::vector<T> column;
    for (const std::vector<double>& c : cases)
      column.push_back(static_cast<T>(c[k]));
    inputs.push_back(Array::copyOf(column.data(), {n}));
  }
  std::unique_ptr<ir::Graph> g =
      ir::parseGraph(fmt::format("graph @unfolded({}) {{\n  %r = {} {}\n  return %r\n}}\n", params,
                                 info.name.str(), args),
                     name);
  Array got = compile(*g, getBackend(backend))->run(inputs).front();
  const T* ran = got.data<T>();
  size_t folds = 0;
  for (int64_t i = 0; i < n; ++i) {
    std::optional<double> f = folded(info.op, t, cases[i]);
    if (!f)
      continue;
    ++folds;
    std::string want = bitsOf(static_cast<T>(*f)), have = bitsOf(ran[i]);
    if (want != have) {
      std::string at;
      for (double v : cases[i])
        at += fmt::format("{}{}", at.empty() ? "" : ", ", v);
      result.mismatches.push_back(
          fmt::format("{} ({}): folded {}, {} {}", name, at, want, backend.str(), have));
    }
  }
  if (folds == cases.size())
    result.folded.push_back(name);
}

} // namespace

FoldComparison compareFoldsWith(llvm::StringRef backend) {
  FoldComparison result;
  for (const ir::OpInfo& info : ir::allOps()) {
    if (info.kind != ir::OpKind::Unary && info.kind != ir::OpKind::Binary)
      continue;
    compareOp<float>(info, DType::F32, backend, result);
    compareOp<double>(info, DType::F64, backend, result);
  }
  return result;
}

} // namespace graphc::testing
