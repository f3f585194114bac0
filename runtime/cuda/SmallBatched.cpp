//===- runtime/cuda/SmallBatched.cpp - Many small Cholesky factors and solves ===//
//
// Every kernel works on a group of blockDim.x threads per matrix, blockDim.y
// matrices per block. The Cholesky kernels keep an n x n shared copy with row
// stride n + 1 (odd, against bank conflicts). Every group of a block runs the same
// steps, so a failing or absent item still reaches each __syncthreads(); it only
// stops changing its data.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/SmallBatched.h"

#include "passes/RoutePolicy.h"

#include "runtime/cuda/Check.h"
#include "runtime/cuda/KernelCache.h"
#include "runtime/cuda/kernels/Sources.h"
#include "support/Error.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <fmt/format.h>
#include <type_traits>

namespace graphc::cuda {

namespace {

/// Columns of X that smallGram stages in shared memory at a time.
constexpr int64_t kGramChunk = 32;
/// Rows of X that smallGram takes: one 4 x 4 tile of S a thread, 1024 threads.
constexpr int64_t kGramMaxRows = 128;

/// Columns of A or X that the SPD solve kernels stage in shared memory at a time
/// (blockCholeskySolve's registers hold fewer, spilling none in f64).
constexpr int64_t kWarpChunk = 16, kBlockChunk = 8;
/// The rows of A that warpCholeskySolve instances take: lanes a matrix.
const int kWarpRows[] = {4, 8, 16, 32};
constexpr int64_t kWarpThreads = 128; ///< warpCholeskySolve's block
/// The rows of A that blockCholeskySolve instances take, and its block.
const int kBlockRows[] = {64, 128};
constexpr int64_t kBlockThreads = 256;

/// The name expression of a kernel template for element type `type` (and, for
/// the SPD solves, `rows` rows of A).
std::string kernelName(llvm::StringRef kernel, llvm::StringRef type, int rows = 0) {
  if (kernel == "smallGram")
    return fmt::format("smallGram<{}, {}>", type.str(), kGramChunk);
  if (rows)
    return fmt::format("{}<{}, {}, {}>", kernel.str(), type.str(), rows,
                       kernel == "warpCholeskySolve" ? kWarpChunk : kBlockChunk);
  return fmt::format("{}<{}>", kernel.str(), type.str());
}

const char* kKernels[] = {"smallCholesky", "smallTriangularSolve", "smallGram"};

/// The column counts tallGram is instantiated for, and the rows a block takes
/// (at least; at most 1024 blocks an item).
const int kTallGramWidths[] = {8, 16, 32};
constexpr int64_t kTallGramRowsPerBlock = 1024, kTallGramMaxBlocks = 1024;

int64_t tallGramBlocks(int64_t rows) {
  return std::clamp<int64_t>((rows + kTallGramRowsPerBlock - 1) / kTallGramRowsPerBlock, 1,
                             kTallGramMaxBlocks);
}

/// The smallest of `sizes` that is at least n, or 0.
int rowsFor(llvm::ArrayRef<int> sizes, int64_t n) {
  for (int rows : sizes)
    if (n <= rows)
      return rows;
  return 0;
}

/// Shared elements of one matrix of warpCholeskySolve (its WarpLayout::size).
int64_t warpSharedElements(int rows, size_t elementSize) {
  return rows * (rows + 1) + 2 * rows + kWarpChunk * (rows + 16 / elementSize);
}

/// Shared elements of blockCholeskySolve (its BlockLayout::size): the packed
/// columns and pivots, or in f64 at 128 rows A's lower 8 x 8 tiles if more.
int64_t blockSharedElements(int rows, size_t elementSize) {
  int64_t columns = rows * (rows + 1) / 2 + rows, blocks = rows / 8;
  return elementSize == 8 && rows == 128 ? std::max(columns, blocks * (blocks + 1) / 2 * 64)
                                         : columns;
}

/// The value of a kernel parameter as CapturedRun and launch() take it: its bytes
/// at the start of a pointer-sized slot.
template <typename V> void* slot(V v) {
  static_assert(sizeof(V) <= sizeof(void*) && std::is_trivially_copyable_v<V>);
  void* s = nullptr;
  std::memcpy(&s, &v, sizeof(V));
  return s;
}

template <typename T> const char* typeName();
template <> const char* typeName<float>() {
  return "float";
}
template <> const char* typeName<double>() {
  return "double";
}

/// Shared bytes of one matrix, or of one item's right-hand sides, in the kernels.
size_t choleskyBytes(int64_t n, size_t elementSize) {
  return n * (n + 1) * elementSize;
}
size_t solveBytes(int64_t n, int64_t cols, size_t elementSize) {
  return 16 + n * cols * elementSize;
}
/// Shared bytes of panelSolve for n x n triangles: Y's rows (n rounded up to 32)
/// of 32 columns, stride 36, and two panels of 32 of those rows, stride + 4.
size_t panelSolveBytes(int64_t n, size_t elementSize) {
  int64_t np = (n + 31) / 32 * 32;
  return (np * 36 + 64 * (np + 4)) * elementSize;
}
/// Threads of one gram item: one a 4 x 4 tile of S.
int64_t gramThreads(int64_t rows) {
  int64_t tiles = (rows + 3) / 4;
  return tiles * tiles;
}
size_t gramBytes(int64_t rows, size_t elementSize) {
  return (rows + 3) / 4 * 4 * (kGramChunk + 1) * elementSize;
}

/// Threads per matrix of smallCholesky by default: 1, 2 or 4 per row, the fastest
/// on an H200 at n = 4, 16 / 32, 48 / 64, 96, 128 (commit 2ab7b9e).
int64_t choleskyThreads(int64_t n) {
  return n * (n <= 16 ? 1 : n <= 48 ? 2 : 4);
}

} // namespace

SmallBatched::SmallBatched() {
  int device = 0, optin = 0;
  GRAPHC_CUDA_CHECK(cudaGetDevice(&device));
  GRAPHC_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  maxSharedBytes_ = static_cast<size_t>(optin);
  ModuleSource source = moduleSource();
  module_ = KernelCache::global().getModule(source);
  for (const std::string& expression : source.nameExpressions) {
    Kernel k = module_->kernel(expression);
    GRAPHC_CUDA_CHECK(cudaKernelSetAttributeForDevice(
        k.handle(), cudaFuncAttributeMaxDynamicSharedMemorySize, optin, device));
    kernels_[expression] = k;
  }
}

ModuleSource SmallBatched::moduleSource() {
  ModuleSource source{kernels::kSmallBatched, "graphc_small_batched.cu", {}};
  for (const char* type : {"float", "double"}) {
    for (const char* name : kKernels)
      source.nameExpressions.push_back(kernelName(name, type));
    for (int rows : kWarpRows)
      source.nameExpressions.push_back(kernelName("warpCholeskySolve", type, rows));
    for (int rows : kBlockRows)
      source.nameExpressions.push_back(kernelName("blockCholeskySolve", type, rows));
    source.nameExpressions.push_back(kernelName("invertTriangles", type));
    source.nameExpressions.push_back(kernelName("panelSolve", type));
    source.nameExpressions.push_back(kernelName("solveVector", type));
    for (int n = 1; n <= kTinyLuMaxN; ++n)
      source.nameExpressions.push_back(fmt::format("tinyLuSolve<{}, {}>", type, n));
    for (int n : kTallGramWidths)
      for (const char* kernel : {"tallGram", "tallGramSum"})
        source.nameExpressions.push_back(fmt::format("{}<{}, {}>", kernel, type, n));
  }
  return source;
}

bool SmallBatched::fitsCholesky(int64_t n, size_t elementSize) const {
  return n > 0 && choleskyBytes(n, elementSize) <= maxSharedBytes_;
}

bool SmallBatched::fitsTriangularSolve(int64_t n, int64_t cols, size_t elementSize) const {
  return n > 0 && cols > 0 && solveBytes(n, cols, elementSize) <= maxSharedBytes_;
}

bool SmallBatched::fitsCholeskySolve(const SpdMatrices& a, int64_t cols, size_t elementSize,
                                     size_t sharedBytes) {
  if (a.n <= 0 || cols <= 0 || cols > INT_MAX || a.k > INT_MAX)
    return false;
  if (rowsFor(kWarpRows, a.n))
    return true;
  int rows = rowsFor(kBlockRows, a.n);
  return rows && blockSharedElements(rows, elementSize) * elementSize <= sharedBytes;
}

bool SmallBatched::fitsPanelSolve(int64_t n, size_t elementSize) const {
  return n > 0 && panelSolveBytes(n, elementSize) <= maxSharedBytes_;
}

bool SmallBatched::fitsGram(int64_t rows, size_t elementSize) const {
  return rows > 0 && rows <= kGramMaxRows && gramBytes(rows, elementSize) <= maxSharedBytes_;
}

Kernel SmallBatched::kernel(const std::string& expression) const {
  auto it = kernels_.find(expression);
  if (it == kernels_.end())
    throw Error(fmt::format("internal error: no small batched kernel {}", expression));
  return it->second;
}

/// Groups of `threadsPerMatrix`, as many per block as keep it at 256 threads and
/// a quarter of the shared memory.
KernelLaunch SmallBatched::groupsLaunch(const std::string& expression, int64_t batch,
                                        int threadsPerMatrix, size_t bytesPerMatrix,
                                        llvm::ArrayRef<void*> args) const {
  int64_t perBlock = std::max<int64_t>(
      1, std::min<int64_t>({256 / threadsPerMatrix, std::max<int64_t>(batch, 1),
                            static_cast<int64_t>(maxSharedBytes_ / 4 / bytesPerMatrix)}));
  KernelLaunch l{kernel(expression), {}, {args.begin(), args.end()}};
  l.config.block = dim3(threadsPerMatrix, static_cast<unsigned>(perBlock));
  l.config.grid = dim3(static_cast<unsigned>((batch + perBlock - 1) / perBlock));
  l.config.sharedBytes = perBlock * bytesPerMatrix;
  return l;
}

template <typename T>
void SmallBatched::cholesky(int64_t batch, int64_t n, const T* a, T* l, bool upper, int* info,
                            cudaStream_t stream, int threadsPerMatrix) const {
  if (!fitsCholesky(n, sizeof(T)))
    throw Error(fmt::format("internal error: small batched cholesky of n = {}", n));
  // n threads per matrix, or a multiple of n: the rows of the trailing update.
  int64_t threads = threadsPerMatrix ? threadsPerMatrix : choleskyThreads(n);
  int dim = static_cast<int>(n), up = upper;
  groupsLaunch(kernelName("smallCholesky", typeName<T>()), batch,
               static_cast<int>(n * std::max<int64_t>(1, threads / n)), choleskyBytes(n, sizeof(T)),
               {slot(batch), slot(dim), slot(a), slot(l), slot(info), slot(up)})
      .enqueue(stream);
}

template <typename T>
void SmallBatched::triangularSolve(int64_t batch, int64_t n, int64_t cols, const T* a, const T* b,
                                   T* x, TriangleFlags flags, int* info, cudaStream_t stream,
                                   int threadsPerMatrix) const {
  if (!fitsTriangularSolve(n, cols, sizeof(T)))
    throw Error(fmt::format("internal error: small batched triangular solve of n = {}", n));
  int dim = static_cast<int>(n), c = static_cast<int>(cols);
  int lower = flags.lower, transpose = flags.transpose, unit = flags.unit;
  groupsLaunch(kernelName("smallTriangularSolve", typeName<T>()), batch,
               threadsPerMatrix ? threadsPerMatrix
                                : static_cast<int>(std::min<int64_t>(n * cols, 256)),
               solveBytes(n, cols, sizeof(T)),
               {slot(batch), slot(dim), slot(c), slot(a), slot(b), slot(x), slot(info), slot(lower),
                slot(transpose), slot(unit)})
      .enqueue(stream);
}

int64_t SmallBatched::tallGramPartials(int64_t batch, int64_t rows, int64_t n) {
  int64_t width = rowsFor(kTallGramWidths, n);
  return batch * tallGramBlocks(rows) * width * width;
}

template <typename T>
void SmallBatched::tallGram(int64_t batch, int64_t rows, int64_t n, const T* x, double* partials,
                            T* c, cudaStream_t stream) const {
  int width = rowsFor(kTallGramWidths, n);
  if (!width || batch > 65535)
    throw Error(fmt::format("internal error: tall gram of {} columns, batch {}", n, batch));
  int64_t blocks = tallGramBlocks(rows), chunk = (rows + blocks - 1) / blocks;
  int cols = static_cast<int>(n), parts = static_cast<int>(blocks);
  KernelLaunch sums{kernel(fmt::format("tallGram<{}, {}>", typeName<T>(), width)),
                    {},
                    {slot(rows), slot(cols), slot(chunk), slot(x), slot(partials)}};
  sums.config.grid = dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(batch));
  sums.config.block = dim3(256);
  // The groups' sums (256 / (width / 4)^2 groups of width^2 doubles), then the
  // staged rows (1024 elements).
  int side = width / 4;
  sums.config.sharedBytes = 256 / (side * side) * width * width * sizeof(double) + 1024 * sizeof(T);
  sums.enqueue(stream);
  KernelLaunch total{kernel(fmt::format("tallGramSum<{}, {}>", typeName<T>(), width)),
                     LaunchConfig::linear(batch * n * n * 32, 256, stream), // a warp an entry
                     {slot(batch), slot(cols), slot(parts), slot(partials), slot(c)}};
  total.enqueue(stream);
}

