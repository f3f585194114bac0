//===- tests/runtime/PreparedRunTest.cpp - Runs into outputs, deferred runs ===//
//
// Executable::run(inputs, outputs), enqueue() and finish() on the cpu backend:
// results equal run(inputs) on random inputs, the caller's arrays are checked
// (count, type, density, memory, overlap) before anything runs, and a failing
// deferred run is reported by finish() with its index while the other runs still
// produce their results. Concurrent run() calls from 8 threads agree exactly with
// sequential ones, on small arrays and on large ones (the host pool, the backend's
// own threads, LAPACK); scripts/sanitize.sh thread runs them under TSan. Library
// calls write the results the caller gets straight into its arrays.
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"
#include "runtime/Backends.h"
#include "runtime/core/Backend.h"
#include "tests/support/Numeric.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <string>
#include <thread>

namespace graphc::testing {
namespace {

constexpr const char* kGraph = R"(
graph @prep(%x: f64[8,16], %w: f64[16,4], %b: f64[4]) {
  %y = matmul %x, %w
  %bb = broadcast_to %b {shape=[8,4]}
  %z = add %y, %bb
  %t = tanh %z
  %s = sum %t {axes=[1]}
  return %t, %s
}
)";

/// A graph whose one op fails at run time for a matrix that is not SPD.
constexpr const char* kCholesky = R"(
graph @chol(%a: f64[3,3]) {
  %l = cholesky %a
  return %l
}
)";

std::vector<Array> outputsFor(const Executable& exe) {
  std::vector<Array> outs;
  for (const ir::TensorType& t : exe.signature().outputTypes)
    outs.push_back(Array::full(t.dtype, t.shape, -7));
  return outs;
}

/// Expects `f` to throw a graphc::Error whose message contains `part`.
template <typename F> void expectError(F&& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error thrown, expected: " << part;
  } catch (const Error& e) {
    EXPECT_NE(e.message().find(part), std::string::npos) << "'" << part << "' not in: " << e.what();
  }
}

TEST(PreparedRun, RunIntoOutputsEqualsRun) {
  auto g = ir::parseGraph(kGraph);
  auto exe = getBackend("cpu").compile(*g);
  for (uint64_t seed : {1, 2, 3}) {
    std::vector<Array> in = randomInputs(*g, seed), outs = outputsFor(*exe);
    exe->run(in, outs);
    std::vector<Array> want = exe->run(in);
    for (size_t i = 0; i < outs.size(); ++i)
      EXPECT_EQ(relativeDifference(outs[i], want[i]), 0.0) << "output " << i;
  }
}

/// The backend-neutral way to make the arrays runs into outputs take: on the cpu
/// they are host arrays, written by the run.
TEST(PreparedRun, ArraysInTheBackendsMemory) {
  auto g = ir::parseGraph(kGraph);
  auto exe = getBackend("cpu").compile(*g);
  std::vector<Array> in;
  for (const Array& a : randomInputs(*g, 9))
    in.push_back(exe->toDevice(a));
  std::vector<Array> outs = {exe->newOutput(0), exe->newOutput(1)};
  EXPECT_EQ(outs[1].type(), exe->signature().outputTypes[1]);
  EXPECT_EQ(outs[1].device(), Device::Host);
  exe->run(in, outs);
  std::vector<Array> want = exe->run(in);
  for (size_t i = 0; i < outs.size(); ++i)
    EXPECT_EQ(relativeDifference(exe->toHost(outs[i]), want[i]), 0.0) << "output " << i;
  Array strided = Array::zeros(ir::DType::F64, {4, 4}).view({2, 2}, {8, 2});
  EXPECT_TRUE(exe->toDevice(strided).isContiguous());
}

TEST(PreparedRun, DeferredRunsFinishOnce) {
  auto g = ir::parseGraph(kGraph);
  auto exe = getBackend("cpu").compile(*g);
  std::vector<std::vector<Array>> ins, outs;
  for (uint64_t k = 0; k < 10; ++k) {
    ins.push_back(randomInputs(*g, 100 + k));
    outs.push_back(outputsFor(*exe));
    exe->enqueue(ins.back(), outs.back());
  }
  exe->finish();
  for (size_t k = 0; k < ins.size(); ++k) {
    std::vector<Array> want = exe->run(ins[k]);
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_EQ(relativeDifference(outs[k][i], want[i]), 0.0) << "run " << k << " output " << i;
  }
  exe->finish(); // nothing queued: returns at once
}

