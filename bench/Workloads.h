//===- bench/Workloads.h - The workloads' graphs as text -------*- C++ -*-===//
//
// The elementwise chain W3, layernorm W4, the batched SPD solves W5 and the
// small-op latency case of shared/WORKLOADS.md as .gir text at any size and dtype,
// shared by the CPU and GPU benchmarks.
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

} // namespace graphc::bench
