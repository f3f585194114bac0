//===- tests/runtime/BackendTest.cpp - Backend registry and executables ---===//
//
// Finding backends by name (built in, or added by the program; cuda there or saying
// why not), input checking with errors naming the parameter, whole graphs
// with shared and dead nodes, strided and wrapped inputs, outputs that never alias
// inputs, and the op-coverage check that runs at the end of a full suite run.
//
//===----------------------------------------------------------------------===//
#include "tests/runtime/TestUtil.h"

#include <gtest/gtest.h>

#if GRAPHC_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace graphc::testing {
namespace {

using ir::Op;

/// Expects `f` to throw a graphc::Error whose message contains every string of `parts`.
template <typename F> void expectError(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    for (const std::string& p : parts)
      EXPECT_NE(e.message().find(p), std::string::npos) << "'" << p << "' not in: " << e.what();
  }
}

TEST(Backend, BuiltInsNeedNoRegistration) {
  EXPECT_EQ(getBackend("cpu").name(), "cpu");
  EXPECT_EQ(getBackend("cpu-unfused").name(), "cpu-unfused");
  EXPECT_EQ(&getBackend("cpu"), &getBackend("cpu")); // made once
  std::vector<std::string> names;
  for (const BackendInfo& b : knownBackends()) {
    names.push_back(b.name);
    EXPECT_FALSE(b.summary.empty()) << b.name;
  }
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_NE(std::find(names.begin(), names.end(), "cpu"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "cpu-unfused"), names.end());
  expectError([] { getBackend("tpu"); }, {"unknown backend 'tpu'", "cpu, cpu-unfused", "auto"});
}

// Whether "cuda" runs is asked of the CUDA runtime directly here, not of graphc.
TEST(Backend, CudaIsThereOrSaysWhyNot) {
  bool built = false, present = false;
#if GRAPHC_HAS_CUDA
  built = true;
  int count = 0;
  present = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cudaGetLastError();
#endif
  std::vector<std::string> names;
  for (const BackendInfo& b : knownBackends())
    if (b.name == "cuda")
      EXPECT_EQ(b.unavailable.empty(), present) << b.unavailable;
    else
      EXPECT_EQ(b.unavailable, "") << b.name;
  AutoChoice choice = autoBackend();
  EXPECT_EQ(getBackend("auto").name(), choice.name);
  if (present) {
    EXPECT_EQ(getBackend("cuda").name(), "cuda");
    EXPECT_EQ(choice.name, "cuda");
  } else if (built) {
    expectError([] { getBackend("cuda"); },
                {"backend 'cuda': this build has the CUDA backend, but this machine cannot run "
                 "it: "});
    EXPECT_EQ(choice.name, "cpu");
    EXPECT_NE(choice.reason.find("the CUDA backend cannot run on this machine: "),
              std::string::npos)
        << choice.reason;
  } else {
    expectError([] { getBackend("cuda"); }, {"this build has no CUDA backend"});
    EXPECT_EQ(choice.name, "cpu");
    EXPECT_EQ(choice.reason, "this build has no CUDA backend");
  }
}

/// A backend of a program's own: cpu under another name.
class RenamedCpu final : public Backend {
public:
  llvm::StringRef name() const override { return "renamed"; }
  std::unique_ptr<Executable> compile(const ir::Graph& g) override {
    return getBackend("cpu").compile(g);
  }
};

TEST(Backend, ProgramsAddTheirOwn) {
  static int made = 0;
  registerBackend("test-renamed", [] {
    ++made;
    return std::make_unique<RenamedCpu>();
  });
  Backend& b = getBackend("test-renamed");
  EXPECT_EQ(&getBackend("test-renamed"), &b);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(b.name(), "renamed");
  registerBackend("test-none", [] { return nullptr; });
  expectError([] { getBackend("test-none"); },
              {"backend 'test-none'", "cannot run it", "its factory made no backend"});
  std::vector<std::string> names;
  for (const BackendInfo& info : knownBackends())
    names.push_back(info.name);
  EXPECT_NE(std::find(names.begin(), names.end(), "test-renamed"), names.end());
}

/// @f(%a: f64[2,3], %b: f64[2,3]) -> (a + b, exp(a)), with a dead node.
std::unique_ptr<ir::Graph> smallGraph() {
  auto g = std::make_unique<ir::Graph>("f");
  ir::Value a = g->addParameter("a", ir::TensorType(DType::F64, {2, 3}));
  ir::Value b = g->addParameter("b", ir::TensorType(DType::F64, {2, 3}));
  g->apply(Op::Mul, {a, b}); // dead
  g->addOutput(g->apply(Op::Add, {a, b}));
  g->addOutput(g->apply(Op::Exp, {a}));
  return g;
}

