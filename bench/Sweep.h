//===- bench/Sweep.h - The shape sweep's cases as .gir text ----*- C++ -*-===//
//
// The cases of the shape sweep (issue 27, shared/WORKLOADS.md "The shape sweep"):
// reductions over every axis and all axes of 1-D, tall-skinny, square, short-wide
// and 3-D arrays; reductions with fused prologues and epilogues (softmax and row
// normalization over rows of several lengths, column normalization); broadcasts along
// each axis; tall-skinny and batched matmuls; SPD and general solves with few to
// 10^5 right-hand sides; batched tiny systems; triangular solves; Cholesky and QR
// alone; the forms the linalg-forms pass rewrites, as users write them (a quadratic
// form through a solve, the trace of a product, the inverse and log-determinant of
// an SPD matrix, a product with its inverse). bench/gpu.cpp runs them (--workloads sweep),
// bench/sweep.py runs the peers on the same cases under the same names, with inputs drawn the same
// way (standard normal).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <fmt/format.h>
#include <string>
#include <vector>

namespace graphc::bench {

/// One sweep case: its name (op, dtype, shape, as sum_f32_1048576x4_ax0) and its
/// graph in a dtype.
struct SweepCase {
  std::string name;
  std::string (*graph)(const SweepCase&, const char* dtype);
  std::string op, shape, axes, out; ///< what `graph` builds from
  int64_t n = 0, cols = 0, batch = 0;
  bool memoryBound = false; ///< time the copy floor beside it
  const char* dtype = "f64";
};

namespace sweep {

/// `op` of %x over `axes` ("" for all), the result of shape `out`.
inline std::string reduce(const SweepCase& c, const char* t) {
  return fmt::format("graph @{0}(%x: {1}[{2}]) {{\n  %r = {3} %x {{axes=[{4}]}}\n  return %r\n}}",
                     c.name, t, c.shape, c.op, c.axes);
}

/// softmax or logsumexp over the rows of %x.
inline std::string rows(const SweepCase& c, const char* t) {
  const char* tail =
      c.op == "softmax" ? "  %r = div %e, %sb\n" : "  %l = log %s\n  %r = add %l, %m\n";
  return fmt::format(R"(graph @{0}(%x: {1}[{2}]) {{
  %m = max %x {{axes=[1], keepdims}}
  %mb = broadcast_to %m {{shape=[{2}]}}
  %d = sub %x, %mb
  %e = exp %d
  %s = sum %e {{axes=[1], keepdims}}
  %sb = broadcast_to %s {{shape=[{2}]}}
{3}  return %r
}})",
                     c.name, t, c.shape, tail);
}

/// (x - mean(x, a)) / std(x, a) over the axis a of `axes`: column normalization
/// (colnorm, a = 0) or row normalization (rownorm, a = 1, a layer norm without
/// its affine part).
inline std::string normalize(const SweepCase& c, const char* t) {
  return fmt::format(R"(graph @{0}(%x: {1}[{2}]) {{
  %m = mean %x {{axes=[{3}], keepdims}}
  %v = var %x {{axes=[{3}], keepdims}}
  %s = sqrt %v
  %mb = broadcast_to %m {{shape=[{2}]}}
  %sb = broadcast_to %s {{shape=[{2}]}}
  %c = sub %x, %mb
  %r = div %c, %sb
  return %r
}})",
                     c.name, t, c.shape, c.axes);
}

/// x + b with b broadcast along axis 0 (b: [cols]) or axis 1 (b: [rows, 1]), x + x',
/// or x + y' (y: [cols, rows]).
inline std::string broadcast(const SweepCase& c, const char* t) {
  if (c.op == "transpose")
    return fmt::format(R"(graph @{0}(%x: {1}[{2}]) {{
  %y = transpose %x {{perm=[1,0]}}
  %r = add %x, %y
  return %r
}})",
                       c.name, t, c.shape);
  if (c.op == "transposed")
    return fmt::format(R"(graph @{0}(%x: {1}[{2}], %y: {1}[{3}]) {{
  %t = transpose %y {{perm=[1,0]}}
  %r = add %x, %t
  return %r
}})",
                       c.name, t, c.shape, c.out);
  return fmt::format(R"(graph @{0}(%x: {1}[{2}], %b: {1}[{3}]) {{
  %bb = broadcast_to %b {{shape=[{2}]}}
  %r = add %x, %bb
  return %r
}})",
                     c.name, t, c.shape, c.out);
}

