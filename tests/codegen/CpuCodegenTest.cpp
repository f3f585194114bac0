//===- tests/codegen/CpuCodegenTest.cpp - Compiled kernels vs the interpreter ===//
//
// Every kernel of tests/codegen/KernelCases.h and of every fusion golden case
// (tests/support/GraphFiles.h), in f32 and f64, compiled for the host
// (runtime/cpu/CompiledKernel.h) and run on random inputs against the interpreter
// on the same inputs: kernels without a reduction exactly (NaN where NaN), with
// one, or with exp, log, tanh, ... (the kernels' own: CpuMathTest.cpp), within a
// few ulp (the compiled sums are reassociated); the golden graphs also
// whole against the unfused reference backend. Also: f32 sums of 10^6 to 1.6 * 10^7
// elements on every axis against a float64 sum, in-place outputs, outputs written
// in strips over a short outer axis, the integer
// error messages, GRAPHC_CPU_KERNELS, and the memory and disk caches (a corrupted
// entry is compiled again).
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"
#include "runtime/Backends.h"
#include "runtime/cpu/CompiledKernel.h"
#include "runtime/cpu/FusedKernel.h"
#include "runtime/cpu/HostJit.h"
#include "support/DiskCache.h"
#include "support/GraphFiles.h"
#include "support/Numeric.h"
#include "tests/codegen/ElementwiseReference.h"
#include "tests/codegen/KernelCases.h"
#include "tests/codegen/KernelInputs.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace graphc {
namespace {

using codegen::Kernel;
using cpu::FusedKernel;
using cpu::HostJit;
using cpu::KernelMode;
using testing::HostArray;

/// Random inputs for `k` (kinds by parameter name, as the GPU tests choose them).
std::vector<HostArray> inputsFor(const Kernel& k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<HostArray> inputs;
  for (const ir::Value& v : k.inputs) {
    const ir::Node& n = *v.node;
    char kind = n.op() == ir::Op::Parameter      ? testing::inputKind(n.attrs().getStr("name"))
                : n.kind() == ir::OpKind::Source ? 'p'
                                                 : testing::inputKind(n.name());
    inputs.push_back(testing::randomArray(v.type(), kind, rng));
  }
  return inputs;
}

/// The outputs of `fk` on copies of `inputs`, output 0 over input `inPlaceOf` where
/// that is >= 0; `error` gets the message of a graphc::Error.
std::vector<HostArray> run(const FusedKernel& fk, std::vector<HostArray> inputs,
                           std::string* error = nullptr, int inPlaceOf = -1) {
  const Kernel& k = fk.kernel();
  std::vector<HostArray> outputs;
  for (const codegen::KernelOutput& o : k.outputs)
    outputs.emplace_back(k.insts[o.inst].dtype, o.value.type().numel());
  std::vector<const void*> in;
  std::vector<void*> out;
  for (HostArray& a : inputs)
    in.push_back(a.data());
  for (size_t o = 0; o < outputs.size(); ++o)
    out.push_back(o == 0 && inPlaceOf >= 0 ? inputs[inPlaceOf].data() : outputs[o].data());
  try {
    fk.run(in, out);
  } catch (const Error& e) {
    if (!error)
      throw;
    *error = e.message();
  }
  if (inPlaceOf >= 0)
    std::memcpy(outputs[0].data(), inputs[inPlaceOf].data(), outputs[0].bytes());
  return outputs;
}

/// Whether `k` computes an op that compiled kernels evaluate with their own code
/// (codegen/LlvmMath.h) and the interpreter with the C library's.
bool usesInlineMath(const Kernel& k) {
  for (const codegen::Inst& inst : k.insts)
    if (inst.kind == codegen::Inst::Kind::Compute)
      switch (inst.node->op()) {
      case ir::Op::Exp:
      case ir::Op::Log:
      case ir::Op::Expm1:
      case ir::Op::Log1p:
      case ir::Op::Tanh:
      case ir::Op::Sigmoid:
        return true;
      default:
        break;
      }
  return false;
}

/// Runs `k` compiled and interpreted on the same random inputs and compares.
void expectSameAsInterpreter(const Kernel& k, const std::string& what, uint64_t seed,
                             int inPlaceOf = -1) {
  SCOPED_TRACE(what);
  FusedKernel compiled(k, KernelMode::Compile), interpreted(k, KernelMode::Interpret);
  ASSERT_NE(compiled.compiled(), nullptr);
  ASSERT_EQ(interpreted.compiled(), nullptr);
  std::vector<HostArray> inputs = inputsFor(k, seed);
  std::string gotError, wantError;
  std::vector<HostArray> got = run(compiled, inputs, &gotError, inPlaceOf);
  std::vector<HostArray> want = run(interpreted, inputs, &wantError, inPlaceOf);
  ASSERT_EQ(gotError, wantError);
  if (!wantError.empty())
    return;
  for (size_t o = 0; o < want.size(); ++o) {
    bool f32 = got[o].dtype == ir::DType::F32;
    bool close = (k.hasReduction() || usesInlineMath(k)) && ir::isFloat(got[o].dtype);
    double rtol = !close ? 0 : f32 ? 1e-5 : 1e-12, atol = !close ? 0 : f32 ? 1e-6 : 1e-13;
    int reported = 0;
    for (int64_t i = 0; i < got[o].numel; ++i) {
      double g = got[o].at(i), w = want[o].at(i);
      bool ok = (std::isnan(g) && std::isnan(w)) || g == w ||
                std::abs(g - w) <= atol + rtol * std::abs(w);
      if (!ok && reported++ < 5)
        ADD_FAILURE() << "output " << o << " element " << i << ": compiled " << g
                      << ", interpreted " << w << "\n"
                      << codegen::printKernel(k) << compiled.compiled()->code().ir;
    }
  }
}

/// Parses `text`; the graph lives to the end of the tests (kernels point into it).
const ir::Graph& parsed(const std::string& text, const std::string& name) {
  static std::vector<std::unique_ptr<ir::Graph>> graphs;
  graphs.push_back(ir::parseGraph(text, name));
  return *graphs.back();
}

TEST(CpuCodegen, EveryKernelCaseMatchesTheInterpreter) {
  int kernels = 0;
  for (const char* dtype : {"f32", "f64"})
    for (const testing::KernelCase& c : testing::kernelCases(dtype)) {
      int failed = 0;
      std::vector<Kernel> ks = testing::kernelsOf(parsed(c.text, c.name), &failed);
      EXPECT_EQ(failed, 0) << c.name;
      for (size_t i = 0; i < ks.size(); ++i, ++kernels)
        expectSameAsInterpreter(ks[i], fmt::format("{} {} kernel {}", c.name, dtype, i), 7 + i);
    }
  EXPECT_GE(kernels, 200);
}

TEST(CpuCodegen, EveryElementwiseOpMatchesAnF64Reference) {
  std::vector<testing::ElementwiseCase> cases = testing::elementwiseCases(4099);
  for (const testing::ElementwiseCase& c : cases) {
    std::vector<HostArray> inputs = testing::elementwiseInputs(c);
    FusedKernel interpreted(c.kernel, KernelMode::Interpret),
        compiled(c.kernel, KernelMode::Compile);
    ASSERT_NE(compiled.compiled(), nullptr) << c.name;
    EXPECT_EQ(testing::checkElementwise(c, inputs, run(interpreted, inputs)[0], "interpreter"), 0);
    EXPECT_EQ(testing::checkElementwise(c, inputs, run(compiled, inputs)[0], "cpu jit"), 0);
  }
  EXPECT_GE(cases.size(), 130u);
}

TEST(CpuCodegen, MultiStageKernelsMatchTheInterpreter) {
  for (const char* dtype : {"f32", "f64"})
    for (const testing::MultiStageCase& c : testing::multiStageCases(dtype)) {
      auto k = testing::wholeKernel(parsed(c.text, c.name));
      ASSERT_TRUE(std::holds_alternative<Kernel>(k)) << c.name;
      EXPECT_EQ(std::get<Kernel>(k).stages(), c.stages) << c.name;
      expectSameAsInterpreter(std::get<Kernel>(k), fmt::format("{} {}", c.name, dtype), 3);
    }
}

TEST(CpuCodegen, EveryGoldenFusionGroupCompilesAndMatches) {
  int groups = 0, graphs = 0;
  for (const std::string& file : testing::kFusionGoldenFiles)
    for (bool f32 : {false, true}) {
      std::string text = testing::readSourceFile(file);
      for (auto& g : testing::graphsOf(f32 ? testing::toF32(text) : text, file)) {
        SCOPED_TRACE(fmt::format("{} @{} {}", file, g->name(), f32 ? "f32" : "f64"));
        for (const Kernel& k : testing::kernelsOf(*g)) {
          expectSameAsInterpreter(k, fmt::format("group {}", groups), 11 + groups);
          ++groups;
        }
        // The whole graph, fused and compiled, against the unfused reference.
        std::vector<Array> inputs = testing::randomInputs(*g, 5 + graphs++);
        std::vector<Array> got = getBackend("cpu").compile(*g)->run(inputs);
        std::vector<Array> want = getBackend("cpu-unfused").compile(*g)->run(inputs);
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) // by the output's type (the file's may be f32)
          EXPECT_LE(testing::relativeDifference(got[i], want[i]),
                    got[i].dtype() == ir::DType::F32 ? 1e-5 : 1e-12)
              << "output " << i;
      }
    }
  EXPECT_GE(graphs, 40);
  EXPECT_GE(groups, graphs);
}

