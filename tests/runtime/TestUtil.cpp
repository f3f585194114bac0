//===- tests/runtime/TestUtil.cpp - Helpers for the runtime tests ---------===//
#include "tests/runtime/TestUtil.h"

#include "support/Numeric.h"

#include <cmath>
#include <fmt/format.h>

namespace graphc::testing {

std::set<ir::Op>& opsRun() {
  static std::set<ir::Op> ops;
  return ops;
}

std::vector<Array> runOp(ir::Op op, const std::vector<Array>& operands, const ir::Attrs& attrs,
                         const std::vector<ir::TensorType>& resultTypes) {
  ir::Graph g("test");
  llvm::SmallVector<ir::Value, 3> params;
  for (size_t i = 0; i < operands.size(); ++i)
    params.push_back(g.addParameter(fmt::format("x{}", i), operands[i].type()));
  ir::Node* n = g.create(op, params, attrs, resultTypes);
  for (unsigned i = 0; i < n->numResults(); ++i)
    g.addOutput(n->result(i));
  // The op also runs node by node: the fused backend must fail alike or agree exactly.
  auto unfused = getBackend("cpu-unfused").compile(g);
  std::vector<Array> out;
  try {
    out = getBackend("cpu").compile(g)->run(operands);
  } catch (const Error& e) {
    try {
      unfused->run(operands);
      ADD_FAILURE() << "cpu-unfused does not fail where cpu does: " << e.message();
    } catch (const Error& u) {
      EXPECT_EQ(u.message(), e.message());
    }
    throw;
  }
  std::vector<Array> reference = unfused->run(operands);
  // Exactly, but for floating-point sums and products, which compiled kernels
  // accumulate in double in another order (runtime/cpu/CompiledKernel.h), and exp,
  // log, expm1, log1p, tanh and sigmoid, which they compute with their own code
  // (codegen/LlvmMath.h), not the C library's: a few roundings of the result type.
  bool reassociated =
      (op == ir::Op::Sum || op == ir::Op::Mean || op == ir::Op::Var || op == ir::Op::Prod ||
       op == ir::Op::Exp || op == ir::Op::Log || op == ir::Op::Expm1 || op == ir::Op::Log1p ||
       op == ir::Op::Tanh || op == ir::Op::Sigmoid) &&
      ir::isFloat(resultTypes.empty() ? operands[0].dtype() : resultTypes[0].dtype);
  for (size_t i = 0; i < out.size(); ++i) {
    double ulp = out[i].dtype() == DType::F32 ? 0x1p-23 : 0x1p-52;
    EXPECT_LE(relativeDifference(out[i], reference[i]), reassociated ? 4 * ulp : 0.0)
        << ir::opName(op).str() << " result " << i;
  }
  opsRun().insert(op);
  if (!operands.empty())
    opsRun().insert(ir::Op::Parameter);
  return out;
}

Array runOp1(ir::Op op, const std::vector<Array>& operands, const ir::Attrs& attrs,
             const std::vector<ir::TensorType>& resultTypes) {
  return runOp(op, operands, attrs, resultTypes).at(0);
}

std::vector<double> doubles(const Array& a) {
  std::vector<double> out;
  forEachIndex(a.shape(), [&](llvm::ArrayRef<int64_t> idx) { out.push_back(a.getDouble(idx)); });
  return out;
}

void forEachIndex(llvm::ArrayRef<int64_t> shape,
                  const std::function<void(llvm::ArrayRef<int64_t>)>& f) {
  int64_t n = ir::numElements(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    f(idx);
    for (int64_t ax = static_cast<int64_t>(shape.size()) - 1; ax >= 0; --ax) {
      if (++idx[ax] < shape[ax])
        break;
      idx[ax] = 0;
    }
  }
}

double tolerance(DType dtype, double scale) {
  return (dtype == DType::F32 ? 2e-5 : dtype == DType::F64 ? 1e-12 : 0.0) * std::max(scale, 1.0);
}

void expectClose(const std::vector<double>& got, const std::vector<double>& want, double tol,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    bool same = (std::isnan(got[i]) && std::isnan(want[i])) || got[i] == want[i] ||
                std::abs(got[i] - want[i]) <= tol;
    ASSERT_TRUE(same) << what << ": element " << i << " is " << got[i] << ", expected " << want[i]
                      << " (tolerance " << tol << ")";
  }
}

std::vector<double> matmulRef(const std::vector<double>& a, const std::vector<double>& b, int64_t m,
                              int64_t k, int64_t n) {
  std::vector<double> c(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}

std::vector<double> transposeRef(const std::vector<double>& a, int64_t m, int64_t n) {
  std::vector<double> t(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      t[j * m + i] = a[i * n + j];
  return t;
}

std::vector<double> batchItem(const std::vector<double>& all, int64_t b, int64_t size) {
  return std::vector<double>(all.begin() + b * size, all.begin() + (b + 1) * size);
}

Array randn(DType dtype, llvm::ArrayRef<int64_t> shape, uint64_t seed) {
  return Array::randomNormal(dtype, shape, seed);
}

/// Adds `shift` to the diagonal of every matrix of a contiguous array.
static Array addToDiagonal(Array a, double shift) {
  int64_t n = a.shape().back();
  visitDType(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      T* p = a.data<T>();
      for (int64_t b = 0; b < a.numel() / (n * n); ++b)
        for (int64_t i = 0; i < n; ++i)
          p[b * n * n + i * n + i] += static_cast<T>(shift);
    }
  });
  return a;
}

Array wellConditioned(DType dtype, llvm::ArrayRef<int64_t> shape, uint64_t seed) {
  return addToDiagonal(randn(dtype, shape, seed), static_cast<double>(shape.back()));
}

Array spd(DType dtype, llvm::ArrayRef<int64_t> shape, uint64_t seed) {
  int64_t n = shape.back();
  std::vector<double> m = doubles(randn(DType::F64, shape, seed));
  std::vector<double> out;
  for (int64_t b = 0; b < static_cast<int64_t>(m.size()) / (n * n); ++b) {
    std::vector<double> mb = batchItem(m, b, n * n);
    std::vector<double> g = matmulRef(mb, transposeRef(mb, n, n), n, n, n);
    for (int64_t i = 0; i < n; ++i)
      g[i * n + i] += static_cast<double>(n);
    out.insert(out.end(), g.begin(), g.end());
  }
  Array a = Array::fromVector<double>(out, shape);
  if (dtype == DType::F64)
    return a;
  return Array::fromVector<float>(std::vector<float>(out.begin(), out.end()), shape);
}

} // namespace graphc::testing
