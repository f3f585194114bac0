//===- tests/frontend/AutodiffTest.cpp - jvp, vjp and grad in the DSL -----===//
//
// The frontend's derivatives, evaluated eagerly, under jit and as prepared
// executables, checked in float64 against central finite differences of the
// function itself, against loops, and against each other (jvp == <grad, v>).
// Second order: a Hessian-vector product (jvp of grad) against differences of grad.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "frontend/Autodiff.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"

namespace graphc {
namespace {

using testing::expectClose;
using testing::randn;
using testing::toDoubles;

/// sum(Q) + sum(R) of the QR factorization, plus a smooth elementwise term.
std::vector<Tensor> qrLoss(const std::vector<Tensor>& x) {
  QrResult f = qr(x[0]);
  return {sum(f.q) + sum(f.r) + sum(exp(x[0]) * x[0])};
}

/// logdet(X X' + I) + sum(Y .* solve(X X' + I, Y)) of X [d,k] and Y [d,n].
std::vector<Tensor> gaussLoss(const std::vector<Tensor>& x) {
  Tensor s = syrk(x[0]) + eye(x[0].dim(0));
  return {logdet(s) + sum(x[1] * solve(s, x[1]))};
}

double scalarOf(Tensor t) {
  return toDoubles(t.array())[0];
}

/// d f(x) / d x[i] by central differences, for f's first (scalar) output.
std::vector<double> finiteGradient(const TensorFunction& f, std::vector<Array> args, size_t i) {
  std::vector<double> x = toDoubles(args[i]), out;
  double h = 1e-6;
  for (size_t j = 0; j < x.size(); ++j) {
    auto at = [&](double s) {
      std::vector<double> y = x;
      y[j] += s;
      std::vector<Tensor> in(args.begin(), args.end());
      in[i] = Tensor(Array::fromVector<double>(y, args[i].shape()));
      return scalarOf(f(in)[0]);
    };
    out.push_back((at(h) - at(-h)) / (2 * h));
  }
  return out;
}

TEST(Autodiff, GradMatchesFiniteDifferences) {
  Array a = randn(DType::F64, {5, 3}, 1);
  expectClose(grad(qrLoss)({Tensor(a)})[0].array(), finiteGradient(qrLoss, {a}, 0), 1e-6, "qr");
  Array x = randn(DType::F64, {6, 2}, 2), y = randn(DType::F64, {6, 3}, 3);
  std::vector<Tensor> g = grad(gaussLoss, {0, 1})({Tensor(x), Tensor(y)});
  expectClose(g[0].array(), finiteGradient(gaussLoss, {x, y}, 0), 1e-6, "d/dX");
  expectClose(g[1].array(), finiteGradient(gaussLoss, {x, y}, 1), 1e-6, "d/dY");
}

TEST(Autodiff, JvpIsTheGradientAlongTheTangent) {
  Array a = randn(DType::F64, {4, 6}, 4), v = randn(DType::F64, {4, 6}, 5);
  JvpResult r = jvp(qrLoss, {Tensor(a)}, {Tensor(v)});
  std::vector<double> g = toDoubles(grad(qrLoss)({Tensor(a)})[0].array()), vv = toDoubles(v);
  double want = 0;
  for (size_t i = 0; i < g.size(); ++i)
    want += g[i] * vv[i];
  EXPECT_NEAR(scalarOf(r.tangents[0]), want, 1e-10 * (1 + std::abs(want)));
  EXPECT_NEAR(scalarOf(r.outputs[0]), scalarOf(qrLoss({Tensor(a)})[0]), 1e-12);
}

TEST(Autodiff, VjpPullbackAgainstLoops) {
  // f(x, w) = (x .* x * w, sum(x)): the pullback of (u, c) is (2 x .* (u w'), w'...).
  auto f = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{matmul(in[0] * in[0], in[1]), sum(in[0])};
  };
  Array x = randn(DType::F64, {3, 4}, 6), w = randn(DType::F64, {4, 2}, 7);
  Array u = randn(DType::F64, {3, 2}, 8);
  VjpResult r = vjp(f, {Tensor(x), Tensor(w)});
  std::vector<Tensor> cts = r.pullback({Tensor(u), Tensor(Array::scalar<double>(0.5))});
  std::vector<double> xs = toDoubles(x), ws = toDoubles(w), us = toDoubles(u);
  std::vector<double> dx(12), dw(8);
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 4; ++k)
      for (int j = 0; j < 2; ++j) {
        dx[i * 4 + k] += 2 * xs[i * 4 + k] * ws[k * 2 + j] * us[i * 2 + j];
        dw[k * 2 + j] += xs[i * 4 + k] * xs[i * 4 + k] * us[i * 2 + j];
      }
  for (double& d : dx)
    d += 0.5;
  expectClose(cts[0].array(), dx, 1e-12, "dx");
  expectClose(cts[1].array(), dw, 1e-12, "dw");
}

