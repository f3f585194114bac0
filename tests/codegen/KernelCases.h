//===- tests/codegen/KernelCases.h - Graphs whose kernels we generate -*- C++ -*-===//
//
// The graphs the CUDA code generator is tested on, shared by the CPU-only codegen
// tests (deterministic source, NVRTC compiles it) and the GPU tests (the kernel
// computes what the CPU interpreter computes): chains with broadcasts, every
// elementwise op, casts, integer ops, each reduction over trailing, leading,
// middle and all axes, layernorm, softmax, sibling reductions, sources computed in
// kernels (computedSourceCases); and whole graphs of several reduction stages as
// one kernel (multiStageCases). Graph texts spell the float type `$T`;
// kernelCases() fills it in.
//
// Parameter names choose the random inputs the GPU tests feed (see inputKind).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bench/Workloads.h"
#include "codegen/Kernel.h"
#include "ir/Parser.h"
#include "passes/MemoryPlan.h"

#include <fmt/format.h>

#include <set>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

namespace graphc::testing {

/// One graph to generate kernels for.
struct KernelCase {
  std::string name;
  std::string text;
};

/// How the GPU tests fill a parameter, from the first letter of its name:
/// n: nonzero integers; e: small non-negative integers (exponents); t: few distinct
/// values (ties); q: ties and NaNs; p: positive; anything else: uniform in [-2, 2]
/// (integers in [-50, 50]).
inline char inputKind(llvm::StringRef paramName) {
  return paramName.empty() ? 'x' : paramName.front();
}

/// `text` with $T replaced by `dtype`.
inline std::string withType(std::string text, llvm::StringRef dtype) {
  for (size_t at = text.find("$T"); at != std::string::npos; at = text.find("$T", at))
    text.replace(at, 2, dtype.str());
  return text;
}

/// Graphs whose kernels compute full, eye, iota and scalar constants at their index
/// (codegen::Inst::Kind::Source): a batched eye (W5's shifted Gram matrices),
/// rectangular and broadcast eyes, reshapes that keep or regroup axes, iotas along
/// each axis, sources in a reduction's domain and reduced space, integers and casts.
inline std::vector<KernelCase> computedSourceCases(llvm::StringRef dtype) {
  std::vector<KernelCase> cases;
  auto add = [&](std::string name, const std::string& text) {
    cases.push_back({std::move(name), withType(text, dtype)});
  };
  add("sources_shifted_gram", R"(graph @shifted_gram(%g: $T[5,7,7]) {
  %k = full {value=14.0} : $T[5,7,7]
  %c = div %g, %k
  %eye = eye : $T[5,7,7]
  %tenth = full {value=0.1} : $T[5,7,7]
  %r = mul %tenth, %eye
  %s = add %c, %r
  return %s
})");
  add("sources_rectangular_eye", R"(graph @rectangular_eye(%x: $T[3,4,6]) {
  %e = eye : $T[4,6]
  %b = broadcast_to %e {shape=[3,4,6]}
  %y = mul %x, %b
  %w = eye : $T[3,4,6]
  %z = sub %y, %w
  return %z
})");
  add("sources_views", R"(graph @views(%x: $T[16], %y: $T[2,8], %v: $T[6,4,5]) {
  %e = eye : $T[4,4]
  %ef = reshape %e {shape=[16]}
  %a = add %x, %ef
  %er = reshape %e {shape=[2,8]}
  %b = mul %y, %er
  %i = iota {axis=1} : $T[4,5]
  %ir = reshape %i {shape=[1,4,5]}
  %ib = broadcast_to %ir {shape=[6,4,5]}
  %j = iota {axis=0} : $T[6,1,1]
  %jb = broadcast_to %j {shape=[6,4,5]}
  %k = mul %ib, %jb
  %c = add %v, %k
  return %a, %b, %c
})");
  add("sources_reductions", R"(graph @reductions(%x: $T[6,9]) {
  %e = eye : $T[6,9]
  %xe = mul %x, %e
  %d = sum %xe {axes=[1]}
  %i = iota {axis=0} : $T[6]
  %di = add %d, %i
  %c = iota {axis=0} : $T[6,9]
  %xc = mul %x, %c
  %m = max %xc {axes=[0], keepdims}
  %mb = broadcast_to %m {shape=[6,9]}
  %r = iota {axis=1} : $T[6,9]
  %t = sub %mb, %r
  return %di, %t
})");
  add("sources_integers", R"(graph @integers(%x: i32[5,6], %p: $T[5,6]) {
  %i = iota {axis=1} : i32[5,6]
  %e = eye : i64[5,6]
  %ec = cast %e {dtype=i32}
  %s = add %i, %ec
  %y = mul %x, %s
  %h = full {value=2.75} : i32[5,6]
  %z = add %y, %h
  %one = constant {value=[-1.5]} : $T[1]
  %ob = broadcast_to %one {shape=[5,6]}
  %on = full {value=1.0} : bool[5,6]
  %q = select %on, %ob, %p
  return %z, %q
})");
  add("sources_diagonal_sums", R"(graph @diagonal_sums(%x: $T[64,32,32]) {
  %e = eye : $T[64,32,32]
  %xe = mul %x, %e
  %d = sum %xe {axes=[2]}
  return %d
})");
  add("sources_long_rows", R"(graph @long_rows(%x: $T[3,5000]) {
  %i = iota {axis=1} : $T[1,5000]
  %ib = broadcast_to %i {shape=[3,5000]}
  %r = iota {axis=0} : $T[3,1]
  %rb = broadcast_to %r {shape=[3,5000]}
  %w = mul %x, %ib
  %v = add %w, %rb
  %s = sum %v {axes=[1]}
  return %s
})");
  add("sources_columns", R"(graph @columns(%x: $T[40,40]) {
  %e = eye : $T[40,40]
  %xe = add %x, %e
  %m = max %xe {axes=[0], keepdims}
  %mb = broadcast_to %m {shape=[40,40]}
  %y = sub %mb, %e
  return %y
})");
  return cases;
}