template <typename T>
void SmallBatched::luSolve(int64_t batch, int64_t n, int64_t cols, const T* a, const T* b, T* x,
                           int* info, cudaStream_t stream) const {
  if (!fitsLuSolve(n))
    throw Error(fmt::format("internal error: tiny LU solve of n = {}", n));
  KernelLaunch l{kernel(fmt::format("tinyLuSolve<{}, {}>", typeName<T>(), n)),
                 LaunchConfig::linear(batch * cols, 128, stream),
                 {slot(batch), slot(cols), slot(a), slot(b), slot(x), slot(info)}};
  l.enqueue(stream);
}

KernelLaunch SmallBatched::choleskySolveLaunch(int64_t batch, const SpdMatrices& form, int64_t cols,
                                               size_t elementSize, const void* a, const void* b,
                                               void* x, int* info) const {
  if (!fitsCholeskySolve(form, cols, elementSize))
    throw Error(fmt::format("internal error: small batched cholesky solve of n = {}, {} columns",
                            form.n, cols));
  const char* type = elementSize == sizeof(float) ? "float" : "double";
  KernelLaunch l;
  // Many right-hand sides of few matrices: the columns in chunks, a unit (lanes or
  // a block) each, every unit factoring its matrix again (passes/RoutePolicy.h).
  int lanes = rowsFor(kWarpRows, form.n);
  int64_t chunks =
      passes::chooseSolveColumnChunks(passes::RoutePolicy::gpu(), batch, cols, lanes != 0);
  int64_t chunk = (cols + chunks - 1) / chunks;
  chunks = (cols + chunk - 1) / chunk;
  int64_t units = batch * chunks;
  if (lanes) {
    int64_t perBlock = kWarpThreads / lanes;
    l.kernel = kernel(kernelName("warpCholeskySolve", type, lanes));
    l.config.block = dim3(kWarpThreads);
    l.config.grid = dim3(static_cast<unsigned>((units + perBlock - 1) / perBlock));
    l.config.sharedBytes = perBlock * warpSharedElements(lanes, elementSize) * elementSize;
  } else {
    int rows = rowsFor(kBlockRows, form.n);
    l.kernel = kernel(kernelName("blockCholeskySolve", type, rows));
    l.config.block = dim3(kBlockThreads);
    l.config.grid = dim3(static_cast<unsigned>(units));
    l.config.sharedBytes = blockSharedElements(rows, elementSize) * elementSize;
  }
  if (passes::logRoutes())
    fmt::print(stderr, "[graphc] route: cholesky solve of {} x {}^2, {} columns: {} x {}\n", batch,
               form.n, cols, chunks, chunk);
  auto real = [&](double v) {
    return elementSize == sizeof(float) ? slot(static_cast<float>(v)) : slot(v);
  };
  l.args = {slot(batch),
            slot(static_cast<int>(form.n)),
            slot(static_cast<int>(cols)),
            slot(static_cast<int>(form.k)),
            slot(static_cast<int>(form.form)),
            real(form.scale),
            real(form.shift),
            slot(static_cast<int>(chunk)),
            slot(a),
            slot(b),
            slot(x),
            slot(info)};
  return l;
}