TEST(Autodiff, JitOfGradTracesOnceAndMatchesEager) {
  auto g = grad(gaussLoss, {0});
  auto step = jit([&](Tensor x, Tensor y) { return g({x, y})[0]; }, "grad_step");
  for (uint64_t seed = 10; seed < 12; ++seed) {
    Array x = randn(DType::F64, {5, 2}, seed), y = randn(DType::F64, {5, 3}, seed + 5);
    Tensor jitted = step(x, y);
    expectClose(jitted.array(), toDoubles(g({Tensor(x), Tensor(y)})[0].array()), 1e-12);
  }
  EXPECT_EQ(step.traceCount(), 1);
}

TEST(Autodiff, HessianVectorProductIsJvpOfGrad) {
  auto f = [](const std::vector<Tensor>& in) {
    Tensor s = syrk(in[0]) + eye(in[0].dim(0));
    return std::vector<Tensor>{logdet(s) + sum(exp(in[0]) * in[0])};
  };
  TensorFunction g = grad(f);
  Array x = randn(DType::F64, {4, 3}, 20), v = randn(DType::F64, {4, 3}, 21);
  JvpResult hv = jvp(g, {Tensor(x)}, {Tensor(v)});
  double h = 1e-5;
  auto gradAt = [&](double s) {
    std::vector<double> xs = toDoubles(x), vs = toDoubles(v);
    for (size_t i = 0; i < xs.size(); ++i)
      xs[i] += s * vs[i];
    return toDoubles(g({Tensor(Array::fromVector<double>(xs, {4, 3}))})[0].array());
  };
  std::vector<double> plus = gradAt(h), minus = gradAt(-h), want;
  for (size_t i = 0; i < plus.size(); ++i)
    want.push_back((plus[i] - minus[i]) / (2 * h));
  expectClose(hv.tangents[0].array(), want, 1e-6, "H v");
}

TEST(Autodiff, PreparedGradRunsAndEnqueues) {
  auto vg = valueAndGrad(qrLoss);
  auto graph = traceToGraph([&](Tensor a) { return vg({a}); },
                            {{"a", TensorType(DType::F64, {4, 4})}}, "qr_grad");
  auto exe = compile(*graph, getBackend("cpu"));
  std::vector<Array> as, outs, grads;
  for (uint64_t s = 0; s < 3; ++s) {
    as.push_back(randn(DType::F64, {4, 4}, 30 + s));
    outs.push_back(exe->newOutput(0));
    grads.push_back(exe->newOutput(1));
    exe->enqueue({as.back()}, {outs.back(), grads.back()});
  }
  exe->finish();
  for (size_t s = 0; s < as.size(); ++s) {
    std::vector<Tensor> want = vg({Tensor(as[s])});
    expectClose(outs[s], toDoubles(want[0].array()), 1e-12, "loss");
    expectClose(grads[s], toDoubles(want[1].array()), 1e-12, "grad");
  }
}

TEST(Autodiff, ErrorsNameTheProblem) {
  Array a = randn(DType::F64, {3, 3}, 40);
  auto notScalar = [](const std::vector<Tensor>& x) { return std::vector<Tensor>{exp(x[0])}; };
  EXPECT_THROW(
      {
        try {
          grad(notScalar)({Tensor(a)});
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("not a floating-point scalar"), std::string::npos)
              << e.what();
          throw;
        }
      },
      Error);
  EXPECT_THROW(jvp(notScalar, {Tensor(a)}, {Tensor(randn(DType::F64, {3, 2}, 41))}), Error);
  auto withIndex = [](const std::vector<Tensor>& x) {
    return std::vector<Tensor>{sum(cast(x[1], DType::F64) * x[0])};
  };
  Array idx = Array::fromVector<int64_t>({1, 2, 3}, {3});
  Array v = randn(DType::F64, {3}, 42);
  try {
    grad(withIndex, {1})({Tensor(v), Tensor(idx)});
    ADD_FAILURE() << "grad with respect to an integer argument did not throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("only floating-point inputs carry tangents"),
              std::string::npos)
        << e.what();
  }
  // The integer argument is passed through when only the float one is differentiated.
  std::vector<double> g = toDoubles(grad(withIndex, {0})({Tensor(v), Tensor(idx)})[0].array());
  EXPECT_EQ(g, (std::vector<double>{1, 2, 3}));
}

} // namespace
} // namespace graphc