/// The cases, with floats of type `dtype` ("f32" or "f64").
inline std::vector<KernelCase> kernelCases(llvm::StringRef dtype) {
  std::vector<KernelCase> cases;
  auto add = [&](std::string name, const std::string& text) {
    cases.push_back({std::move(name), withType(text, dtype)});
  };
  cases.push_back({"w3_chain", bench::chainGraph(1003, dtype.str().c_str())});
  add("broadcast_rows_cols", R"(graph @bc(%x: $T[37,53], %b: $T[53], %c: $T[37,1]) {
  %bb = broadcast_to %b {shape=[37,53]}
  %cb = broadcast_to %c {shape=[37,53]}
  %y = mul %x, %bb
  %z = add %y, %cb
  %e = exp %z
  return %e
})");
  add("broadcast_middle", R"(graph @bm(%x: $T[4,5,6], %m: $T[4,1,6], %s: $T[5,1]) {
  %mb = broadcast_to %m {shape=[4,5,6]}
  %sb = broadcast_to %s {shape=[4,5,6]}
  %d = sub %x, %mb
  %y = mul %d, %sb
  return %y
})");
  add("reshape_add", R"(graph @ra(%x: $T[6,4], %y: $T[24]) {
  %r = reshape %y {shape=[6,4]}
  %z = add %x, %r
  %n = neg %z
  return %n, %z
})");
  // Values read transposed: tiles through shared memory (edges of partial tiles, a
  // batch axis, an axis between the tiled ones, a value read both ways, sources at
  // the points), and too short an axis to tile, read directly.
  add("transpose_edges", R"(graph @te(%x: $T[37,53], %y: $T[53,37]) {
  %t = transpose %y {perm=[1,0]}
  %e = exp %t
  %z = add %x, %e
  return %z
})");
  add("transpose_batched", R"(graph @tb(%x: $T[3,40,70], %y: $T[3,70,40], %b: $T[70]) {
  %t = transpose %y {perm=[0,2,1]}
  %d = sub %x, %t
  %bb = broadcast_to %b {shape=[3,40,70]}
  %z = mul %d, %bb
  %e = tanh %z
  return %e, %d
})");
  add("transpose_outer_axes", R"(graph @to(%x: $T[33,3,20], %y: $T[20,3,33]) {
  %t = transpose %y {perm=[2,1,0]}
  %i = iota {axis=2} : $T[33,3,20]
  %s = mul %t, %i
  %z = add %x, %s
  return %z
})");
  add("transpose_self", R"(graph @ts(%x: $T[64,64], %y: $T[64,64]) {
  %t = transpose %x {perm=[1,0]}
  %s = add %x, %t
  %h = mul %s, %y
  %u = transpose %y {perm=[1,0]}
  %d = sub %h, %u
  return %d
})");
  add("transpose_short_axis", R"(graph @tsa(%x: $T[4,1000], %y: $T[1000,4]) {
  %e = exp %y
  %t = transpose %e {perm=[1,0]}
  %z = mul %x, %t
  return %z
})");
  for (const char* op : {"neg",     "abs",   "sign",   "exp",        "log",  "log1p", "expm1",
                         "sqrt",    "rsqrt", "square", "reciprocal", "sin",  "cos",   "tanh",
                         "sigmoid", "relu",  "erf",    "floor",      "ceil", "round"})
    add(fmt::format("unary_{}", op),
        fmt::format("graph @u(%x: $T[1031]) {{\n  %y = {} %x\n  return %y\n}}", op));
  for (const char* op :
       {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "atan2", "remainder"})
    add(fmt::format("binary_{}", op),
        fmt::format("graph @b(%x: $T[1031], %y: $T[1031]) {{\n  %z = {} %x, %y\n  return %z\n}}",
                    op));
  add("pow_positive_base", R"(graph @pp(%p: $T[777], %y: $T[777]) {
  %z = pow %p, %y
  return %z
})");
  add("compare_logical_select", R"(graph @cls(%tx: $T[1000], %ty: $T[1000], %z: $T[1000]) {
  %eq = eq %tx, %ty
  %ne = ne %tx, %ty
  %lt = lt %tx, %ty
  %le = le %tx, %ty
  %gt = gt %tx, %z
  %ge = ge %tx, %z
  %a = and %lt, %gt
  %o = or %eq, %ge
  %n = not %a
  %s = select %n, %tx, %z
  return %eq, %ne, %le, %o, %s
})");
  add("nan_propagation", R"(graph @nan(%qx: $T[999], %qy: $T[999]) {
  %mx = maximum %qx, %qy
  %mn = minimum %qx, %qy
  %r = relu %qx
  %s = sign %qy
  %lt = lt %qx, %qy
  return %mx, %mn, %r, %s, %lt
})");
  add("casts", R"(graph @casts(%x: $T[513]) {
  %s = mul %x, %x
  %i = cast %x {dtype=i32}
  %l = cast %s {dtype=i64}
  %b = cast %x {dtype=bool}
  %f = cast %b {dtype=$T}
  %d = cast %i {dtype=f64}
  %h = cast %x {dtype=f32}
  return %i, %l, %b, %f, %d, %h
})");
  for (const char* it : {"i32", "i64"}) {
    auto addInt = [&](std::string name, const char* text) {
      std::string t = text;
      for (size_t at = t.find("$I"); at != std::string::npos; at = t.find("$I", at))
        t.replace(at, 2, it);
      add(fmt::format("{}_{}", name, it), t);
    };
    addInt("integer_ops", R"(graph @ints(%a: $I[1001], %nb: $I[1001], %e: $I[1001]) {
  %add = add %a, %nb
  %sub = sub %a, %nb
  %mul = mul %a, %nb
  %div = div %a, %nb
  %rem = remainder %a, %nb
  %pow = pow %a, %e
  %mx = maximum %a, %nb
  %mn = minimum %a, %nb
  %neg = neg %a
  %abs = abs %a
  %sg = sign %a
  %sq = square %a
  %re = relu %a
  %lt = lt %a, %nb
  %fl = cast %a {dtype=$T}
  return %add, %sub, %mul, %div, %rem, %pow, %mx, %mn, %neg, %abs, %sg, %sq, %re, %lt, %fl
})");
    addInt("integer_reductions_wrap", R"(graph @wrap(%a: $I[64,1000]) {
  %q = mul %a, %a
  %r = mul %q, %q
  %c = mul %r, %a
  %s = sum %c {axes=[1]}
  %p = prod %a {axes=[1]}
  %m = max %c {axes=[1]}
  %am = argmin %c {axes=[1]}
  return %s, %p, %m, %am
})");
  }
  struct Shape {
    const char* name;
    const char* shape;
    const char* axes;
    const char* tail; // ", keepdims" or ""
  };
  const Shape shapes[] = {
      {"rows", "67,300", "1", ""},                 // warp per segment
      {"short_rows", "100,8", "1", ""},            // thread per segment, contiguous
      {"long_rows", "13,5000", "1", ", keepdims"}, // block per segment
      {"very_long_rows", "3,20000", "1", ""},      // block of 1024
      {"columns", "300,67", "0", ", keepdims"},    // leading axis: thread per segment
      {"middle", "5,7,11", "1", ""},
      {"outer_two", "5,7,11", "0,2", ""},              // argmax flattened over two axes
      {"all", "1000,37", "0,1", ""},                   // one segment
      {"even_rows", "40,512", "1", ""},                // warp per segment, as many points per lane
      {"even_long_rows", "5,4096", "1", ", keepdims"}, // the same, a block per segment
  };
  for (const char* op : {"sum", "mean", "var", "max", "min", "prod", "argmax", "argmin"})
    for (const Shape& s : shapes) {
      bool prod = std::string(op) == "prod";
      add(fmt::format("{}_{}", op, s.name),
          fmt::format("graph @r(%{}: $T[{}]) {{\n  %r = {} %{} {{axes=[{}]{}}}\n  return %r\n}}",
                      prod ? "p" : "x", s.shape, op, prod ? "p" : "x", s.axes, s.tail));
    }
  add("argmax_ties_nan", R"(graph @ties(%tx: $T[40,50], %qy: $T[40,50]) {
  %a = argmax %tx {axes=[1]}
  %b = argmin %tx {axes=[0]}
  %c = argmax %qy {axes=[1], keepdims}
  %d = argmin %qy {axes=[0,1]}
  return %a, %b, %c, %d
})");
  add("max_ties_nan", R"(graph @mt(%qx: $T[40,50]) {
  %a = max %qx {axes=[1]}
  %b = min %qx {axes=[0]}
  return %a, %b
})");
  add("layernorm", R"(graph @ln(%x: $T[67,300], %g: $T[300], %b: $T[300]) {
  %m = mean %x {axes=[1], keepdims}
  %mb = broadcast_to %m {shape=[67,300]}
  %xc = sub %x, %mb
  %sq = square %xc
  %v = mean %sq {axes=[1], keepdims}
  %eps = full {value=0.00001} : $T[67,1]
  %ve = add %v, %eps
  %rs = rsqrt %ve
  %rsb = broadcast_to %rs {shape=[67,300]}
  %n = mul %xc, %rsb
  %gb = broadcast_to %g {shape=[67,300]}
  %bb = broadcast_to %b {shape=[67,300]}
  %s = mul %n, %gb
  %out = add %s, %bb
  return %out
})");
  // Layernorms scaled by g, of rows whose lanes hold equal counts (W4's kernel at 16
  // rows) or not: the variance as var (then an output too) or written out.
  for (auto [name, rows, cols, var] : {std::tuple{"layernorm_var", 16, 4096, true},
                                       std::tuple{"layernorm_long_rows", 9, 4100, false}})
    add(name, fmt::format(R"(graph @lns(%x: $T[{0},{1}], %g: $T[{1}]) {{
  %m = mean %x {{axes=[1], keepdims}}
  %mb = broadcast_to %m {{shape=[{0},{1}]}}
  %xc = sub %x, %mb
{2}
  %eps = full {{value=0.00001}} : $T[{0},1]
  %ve = add %v, %eps
  %rs = rsqrt %ve
  %rsb = broadcast_to %rs {{shape=[{0},{1}]}}
  %n = mul %xc, %rsb
  %gb = broadcast_to %g {{shape=[{0},{1}]}}
  %out = mul %n, %gb
  return %out{3}
}})",
                          rows, cols,
                          var ? "  %v = var %x {axes=[1], keepdims}"
                              : "  %sq = square %xc\n  %v = mean %sq {axes=[1], keepdims}",
                          var ? ", %v" : ""));
  add("norm_reduced_epilogue", R"(graph @norm(%x: $T[16,32]) {
  %q = square %x
  %s = sum %q {axes=[1]}
  %e = full {value=1e-06} : $T[16]
  %se = add %s, %e
  %n = sqrt %se
  return %n
})");
  add("softmax", R"(graph @softmax(%x: $T[50,70]) {
  %m = max %x {axes=[1], keepdims}
  %mb = broadcast_to %m {shape=[50,70]}
  %d = sub %x, %mb
  %e = exp %d
  %s = sum %e {axes=[1], keepdims}
  %sb = broadcast_to %s {shape=[50,70]}
  %y = div %e, %sb
  return %y
})");
  add("center_columns_two_outputs", R"(graph @cc(%x: $T[300,67]) {
  %m = mean %x {axes=[0], keepdims}
  %mb = broadcast_to %m {shape=[300,67]}
  %d = sub %x, %mb
  return %m, %d
})");
  add("siblings", R"(graph @sib(%x: $T[33,3000]) {
  %e = exp %x
  %s = sum %e {axes=[1]}
  %m = max %x {axes=[1]}
  %a = argmin %x {axes=[1]}
  return %s, %m, %a
})");
  add("middle_axis_epilogue", R"(graph @mae(%x: $T[6,50,7]) {
  %s = sum %x {axes=[1], keepdims}
  %sb = broadcast_to %s {shape=[6,50,7]}
  %y = mul %x, %sb
  return %y
})");
  add("scalar_sum", R"(graph @ss(%x: $T[77]) {
  %s = sum %x {axes=[0]}
  return %s
})");
  for (KernelCase& c : computedSourceCases(dtype))
    cases.push_back(std::move(c));
  return cases;
}

