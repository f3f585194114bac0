//===- runtime/cuda/SmallBatched.h - Many small Cholesky factors and solves -*- C++ -*-===//
//
// Batched Cholesky factorization, triangular solves, SPD solves and Gram matrices
// X X' for many small matrices (n up to about 128 in f64), where cuSOLVER's
// potrfBatched and cuBLAS's trsmBatched and strided gemm spend their time on
// pointer arrays, layout transposes, launches and tiles sized for large matrices
// rather than on arithmetic. Each matrix is loaded once into shared memory by its
// own group of threads (blockDim.x threads per matrix, blockDim.y matrices per
// block), factored or solved there step by step with the group synchronized
// between steps, and written back once. SPD solves go further (kernels/SpdSolve.cu):
// a matrix per warp (or part of one) up to n = 32, a matrix per block in registers
// up to n = 128, and the matrix may be formed from its Gram factor inside the
// kernel. General matrices up to n = 8 are solved by LU in a thread's registers
// (kernels/TinyLu.cu), and X'X of a tall matrix of up to 32 columns by runs of rows
// (kernels/TallGram.cu). The diagonal blocks of a large triangle are inverted here too,
// as a batch of small triangles (BlockedSolve.h). Layouts are the
// row-major ones of runtime/cuda/Library.h, and the info words are LAPACK's (first failing leading
// minor; first zero diagonal). LibraryContext::run decides when to use them.
//
// The kernels are one CUDA C++ module (kernels/Sources.h) compiled through
// KernelCache::global(), once per process at most (later processes load it from
// the disk cache), and held with Library.cpp's helper kernels.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/Program.h"
#include "runtime/cuda/KernelLibrary.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace graphc::cuda {

/// The most columns tallGram() takes.
constexpr int kTallGramMaxN = 32;
/// The largest n that luSolve() takes: its kernel's registers hold the whole
/// matrix (n^2 + n values), so larger n spill.
constexpr int kTinyLuMaxN = 8;

struct LoadedModule;
struct ModuleSource;

/// The triangle and form of the matrix A of a triangular solve op(A) X = B.
struct TriangleFlags {
  bool lower = true;      ///< A's lower triangle (else its upper)
  bool transpose = false; ///< op(A) = A'
  bool unit = false;      ///< A's diagonal taken as ones
};

/// The SPD matrices A of a choleskySolve() (given, or formed from factors).
using passes::SpdMatrices;

/// The batched small-matrix kernels of the current device. Every launch only
/// enqueues on the given stream: no allocation, no synchronization.
class SmallBatched {
public:
  /// Compiles (or loads from the kernel cache) the kernels for the current device;
  /// keep one per device (Library.cpp's helper kernels hold it).
  SmallBatched();

  /// True when cholesky() takes n x n matrices of `elementSize`-byte elements (the
  /// matrix must fit in one block's shared memory).
  bool fitsCholesky(int64_t n, size_t elementSize) const;
  /// True when triangularSolve() takes n x n matrices with `cols` right-hand sides.
  bool fitsTriangularSolve(int64_t n, int64_t cols, size_t elementSize) const;

  /// `l` = the lower Cholesky factors of the `batch` row-major n x n matrices `a`
  /// (from their lower triangles), or with `upper` the upper factors (from their
  /// upper triangles); the other triangle zeroed. info[b] = 0, or the first leading
  /// minor of item b that is not positive definite. `threadsPerMatrix` 0 picks by n
  /// (other values are for tuning: a multiple of 32).
  template <typename T>
  void cholesky(int64_t batch, int64_t n, const T* a, T* l, bool upper, int* info,
                cudaStream_t stream, int threadsPerMatrix = 0) const;

  /// x = op(A)^-1 B for the `batch` row-major n x n triangular A (only the triangle
  /// `flags` names is read) and n x cols right-hand sides B. info[b] = 0, or 1 + the
  /// first i with A(i,i) = 0 in item b (not with flags.unit). `threadsPerMatrix` as
  /// for cholesky().
  template <typename T>
  void triangularSolve(int64_t batch, int64_t n, int64_t cols, const T* a, const T* b, T* x,
                       TriangleFlags flags, int* info, cudaStream_t stream,
                       int threadsPerMatrix = 0) const;

  /// True when choleskySolve() takes matrices `a` (n up to 128) with `cols`
  /// right-hand sides.
  bool fitsCholeskySolve(const SpdMatrices& a, int64_t cols, size_t elementSize) const {
    return fitsCholeskySolve(a, cols, elementSize, maxSharedBytes_);
  }
  /// The same for a device with `sharedBytes` of opt-in shared memory per block
  /// (codegen::CudaTarget), without one.
  static bool fitsCholeskySolve(const SpdMatrices& a, int64_t cols, size_t elementSize,
                                size_t sharedBytes);
  /// True when gram() takes matrices of `rows` rows (of any length).
  bool fitsGram(int64_t rows, size_t elementSize) const;

  /// x = A^-1 B for the `batch` row-major SPD n x n matrices A described by `form`
  /// (from `a`: A itself, only its lower triangle read, or its factors X) and the
  /// n x cols right-hand sides `b`, through A = L L' (n <= 32: a warp's lanes a
  /// matrix) or A = L D L' (a block's registers a matrix): `a` and B read once, X
  /// written once, A, L and L^-1 B never stored. info[b] as for cholesky(); the x
  /// of a failing item is unspecified.
  template <typename T>
  void choleskySolve(int64_t batch, const SpdMatrices& form, int64_t cols, const T* a, const T* b,
                     T* x, int* info, cudaStream_t stream) const {
    choleskySolveLaunch(batch, form, cols, sizeof(T), a, b, x, info).enqueue(stream);
  }
  /// The launch choleskySolve() makes, for `elementSize`-byte floats, without a
  /// stream: to enqueue, or to point a CUDA graph's node at new buffers.
  KernelLaunch choleskySolveLaunch(int64_t batch, const SpdMatrices& form, int64_t cols,
                                   size_t elementSize, const void* a, const void* b, void* x,
                                   int* info) const;