template <typename T>
void SmallBatched::gram(int64_t batch, int64_t rows, int64_t k, const T* x, T* s,
                        cudaStream_t stream) const {
  if (!fitsGram(rows, sizeof(T)) || k > INT_MAX)
    throw Error(fmt::format("internal error: small batched gram of {} x {}", rows, k));
  int r = static_cast<int>(rows), depth = static_cast<int>(k);
  groupsLaunch(kernelName("smallGram", typeName<T>()), batch, static_cast<int>(gramThreads(rows)),
               gramBytes(rows, sizeof(T)), {slot(batch), slot(r), slot(depth), slot(x), slot(s)})
      .enqueue(stream);
}

template <typename T>
void SmallBatched::invertTriangles(int64_t n, int64_t nb, const T* t, int64_t ld, bool upper,
                                   bool unit, T* inverses, cudaStream_t stream) const {
  size_t bytes = (nb * 36 + 32 * (nb + 4)) * sizeof(T); // invertTriangles' Y and P
  if (nb % 32 || nb > 256 || n > INT_MAX || bytes > maxSharedBytes_)
    throw Error(fmt::format("internal error: inverting the {} x {} blocks of a triangle", nb, nb));
  if (n == 0)
    return;
  int dim = static_cast<int>(n), block = static_cast<int>(nb), up = upper, ones = unit;
  KernelLaunch l{kernel(kernelName("invertTriangles", typeName<T>())),
                 {},
                 {slot(dim), slot(block), slot(t), slot(ld), slot(up), slot(ones), slot(inverses)}};
  l.config.block = dim3(256);
  l.config.grid = dim3(static_cast<unsigned>(nb / 32), static_cast<unsigned>((n + nb - 1) / nb));
  l.config.sharedBytes = bytes;
  l.enqueue(stream);
}