/// sum (and mean) of f32 uniform [0, 1) values of `shape` over `axes` against a
/// float64 sum of the same values: within an f32 rounding of the result.
void expectAccurateSum(const ir::Shape& shape, const std::vector<int64_t>& axes) {
  std::string where = fmt::format("{} axes {}", ir::shapeString(shape), ir::shapeString(axes));
  SCOPED_TRACE(where);
  Array x = Array::randomUniform(ir::DType::F32, shape, 17, 0.0, 1.0);
  for (const char* op : {"sum", "mean"}) {
    auto g = ir::parseGraph(fmt::format("graph @s(%x: f32{}) {{\n  %r = {} %x {{axes={}}}\n  "
                                        "return %r\n}}",
                                        ir::shapeString(shape), op, ir::shapeString(axes)));
    std::vector<float> sums = getBackend("cpu").compile(*g)->run({x})[0].toVector<float>();
    std::vector<double> got(sums.begin(), sums.end());
    // The float64 reference: each segment's elements summed in C order.
    std::vector<float> v = x.toVector<float>();
    ir::Shape strides = codegen::denseStrides(shape), kept;
    for (size_t a = 0; a < shape.size(); ++a)
      if (std::count(axes.begin(), axes.end(), static_cast<int64_t>(a)) == 0)
        kept.push_back(shape[a]);
    ir::Shape keptStrides = codegen::denseStrides(kept);
    std::vector<double> want(std::max<int64_t>(ir::numElements(kept), 1), 0.0);
    double count = static_cast<double>(ir::numElements(shape)) / want.size();
    for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
      int64_t segment = 0;
      for (size_t a = 0, j = 0; a < shape.size(); ++a) {
        int64_t coord = i / strides[a] % shape[a];
        if (std::count(axes.begin(), axes.end(), static_cast<int64_t>(a)) == 0)
          segment += coord * keptStrides[j++];
      }
      want[segment] += v[i];
    }
    ASSERT_EQ(got.size(), want.size());
    double worst = 0;
    for (size_t s = 0; s < want.size(); ++s) {
      double w = std::string(op) == "mean" ? want[s] / count : want[s];
      worst = std::max(worst, std::abs(got[s] - w) / std::abs(w));
    }
    EXPECT_LE(worst, 1.2e-7) << op; // one rounding to f32 (2^-23)
  }
}

