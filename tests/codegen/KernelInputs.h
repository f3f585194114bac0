//===- tests/codegen/KernelInputs.h - Buffers for kernels --------*- C++ -*-===//
//
// Dense host buffers of a kernel's inputs and outputs, and their random contents
// (by testing::inputKind), shared by the tests that run a codegen::Kernel two ways:
// the GPU against the CPU interpreter (tests/gpu/CudaKernelTest.cpp), the compiled
// CPU kernels against it (tests/codegen/CpuCodegenTest.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Types.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace graphc::testing {

/// Bytes of one dense array on the host (8-byte aligned).
struct HostArray {
  ir::DType dtype;
  int64_t numel;
  std::vector<uint64_t> storage;

  HostArray(ir::DType t, int64_t n)
      : dtype(t), numel(n), storage((n * ir::dtypeSize(t) + 7) / 8 + 1, 0) {}
  void* data() { return storage.data(); }
  const void* data() const { return storage.data(); }
  size_t bytes() const { return static_cast<size_t>(numel * ir::dtypeSize(dtype)); }
  /// Element i as a double (bools and integers exactly, i64 up to 2^53).
  double at(int64_t i) const {
    const void* p = storage.data();
    switch (dtype) {
    case ir::DType::Bool:
      return static_cast<const bool*>(p)[i];
    case ir::DType::I32:
      return static_cast<const int32_t*>(p)[i];
    case ir::DType::I64:
      return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case ir::DType::F32:
      return static_cast<const float*>(p)[i];
    case ir::DType::F64:
      return static_cast<const double*>(p)[i];
    }
    return 0;
  }
  /// Sets element i to `v` converted to the dtype (bools: v != 0).
  void set(int64_t i, double v) {
    void* p = storage.data();
    switch (dtype) {
    case ir::DType::Bool:
      static_cast<bool*>(p)[i] = v != 0;
      break;
    case ir::DType::I32:
      static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v);
      break;
    case ir::DType::I64:
      static_cast<int64_t*>(p)[i] = static_cast<int64_t>(v);
      break;
    case ir::DType::F32:
      static_cast<float*>(p)[i] = static_cast<float>(v);
      break;
    case ir::DType::F64:
      static_cast<double*>(p)[i] = v;
      break;
    }
  }
};

/// Random contents for an input; `kind` as in testing::inputKind.
inline HostArray randomArray(const ir::TensorType& t, char kind, std::mt19937_64& rng) {
  HostArray a(t.dtype, t.numel());
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  std::uniform_int_distribution<int> small(-2, 2), coin(0, 1), digit(0, 5), wide(-50, 50);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int64_t i = 0; i < a.numel; ++i) {
    double v = kind == 't'   ? small(rng)
               : kind == 'q' ? (digit(rng) == 0 ? nan : small(rng))
               : kind == 'p' ? 0.1 + std::abs(uniform(rng))
               : kind == 'e' ? digit(rng)
                             : uniform(rng);
    if (t.dtype == ir::DType::Bool) {
      a.set(i, coin(rng));
    } else if (ir::isInteger(t.dtype)) {
      int64_t x = kind == 'e' || kind == 't' ? static_cast<int64_t>(v) : wide(rng);
      a.set(i, static_cast<double>(kind == 'n' && x == 0 ? 7 : x));
    } else {
      a.set(i, v);
    }
  }
  return a;
}

} // namespace graphc::testing