TEST(PreparedRun, FinishNamesTheFirstFailedRun) {
  auto g = ir::parseGraph(kCholesky);
  auto exe = getBackend("cpu").compile(*g);
  Array spd = Array::fromVector<double>({4, 1, 0, 1, 3, 1, 0, 1, 2}, {3, 3});
  Array indefinite = Array::fromVector<double>({1, 2, 0, 2, 1, 0, 0, 0, 3}, {3, 3});
  std::vector<Array> outs;
  for (int k = 0; k < 5; ++k) {
    outs.push_back(Array::zeros(ir::DType::F64, {3, 3}));
    exe->enqueue({k == 2 || k == 3 ? indefinite : spd}, {outs.back()});
  }
  expectError([&] { exe->finish(); },
              "@chol: run 2 of 5 enqueued: cholesky (%l): matrix is not positive definite");
  // The runs that did not fail have their results; the next batch starts clean.
  Array l = exe->run({spd})[0];
  EXPECT_EQ(relativeDifference(outs[4], l), 0.0);
  exe->enqueue({spd}, {outs[0]});
  EXPECT_NO_THROW(exe->finish());
}

TEST(PreparedRun, CallerArraysAreChecked) {
  auto g = ir::parseGraph(kGraph);
  auto exe = getBackend("cpu").compile(*g);
  std::vector<Array> in = randomInputs(*g, 4), outs = outputsFor(*exe);
  expectError([&] { exe->run(in, {outs[0]}); }, "expected 2 output array(s), got 1");
  expectError(
      [&] {
        exe->run(in, {outs[0], Array::zeros(ir::DType::F32, {8})});
      },
      "output 1 must be a dense f64[8] in host memory, got f32[8]");
  Array wide = Array::zeros(ir::DType::F64, {8, 8});
  Array strided = wide.view({8, 4}, {8, 2});
  expectError([&] { exe->run(in, {strided, outs[1]}); }, "got f64[8,4] (strided)");
  Array device = Array::wrapRaw(ir::DType::F64, outs[1].rawData(), {8}, {}, Device::Cuda);
  expectError([&] { exe->run(in, {outs[0], device}); }, "got f64[8] in cuda memory");
  Array overInput = in[0].reinterpret(ir::DType::F64, {8, 4});
  expectError([&] { exe->run(in, {overInput, outs[1]}); }, "output 0 overlaps input 0 (%x)");
  Array sameBytes = outs[0].reinterpret(ir::DType::F64, {8});
  expectError([&] { exe->run(in, {outs[0], sameBytes}); }, "outputs 0 and 1 overlap");
  expectError([&] { exe->enqueue({in[0]}, outs); }, "expected 3 input(s), got 1");
  int notAStream = 0;
  expectError([&] { exe->enqueue(in, outs, &notAStream); },
              "@prep: the cpu backend runs on no stream");
  EXPECT_NO_THROW(exe->finish()); // the rejected enqueue queued nothing
}

// A device array (here a host pointer labelled cuda memory: nothing dereferences it)
// is refused by the cpu backends, whichever way the run is asked for, naming the input.
TEST(PreparedRun, DeviceInputsAreRefusedByTheCpuBackends) {
  auto g = ir::parseGraph(kGraph);
  for (const char* backend : {"cpu", "cpu-unfused"}) {
    SCOPED_TRACE(backend);
    auto exe = getBackend(backend).compile(*g);
    std::vector<Array> in = randomInputs(*g, 6), outs = outputsFor(*exe);
    std::vector<Array> onDevice = in;
    onDevice[1] = Array::wrapRaw(ir::DType::F64, in[1].rawData(), {16, 4}, {}, Device::Cuda);
    expectError([&] { exe->run(onDevice); }, "@prep: input 1 (%w) is in cuda memory");
    expectError([&] { exe->run(onDevice); }, "backend needs host arrays");
    expectError([&] { exe->run(onDevice, outs); }, "@prep: input 1 (%w) is in cuda memory");
    expectError([&] { exe->run(onDevice); }, std::string("the ") + backend + " backend needs");
    expectError([&] { exe->run(onDevice, outs); }, std::string("the ") + backend + " backend");
    expectError([&] { exe->enqueue(onDevice, outs); }, "@prep: input 1 (%w) is in cuda memory");
    EXPECT_NO_THROW(exe->finish());
    EXPECT_EQ(exe->run(in).size(), 2u); // the executable still runs host arrays
  }
}

/// Runs one executable of `text` from 8 threads at once, `runs` times each, on
/// inputs of its own per thread from `inputsOf(thread)`: runs into the caller's
/// outputs and runs returning new arrays, interleaved, must give exactly what the
/// same inputs gave run one after another. Each returned result is checked in its
/// thread (gtest's assertions are thread-safe).
void expectConcurrentRunsAgree(const char* text, int runs,
                               const std::function<std::vector<Array>(int)>& inputsOf) {
  auto g = ir::parseGraph(text);
  auto exe = getBackend("cpu").compile(*g);
  constexpr int kThreads = 8;
  std::vector<std::vector<Array>> ins, outs, want;
  for (int t = 0; t < kThreads; ++t) {
    ins.push_back(inputsOf(t));
    outs.push_back(outputsFor(*exe));
    want.push_back(exe->run(ins.back()));
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < runs; ++r) {
        exe->run(ins[t], outs[t]);
        std::vector<Array> fresh = exe->run(ins[t]);
        for (size_t i = 0; i < want[t].size(); ++i)
          EXPECT_EQ(relativeDifference(fresh[i], want[t][i]), 0.0) << "thread " << t;
      }
    });
  for (std::thread& t : threads)
    t.join();
  for (int t = 0; t < kThreads; ++t)
    for (size_t i = 0; i < want[t].size(); ++i)
      EXPECT_EQ(relativeDifference(outs[t][i], want[t][i]), 0.0) << "thread " << t;
}

