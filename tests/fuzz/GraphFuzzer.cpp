//===- tests/fuzz/GraphFuzzer.cpp - libFuzzer target: whole pipeline ------===//
//
// Mutated graphs (the seeds are the repository's .gir cases) through the default
// pass pipeline on the `cpu` backend, compared with `cpu-unfused` running the
// graph as written (no passes). Inputs are the test suite's random inputs
// (tests/support/Numeric.h). A finding is a crash, a sanitizer report, an
// "internal error", or finite outputs that differ by more than the dtype's
// tolerance. Where a graph solves or factors a matrix, or one side fails with a
// numeric error (singular, not positive definite), values are not compared: the
// passes legitimately change which factorization runs. Graphs are kept small (elements per value,
// nodes) so each input runs in milliseconds, and graphs with assume_* ops (promises
// random inputs break) are not compared.
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "runtime/Backends.h"
#include "runtime/core/Backend.h"
#include "runtime/core/Compile.h"
#include "support/Numeric.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace {

using namespace graphc;

constexpr int64_t kMaxElements = 1 << 12; ///< per value
constexpr size_t kMaxNodes = 64;

/// Small, and without assume_* ops: those are promises about the inputs (random
/// inputs break them), under which the passes may choose other algorithms.
bool comparable(const ir::Graph& g) {
  if (g.nodes().size() > kMaxNodes)
    return false;
  for (const ir::Node* n : g.nodes())
    if (n->kind() == ir::OpKind::Assume)
      return false;
  for (const ir::Node* n : g.nodes())
    for (const ir::TensorType& t : n->types())
      if (t.numel() > kMaxElements)
        return false;
  return true;
}

/// True when `g` solves or factors a matrix: mutated graphs make singular and
/// ill-conditioned systems, whose results differ between the factorizations the
/// passes choose (LU, Cholesky, Woodbury) by far more than rounding. Both sides
/// still run (crashes and internal errors are findings); values are not compared.
bool solvesSomething(const ir::Graph& g) {
  for (const ir::Node* n : g.nodes())
    if (n->kind() == ir::OpKind::Linalg && n->op() != ir::Op::Matmul && n->op() != ir::Op::Syrk &&
        n->op() != ir::Op::Trace)
      return true;
  return false;
}

[[noreturn]] void finding(const ir::Graph& g, const std::string& what) {
  std::fprintf(stderr, "%s\n%s\n", what.c_str(), ir::printGraph(g).c_str());
  std::abort();
}

/// Runs `g` on both sides; returns the outputs or the error message.
struct Outcome {
  std::vector<Array> outputs;
  std::string error;
};
Outcome runOn(const ir::Graph& g, const char* backend, const char* passes,
              const std::vector<Array>& inputs) {
  Outcome o;
  try {
    o.outputs = compile(g, getBackend(backend), {passes})->run(inputs);
  } catch (const Error& e) {
    o.error = e.message();
  }
  if (o.error.find("internal error") != std::string::npos)
    finding(g, std::string(backend) + ": " + o.error);
  return o;
}

/// The largest difference of finite elements relative to the reference's scale.
double finiteDifference(const Array& got, const Array& want) {
  std::vector<double> a = got.toVector<double>(), b = want.toVector<double>();
  double scale = 1, diff = 0;
  for (double y : b)
    if (std::isfinite(y))
      scale = std::max(scale, std::abs(y));
  for (size_t i = 0; i < a.size(); ++i)
    if (std::isfinite(a[i]) && std::isfinite(b[i]))
      diff = std::max(diff, std::abs(a[i] - b[i]));
  return diff / scale;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ir::Module m;
  try {
    m = ir::parseModule(llvm::StringRef(reinterpret_cast<const char*>(data), size), "fuzz.gir");
    ir::verify(m);
  } catch (const Error&) {
    return 0;
  }
  for (const auto& g : m.graphs) {
    if (!comparable(*g))
      continue;
    std::vector<Array> inputs = testing::randomInputs(*g, 1);
    Outcome want = runOn(*g, "cpu-unfused", "none", inputs);
    Outcome got = runOn(*g, "cpu", "", inputs);
    if (!want.error.empty() || !got.error.empty() || solvesSomething(*g))
      continue; // numeric failures, and ill-conditioned systems, differ between forms
    if (got.outputs.size() != want.outputs.size())
      finding(*g, "output counts differ");
    for (size_t i = 0; i < want.outputs.size(); ++i) {
      const Array &a = got.outputs[i], &b = want.outputs[i];
      if (a.type() != b.type())
        finding(*g,
                "output " + std::to_string(i) + ": " + a.type().str() + " vs " + b.type().str());
      if (!ir::isFloat(a.dtype()))
        continue; // integer and bool results may differ where the passes fold
      Array ad = a.contiguous(), bd = b.contiguous();
      double tol = a.dtype() == DType::F32 ? 1e-3 : 1e-8;
      std::vector<double> av, bv;
      visitDType(a.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (T v : ad.toVector<T>())
          av.push_back(static_cast<double>(v));
        for (T v : bd.toVector<T>())
          bv.push_back(static_cast<double>(v));
      });
      Array x = Array::fromVector(av, a.shape()), y = Array::fromVector(bv, b.shape());
      if (double d = finiteDifference(x, y); d > tol)
        finding(*g, "output " + std::to_string(i) + " differs by " + std::to_string(d));
    }
  }
  return 0;
}