/// A graph whose whole body is one kernel of several reduction stages (see
/// wholeKernel), with the stage count and launch form its kernel should have.
struct MultiStageCase {
  std::string name;
  std::string text;
  int stages;
  const char* launch; ///< codegen::launchName of the kernel's launch form
};

/// Layernorm over axis `axis` (0 or 1) of $T[rows,cols]: mean, then variance (two
/// stages), then (x - m) * rsqrt(v + eps) * g + b.
inline std::string layernormText(int64_t rows, int64_t cols, int axis) {
  std::string x = fmt::format("{},{}", rows, cols);
  std::string m = axis == 1 ? fmt::format("{},1", rows) : fmt::format("1,{}", cols);
  std::string g = axis == 1 ? fmt::format("{}", cols) : fmt::format("{},1", rows);
  return fmt::format(R"(graph @ln(%x: $T[{0}], %g: $T[{2}], %b: $T[{2}]) {{
  %m = mean %x {{axes=[{3}], keepdims}}
  %mb = broadcast_to %m {{shape=[{0}]}}
  %xc = sub %x, %mb
  %sq = square %xc
  %v = mean %sq {{axes=[{3}], keepdims}}
  %eps = full {{value=0.00001}} : $T[{1}]
  %ve = add %v, %eps
  %rs = rsqrt %ve
  %rsb = broadcast_to %rs {{shape=[{0}]}}
  %n = mul %xc, %rsb
  %gb = broadcast_to %g {{shape=[{0}]}}
  %bb = broadcast_to %b {{shape=[{0}]}}
  %s = mul %n, %gb
  %out = add %s, %bb
  return %out
}})",
                     x, m, g, axis);
}