TEST(CpuCodegen, F32SumsOfMillionsOfElementsAreAccurate) {
  expectAccurateSum({16777216}, {0});
  expectAccurateSum({2048, 1024}, {0, 1});
  expectAccurateSum({1024, 1024}, {1});
  expectAccurateSum({1024, 1024}, {0});
  expectAccurateSum({1000000, 4}, {0});
  expectAccurateSum({1000000, 4}, {1});
  expectAccurateSum({100000, 64}, {0});
  expectAccurateSum({100000, 64}, {1});
  expectAccurateSum({4, 1000000}, {1}); // short and wide
  expectAccurateSum({4, 1000000}, {0});
  expectAccurateSum({100, 300, 50}, {1}); // a middle axis
}

const Kernel& kernelOfText(const std::string& text) {
  static std::vector<Kernel> kernels;
  kernels.push_back(testing::kernelsOf(parsed(text, "test.gir")).at(0));
  return kernels.back();
}

TEST(CpuCodegen, OutputsInPlace) {
  const Kernel& k = kernelOfText(bench::chainGraph(300000, "f32"));
  expectSameAsInterpreter(k, "chain over its x", 5, 0);
  const Kernel& ln = kernelOfText(testing::withType(testing::layernormText(64, 3000, 1), "f64"));
  expectSameAsInterpreter(ln, "layernorm over its x", 6, 0);
}

