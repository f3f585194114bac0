//===- bench/Workloads.h - The workloads' graphs as text -------*- C++ -*-===//
//
// The elementwise chain W3, layernorm W4, the batched SPD solves W5, the functions
// W6 and W7 differentiate, the GP log marginal likelihood and the small-op latency
// case of shared/WORKLOADS.md as .gir text at any size and dtype, shared by the CPU
// and GPU benchmarks.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <fmt/format.h>
#include <string>

namespace graphc::bench {

/// W3: relu(x*w + b) * sigmoid(x) + tanh(x - b) over `n` elements of `dtype`.
inline std::string chainGraph(int64_t n, const char* dtype) {
  return fmt::format(R"(
graph @chain(%x: {0}[{1}], %w: {0}[{1}], %b: {0}[{1}]) {{
  %xw = mul %x, %w
  %l = add %xw, %b
  %r = relu %l
  %s = sigmoid %x
  %rs = mul %r, %s
  %d = sub %x, %b
  %t = tanh %d
  %out = add %rs, %t
  return %out
}})",
                     dtype, n);
}

/// Small-op latency: one x + y over `n` elements of `dtype`.
inline std::string addGraph(int64_t n, const char* dtype) {
  return fmt::format(R"(
graph @add(%x: {0}[{1}], %y: {0}[{1}]) {{
  %out = add %x, %y
  return %out
}})",
                     dtype, n);
}

/// W4: (x - mean) / sqrt(var + 1e-5) * g + b over the rows of a rows x cols `dtype` x.
inline std::string layernormGraph(int64_t rows, int64_t cols, const char* dtype) {
  return fmt::format(R"(
graph @layernorm(%x: {0}[{1},{2}], %g: {0}[{2}], %b: {0}[{2}]) {{
  %m = mean %x {{axes=[1], keepdims}}
  %mb = broadcast_to %m {{shape=[{1},{2}]}}
  %xc = sub %x, %mb
  %sq = square %xc
  %v = mean %sq {{axes=[1], keepdims}}
  %eps = full {{value=0.00001}} : {0}[{1},1]
  %ve = add %v, %eps
  %rs = rsqrt %ve
  %rsb = broadcast_to %rs {{shape=[{1},{2}]}}
  %n = mul %xc, %rsb
  %gb = broadcast_to %g {{shape=[{1},{2}]}}
  %bb = broadcast_to %b {{shape=[{1},{2}]}}
  %s = mul %n, %gb
  %out = add %s, %bb
  return %out
}})",
                     dtype, rows, cols);
}

/// W5: solve(X X' / (2n) + 0.1 I, b) for each of `batch` items, with X n x 2n and
/// one right-hand side b, written batched (the linear-algebra ops take leading
/// batch axes).
inline std::string batchedSpdGraph(int64_t batch, int64_t n, const char* dtype) {
  return fmt::format(R"(
graph @batched_spd(%x: {0}[{1},{2},{3}], %b: {0}[{1},{2},1]) {{
  %g = matmul %x, %x {{transpose_b}}
  %k = full {{value={3}.0}} : {0}[{1},{2},{2}]
  %c = div %g, %k
  %eye = eye : {0}[{1},{2},{2}]
  %tenth = full {{value=0.1}} : {0}[{1},{2},{2}]
  %r = mul %tenth, %eye
  %s = add %c, %r
  %z = solve %s, %b
  return %z
}})",
                     dtype, batch, n, 2 * n);
}

/// W6: sum(Q) + sum(R) of the reduced QR factorization of an n x n f64 matrix.
inline std::string qrLossGraph(int64_t n) {
  return fmt::format(R"(
graph @qr_loss(%a: f64[{0},{0}]) {{
  %f:2 = qr %a
  %sq = sum %f#0 {{axes=[0,1]}}
  %sr = sum %f#1 {{axes=[0,1]}}
  %l = add %sq, %sr
  return %l
}})",
                     n);
}

/// W7: logdet(S) + sum(Y .* solve(S, Y)) / n with S = F F' + 0.1 I, F d x k, Y d x n.
inline std::string gaussNllGraph(int64_t d, int64_t k, int64_t n) {
  return fmt::format(R"(
graph @gauss_nll(%f: f64[{0},{1}], %y: f64[{0},{2}]) {{
  %g = matmul %f, %f {{transpose_b}}
  %e = eye : f64[{0},{0}]
  %t = full {{value=0.1}} : f64[{0},{0}]
  %r = mul %t, %e
  %s = add %g, %r
  %ld = logdet %s
  %x = solve %s, %y
  %m = mul %y, %x
  %q = sum %m {{axes=[0,1]}}
  %c = full {{value={2}.0}} : f64[]
  %qn = div %q, %c
  %l = add %ld, %qn
  return %l
}})",
                     d, k, n);
}

/// The GP log marginal likelihood logdet(K + I) + y' solve(K + I, y) with K = X X',
/// X n x n (case gp_lml_n4096_f64): one Cholesky serves both terms.
inline std::string gpLmlGraph(int64_t n, const char* dtype) {
  return fmt::format(R"(
graph @gp_lml(%x: {0}[{1},{1}], %y: {0}[{1},1]) {{
  %k = matmul %x, %x {{transpose_b}}
  %i = eye : {0}[{1},{1}]
  %s = add %k, %i
  %ld = logdet %s
  %z = solve %s, %y
  %q = matmul %y, %z {{transpose_a}}
  %qs = reshape %q {{shape=[]}}
  %out = add %ld, %qs
  return %out
}})",
                     dtype, n);
}

} // namespace graphc::bench