template <typename T>
void SmallBatched::panelSolve(int64_t batch, int64_t rows, int64_t cols, const T* a, const T* b,
                              T* x, TriangleFlags flags, bool right, cudaStream_t stream) const {
  const int64_t n = right ? cols : rows, rhs = right ? rows : cols;
  if (!fitsPanelSolve(n, sizeof(T)) || rhs > INT_MAX)
    throw Error(
        fmt::format("internal error: panel solve of n = {} with {} right-hand sides", n, rhs));
  if (batch * rhs == 0)
    return;
  // kernels/BlockedSolve.cu solves M Z = C with M lower (read from its last row
  // where M is upper). On the left M = op(A) and Z = X; on the right X op(A) = B is
  // op(A)' X' = B', so M = op(A)', lower where op(A) is upper, and Z = X'.
  // op(A)(i, k) is A[i n + k], or A[k n + i] transposed.
  const bool mLower = (flags.lower != flags.transpose) != right;
  const bool mSwapped = flags.transpose != right; // M(i, k) = A[k n + i]
  int64_t si = mSwapped ? 1 : n, sk = mSwapped ? n : 1, yi = right ? 1 : cols,
          yc = right ? cols : 1;
  int64_t tStride = n * n, yStride = rows * cols;
  int dim = static_cast<int>(n), count = static_cast<int>(rhs), reverse = !mLower,
      unit = flags.unit;
  KernelLaunch l{kernel(kernelName("panelSolve", typeName<T>())),
                 {},
                 {slot(dim), slot(count), slot(batch), slot(a), slot(si), slot(sk), slot(tStride),
                  slot(reverse), slot(unit), slot(b), slot(x), slot(yi), slot(yc), slot(yStride)}};
  l.config.block = dim3(256);
  l.config.grid = dim3(static_cast<unsigned>((rhs + 31) / 32),
                       static_cast<unsigned>(std::min<int64_t>(batch, 65535)));
  l.config.sharedBytes = panelSolveBytes(n, sizeof(T));
  l.enqueue(stream);
}