/// `text`'s kernel compiled and interpreted on inputs drawn from a few values with
/// many ties (+-0, +-inf, +-1, 2 and a NaN in 1 of `nanOneIn` for floats, none for
/// 0): every output the same (NaN where NaN; a zero's sign aside).
void expectSameOnTies(const std::string& text, const std::string& what, int nanOneIn = 64) {
  SCOPED_TRACE(what);
  const Kernel& k = kernelOfText(text);
  std::mt19937_64 rng(9);
  const double values[] = {NAN, -0.0, 0.0, INFINITY, -INFINITY, 1, -1, 2};
  std::vector<HostArray> inputs;
  for (const ir::Value& v : k.inputs) {
    HostArray a(v.type().dtype, v.type().numel());
    for (int64_t i = 0; i < a.numel; ++i) {
      double x = nanOneIn && rng() % nanOneIn == 0 ? NAN : values[1 + rng() % 7];
      if (v.type().dtype == ir::DType::F32)
        static_cast<float*>(a.data())[i] = static_cast<float>(x);
      else if (v.type().dtype == ir::DType::F64)
        static_cast<double*>(a.data())[i] = x;
      else // integers: the finite values' ranks
        static_cast<int32_t*>(a.data())[i] = static_cast<int32_t>(rng() % 5) - 2;
    }
    inputs.push_back(std::move(a));
  }
  std::vector<HostArray> got = run(FusedKernel(k, KernelMode::Compile), inputs);
  std::vector<HostArray> want = run(FusedKernel(k, KernelMode::Interpret), inputs);
  for (size_t o = 0; o < want.size(); ++o)
    for (int64_t i = 0, bad = 0; i < want[o].numel && bad < 5; ++i) {
      double g = got[o].at(i), w = want[o].at(i);
      if (!(g == w || (std::isnan(g) && std::isnan(w))) && ++bad)
        ADD_FAILURE() << "output " << o << " element " << i << ": compiled " << g
                      << ", interpreted " << w;
    }
}

