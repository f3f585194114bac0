//===- tests/codegen/CpuMathTest.cpp - Inline exp, log, tanh in kernels ---===//
//
// The compiled kernels' own exp, log, expm1, log1p, tanh and sigmoid
// (codegen/LlvmMath.h) in f32 and f64, through real compiled kernels (one
// elementwise op over 2^17 + a few points), against the C library in long double
// (f64) or double (f32): within 2 ulp (exp, log) or 3 ulp (the others) of the
// result rounded to the kernel's type, on random inputs over the whole range
// (random bit patterns), over the range where the result is neither 0, 1 nor
// infinite, near 0, and on the special values (+-0, +-inf, NaN, the subnormals,
// the overflow and underflow thresholds): there NaN must be NaN, infinities and
// zeros (with their sign) exact.
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"
#include "runtime/cpu/CompiledKernel.h"
#include "runtime/cpu/FusedKernel.h"
#include "support/Numeric.h"
#include "tests/codegen/KernelCases.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace graphc {
namespace {

struct MathCase {
  const char* op;
  long double (*ref)(long double);
  double ulps;               ///< the bound
  double lo, hi, lo32, hi32; ///< where the result is interesting, in f64 and f32
};

long double sigmoidRef(long double x) {
  return 1.0L / (1.0L + expl(-x));
}

const MathCase kCases[] = {
    {"exp", expl, 2, -750, 710, -105, 89},   {"log", logl, 2, 0, 1e300, 0, 3e38},
    {"expm1", expm1l, 3, -45, 710, -20, 89}, {"log1p", log1pl, 3, -1, 1e300, -1, 3e38},
    {"tanh", tanhl, 3, -25, 25, -12, 12},    {"sigmoid", sigmoidRef, 3, -750, 40, -105, 20},
};

/// Inputs of type T: specials, the interesting range (uniform, and log-uniform in
/// magnitude for log and log1p), near 0, and random bit patterns.
template <typename T> std::vector<T> inputsOf(const MathCase& c, uint64_t seed) {
  using L = std::numeric_limits<T>;
  std::vector<T> x = testing::specialValues<T>();
  x.insert(x.end(), {T(88.72283), T(88.72284), T(-87.33654), T(-103.97208), T(-103.97209),
                     T(709.78271289338397), T(709.782712893385), T(-745.13321910194110),
                     T(-745.1332191019412), T(-708.39641853226412), T(1e-30), T(-1e-30)});
  std::mt19937_64 rng(seed);
  double lo = sizeof(T) == 4 ? c.lo32 : c.lo, hi = sizeof(T) == 4 ? c.hi32 : c.hi;
  bool logScale = hi > 1e6;
  std::uniform_real_distribution<double> u(lo, hi), unit(0, 1);
  for (int i = 0; i < 65536; ++i) {
    if (logScale) // magnitude from min() to hi, plus the lower end
      x.push_back(
          static_cast<T>(std::max(lo, std::exp(unit(rng) * std::log(hi / L::min())) * L::min() +
                                          (unit(rng) < 0.1 ? lo : 0))));
    else
      x.push_back(static_cast<T>(u(rng)));
  }
  for (int i = 0; i < 16384; ++i) // near 0: magnitudes 2^-40 .. 1
    x.push_back(static_cast<T>((unit(rng) < 0.5 ? -1 : 1) * std::exp2(-40 * unit(rng))));
  for (int i = 0; i < 49152; ++i) { // the whole range
    uint64_t bits = rng();
    T v;
    if constexpr (sizeof(T) == 4) {
      uint32_t b32 = static_cast<uint32_t>(bits);
      std::memcpy(&v, &b32, 4);
    } else {
      std::memcpy(&v, &bits, 8);
    }
    x.push_back(v);
  }
  return x;
}

/// The error of `got` in ulp of T at the exact `want` (both NaN: 0; where want
/// rounds to an infinity or a zero, got must be it: else infinity).
template <typename T> double ulpError(T got, long double want) {
  T rounded = static_cast<T>(want);
  if (std::isnan(rounded) || std::isnan(got))
    return std::isnan(rounded) && std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(rounded) || std::isinf(got))
    return got == rounded ? 0 : INFINITY;
  if (rounded == 0 && got == 0 && std::signbit(got) != std::signbit(rounded))
    return INFINITY;
  T mag = std::abs(rounded);
  T ulp = mag == std::numeric_limits<T>::max()
              ? mag - std::nextafter(mag, T(0))
              : std::nextafter(mag, std::numeric_limits<T>::infinity()) - mag;
  return static_cast<double>(std::abs(static_cast<long double>(got) - want) / ulp);
}

template <typename T> void expectAccurate(const MathCase& c) {
  const char* dtype = sizeof(T) == 4 ? "f32" : "f64";
  SCOPED_TRACE(fmt::format("{} {}", c.op, dtype));
  std::vector<T> x = inputsOf<T>(c, 42);
  auto g = ir::parseGraph(fmt::format("graph @m(%x: {0}[{1}]) {{\n  %r = {2} %x\n  return %r\n}}",
                                      dtype, x.size(), c.op));
  std::vector<codegen::Kernel> ks = testing::kernelsOf(*g);
  ASSERT_EQ(ks.size(), 1u);
  cpu::FusedKernel compiled(ks[0], cpu::KernelMode::Compile);
  ASSERT_NE(compiled.compiled(), nullptr);
  std::vector<T> got(x.size());
  compiled.run({x.data()}, {got.data()});
  double worst = 0;
  int reported = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    long double want = c.ref(static_cast<long double>(x[i]));
    if constexpr (sizeof(T) == 4) // the f32 reference: the double function
      want = static_cast<double>(want);
    double e = ulpError<T>(got[i], want);
    worst = std::max(worst, e);
    if (e > c.ulps && reported++ < 5)
      ADD_FAILURE() << c.op << "(" << fmt::format("{:a}", static_cast<double>(x[i]))
                    << ") = " << fmt::format("{:a}", static_cast<double>(got[i])) << ", want "
                    << fmt::format("{:a}", static_cast<double>(want)) << ": " << e << " ulp";
  }
  EXPECT_LE(worst, c.ulps);
  std::printf("%s %s: worst %.3f ulp over %zu inputs\n", c.op, dtype, worst, x.size());
}

TEST(CpuMath, InlineFunctionsAreAccurateInUlp) {
  for (const MathCase& c : kCases) {
    expectAccurate<float>(c);
    expectAccurate<double>(c);
  }
}

} // namespace
} // namespace graphc
