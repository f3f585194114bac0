//===- tests/frontend/ExamplesTest.cpp - The examples and `graphc run` ----===//
//
// examples/enkf.gir is what the DSL's EnKF function traces (structurally equal and
// printed the same), the traced EnKF runs on the CPU backend with the right numbers,
// and `graphc run` runs the checked-in file with random inputs, writing .npy outputs.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"
#include "support/ScratchDir.h"

#include "examples/EnKF.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "runtime/Backends.h"
#include "runtime/core/Compile.h"
#include "runtime/core/Npy.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace graphc {
namespace {

using testing::toDoubles;

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string kEnkfGir = std::string(GRAPHC_SOURCE_DIR) + "/examples/enkf.gir";

/// The checked-in `path` is what the DSL traces as `traced`.
void expectCurrent(const ir::Graph& traced, const std::string& path, const char* regenerate) {
  std::string text = readFile(path);
  ASSERT_FALSE(text.empty()) << path;
  std::unique_ptr<ir::Graph> saved = ir::parseGraph(text, path);
  EXPECT_TRUE(ir::structurallyEqual(traced, *saved))
      << path << " is stale; regenerate with `" << regenerate << "`. Traced:\n"
      << ir::printGraph(traced);
  EXPECT_EQ(ir::printGraph(*saved), ir::printGraph(traced));
}

TEST(Examples, EnkfGirIsWhatTheDslTraces) {
  expectCurrent(*examples::traceEnkf(examples::kEnkfGirSize), kEnkfGir, "example_enkf --emit-gir");
  expectCurrent(*examples::traceEnkfOrig(examples::kEnkfGirSize),
                std::string(GRAPHC_SOURCE_DIR) + "/examples/enkf_orig.gir",
                "example_enkf --orig --emit-gir");
}

TEST(Examples, EnkfUpdateMatchesFloat64Loops) {
  setDefaultBackend("cpu");
  const int64_t d = 4, n = 3;
  Array xi = Array::randomNormal(DType::F64, {d, n}, 1);
  Array y = Array::randomNormal(DType::F64, {d, n}, 2, 0, 10);
  Array obs = Array::randomNormal(DType::F64, {d, 1}, 3, 0, 10);
  Tensor out = examples::enkfUpdate(Tensor(xi), Tensor(y), Tensor(obs));
  // Reference: the same formula with loops and Gaussian elimination, in float64.
  std::vector<double> X = toDoubles(xi), Y = toDoubles(y), O = toDoubles(obs);
  auto centered = [&](std::vector<double> m) {
    for (int64_t i = 0; i < d; ++i) {
      double mu = 0;
      for (int64_t j = 0; j < n; ++j)
        mu += m[i * n + j] / n;
      for (int64_t j = 0; j < n; ++j)
        m[i * n + j] -= mu;
    }
    return m;
  };
  std::vector<double> xc = centered(X), yc = centered(Y), cxy(d * d), s(d * d);
  for (int64_t i = 0; i < d; ++i)
    for (int64_t k = 0; k < d; ++k)
      for (int64_t j = 0; j < n; ++j) {
        cxy[i * d + k] += xc[i * n + j] * yc[k * n + j] / (n - 1);
        s[i * d + k] += yc[i * n + j] * yc[k * n + j] / (n - 1) + (i == k && j == 0 ? 0.1 : 0);
      }
  std::vector<double> z(d * n);
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < n; ++j)
      z[i * n + j] = O[i] - Y[i * n + j];
  for (int64_t c = 0; c < d; ++c) // Gauss-Jordan on [s | z]; s is SPD, no pivoting needed
    for (int64_t r = 0; r < d; ++r) {
      if (r == c)
        continue;
      double f = s[r * d + c] / s[c * d + c];
      for (int64_t k = 0; k < d; ++k)
        s[r * d + k] -= f * s[c * d + k];
      for (int64_t j = 0; j < n; ++j)
        z[r * n + j] -= f * z[c * n + j];
    }
  std::vector<double> want(X);
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t k = 0; k < d; ++k)
        want[i * n + j] += cxy[i * d + k] * z[k * n + j] / s[k * d + k];
  testing::expectClose(out.array(), want, 1e-9);
}

/// At d = N the update goes through the inner N x N system (lower-linalg); in f32 it
/// must stay as close to the graph as written, run in float64 without passes (an LU
/// solve), as f32 allows for this conditioning.
TEST(Examples, EnkfInFloat32MatchesTheUnoptimizedFloat64Graph) {
  const int64_t d = 60, n = 60;
  std::vector<Array> wide = {Array::randomNormal(DType::F64, {d, n}, 4),
                             Array::randomNormal(DType::F64, {d, n}, 5, 0, 10),
                             Array::randomNormal(DType::F64, {d, 1}, 6, 0, 10)};
  std::vector<Array> single;
  for (const Array& a : wide) {
    std::vector<double> v = toDoubles(a);
    single.push_back(Array::fromVector(std::vector<float>(v.begin(), v.end()), a.shape()));
  }
  Backend& cpu = getBackend("cpu");
  Array want = compile(*examples::traceEnkf(d, n, DType::F64), cpu, {"none"})->run(wide)[0];
  Array got = compile(*examples::traceEnkf(d, n, DType::F32), cpu)->run(single)[0];
  testing::expectClose(got, toDoubles(want), 1e-3);
}