// Kernels whose merged outer axis is short (under 16 units) write their outputs
// strip by strip of the innermost axis (codegen/Llvm.cpp: outputStripWidth), the
// strips split over the threads: a broadcast along the short axis and along the
// long one, a last strip shorter than the others, one strip, an axis between the
// strips and the points, and beside them shapes without strips; then outputs
// beside a row reduction (x - max) and a column one (x - mean), in f32 and f64.
TEST(CpuCodegen, ShortOuterAxesWriteOutputsInStrips) {
  struct Case {
    const char *x, *b, *shape;
  };
  const Case cases[] = {
      {"3,100003", "3,1", "3,100003"},         // strips of 4608 points, the last short
      {"3,100003", "100003", "3,100003"},      // the broadcast along the long axis
      {"5,9001", "5,1", "5,9001"},             // strips of the 4096 points at least
      {"2,3,50001", "3,1", "2,3,50001"},       // an axis between the strips and the points
      {"15,8192", "15,1", "15,8192"},          // two strips
      {"16,50000", "16,1", "16,50000"},        // 16 rows: no strips
      {"4,8191", "4,1", "4,8191"},             // rows too short for strips
      {"1,3,1,20000", "3,1,1", "1,3,1,20000"}, // unit axes dropped
  };
  for (const char* t : {"f32", "f64"})
    for (const Case& c : cases) {
      std::string text = fmt::format(R"(graph @g(%x: {0}[{1}], %b: {0}[{2}]) {{
  %bb = broadcast_to %b {{shape=[{3}]}}
  %r = add %x, %bb
  %e = mul %r, %x
  return %e
}})",
                                     t, c.x, c.b, c.shape);
      expectSameAsInterpreter(kernelOfText(text), fmt::format("{} {} + {}", t, c.x, c.b), 11);
    }
  for (const char* t : {"f32", "f64"})
    for (const char* shape : {"3,20001", "7,9000"})
      for (int axis : {0, 1}) {
        const char* op = axis ? "max" : "mean";
        std::string text = fmt::format(R"(graph @g(%x: {0}[{1}]) {{
  %m = {2} %x {{axes=[{3}], keepdims}}
  %b = broadcast_to %m {{shape=[{1}]}}
  %d = sub %x, %b
  return %d, %m
}})",
                                       t, shape, op, axis);
        expectSameAsInterpreter(kernelOfText(text), fmt::format("{} x - {} {}", t, op, shape), 12);
      }
}

// Rows with max, min, argmax and argmin run as two vectorizable loops
// (codegen/Llvm.cpp: extremeRow): ties, NaN, infinities and zeros as the interpreter
// takes them, beside a sum in the same loop, over several reduced axes (the
// accumulator carried across rows), over one long axis split into parts, over rows
// of several blocks (the second loop skipped where a block's extreme does not beat
// the ones before), and in i32.
TEST(CpuCodegen, RowExtremesTakeTiesAndNanAsTheInterpreter) {
  for (const char* t : {"f32", "f64", "i32"}) {
    std::string sum = std::string(t) == "i32" ? "" : "  %s = sum %x {axes=[1]}\n";
    expectSameOnTies(fmt::format("graph @e(%x: {0}[64,40]) {{\n  %a = argmax %x {{axes=[1]}}\n"
                                 "  %m = max %x {{axes=[1]}}\n  %n = argmin %x {{axes=[1]}}\n"
                                 "  %i = min %x {{axes=[1]}}\n{1}  return %a, %m, %n, %i{2}\n}}",
                                 t, sum, sum.empty() ? "" : ", %s"),
                     fmt::format("rows {}", t));
    expectSameOnTies(fmt::format("graph @e(%x: {0}[6,5,33]) {{\n  %a = argmax %x {{axes=[0,2]}}\n"
                                 "  %m = min %x {{axes=[0,2]}}\n  return %a, %m\n}}",
                                 t),
                     fmt::format("axes 0 and 2 {}", t));
    expectSameOnTies(fmt::format("graph @e(%x: {0}[300000]) {{\n  %a = argmin %x {{axes=[0]}}\n"
                                 "  %m = max %x {{axes=[0]}}\n  return %a, %m\n}}",
                                 t),
                     fmt::format("all {}", t));
    // Rows of several blocks (512 points): the first extreme wins over equal ones in
    // later blocks, a NaN in a later block over every number.
    for (int nanOneIn : {0, 2000, 64})
      expectSameOnTies(fmt::format("graph @e(%x: {0}[8,3001]) {{\n  %a = argmax %x {{axes=[1]}}\n"
                                   "  %n = argmin %x {{axes=[1]}}\n  %m = max %x {{axes=[1]}}\n"
                                   "  return %a, %n, %m\n}}",
                                   t),
                       fmt::format("long rows {} NaN in {}", t, nanOneIn), nanOneIn);
  }
}