  /// s = X X' (rows x rows, both triangles) for the `batch` row-major rows x k
  /// matrices X in `x`.
  template <typename T>
  void gram(int64_t batch, int64_t rows, int64_t k, const T* x, T* s, cudaStream_t stream) const;

  /// Writes the inverses of the nb x nb diagonal blocks of the column-major n x n
  /// triangle `t` (leading dimension `ld`; its upper triangle with `upper`, else
  /// its lower; ones on the diagonal with `unit`) to `inverses`: block b's column-major
  /// (leading dimension nb) at inverses + b nb nb, the last block n - b nb wide,
  /// zeros in the other triangle. nb is a multiple of 32, at most 256.
  template <typename T>
  void invertTriangles(int64_t n, int64_t nb, const T* t, int64_t ld, bool upper, bool unit,
                       T* inverses, cudaStream_t stream) const;

  /// True when panelSolve() takes n x n triangles (f64 up to 288, f32 up to 576).
  bool fitsPanelSolve(int64_t n, size_t elementSize) const;
  /// x = op(A)^-1 B, or with `right` B op(A)^-1, for the `batch` row-major n x n
  /// triangular A (only the triangle `flags` names is read) and rows x cols B and x
  /// (n = rows on the left, cols on the right), 32 right-hand sides a block of 256
  /// threads, the triangle panel by panel through shared memory
  /// (kernels/BlockedSolve.cu). A zero on the diagonal gives infinities or NaNs, not
  /// an error: the caller checks the diagonal. `x` may be `b`.
  template <typename T>
  void panelSolve(int64_t batch, int64_t rows, int64_t cols, const T* a, const T* b, T* x,
                  TriangleFlags flags, bool right, cudaStream_t stream) const;

  /// True when tallGram() takes matrices of n columns (n <= kTallGramMaxN).
  static bool fitsTallGram(int64_t n) { return n > 0 && n <= kTallGramMaxN; }
  /// The doubles of workspace tallGram() needs for `batch` rows x n matrices.
  static int64_t tallGramPartials(int64_t batch, int64_t rows, int64_t n);
  /// c = X'X (n x n, both triangles) for the `batch` (at most 65535) row-major
  /// rows x n matrices `x`: runs of rows summed in f64 by blocks of their own into
  /// `partials`, then added in order (kernels/TallGram.cu).
  template <typename T>
  void tallGram(int64_t batch, int64_t rows, int64_t n, const T* x, double* partials, T* c,
                cudaStream_t stream) const;

  /// True when luSolve() takes general n x n matrices (n <= kTinyLuMaxN).
  static bool fitsLuSolve(int64_t n) { return n > 0 && n <= kTinyLuMaxN; }
  /// x = A^-1 B for the `batch` row-major general n x n matrices `a` and n x cols
  /// right-hand sides `b` (a null `b`: the identity, cols = n, x = A^-1), by LU with
  /// getrf's partial pivoting, a thread per column (kernels/TinyLu.cu). info[b] is
  /// getrf's: 0, or 1 + the first step whose pivot is zero; that item's x is then
  /// not finite.
  template <typename T>
  void luSolve(int64_t batch, int64_t n, int64_t cols, const T* a, const T* b, T* x, int* info,
               cudaStream_t stream) const;

  /// Solves op(A) y = b for one vector per item of a batch: A row-major n x n (`a`,
  /// items `aStride` apart; its lower triangle with `lower`, else its upper, read
  /// transposed with `transpose`, ones on the diagonal with `unit`), b in `y` on
  /// entry, items `yStride` apart. One block per 64 rows, in order, each waiting for
  /// the ones before it through `counters` (an int per item, zeroed here): latency
  /// about 3 us per block (0.14 ms at n = 3000, f64, H200), against 4 us per 64 rows
  /// for cuBLAS's trsv.
  template <typename T>
  void solveVector(int64_t batch, int64_t n, const T* a, int64_t aStride, TriangleFlags flags, T* y,
                   int64_t yStride, int* counters, cudaStream_t stream) const;

  /// The kernels' CUDA C++ and name expressions (what the constructor compiles).
  static ModuleSource moduleSource();

private:
  Kernel kernel(const std::string& expression) const;
  /// A launch of `expression` over `batch` matrices, `threadsPerMatrix` threads
  /// and `bytesPerMatrix` shared bytes each, with argument values `args`.
  KernelLaunch groupsLaunch(const std::string& expression, int64_t batch, int threadsPerMatrix,
                            size_t bytesPerMatrix, llvm::ArrayRef<void*> args) const;
  void launch(const std::string& expression, int64_t batch, int threadsPerMatrix,
              size_t bytesPerMatrix, cudaStream_t stream, std::initializer_list<void*> args) const;

  std::shared_ptr<const LoadedModule> module_;
  std::map<std::string, Kernel> kernels_;
  size_t maxSharedBytes_ = 0; ///< opt-in shared memory per block
};

} // namespace graphc::cuda