TEST(PreparedRun, ConcurrentRunsAgreeWithSequentialOnes) {
  auto g = ir::parseGraph(kGraph);
  expectConcurrentRunsAgree(kGraph, 20, [&](int t) { return randomInputs(*g, 200 + t); });
}

/// The same with arrays of 2 MB, which come from the host pool the threads share
/// and whose elementwise and reduction work the cpu backend splits over its own
/// threads, and a LAPACK solve.
TEST(PreparedRun, ConcurrentRunsOfLargeArraysAgreeWithSequentialOnes) {
  constexpr const char* text = R"(
graph @large(%x: f64[512,512], %a: f64[64,64], %b: f64[64,8]) {
  %e = exp %x
  %s = sum %e {axes=[1]}
  %z = solve %a, %b
  %t = tanh %z
  return %e, %s, %t
}
)";
  expectConcurrentRunsAgree(text, 6, [](int t) {
    std::vector<double> a = Array::randomNormal(DType::F64, {64, 64}, 300 + t).toVector<double>();
    for (int i = 0; i < 64; ++i)
      a[i * 64 + i] += 64; // well conditioned
    return std::vector<Array>{Array::randomNormal(DType::F64, {512, 512}, 400 + t),
                              Array::fromVector<double>(a, {64, 64}),
                              Array::randomNormal(DType::F64, {64, 8}, 500 + t)};
  });
}

/// Library calls whose result is an output write it into the caller's array: each
/// op, on the small loops and on LAPACK, into outputs holding NaN, against the
/// node-by-node reference backend; an output another step reads after it is
/// written, and one returned twice (copied, not written directly).
TEST(PreparedRun, LibraryCallsWriteIntoTheCallersOutputs) {
  std::vector<std::string> graphs;
  for (int n : {8, 16, 40}) { // 8 and 16: runtime/cpu/SmallLinalg.h; 40: BLAS and LAPACK
    std::string nn = fmt::format("{0},{0}", n), b = n > 16 ? "3" : "300";
    auto graph = [&](const std::string& params, const std::string& body, const char* ret) {
      graphs.push_back(fmt::format("graph @g({}) {{\n{}  return {}\n}}", params, body, ret));
    };
    std::string x = fmt::format("%x: f64[{},{}]", b, nn);
    std::string xy = fmt::format("{}, %y: f64[{},{}]", x, b, nn);
    std::string xr = fmt::format("{}, %r: f64[{},{},3]", x, b, n);
    graph(xy, "  %c = matmul %x, %y\n", "%c");
    graph(xy, "  %c = matmul %x, %y {transpose_a, transpose_b}\n", "%c");
    graph(fmt::format("%x: f64[{},{},5]", b, n), "  %c = syrk %x\n", "%c");
    graph(xr, "  %c = solve %x, %r\n", "%c");
    graph(xr, "  %c = triangular_solve %x, %r {lower}\n", "%c");
    graph(fmt::format("%x: f64[{},{},{}]", b, n, 2 * n), "  %s = syrk %x\n  %c = cholesky %s\n",
          "%c");
    graph(x, "  %c = inverse %x\n", "%c");
    graph(xy, "  %c = matmul %x, %y\n  %s = sum %c {axes=[2]}\n", "%c, %s");
    graph(xy, "  %c = matmul %x, %y\n", "%c, %c");
  }
  for (const std::string& text : graphs) {
    SCOPED_TRACE(text);
    auto g = ir::parseGraph(text);
    std::vector<Array> in = randomInputs(*g, 31);
    std::vector<Array> want = getBackend("cpu-unfused").compile(*g)->run(in);
    auto exe = getBackend("cpu").compile(*g);
    std::vector<Array> outs;
    for (const ir::TensorType& t : exe->signature().outputTypes)
      outs.push_back(Array::full(t.dtype, t.shape, std::nan("")));
    for (int run = 0; run < 2; ++run) { // the second with the first run's state
      exe->run(in, outs);
      for (size_t i = 0; i < outs.size(); ++i) {
        EXPECT_FALSE(degenerate(outs[i])) << "output " << i;
        EXPECT_LT(relativeDifference(outs[i], want[i]), 1e-12) << "output " << i;
      }
    }
  }
}

} // namespace
} // namespace graphc::testing