// Rows of at most 8 points are unrolled and the loop over the rows vectorizes
// (codegen/Llvm.cpp: unrolledRow): ties, NaN, infinities and zeros as the
// interpreter takes them, rows of 1 to 9 points (9: the loop again) over an odd
// number of rows, and under a kept axis with a reduced one outside it.
TEST(CpuCodegen, ShortRowsTakeTiesAndNanAsTheInterpreter) {
  for (const char* t : {"f32", "f64", "i32"}) {
    std::string sum = std::string(t) == "i32" ? "" : "  %s = sum %x {axes=[1]}\n";
    for (int points = 1; points <= 9; ++points)
      expectSameOnTies(fmt::format("graph @e(%x: {0}[1001,{3}]) {{\n  %a = argmax %x {{axes=[1]}}\n"
                                   "  %m = max %x {{axes=[1]}}\n  %n = argmin %x {{axes=[1]}}\n"
                                   "  %i = min %x {{axes=[1]}}\n{1}  return %a, %m, %n, %i{2}\n}}",
                                   t, sum, sum.empty() ? "" : ", %s", points),
                       fmt::format("rows of {} {}", points, t), 5);
    expectSameOnTies(fmt::format("graph @e(%x: {0}[7,5,3]) {{\n  %a = argmax %x {{axes=[0,2]}}\n"
                                 "  %m = min %x {{axes=[0,2]}}\n  return %a, %m\n}}",
                                 t),
                     fmt::format("short rows, axes 0 and 2 {}", t), 5);
  }
}

// Float max and min keep no position (they start at -inf or +inf): over leading
// axes, where the accumulators are the sweep's (rows jammed, a row at a time, in
// strips that finish themselves, in parts of a long axis), ties, NaN (in every
// point, often, never), infinities and zeros as the interpreter takes them,
// beside an argmax that keeps its positions.
TEST(CpuCodegen, ColumnExtremesTakeTiesAndNanAsTheInterpreter) {
  for (const char* t : {"f32", "f64"})
    for (const char* shape : {"4,3001", "301,77", "64,3000", "200001,3"})
      for (int nanOneIn : {0, 7, 1})
        expectSameOnTies(fmt::format("graph @e(%x: {0}[{1}]) {{\n  %m = max %x {{axes=[0]}}\n"
                                     "  %n = min %x {{axes=[0]}}\n  %a = argmax %x {{axes=[0]}}\n"
                                     "  return %m, %n, %a\n}}",
                                     t, shape),
                         fmt::format("columns of {} {} NaN in {}", shape, t, nanOneIn), nanOneIn);
}

TEST(CpuCodegen, IntegerErrorsAreTheInterpreters) {
  const Kernel& k =
      kernelOfText("graph @d(%a: i32[5000], %b: i32[5000]) {\n  %q = div %a, %b\n  return %q\n}");
  std::vector<HostArray> inputs = inputsFor(k, 1);
  static_cast<int32_t*>(inputs[1].data())[4321] = 0;
  std::string error;
  run(FusedKernel(k, KernelMode::Compile), inputs, &error);
  EXPECT_NE(error.find("integer division by zero"), std::string::npos) << error;
  std::string interpreted;
  run(FusedKernel(k, KernelMode::Interpret), inputs, &interpreted);
  EXPECT_EQ(error, interpreted);
}