/// Softmax over the rows of $T[rows,cols]: the max, then the sum of exponentials.
inline std::string softmaxText(int64_t rows, int64_t cols) {
  return fmt::format(R"(graph @sm(%x: $T[{0},{1}]) {{
  %m = max %x {{axes=[1], keepdims}}
  %mb = broadcast_to %m {{shape=[{0},{1}]}}
  %d = sub %x, %mb
  %e = exp %d
  %s = sum %e {{axes=[1], keepdims}}
  %sb = broadcast_to %s {{shape=[{0},{1}]}}
  %y = div %e, %sb
  return %y
}})",
                     rows, cols);
}

/// logsumexp over the rows of $T[rows,cols]: softmax's max and sum, then
/// log(sum) + max.
inline std::string logSumExpText(int64_t rows, int64_t cols) {
  std::string text = softmaxText(rows, cols);
  return text.substr(0, text.find("  %sb = ")) + "  %l = log %s\n  %r = add %l, %m\n  return %r\n}";
}

/// Row normalization of $T[rows,cols]: (x - mean) / sqrt(var) over each row.
inline std::string rowNormText(int64_t rows, int64_t cols) {
  return fmt::format(R"(graph @rn(%x: $T[{0},{1}]) {{
  %m = mean %x {{axes=[1], keepdims}}
  %v = var %x {{axes=[1], keepdims}}
  %s = sqrt %v
  %mb = broadcast_to %m {{shape=[{0},{1}]}}
  %sb = broadcast_to %s {{shape=[{0},{1}]}}
  %c = sub %x, %mb
  %y = div %c, %sb
  return %y
}})",
                     rows, cols);
}