TEST(Backend, InputsAreCheckedByName) {
  auto exe = getBackend("cpu").compile(*smallGraph());
  Array good = Array::zeros(DType::F64, {2, 3});
  expectError([&] { exe->run({good}); }, {"expected 2 input(s), got 1", "%a: f64[2,3]"});
  expectError([&] { exe->run({good, good, good}); }, {"expected 2 input(s), got 3"});
  expectError(
      [&] {
        exe->run({good, Array::zeros(DType::F32, {2, 3})});
      },
      {"input 1 (%b) must be f64[2,3], got f32[2,3]"});
  expectError(
      [&] {
        exe->run({Array::zeros(DType::F64, {3, 2}), good});
      },
      {"input 0 (%a) must be f64[2,3], got f64[3,2]"});
  expectError([&] { exe->run({Array(), good}); }, {"(%a)", "empty array"});
}

TEST(Backend, RunsGraphsOnWrappedAndStridedInputs) {
  std::unique_ptr<ir::Graph> g = smallGraph();
  auto exe = getBackend("cpu").compile(*g);
  g.reset(); // the executable does not need the graph any more
  std::vector<double> am = {1, 2, 3, 4, 5, 6};
  std::vector<double> bm = {10, 40, 20, 50, 30, 60}; // [3,2], read transposed as [2,3]
  Array a = Array::wrap(am.data(), {2, 3});
  Array b = Array::wrap(bm.data(), {2, 3}, {1, 2});
  for (int repeat = 0; repeat < 2; ++repeat) {
    std::vector<Array> out = exe->run({a, b});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].toVector<double>(), (std::vector<double>{11, 22, 33, 44, 55, 66}));
    std::vector<double> e = out[1].toVector<double>();
    for (size_t i = 0; i < am.size(); ++i)
      EXPECT_NEAR(e[i], std::exp(am[i]), 1e-12 * std::exp(am[i]));
  }
  EXPECT_EQ(am, (std::vector<double>{1, 2, 3, 4, 5, 6})); // inputs untouched
}

TEST(Backend, OutputsNeverAliasInputs) {
  ir::Graph g("id");
  ir::Value x = g.addParameter("x", ir::TensorType(DType::F32, {4}));
  g.addOutput(x);
  g.addOutput(g.apply(Op::Reshape, {x}, {{"shape", std::vector<int64_t>{2, 2}}}));
  auto exe = getBackend("cpu").compile(g);
  std::vector<float> mem = {1, 2, 3, 4};
  Array owned = Array::fromVector(mem, {4});
  for (const Array& in : {Array::wrap(mem.data(), {4}), owned}) {
    std::vector<Array> out = exe->run({in});
    for (const Array& o : out) {
      EXPECT_TRUE(o.ownsMemory());
      EXPECT_FALSE(o.sharesBufferWith(in));
      EXPECT_NE(o.rawData(), in.rawData());
    }
    EXPECT_EQ(out[1].toVector<float>(), mem);
    EXPECT_EQ(out[1].shape(), (llvm::ArrayRef<int64_t>{2, 2}));
  }
}

TEST(Backend, NumericErrorsNameTheNodeAndLocation) {
  ir::Graph g("chol");
  ir::Value a = g.addParameter("a", ir::TensorType(DType::F64, {2, 2}));
  ir::Node* n = g.create(Op::Cholesky, {a}, {}, {}, SourceLoc{"model.gir", 3, 7}, "L");
  g.addOutput(n->result());
  auto exe = getBackend("cpu").compile(g);
  try {
    exe->run({Array::fromVector<double>({1, 2, 2, 1}, {2, 2})});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              "cholesky (%L): matrix is not positive definite (batch item 0, leading minor 2)");
    EXPECT_EQ(e.loc().str(), "model.gir:3:7");
  }
}

/// At the end of a full run (no --gtest_filter), every op of the table must have
/// run through runOp in some test.
class OpCoverage : public ::testing::Environment {
public:
  void TearDown() override {
    if (GTEST_FLAG_GET(filter) != "*")
      return;
    std::string missing;
    for (const ir::OpInfo& info : ir::allOps())
      if (!opsRun().count(info.op))
        missing += " " + info.name.str();
    EXPECT_TRUE(missing.empty()) << "ops without a numeric test:" << missing;
  }
};
[[maybe_unused]] ::testing::Environment* const kCoverage =
    ::testing::AddGlobalTestEnvironment(new OpCoverage);

} // namespace
} // namespace graphc::testing
