//===- tests/autodiff/DerivativeCheck.cpp - Checking derivative graphs ----===//
#include "DerivativeCheck.h"

#include "passes/Derivative.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
#include "support/Numeric.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace graphc::testing {
namespace {

using passes::DerivativeMode;

/// x + s * v, elementwise, in f64.
Array axpy(const Array& x, double s, const Array& v) {
  std::vector<double> a = asDoubles(x), b = asDoubles(v);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] += s * b[i];
  return Array::fromVector<double>(a, x.shape());
}

double dot(const Array& x, const Array& y) {
  std::vector<double> a = asDoubles(x), b = asDoubles(y);
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    s += a[i] * b[i];
  return s;
}

double norm(const Array& x) {
  return std::sqrt(dot(x, x));
}

double maxAbs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v)
    m = std::max(m, std::abs(x));
  return m;
}

std::vector<Array> run(const ir::Graph& g, const std::vector<Array>& inputs,
                       const std::string& backend, const std::string& passes) {
  auto exe = compile(g, getBackend(backend), {passes});
  std::vector<Array> dev;
  for (const Array& a : inputs)
    dev.push_back(exe->toDevice(a));
  std::vector<Array> out;
  for (const Array& a : exe->run(dev))
    out.push_back(exe->toHost(a));
  return out;
}

/// A random array of `t`'s shape in f64 (zeros for integer and bool types).
Array randomLike(const ir::TensorType& t, uint64_t seed) {
  if (!ir::isFloat(t.dtype))
    return Array::zeros(t.dtype, t.shape);
  return Array::randomNormal(ir::DType::F64, t.shape, seed);
}

void expectSame(const std::vector<Array>& got, const std::vector<Array>& want, size_t count,
                const char* what) {
  for (size_t i = 0; i < count; ++i)
    EXPECT_LE(relativeDifference(got[i], want[i]), 1e-9) << what << ", output " << i;
}

} // namespace

std::vector<Array> runPlain(const ir::Graph& g, const std::vector<Array>& inputs) {
  return run(g, inputs, "cpu", "none");
}

DerivativeReport checkDerivatives(const ir::Graph& g, uint64_t seed,
                                  const DerivativeCheckOptions& options,
                                  std::vector<Array> inputs) {
  SCOPED_TRACE("@" + g.name());
  DerivativeReport report;
  if (inputs.empty())
    inputs = randomInputs(g, seed);
  std::vector<unsigned> wrt;
  std::vector<Array> tangents;
  for (unsigned i = 0; i < g.params().size(); ++i)
    if (ir::isFloat(g.params()[i]->type().dtype)) {
      wrt.push_back(i);
      tangents.push_back(randomLike(g.params()[i]->type(), seed * 7919 + i));
    }
  size_t numOutputs = g.outputs().size();
  std::vector<Array> primal = runPlain(g, inputs);

  // JVP against central differences.
  auto jvp = passes::derivative(g, DerivativeMode::Jvp, wrt);
  std::vector<Array> jvpIn = inputs;
  jvpIn.insert(jvpIn.end(), tangents.begin(), tangents.end());
  std::vector<Array> jvpOut = run(*jvp, jvpIn, options.backend, "none");
  expectSame(jvpOut, primal, numOutputs, "jvp primal");
  double h = options.step, eps = std::numeric_limits<double>::epsilon();
  auto shifted = [&](double s) {
    std::vector<Array> in = inputs;
    for (size_t k = 0; k < wrt.size(); ++k)
      in[wrt[k]] = axpy(in[wrt[k]], s, tangents[k]);
    return runPlain(g, in);
  };
  // Richardson's five-point difference: truncation error O(h^4), rounding O(eps/h).
  std::vector<Array> plus = shifted(h), minus = shifted(-h), plus2 = shifted(2 * h),
                     minus2 = shifted(-2 * h);
  report.fdTolerance =
      options.fdTolerance > 0 ? options.fdTolerance : 1e4 * (h * h * h * h + eps / h);
  for (size_t i = 0; i < numOutputs; ++i) {
    if (!ir::isFloat(g.outputs()[i].type().dtype))
      continue;
    std::vector<double> p = asDoubles(plus[i]), m = asDoubles(minus[i]);
    std::vector<double> p2 = asDoubles(plus2[i]), m2 = asDoubles(minus2[i]);
    std::vector<double> t = asDoubles(jvpOut[numOutputs + i]), fd(p.size()), diff(p.size());
    for (size_t j = 0; j < p.size(); ++j) {
      fd[j] = (8 * (p[j] - m[j]) - (p2[j] - m2[j])) / (12 * h);
      diff[j] = t[j] - fd[j];
    }
    // Rounding in the difference grows with |f|, truncation with f's derivatives.
    double scale = 1 + maxAbs(fd) + maxAbs(asDoubles(primal[i]));
    report.fdError = std::max(report.fdError, maxAbs(diff) / scale);
  }
  EXPECT_LE(report.fdError, report.fdTolerance) << "tangents differ from finite differences";

  // VJP: the transposition identity.
  auto vjp = passes::derivative(g, DerivativeMode::Vjp, wrt);
  std::vector<Array> cotangents, vjpIn = inputs;
  for (size_t i = 0; i < numOutputs; ++i)
    cotangents.push_back(randomLike(g.outputs()[i].type(), seed * 104729 + i));
  vjpIn.insert(vjpIn.end(), cotangents.begin(), cotangents.end());
  std::vector<Array> vjpOut = run(*vjp, vjpIn, options.backend, "none");
  expectSame(vjpOut, primal, numOutputs, "vjp primal");
  double lhs = 0, rhs = 0, scale = 0;
  for (size_t i = 0; i < numOutputs; ++i) {
    if (!ir::isFloat(g.outputs()[i].type().dtype))
      continue;
    lhs += dot(cotangents[i], jvpOut[numOutputs + i]);
    scale += norm(cotangents[i]) * norm(jvpOut[numOutputs + i]);
  }
  for (size_t k = 0; k < wrt.size(); ++k) {
    rhs += dot(vjpOut[numOutputs + k], tangents[k]);
    scale += norm(vjpOut[numOutputs + k]) * norm(tangents[k]);
  }
  report.transposeError = std::abs(lhs - rhs) / (scale > 0 ? scale : 1);
  EXPECT_LE(report.transposeError, options.transposeTolerance)
      << "<u, Jv> = " << lhs << ", <J'u, v> = " << rhs;

  if (options.pipeline) {
    expectSame(run(*jvp, jvpIn, options.backend, ""), jvpOut, jvpOut.size(), "optimized jvp");
    expectSame(run(*vjp, vjpIn, options.backend, ""), vjpOut, vjpOut.size(), "optimized vjp");
  }
  return report;
}

} // namespace graphc::testing
