//===- tests/autodiff/RuleGraphs.cpp - One graph family per derivative rule -===//
#include "RuleGraphs.h"

#include <fmt/format.h>

namespace graphc::testing {
namespace {

/// triangular_solve with each of its 16 flag combinations, batched.
std::string triangularSolves() {
  std::string module;
  for (int flags = 0; flags < 16; ++flags) {
    bool lower = flags & 1, right = flags & 2, ta = flags & 4, unit = flags & 8;
    std::string attrs;
    for (auto [on, name] : {std::pair{lower, "lower"}, std::pair{right, "right_side"},
                            std::pair{ta, "transpose_a"}, std::pair{unit, "unit_diagonal"}})
      if (on)
        attrs += (attrs.empty() ? "" : ", ") + std::string(name);
    module += fmt::format(R"(
graph @trsm{}(%a: f64[2,4,4], %b: {}) {{
  %x = triangular_solve %a, %b {}
  return %x
}}
)",
                          flags, right ? "f64[2,3,4]" : "f64[2,4,3]",
                          attrs.empty() ? "" : "{" + attrs + "}");
  }
  return module;
}

} // namespace

const std::vector<RuleFamily>& ruleFamilies() {
  static const std::vector<RuleFamily> families = {
      {"ElementwiseUnary", R"(
graph @smooth(%x: f64[3,4]) {
  %e = exp %x
  %p = add %e, %e
  %a = log %p
  %b = log1p %e
  %c = expm1 %x
  %d = sqrt %e
  %f = rsqrt %e
  %g = square %x
  %h = reciprocal %e
  %i = sin %x
  %j = cos %x
  %k = tanh %x
  %l = sigmoid %x
  %m = erf %x
  %n = neg %x
  return %a, %b, %c, %d, %f, %g, %h, %i, %j, %k, %l, %m, %n
}
)",
       1},
      {"ElementwiseKinks", R"(
graph @kinks(%x: f64[5,3]) {
  %a = abs %x
  %r = relu %x
  %s = sign %x
  %f = floor %x
  %c = ceil %x
  %o = round %x
  %z = add %s, %f
  %w = add %c, %o
  %t = add %z, %w
  %u = mul %t, %x
  return %a, %r, %u
}
)",
       5},
      {"ElementwiseBinary", R"(
graph @arith(%x: f64[4,3], %y: f64[4,3]) {
  %a = add %x, %y
  %s = sub %x, %y
  %m = mul %x, %y
  %e = exp %y
  %d = div %x, %e
  %p = pow %e, %x
  %q = pow %x, %e
  %mx = maximum %x, %y
  %mn = minimum %x, %y
  %t = atan2 %x, %y
  %r = remainder %x, %e
  return %a, %s, %m, %d, %p, %mx, %mn, %t, %r
}
graph @select(%x: f64[6], %y: f64[6]) {
  %c = gt %x, %y
  %l = lt %x, %y
  %n = not %l
  %b = and %c, %n
  %s = select %b, %x, %y
  %t = mul %s, %s
  return %t, %b
}
)",
       11},
      {"ShapeOps", R"(
graph @moves(%x: f64[3,4], %v: f64[4]) {
  %b = broadcast_to %v {shape=[2,3,4]}
  %r = reshape %x {shape=[2,6]}
  %t = transpose %x {perm=[1,0]}
  %s = slice %x {start=[1,0], stop=[3,4], stride=[1,2]}
  %s2 = slice %x {start=[0,1], stop=[3,4], stride=[2,3]}
  %c = concat %x, %x {axis=0}
  %d = diag %v
  %dp = diag_part %x
  %u = triu %x {k=1}
  %l = tril %x {k=-1}
  %w = mul %x, %x
  %c2 = concat %w, %x {axis=1}
  return %b, %r, %t, %s, %s2, %c, %d, %dp, %u, %l, %c2
}
graph @batched(%x: f64[2,3,3], %y: f64[2,1,3]) {
  %b = broadcast_to %y {shape=[2,3,3]}
  %m = mul %b, %x
  %d = diag_part %m
  %t = tril %m
  %p = transpose %m {perm=[2,0,1]}
  return %d, %t, %p
}
)",
       21},
      {"Reductions", R"(
graph @reduce(%x: f64[3,4,2]) {
  %s = sum %x {axes=[1]}
  %m = mean %x {axes=[0,2], keepdims}
  %v = var %x {axes=[2]}
  %v2 = var %x {axes=[0,1], keepdims}
  %p = prod %x {axes=[1]}
  %mx = max %x {axes=[1]}
  %mn = min %x {axes=[0,2]}
  %a = argmax %x {axes=[1]}
  %all = sum %x {axes=[0,1,2]}
  return %s, %m, %v, %v2, %p, %mx, %mn, %a, %all
}
)",
       31},
      {"MatmulAndSyrk", R"(
graph @products(%a: f64[3,4], %b: f64[4,5], %c: f64[5,4], %x: f64[2,3,4]) {
  %p = matmul %a, %b
  %q = matmul %a, %c {transpose_b}
  %r = matmul %b, %a {transpose_a, transpose_b}
  %s = matmul %a, %a {transpose_a}
  %k = syrk %a
  %kt = syrk %a {transpose}
  %kb = syrk %x
  %y = matmul %x, %x {transpose_b}
  return %p, %q, %r, %s, %k, %kt, %kb, %y
}
)",
       41},
      {"Solves", R"(
graph @solve(%a: f64[4,4], %b: f64[4,3], %c: f64[2,3,3], %d: f64[2,3,1]) {
  %x = solve %a, %b
  %y = solve %c, %d
  %i = inverse %a
  %e = det %a
  %l = logdet %c
  %n = neg %a
  %f = det %n
  %t = trace %a
  %w = trace %b
  return %x, %y, %i, %e, %l, %f, %t, %w
}
graph @spd(%z: f64[5,3], %b: f64[5,2]) {
  %g = syrk %z
  %i = eye : f64[5,5]
  %s = add %g, %i
  %l = cholesky %s
  %u = cholesky %s {upper}
  %x = solve %s, %b
  %ld = logdet %s
  return %l, %u, %x, %ld
}
graph @gauss_nll(%f: f64[8,2], %y: f64[8,3]) {
  %g = matmul %f, %f {transpose_b}
  %e = eye : f64[8,8]
  %t = full {value=0.1} : f64[8,8]
  %r = mul %t, %e
  %s = add %g, %r
  %ld = logdet %s
  %x = solve %s, %y
  %m = mul %y, %x
  %q = sum %m {axes=[0,1]}
  %l = add %ld, %q
  return %l
}
graph @assume(%a: f64[4,4], %b: f64[4,2]) {
  %g = matmul %a, %a {transpose_b}
  %s = assume_spd %g
  %x = solve %s, %b
  %y = assume_symmetric %g
  %l = tril %a
  %al = assume_lower %l
  %u = triu %a
  %au = assume_upper %u
  %d = diag_part %a
  %dd = diag %d
  %ad = assume_diagonal %dd
  %z = solve %al, %b
  %w = solve %au, %b
  %v = solve %ad, %b
  return %x, %y, %z, %w, %v
}
)",
       51},
      {"Factorizations", R"(
graph @lu(%a: f64[4,4], %c: f64[2,3,3]) {
  %f:3 = lu %a
  %g:3 = lu %c
  return %f#0, %f#1, %f#2, %g#1, %g#2
}
graph @qr_square(%a: f64[4,4]) {
  %f:2 = qr %a
  return %f#0, %f#1
}
graph @qr_tall(%a: f64[6,3], %b: f64[2,5,2]) {
  %f:2 = qr %a
  %g:2 = qr %b
  return %f#0, %f#1, %g#0, %g#1
}
graph @qr_wide(%a: f64[3,5], %b: f64[2,2,4]) {
  %f:2 = qr %a
  %g:2 = qr %b
  return %f#0, %f#1, %g#0, %g#1
}
)",
       71},
      {"TriangularSolveEveryFlag", triangularSolves(), 61},
  };
  return families;
}

} // namespace graphc::testing