/// Runs `graphc args` through the shell; returns the exit status and stdout+stderr.
std::pair<int, std::string> runGraphc(const std::string& args) {
  std::string cmd = std::string(GRAPHC_TOOL_PATH) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe))
    out.append(buf, n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(GraphcRun, RunsEnkfGirWithRandomInputs) {
  testing::ScratchDir scratch("run-out");
  const std::string dir = scratch.path().string();
  auto [status, out] = runGraphc("run " + kEnkfGir +
                                 " --backend cpu --random-inputs --seed 7 --repeat 3"
                                 " --output-dir " +
                                 dir);
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("@enkf on cpu"), std::string::npos) << out;
  EXPECT_NE(out.find("median of 3"), std::string::npos) << out;
  EXPECT_NE(out.find("out0: f64[6,6]"), std::string::npos) << out;
  Array written = readNpy(dir + "/enkf_out0.npy");
  EXPECT_EQ(written.type(), TensorType(DType::F64, {6, 6}));

  // The same inputs given as files give the same output.
  const ir::TensorType types[] = {TensorType(DType::F64, {6, 6}), TensorType(DType::F64, {6, 6}),
                                  TensorType(DType::F64, {6, 1})};
  const char* names[] = {"xi", "y", "obs"};
  std::string inputs;
  std::vector<Array> arrays;
  for (int i = 0; i < 3; ++i) {
    arrays.push_back(Array::randomNormal(DType::F64, types[i].shape, 100 + i));
    std::string path = dir + "/" + names[i] + ".npy";
    writeNpy(path, arrays.back());
    inputs += fmt::format(" --input {}={}", names[i], path);
  }
  auto [status2, out2] =
      runGraphc("run " + kEnkfGir + " --backend cpu --output-dir " + dir + "/files" + inputs);
  ASSERT_EQ(status2, 0) << out2;
  setDefaultBackend("cpu");
  Tensor want = examples::enkfUpdate(Tensor(arrays[0]), Tensor(arrays[1]), Tensor(arrays[2]));
  testing::expectClose(readNpy(dir + "/files/enkf_out0.npy"), toDoubles(want.array()), 1e-12);
}

/// `graphc run --batch 3`: batched inputs from files; item b of the output is the
/// EnKF update of item b of the inputs.
TEST(GraphcRun, BatchRunsEveryItem) {
  testing::ScratchDir scratch("run-batch");
  const std::string dir = scratch.path().string();
  const std::vector<int64_t> shapes[] = {{3, 6, 6}, {3, 6, 6}, {3, 6, 1}};
  const char* names[] = {"xi", "y", "obs"};
  std::vector<Array> arrays;
  std::string inputs;
  for (int i = 0; i < 3; ++i) {
    arrays.push_back(Array::randomNormal(DType::F64, shapes[i], 200 + i));
    std::string path = dir + "/" + names[i] + ".npy";
    writeNpy(path, arrays.back());
    inputs += fmt::format(" --input {}={}", names[i], path);
  }
  auto [status, out] =
      runGraphc("run " + kEnkfGir + " --batch 3 --backend cpu --output-dir " + dir + inputs);
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("out0: f64[3,6,6]"), std::string::npos) << out;
  std::vector<double> got = readNpy(dir + "/enkf_out0.npy").toVector<double>();
  setDefaultBackend("cpu");
  auto item = [&](int i, int64_t b) {
    llvm::ArrayRef<int64_t> shape = llvm::ArrayRef<int64_t>(shapes[i]).drop_front();
    int64_t n = ir::numElements(shape);
    std::vector<double> all = arrays[i].toVector<double>();
    return Array::fromVector(std::vector<double>(all.begin() + b * n, all.begin() + (b + 1) * n),
                             shape);
  };
  for (int64_t b = 0; b < 3; ++b) {
    Tensor want = examples::enkfUpdate(Tensor(item(0, b)), Tensor(item(1, b)), Tensor(item(2, b)));
    Array gotItem = Array::fromVector(
        std::vector<double>(got.begin() + b * 36, got.begin() + (b + 1) * 36), {6, 6});
    testing::expectClose(gotItem, toDoubles(want.array()), 1e-12);
  }
  auto [status2, out2] = runGraphc("run " + kEnkfGir + " --batch 0 --random-inputs");
  EXPECT_EQ(status2, 2) << out2;
  EXPECT_NE(out2.find("--batch '0' is not a positive number"), std::string::npos) << out2;
}

TEST(GraphcRun, ReportsMissingAndMismatchedInputs) {
  auto [status, out] = runGraphc("run " + kEnkfGir + " --backend cpu");
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("no input for parameter %xi"), std::string::npos) << out;
  testing::ScratchDir scratch("run-wrong");
  std::string path = (scratch / "wrong.npy").string();
  writeNpy(path, Array::zeros(DType::F32, {2}));
  auto [status2, out2] =
      runGraphc("run " + kEnkfGir + " --random-inputs --input y=" + path + " --backend cpu");
  EXPECT_EQ(status2, 1) << out2;
  EXPECT_NE(out2.find("f32[2]"), std::string::npos) << out2;
  auto [status3, out3] = runGraphc("run " + kEnkfGir + " --repeat zero");
  EXPECT_EQ(status3, 2) << out3;
}

} // namespace
} // namespace graphc