TEST(CpuCodegen, TheEnvironmentChoosesTheMode) {
  const Kernel& k = kernelOfText("graph @e(%a: f64[10]) {\n  %q = exp %a\n  return %q\n}");
  setenv("GRAPHC_CPU_KERNELS", "interpret", 1);
  EXPECT_EQ(FusedKernel(k).compiled(), nullptr);
  setenv("GRAPHC_CPU_KERNELS", "compile", 1);
  EXPECT_NE(FusedKernel(k).compiled(), nullptr);
  setenv("GRAPHC_CPU_KERNELS", "fast", 1);
  EXPECT_THROW(FusedKernel{k}, Error);
  unsetenv("GRAPHC_CPU_KERNELS");
  EXPECT_NE(FusedKernel(k).compiled(), nullptr);
}

TEST(CpuCodegen, MemoryAndDiskCachesAndACorruptedEntry) {
  HostJit* jit = HostJit::get();
  ASSERT_NE(jit, nullptr);
  std::string saved = jit->diskDir();
  std::string dir = fmt::format("{}/graphc-cpu-cache-test-{}",
                                std::filesystem::temp_directory_path().string(), getpid());
  std::filesystem::remove_all(dir);
  jit->setDiskDir(dir);
  ASSERT_EQ(jit->diskDir(), dir);
  const Kernel& k = kernelOfText(
      "graph @c(%a: f64[777], %b: f64[777]) {\n  %q = atan2 %a, %b\n  %r = cos %q\n  return %r\n}");
  auto counts = [&] { return jit->counts(); };
  HostJit::Counts c0 = counts();
  FusedKernel first(k, KernelMode::Compile);
  EXPECT_EQ(counts().compiled, c0.compiled + 1);
  FusedKernel second(k, KernelMode::Compile);
  EXPECT_EQ(counts().fromMemory, c0.fromMemory + 1);
  std::string path = jit->diskPath(first.compiled()->code().ir);
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  jit->forgetMemory();
  FusedKernel third(k, KernelMode::Compile);
  EXPECT_EQ(counts().fromDisk, c0.fromDisk + 1);
  expectSameAsInterpreter(k, "from disk", 3);
  for (int damage = 0; damage < 2; ++damage) {
    // Truncated, then one byte of the object flipped: compiled again, rewritten.
    std::string bytes = *readWholeFile(path);
    if (damage == 0)
      bytes.resize(bytes.size() / 2);
    else
      bytes[bytes.size() / 2] ^= 0x5a;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    jit->forgetMemory();
    HostJit::Counts before = counts();
    FusedKernel again(k, KernelMode::Compile);
    EXPECT_EQ(counts().compiled, before.compiled + 1);
    expectSameAsInterpreter(k, "recompiled", 4);
    jit->forgetMemory();
    FusedKernel fromDisk(k, KernelMode::Compile);
    EXPECT_EQ(counts().fromDisk, before.fromDisk + 1);
  }
  jit->setDiskDir(saved);
  std::filesystem::remove_all(dir);
}

TEST(CpuCodegen, TheDumpIsReadableIr) {
  const Kernel& k = kernelOfText(testing::withType(
      "graph @r(%x: $T[64,300]) {\n  %r = sum %x {axes=[1]}\n  return %r\n}", "f32"));
  codegen::CpuKernel a = codegen::emitCpu(k, "k"), b = codegen::emitCpu(k, "k");
  EXPECT_EQ(a.ir, b.ir); // deterministic: a cache key
  EXPECT_NE(a.ir.find("define void @k_acc1("), std::string::npos) << a.ir;
  EXPECT_NE(a.ir.find("define void @k_finish1("), std::string::npos) << a.ir;
  EXPECT_NE(a.ir.find("fadd reassoc double"), std::string::npos) << a.ir;
}

} // namespace
} // namespace graphc