/// Three stages over the rows of $T[rows,cols]: the mean; the variance and the
/// largest deviation (siblings); the kurtosis of the standardized row. Domain and
/// reduced outputs of different stages.
inline std::string threeStageText(int64_t rows, int64_t cols) {
  return fmt::format(R"(graph @three(%x: $T[{0},{1}]) {{
  %m = mean %x {{axes=[1], keepdims}}
  %mb = broadcast_to %m {{shape=[{0},{1}]}}
  %d = sub %x, %mb
  %q = square %d
  %v = mean %q {{axes=[1], keepdims}}
  %ad = abs %d
  %a = max %ad {{axes=[1], keepdims}}
  %eps = full {{value=0.00001}} : $T[{0},1]
  %ve = add %v, %eps
  %rs = rsqrt %ve
  %rsb = broadcast_to %rs {{shape=[{0},{1}]}}
  %z = mul %d, %rsb
  %z2 = square %z
  %z4 = square %z2
  %k = mean %z4 {{axes=[1], keepdims}}
  %r = div %k, %a
  %rb = broadcast_to %r {{shape=[{0},{1}]}}
  %out = mul %z, %rb
  return %out, %r, %v
}})",
                     rows, cols);
}

/// Two stages over the rows of $T[rows,cols] reading two rows, x and y, in each
/// stage and the output pass: rows cached for two inputs.
inline std::string twoRowsText(int64_t rows, int64_t cols) {
  return fmt::format(R"(graph @two(%x: $T[{0},{1}], %y: $T[{0},{1}]) {{
  %d = mul %x, %y
  %m = mean %d {{axes=[1], keepdims}}
  %mb = broadcast_to %m {{shape=[{0},{1}]}}
  %c = sub %x, %mb
  %q = mul %c, %y
  %v = max %q {{axes=[1], keepdims}}
  %vb = broadcast_to %v {{shape=[{0},{1}]}}
  %r = sub %c, %vb
  %out = add %r, %y
  return %out
}})",
                     rows, cols);
}