template <typename T>
void SmallBatched::solveVector(int64_t batch, int64_t n, const T* a, int64_t aStride,
                               TriangleFlags flags, T* y, int64_t yStride, int* counters,
                               cudaStream_t stream) const {
  if (batch * n == 0)
    return;
  GRAPHC_CUDA_CHECK(cudaMemsetAsync(counters, 0, sizeof(int) * batch, stream));
  int opLower = flags.lower != flags.transpose, trans = flags.transpose, unit = flags.unit;
  constexpr int64_t kMaxGridY = 65535;
  for (int64_t b = 0; b < batch; b += kMaxGridY) {
    const T* ab = a + b * aStride;
    T* yb = y + b * yStride;
    int* cb = counters + b;
    KernelLaunch l{kernel(kernelName("solveVector", typeName<T>())),
                   {},
                   {slot(n), slot(ab), slot(aStride), slot(opLower), slot(trans), slot(unit),
                    slot(yb), slot(yStride), slot(cb)}};
    l.config.block = dim3(256);
    l.config.grid = dim3(static_cast<unsigned>((n + 63) / 64),
                         static_cast<unsigned>(std::min(batch - b, kMaxGridY)));
    l.config.sharedBytes = (64 * 65 + 6 * 64) * sizeof(T); // the tile, dg, part, ys
    l.enqueue(stream);
  }
}