/// X'X for X [shape], or batched X Y.
inline std::string matmul(const SweepCase& c, const char* t) {
  if (c.op == "xtx")
    return fmt::format("graph @{0}(%x: {1}[{2}]) {{\n  %r = matmul %x, %x {{transpose_a}}\n  "
                       "return %r\n}}",
                       c.name, t, c.shape);
  return fmt::format("graph @{0}(%x: {1}[{2}], %y: {1}[{2}]) {{\n  %r = matmul %x, %y\n  "
                     "return %r\n}}",
                     c.name, t, c.shape);
}

/// The lines that make %a = X X'/n + I (SPD) from %xa of shape `shape` (n x n
/// matrices) in dtype t.
inline std::string spdMatrix(const char* t, const std::string& shape, int64_t n) {
  return fmt::format(R"(  %g = matmul %xa, %xa {{transpose_b}}
  %k = full {{value={2}.0}} : {0}[{1}]
  %c = div %g, %k
  %eye = eye : {0}[{1}]
  %a = add %c, %eye
)",
                     t, shape, n);
}

/// solve(A, B) for A = X X'/n + I (spd) or A = X + n I (general; X n x n), B n x
/// cols, `batch` of them when batch > 0; cholesky(X X'/n + I); qr(X); or the
/// lower triangular solve of tril(X) + n I.
inline std::string linalg(const SweepCase& c, const char* t) {
  std::string lead = c.batch ? fmt::format("{},", c.batch) : "";
  std::string nn = fmt::format("{}{},{}", lead, c.n, c.n);
  std::string a = c.op == "general" || c.op == "trsm"
                      ? fmt::format(R"(  %k = full {{value={2}.0}} : {0}[{1}]
  %eye = eye : {0}[{1}]
  %ni = mul %k, %eye
  %a = add %xa, %ni
)",
                                    t, nn, c.n)
                      : spdMatrix(t, nn, c.n);
  std::string body;
  if (c.op == "cholesky")
    body = "  %r = cholesky %a\n";
  else if (c.op == "qr")
    return fmt::format("graph @{0}(%xa: {1}[{2}]) {{\n  %q:2 = qr %xa\n  return %q#1\n}}", c.name,
                       t, nn);
  else if (c.op == "trsm")
    body = "  %l = tril %a\n  %r = triangular_solve %l, %b {lower}\n";
  else
    body = "  %r = solve %a, %b\n";
  std::string params = fmt::format("%xa: {}[{}]", t, nn);
  if (c.op != "cholesky")
    params += fmt::format(", %b: {}[{}{},{}]", t, lead, c.n, c.cols);
  return fmt::format("graph @{0}({1}) {{\n{2}{3}  return %r\n}}", c.name, params, a, body);
}

/// The forms of passes/LinalgForms.h as users write them, S = X X'/n + I SPD:
/// sum(B .* solve(S, B), axis 0) (quadform), trace(X B) (trace_matmul),
/// inverse(S) (inverse_spd), logdet(S) (logdet_spd) and B inverse(S) with B
/// cols x n (right_inverse_spd).
inline std::string forms(const SweepCase& c, const char* t) {
  std::string nn = fmt::format("{},{}", c.n, c.n);
  if (c.op == "trace_matmul")
    return fmt::format(R"(graph @{0}(%xa: {1}[{2}], %b: {1}[{2}]) {{
  %p = matmul %xa, %b
  %r = trace %p
  return %r
}})",
                       c.name, t, nn);
  std::string spd = spdMatrix(t, nn, c.n);
  std::string params = fmt::format("%xa: {}[{}]", t, nn), body;
  if (c.op == "quadform") {
    params += fmt::format(", %b: {}[{},{}]", t, c.n, c.cols);
    body = "  %s = solve %a, %b\n  %p = mul %b, %s\n  %r = sum %p {axes=[0]}\n";
  } else if (c.op == "right_inverse_spd") {
    params += fmt::format(", %b: {}[{},{}]", t, c.cols, c.n);
    body = "  %i = inverse %a\n  %r = matmul %b, %i\n";
  } else {
    body = fmt::format("  %r = {} %a\n", c.op == "inverse_spd" ? "inverse" : "logdet");
  }
  return fmt::format("graph @{0}({1}) {{\n{2}{3}  return %r\n}}", c.name, params, spd, body);
}

} // namespace sweep