/// Reduced outputs only, over the rows of $T[rows,cols], read three times: the max,
/// the sum of exp(x - max) and the variance (two passes). A block over rows in shared
/// memory has no output pass to copy its next row in during: it copies it after the
/// row.
inline std::string reducedOnlyText(int64_t rows, int64_t cols) {
  std::string text = softmaxText(rows, cols);
  return text.substr(0, text.find("  %sb = ")) +
         "  %v = var %x {axes=[1], keepdims}\n  return %m, %s, %v\n}";
}

/// The multi-stage cases, with floats of type `dtype`: every launch form, rows
/// cached in registers and (on a device with 227 KB of shared memory a block: f32
/// rows past 16384 points, f64 up to 29000) in shared memory.
inline std::vector<MultiStageCase> multiStageCases(llvm::StringRef dtype) {
  std::vector<MultiStageCase> cases;
  auto add = [&](std::string name, const std::string& text, int stages, const char* launch) {
    cases.push_back({std::move(name), withType(text, dtype), stages, launch});
  };
  add("layernorm_37", layernormText(64, 37, 1), 2, "warp-per-segment");
  add("layernorm_1000", layernormText(40, 1000, 1), 2, "warp-per-segment");
  add("layernorm_5000", layernormText(13, 5000, 1), 2, "block-per-segment");
  add("layernorm_20000", layernormText(3, 20000, 1), 2, "block-per-segment");
  add("layernorm_short_rows", layernormText(100, 8, 1), 2, "thread-per-segment");
  add("layernorm_columns", layernormText(300, 67, 0), 2, "thread-per-segment");
  add("softmax_70", softmaxText(50, 70), 2, "warp-per-segment");
  add("softmax_3000", softmaxText(7, 3000), 2, "block-per-segment");
  add("softmax_short_rows", softmaxText(90, 5), 2, "thread-per-segment");
  add("three_stages_500", threeStageText(20, 500), 3, "warp-per-segment");
  add("three_stages_4100", threeStageText(5, 4100), 3, "block-per-segment");
  add("three_stages_short_rows", threeStageText(70, 12), 3, "thread-per-segment");
  add("softmax_50257", softmaxText(3, 50257), 2, "block-per-segment");
  add("three_stages_30001", threeStageText(3, 30001), 3, "block-per-segment");
  add("two_rows_20001", twoRowsText(5, 20001), 2, "block-per-segment");
  return cases;
}

