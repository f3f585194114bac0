//===- runtime/cuda/LibraryCall.h - One library call of one node -*- C++ -*-===//
//
// Internal to runtime/cuda/Library*.cpp. Call<T> runs one node with element type
// T through the routine chooseRoute() picks (LibraryRoute.h): each op is a method
// over the node's operands, results, workspace and stream,
// written once for float and double through Lib<T> (Routines.h), which maps the S/D
// routines of cuBLAS and cuSOLVER to one name. The products and triangular solves
// are in BlasCalls.cpp, the factorizations and the ops built on them in
// SolverCalls.cpp; both instantiate their methods for float and double.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/cuda/Check.h"
#include "runtime/cuda/HelperKernels.h"
#include "runtime/cuda/Library.h"
#include "runtime/cuda/LibraryPlan.h"
#include "runtime/cuda/LibraryRoute.h"
#include "runtime/cuda/Routines.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <initializer_list>

namespace graphc::cuda::library {

/// One run of one node with element type T (see the file comment).
template <typename T> class Call {
public:
  Call(const LibraryContext& ctx, const HelperKernels& kernels, const ir::Node& n, const Scratch& s,
       int* info)
      : n_(n), s_(s), info_(info), kernels_(kernels), blas_(ctx.cublas()), solver_(ctx.cusolver()),
        stream_(ctx.stream()),
        route_(chooseRoute(n, sizeof(T),
                           {kernels, ctx.batchedFactorizations(), ctx.qrRoute(), ctx.sharing()})) {}

  // BlasCalls.cpp
  void matmul(const T* a, const T* b, T* c);
  void syrk(const T* x, T* c);
  void triangularSolve(const T* a, const T* rhs, T* x);

  // SolverCalls.cpp
  void solve(const T* a, const T* rhs, T* x);
  void cholesky(const T* a, T* l);
  void lu(const T* a, T* p, T* l, T* u);
  void qr(const T* a, T* q, T* r);
  void inverse(const T* a, T* x);
  void determinant(const T* a, T* out);

private:
  bool flag(const char* name) const { return n_.attrs().flag(name); }
  Matrices operand(unsigned i) const { return Matrices(n_.operand(i).type()); }
  Matrices result(unsigned i) const { return Matrices(n_.type(i)); }

  void zero(T* p, const Matrices& m) {
    GRAPHC_CUDA_CHECK(cudaMemsetAsync(p, 0, m.batch * m.size() * sizeof(T), stream_));
  }
  void copy(const T* from, T* to, const Matrices& m) {
    GRAPHC_CUDA_CHECK(cudaMemcpyAsync(to, from, m.batch * m.size() * sizeof(T),
                                      cudaMemcpyDeviceToDevice, stream_));
  }

  /// Launches the T instantiation of helper `name` over `threads` threads.
  void launch(const char* name, int64_t threads, std::initializer_list<void*> args) {
    if (threads > 0)
      kernels_[fmt::format("{}<{}>", name, Lib<T>::name)].launch(
          LaunchConfig::linear(threads, 256, stream_), args);
  }

  /// `to` = the column-major copies of the rows x cols matrices `from`.
  void transpose(int64_t batch, int64_t rows, int64_t cols, const T* from, T* to) {
    launchTranspose(batch, rows, cols, from, rows * cols, to, rows * cols);
  }
  void launchTranspose(int64_t batch, int64_t rows, int64_t cols, const T* from, int64_t fromStride,
                       T* to, int64_t toStride) {
    kernels_.transpose(batch, rows, cols, sizeof(T), from, fromStride, to, toStride, stream_);
  }

  void unpackTriangle(int64_t batch, int64_t rows, int64_t cols, const T* from, int64_t ld,
                      int64_t fromStride, T* to, int unitLower) {
    launch("unpackTriangle", batch * rows * cols,
           {&batch, &rows, &cols, &from, &ld, &fromStride, &to, &unitLower});
  }

  /// Device pointers to the matrices of `base`, in the pointer workspace from
  /// `slot` on.
  T** pointers(T* base, const Matrices& m, int64_t slot) {
    return pointers(base, m.batch, m.size(), slot);
  }
  /// Device pointers to `batch` arrays of `base`, `stride` elements apart.
  T** pointers(T* base, int64_t batch, int64_t stride, int64_t slot) {
    void** ptrs = s_.pointers + slot;
    int64_t strideBytes = stride * sizeof(T);
    kernels_["pointerArray"].launch(LaunchConfig::linear(batch, 256, stream_),
                                    {&batch, &base, &strideBytes, &ptrs});
    return reinterpret_cast<T**>(ptrs);
  }

  /// LU factors in the workspace: the column-major items, and on the batched path
  /// the device array of pointers to them (else null). Pivots are in s_.pivots.
  struct LuFactors {
    T* factors;
    T** items;
  };

  LuFactors factorLu(const T* a, int* info);
  void solveLu(const LuFactors& lu, cublasOperation_t op, T* b);
  void batchedQr(T* f, T* tau, T* q, T* r);

  /// Throws for the host info word of a batched cuBLAS solver routine.
  static void checkArguments(const char* routine, int invalid) {
    if (invalid != 0)
      throw Error(fmt::format("internal error: argument {} of {} was invalid", -invalid, routine));
  }

  const ir::Node& n_;
  const Scratch& s_;
  int* info_; ///< the caller's deviceInfo, or workspace for ops that cannot fail
  const HelperKernels& kernels_;
  cublasHandle_t blas_;
  cusolverDnHandle_t solver_;
  cudaStream_t stream_;
  Route route_;
  const T one_ = T(1), zero_ = T(0);
};

} // namespace graphc::cuda::library