template void SmallBatched::cholesky<float>(int64_t, int64_t, const float*, float*, bool, int*,
                                            cudaStream_t, int) const;
template void SmallBatched::cholesky<double>(int64_t, int64_t, const double*, double*, bool, int*,
                                             cudaStream_t, int) const;
template void SmallBatched::triangularSolve<float>(int64_t, int64_t, int64_t, const float*,
                                                   const float*, float*, TriangleFlags, int*,
                                                   cudaStream_t, int) const;
template void SmallBatched::triangularSolve<double>(int64_t, int64_t, int64_t, const double*,
                                                    const double*, double*, TriangleFlags, int*,
                                                    cudaStream_t, int) const;
template void SmallBatched::tallGram<float>(int64_t, int64_t, int64_t, const float*, double*,
                                            float*, cudaStream_t) const;
template void SmallBatched::tallGram<double>(int64_t, int64_t, int64_t, const double*, double*,
                                             double*, cudaStream_t) const;
template void SmallBatched::luSolve<float>(int64_t, int64_t, int64_t, const float*, const float*,
                                           float*, int*, cudaStream_t) const;
template void SmallBatched::luSolve<double>(int64_t, int64_t, int64_t, const double*, const double*,
                                            double*, int*, cudaStream_t) const;
template void SmallBatched::gram<float>(int64_t, int64_t, int64_t, const float*, float*,
                                        cudaStream_t) const;
template void SmallBatched::gram<double>(int64_t, int64_t, int64_t, const double*, double*,
                                         cudaStream_t) const;

template void SmallBatched::solveVector<float>(int64_t, int64_t, const float*, int64_t,
                                               TriangleFlags, float*, int64_t, int*,
                                               cudaStream_t) const;
template void SmallBatched::solveVector<double>(int64_t, int64_t, const double*, int64_t,
                                                TriangleFlags, double*, int64_t, int*,
                                                cudaStream_t) const;
template void SmallBatched::panelSolve<float>(int64_t, int64_t, int64_t, const float*, const float*,
                                              float*, TriangleFlags, bool, cudaStream_t) const;
template void SmallBatched::panelSolve<double>(int64_t, int64_t, int64_t, const double*,
                                               const double*, double*, TriangleFlags, bool,
                                               cudaStream_t) const;
template void SmallBatched::invertTriangles<float>(int64_t, int64_t, const float*, int64_t, bool,
                                                   bool, float*, cudaStream_t) const;
template void SmallBatched::invertTriangles<double>(int64_t, int64_t, const double*, int64_t, bool,
                                                    bool, double*, cudaStream_t) const;

} // namespace graphc::cuda