/// The kernel of every node of `g` that its outputs need, sources aside (they
/// become inputs), in graph order, writing `g`'s outputs: a whole layernorm as one
/// kernel, whether or not passes/Fusion groups it so.
inline std::variant<codegen::Kernel, std::string> wholeKernel(const ir::Graph& g) {
  std::vector<const ir::Node*> work;
  for (ir::Value v : g.outputs())
    work.push_back(v.node);
  std::set<const ir::Node*> seen;
  while (!work.empty()) {
    const ir::Node* n = work.back();
    work.pop_back();
    if (!seen.insert(n).second)
      continue;
    for (ir::Value v : n->operands())
      work.push_back(v.node);
  }
  std::vector<const ir::Node*> nodes;
  for (const ir::Node* n : g.nodes())
    if (seen.count(n) && n->kind() != ir::OpKind::Source)
      nodes.push_back(n);
  return codegen::buildKernel(nodes,
                              std::vector<ir::Value>(g.outputs().begin(), g.outputs().end()));
}

/// The kernels of `g`'s lowered program that build (kernel steps that are not a
/// lone data-movement node); `failed` counts the kernel steps that do not. The
/// kernels point into `g`: keep it alive while they are used.
inline std::vector<codegen::Kernel> kernelsOf(const ir::Graph& g, int* failed = nullptr) {
  passes::Program p = passes::lowerToProgram(g);
  std::vector<codegen::Kernel> out;
  for (const passes::Step& s : p.steps()) {
    if (s.kind != passes::Step::Kind::Kernel || passes::isDataMovement(s.nodes))
      continue;
    auto k = codegen::buildKernel(s.nodes, s.outputs);
    if (auto* kernel = std::get_if<codegen::Kernel>(&k))
      out.push_back(std::move(*kernel));
    else if (failed)
      ++*failed;
  }
  return out;
}

} // namespace graphc::testing