/// Every case of the sweep, in order. With `cpu`, the sizes of the CPU sweep
/// (bench/cpu.cpp; a few minutes on 2 cores): squares of 4096 instead of 8192,
/// softmax over 512 rows instead of 2048, column norms of 262144 rows instead of
/// 1048576, solves and Cholesky of order 2048 instead of 4096, and SPD solves with
/// n * cols <= 64 * 100000 (instead of 256 * 100000). Names carry the sizes.
inline std::vector<SweepCase> sweepCases(bool cpu = false) {
  const char* square = cpu ? "4096x4096" : "8192x8192";
  std::vector<SweepCase> out;
  auto red = [&](const char* op, const char* dtype, const char* shape, const char* axes,
                 const char* tag) {
    SweepCase c{
        fmt::format("{}_{}_{}_{}", op, dtype, shape, tag), sweep::reduce, op, shape, axes, ""};
    for (char& ch : c.shape)
      ch = ch == 'x' ? ',' : ch;
    c.memoryBound = true;
    c.dtype = dtype;
    out.push_back(c);
  };
  struct Shape {
    const char *name, *all;
    std::vector<const char*> axes;
  };
  const Shape shapes[] = {{"16777216", "0", {}},
                          {"1048576x4", "0,1", {"0", "1"}},
                          {"100000x64", "0,1", {"0", "1"}},
                          {square, "0,1", {"0", "1"}},
                          {"4x1000000", "0,1", {"0", "1"}},
                          {"64x100000", "0,1", {"0", "1"}},
                          {"256x256x256", "0,1,2", {"0", "1", "2"}}};
  for (const Shape& s : shapes) {
    for (const char* a : s.axes)
      red("sum", "f32", s.name, a, (std::string("ax") + a).c_str());
    red("sum", "f32", s.name, s.all, "all");
  }
  for (const char* op : {"mean", "max", "var", "argmax"})
    for (const char* shape : {"1048576x4", "100000x64", square})
      for (const char* a : {"0", "1"})
        red(op, "f32", shape, a, (std::string("ax") + a).c_str());
  red("max", "f32", "16777216", "0", "all");
  for (const char* shape : {"1048576x4", square})
    for (const char* a : {"0", "1"})
      red("sum", "f64", shape, a, (std::string("ax") + a).c_str());
  red("sum", "f64", "16777216", "0", "all");

  auto add = [&](std::string name, auto graph, const char* op, const char* shape, const char* extra,
                 bool memoryBound, const char* axes = "") {
    SweepCase c{std::move(name), graph, op, shape, axes, extra};
    c.memoryBound = memoryBound;
    c.dtype = c.name.find("_f32_") != std::string::npos ? "f32" : "f64";
    out.push_back(c);
  };
  int64_t softmaxRows = cpu ? 512 : 2048, colnormRows = cpu ? 262144 : 1048576;
  int64_t side = cpu ? 4096 : 8192;
  for (const char* op : {"softmax", "logsumexp"})
    add(fmt::format("{}_f32_{}x50257_ax1", op, softmaxRows), sweep::rows, op,
        fmt::format("{},50257", softmaxRows).c_str(), "", true);
  // Row lengths on both sides of where a row stops fitting in registers (16384
  // f32 for one read, 4096 for several; 32768 by vectors, which need not tile a
  // row of 8000 or 32000) and up to where it stops fitting in shared memory.
  for (int64_t length : {8000, 16384, 16385, 32000, 32768, 56000})
    add(fmt::format("softmax_f32_{}x{}_ax1", softmaxRows, length), sweep::rows, "softmax",
        fmt::format("{},{}", softmaxRows, length).c_str(), "", true);
  for (int64_t length : {4096, 4097, 16385, 56000})
    add(fmt::format("rownorm_f32_{}x{}_ax1", softmaxRows, length), sweep::normalize, "rownorm",
        fmt::format("{},{}", softmaxRows, length).c_str(), "", true, "1");
  add(fmt::format("colnorm_f32_{}x64_ax0", colnormRows), sweep::normalize, "colnorm",
      fmt::format("{},64", colnormRows).c_str(), "", true, "0");
  add(fmt::format("colnorm_f32_{0}x{0}_ax0", side), sweep::normalize, "colnorm",
      fmt::format("{0},{0}", side).c_str(), "", true, "0");
  add("add_f32_4096x4096_bcast0", sweep::broadcast, "add", "4096,4096", "4096", true);
  add("add_f32_4096x4096_bcast1", sweep::broadcast, "add", "4096,4096", "4096,1", true);
  add("add_f32_1048576x4_bcast0", sweep::broadcast, "add", "1048576,4", "4", true);
  add("add_f32_4x1048576_bcast1", sweep::broadcast, "add", "4,1048576", "4,1", true);
  add("add_transpose_f32_4096x4096", sweep::broadcast, "transpose", "4096,4096", "", true);
  add("add_transposed_f32_64x1048576", sweep::broadcast, "transposed", "64,1048576", "1048576,64",
      true);
  add("add_transposed_f64_8192x1024", sweep::broadcast, "transposed", "8192,1024", "1024,8192",
      true);
  add("xtx_f64_1000000x16", sweep::matmul, "xtx", "1000000,16", "", false);
  add("xtx_f32_1000000x16", sweep::matmul, "xtx", "1000000,16", "", false);
  add("bmm_f32_10000x16x16", sweep::matmul, "bmm", "10000,16,16", "", false);

  auto la = [&](const char* op, int64_t n, int64_t cols, int64_t batch) {
    std::string name =
        batch ? fmt::format("{}_f64_{}x{}_rhs{}", op, batch, n, cols)
              : fmt::format("{}_f64_n{}{}", op, n, cols ? fmt::format("_rhs{}", cols) : "");
    SweepCase c{name, sweep::linalg, op, "", "", ""};
    c.n = n, c.cols = cols, c.batch = batch;
    out.push_back(c);
  };
  int64_t big = cpu ? 2048 : 4096, spdLimit = (cpu ? 64 : 256) * int64_t{100000};
  for (int64_t n : {16, 64, 256, 1024})
    for (int64_t cols : {1, 1000, 100000})
      if (n * cols <= spdLimit)
        la("spd", n, cols, 0);
  la("spd", big, 1, 0);
  for (int64_t n : {16, 64, 1024})
    for (int64_t cols : {1, 1000, 100000})
      if (n * cols <= int64_t{1024} * 1000)
        la("general", n, cols, 0);
  la("general", big, 1, 0);
  la("spd", 4, 1, 100000);
  la("spd", 16, 1, 10000);
  la("spd", 64, 1, 1000);
  la("general", 4, 1, 100000);
  la("general", 16, 1, 10000);
  la("general", 64, 1, 1000);
  la("trsm", 64, 100000, 0);
  la("trsm", 256, 1000, 0);
  la("trsm", 1024, 10000, 0);
  for (int64_t n : {int64_t{32}, int64_t{256}, int64_t{1024}, big})
    la("cholesky", n, 0, 0);
  for (int64_t n : {int64_t{32}, int64_t{128}, int64_t{256}, int64_t{1024}, big})
    la("qr", n, 0, 0);
  for (auto [batch, n] : {std::pair<int64_t, int64_t>{1000, 32}, {100, 128}, {8, 256}})
    la("qr", n, 0, batch);

  // `cols`: B's columns (rhs) or rows (rows), none when 0.
  auto form = [&](const char* op, int64_t n, int64_t cols, const char* colsName) {
    std::string name = fmt::format("{}_f64_n{}", op, n);
    if (cols)
      name += fmt::format("_{}{}", colsName, cols);
    SweepCase c{name, sweep::forms, op, "", "", ""};
    c.n = n, c.cols = cols;
    out.push_back(c);
  };
  form("quadform", 1024, 1000, "rhs");
  form("trace_matmul", big, 0, "");
  form("inverse_spd", big, 0, "");
  form("logdet_spd", big, 0, "");
  form("right_inverse_spd", 1024, 1000, "rows");
  return out;
}

} // namespace graphc::bench
