//===- tests/support/Numeric.cpp - Random inputs and comparisons ----------===//
#include "support/Numeric.h"

#include <cmath>
#include <random>

namespace graphc::testing {

std::vector<double> asDoubles(const Array& x) {
  Array c = x.contiguous();
  std::vector<double> out;
  visitDType(c.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = c.data<T>();
    for (int64_t i = 0; i < c.numel(); ++i)
      out.push_back(static_cast<double>(p[i]));
  });
  return out;
}

std::vector<Array> randomInputs(const ir::Graph& g, uint64_t seed) {
  std::vector<Array> inputs;
  for (const ir::Node* p : g.params()) {
    const ir::TensorType& t = p->type();
    std::mt19937_64 rng(seed++);
    std::normal_distribution<double> normal;
    std::vector<double> v(t.numel());
    for (double& x : v) {
      double magnitude = static_cast<double>(rng() % 5 + 1); // integers: never 0
      x = ir::isFloat(t.dtype)     ? normal(rng)
          : ir::isInteger(t.dtype) ? (rng() % 2 ? magnitude : -magnitude)
                                   : static_cast<double>(rng() % 2);
    }
    if (ir::isFloat(t.dtype) && t.rank() >= 2 && t.shape[t.rank() - 1] == t.shape[t.rank() - 2]) {
      int64_t n = t.shape.back();
      for (size_t base = 0; base < v.size(); base += n * n)
        for (int64_t i = 0; i < n; ++i)
          v[base + i * n + i] += static_cast<double>(n);
    }
    Array a = Array::empty(t.dtype, t.shape);
    visitDType(t.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (size_t i = 0; i < v.size(); ++i)
        a.data<T>()[i] = static_cast<T>(v[i]);
    });
    inputs.push_back(a);
  }
  return inputs;
}

std::vector<Array> boundedInputs(const ir::Graph& g, uint64_t seed) {
  std::vector<Array> inputs;
  for (const ir::Node* p : g.params()) {
    const ir::TensorType& t = p->type();
    std::mt19937_64 rng(seed++);
    std::uniform_real_distribution<double> magnitude(1, 2);
    Array a = Array::empty(t.dtype, t.shape);
    visitDType(t.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (int64_t i = 0; i < t.numel(); ++i) {
        double sign = rng() % 2 ? 1 : -1;
        double x = ir::isFloat(t.dtype)     ? sign * magnitude(rng)
                   : ir::isInteger(t.dtype) ? sign * static_cast<double>(rng() % 5 + 1)
                                            : static_cast<double>(rng() % 2);
        a.data<T>()[i] = static_cast<T>(x);
      }
    });
    inputs.push_back(a);
  }
  return inputs;
}

bool degenerate(const Array& a) {
  std::vector<double> v = asDoubles(a);
  bool allZero = true;
  for (double x : v) {
    if (!std::isfinite(x))
      return true;
    allZero = allZero && x == 0;
  }
  return allZero; // an empty array too
}

double relativeDifference(const Array& x, const Array& y) {
  if (x.shape() != y.shape())
    return INFINITY;
  std::vector<double> a = asDoubles(x), b = asDoubles(y);
  double diff = 0, scale = 1;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i]))
      continue;
    if (std::isnan(a[i]) != std::isnan(b[i]))
      return INFINITY;
    if (a[i] == b[i]) // equal infinities too
      continue;
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return diff / scale;
}

} // namespace graphc::testing
