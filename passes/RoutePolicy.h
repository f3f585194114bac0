//===- passes/RoutePolicy.h - Where the GPU routes a step, by shape -*- C++ -*-===//
//
// One table of the shape thresholds that choose between routes on the GPU, and
// the functions that read it. Every threshold that picks a route by shape lives
// here, with the measurement it came from, so that a route change is one edit and
// a test (tests/passes/RoutePolicyTest.cpp) pins the choices on the sweep's shapes
// (bench/Sweep.h). GRAPHC_LOG=routes prints each choice with its reason.
//
// Reductions. A fused reduction kernel gives each segment (one output element) one
// thread, when the reduced axes are not the trailing ones, or one block, when they
// are and a segment is long. With few outputs that leaves the GPU idle: a sum over
// axis 0 of f32[1048576,4] ran on 4 threads (16 ms on an H200). Such a reduction
// is split (passes/SplitReductions.h): the reduced axis is cut into `chunks`
// pieces, each reduced by its own threads or blocks, and the pieces are combined
// by a second reduction over them (which may split again).
//
// Small SPD solves with many right-hand sides. The fused Cholesky-solve kernels
// (runtime/cuda/kernels/SpdSolve.cu) give each matrix a warp or a block; with one
// matrix and 10^5 columns that is one block for the whole solve (100 ms at
// n = 16). The columns are cut into chunks, each on its own warp group or block,
// every one factoring the (small) matrix again.
//
// Library steps. Small matrices take SmallBatched's kernels where those beat
// cuBLAS and cuSOLVER, batched LU and QR the batched routines, X'X of a tall
// matrix a kernel that gives each run of rows a block, and large f32 calls run in
// f64 on the f64 tensor cores.
//
// GRAPHC_ROUTES=name=value,... sets thresholds of the table for a process (for
// example GRAPHC_ROUTES=blockedSolveManyColumns=1 to time the blocked solve where
// trsm is the default).
//
// QR. Up to 512 rows, a matrix whose columns fit in the shared memory of a
// cluster of up to 8 blocks can be factored by one kernel (runtime/cuda/ClusterQr.h),
// a block per 32 columns or so (fewer blocks: fewer columns to update in parallel;
// more: more work per cluster barrier of a step). A step of it takes 1-2 us
// whatever the size, so one matrix takes it while its steps are few; batches
// take it (their clusters run side by side, where cuSOLVER loops over the items)
// unless the matrices are so small that cuBLAS's geqrfBatched, a thread block
// per several matrices, has the higher throughput.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace graphc::passes {

/// The thresholds. Defaults are for the H200 (132 multiprocessors), set from its
/// occupancy (threads and blocks to fill it) and launch cost, then checked on the
/// sweep of 2026-12-01 (docs/bench/sweep.md): every reduction they split ran at or
/// under the best peer's time, argmax over f32[8192,8192] aside (its accumulator, not
/// the split). They have not yet been tuned by sweeping the thresholds themselves.
struct RoutePolicy {
  // --- reductions (passes/SplitReductions.h) ---
  /// Thread-per-segment reductions (reduced axes not trailing) with fewer segments
  /// than this are split; the split aims at twice this many threads.
  int64_t reduceThreadTarget = 65536;
  /// ... when the reduced extent is at least this (a shorter walk is cheaper than
  /// a second launch, about 2 us in a captured run).
  int64_t reduceMinSplitWalk = 128;
  /// Each thread of a split walks at least this many points.
  int64_t reduceMinPartWalk = 32;
  /// Block-per-segment reductions (trailing reduced axes) with fewer segments than
  /// this (two blocks per multiprocessor) are split into about twice as many...
  int64_t reduceBlockTarget = 264;
  /// ... when a segment has at least this many points,
  int64_t reduceMinSplitLength = 16384;
  /// ... into chunks of at least this many points.
  int64_t reduceMinChunk = 4096;

  // --- fused small Cholesky solves (runtime/cuda/SmallBatched.h) ---
  /// Aim at this many (matrix, column chunk) units for the warp kernels (n <= 32)...
  int64_t solveWarpUnits = 4096;
  /// ... and at this many blocks for the block kernels (n <= 128).
  int64_t solveBlockUnits = 528;
  /// A chunk has at least this many columns (each chunk factors the matrix again).
  int64_t solveMinChunkCols = 32;

  // --- QR in one cluster of blocks (runtime/cuda/ClusterQr.h) ---
  /// Matrices with more rows go to cuSOLVER (the kernel's registers hold a column).
  int64_t qrClusterMaxRows = 512;
  /// The cluster has a block per this many columns (a power of two of blocks)...
  int64_t qrClusterColumnsPerCta = 32;
  /// ... at most this many (the portable cluster size), more where the columns
  /// would not fit in fewer blocks' shared memory.
  int64_t qrClusterMaxCtas = 8;
  /// A block factors a panel of up to this many columns with block barriers
  /// only; the cluster meets once a panel. f64 on an H200 (2026-12-02, ms, panels
  /// of at most 4 / 8 / 16 / 32 columns): 256 x 256 0.85 / 0.85 / 0.81 / 1.08,
  /// 100 x 128 x 128 0.73 / 0.69 / 0.64 / 0.81, 1000 x 32 x 32 0.20 / 0.19 /
  /// 0.16 / 0.17, 256 x 32 0.117 / 0.109 / 0.094 / 0.103.
  int64_t qrClusterPanelColumns = 16;
  /// One matrix takes the kernel up to this many rows. One H100, 2026-12-07, ms
  /// with Q, kernel against cuSOLVER (bench/results/2026-12-07-h100-cluster-qr-streamed.jsonl):
  /// f64 128 x 128 0.235 / 0.558, 224 x 224 0.581 / 0.743, 256 x 256 0.675 / 0.779,
  /// 256 x 128 0.323 / 0.391, 300 x 300 1.360 / 1.016, 512 x 128 0.515 / 0.488,
  /// 512 x 64 0.255 / 0.265; f32 256 x 256 0.497 / 0.754.
  int64_t qrClusterSingleMaxRows = 256;
  /// Batches (and a matrix among deferred runs, preferClusterQr's `sharing`) take
  /// it from two matrices, or from qrClusterMinBatchTall of more than
  /// qrClusterTallRows rows (a single one of those is faster on cuSOLVER; 2 x 300 x
  /// 300: 1.58 / 1.98, 2 x 256 x 256: 0.81 / 1.53; 8 x 256 x 256: 0.82 / 6.04).
  int64_t qrClusterTallRows = 256;
  int64_t qrClusterMinBatchTall = 2;
  /// R is streamed (each reflector published to the cluster as it is made, no
  /// cluster barrier) for matrices of more than this many rows whose launch
  /// gives every block a multiprocessor of its own: a block waiting for a
  /// reflector spins, which beside another cluster's block takes that block's
  /// time. The kernels of up to 64 rows have no streams (kernels/ClusterQr.cu's
  /// kStreams), which keeps them in 64 registers, four blocks an SM.
  int64_t qrClusterStreamMinRows = 64;
  /// Batches of matrices with no dimension above this stay on geqrfBatched:
  /// 4096 x 16 x 16 0.33 / 0.14, 100000 x 4 x 4 1.82 / 0.24; 1024 x 24 x 24
  /// 0.17 / 0.25, 512 x 32 x 32 0.12 / 0.36, 64 x 128 x 128 0.55 / 9.19.
  int64_t qrBatchedTinyMaxN = 16;

  // --- library steps (runtime/cuda/LibraryCall.h) ---
  /// Batched Cholesky up to this order takes SmallBatched's kernel, left-side
  /// triangular solves up to smallSolveMaxN with at most smallSolveMaxCols
  /// right-hand sides too: faster than potrfBatched and trsmBatched at every batch
  /// measured on an H200 (commit 409da7f); from n = 128 on, potrfBatched is faster.
  int64_t smallCholeskyMaxN = 96;
  int64_t smallSolveMaxN = 128;
  int64_t smallSolveMaxCols = 16;
  /// A batch of X X' up to this order takes SmallBatched's Gram kernel: both
  /// triangles in one launch, faster than gemm and the mirror up to n = 16 (65536 x 4:
  /// 0.10 against 0.20 ms for the gemm alone; 16384 x 16: 0.072 against 0.067 + the
  /// mirror); from n = 32 on, gemm is 2-4x faster (SmallBatched.DISABLED_FusedTimings).
  int64_t smallGramMaxN = 16;
  /// X'X of up to 32 columns takes SmallBatched's tall Gram from this many rows on:
  /// its blocks then sum 1024 rows or more, where cuBLAS leaves the GPU mostly idle
  /// (10^6 x 16: 0.111 ms in f32 against syrk's 0.177, 0.109 in f64 against gemm's
  /// 0.106; 2026-12-01, d983e9b).
  int64_t tallGramMinRows = 4096;
  /// Other syrks up to this order are one (batched) gemm: one launch, split along k
  /// where k is long (128 x 16384: syrk 0.12 ms in f64, gemm 0.031; in f32 1.36
  /// against 0.031); larger ones syrk per item.
  int64_t gemmSyrkMaxN = 256;
  /// Batched LU and QR up to this order take cuBLAS's batched routines rather than
  /// cuSOLVER per item (f64 solves: 4096 x 32 take 335 ms looped, 0.24 ms batched;
  /// 512 x 128 163 ms against 0.70); not measured above 128.
  int64_t batchedFactorMaxN = 128;
  /// Triangular solves of a triangle of at least this order with two or more
  /// right-hand sides go by blocks through gemm (runtime/cuda/BlockedSolve.h), and
  /// smaller ones with blockedSolveManyColumns or more. f64, ms of `graphc run` of
  /// T + nI then the solve, left and right side, the other route against the blocked
  /// one (one H100, 2026-12-07, bench/results/2026-12-07-h100-trsm-crossover.jsonl):
  /// n = 512 with 64 / 4096 right-hand sides 0.159 / 0.231 against 0.120 / 0.183;
  /// n = 256 0.085 / 0.117 against 0.104 / 0.126; n = 64 and 128 even within 10%
  /// up to 4096. n = 3000 (H200): 0.47 / 0.55 / 0.37 / 0.82 ms for 8 / 32 / 256 /
  /// 3000 right-hand sides, against trsm's 0.55 / 1.4 / - / 1.98; n = 128 with
  /// 16384: trsm 0.06-0.15 ms, a gemm with the inverse 0.026.
  int64_t blockedSolveMinN = 512;
  int64_t blockedSolveManyColumns = 16384;
  /// Other triangular solves (not of one vector) with a triangle up to this order
  /// take SmallBatched's panel solve (32 right-hand sides a block, the triangle
  /// panel by panel through shared memory; f64 fits up to 288, f32 up to 576). Off
  /// (0) until the kernel has run on a GPU and its crossover against cuBLAS's trsm
  /// is measured (GRAPHC_ROUTES=panelSolveMaxN=288 turns it on): it is for W6's
  /// 256 x 256 right-side solve, where trsm takes about 0.08 ms, latency-bound.
  int64_t panelSolveMaxN = 0;
  /// f32 gemm, syrk and blocked triangular solves with every dimension at least
  /// this run in f64 where the f64 tensor cores are faster: at n = 3000 sgemm takes
  /// 1.28 ms against dgemm's 0.92, syrk 0.70 against 0.52, the blocked solve 1.03
  /// against 0.83, the conversions about 0.03 (and the results are more accurate).
  int64_t singleInDoubleMinN = 1024;

  // --- deferred runs (runtime/cuda/CudaBackend.cpp) ---
  /// Deferred runs of a program go round up to this many lanes (streams with their
  /// own buffers), so that runs that leave the GPU mostly idle overlap (W6's 100
  /// deferred QR JVPs: 0.87 ms a run on one lane, 0.174 on 8 and 0.165 on 16 with
  /// cuSOLVER's QR, 0.128 on 16 with the cluster QR kernel, preferClusterQr's
  /// `sharing`)...
  int64_t deferredMaxLanes = 16;
  /// ... as many as hold at most this much device memory together (a lane holds
  /// the program's slots and library workspace).
  int64_t deferredLanesBytes = int64_t{512} << 20;

  /// The policy the GPU routes by: the defaults, with the thresholds that
  /// GRAPHC_ROUTES names set as it says (read once, on the first call).
  static const RoutePolicy& gpu();
  /// These thresholds with those of `spec` set: "name=value,name=value" (names as
  /// above, values integers), so that a route's crossover can be measured, or set
  /// for another GPU, without a rebuild. Throws graphc::Error naming the unknown
  /// name or the malformed value.
  RoutePolicy overridden(const std::string& spec) const;
};

/// How a reduction splits: into `chunks` pieces of its reduced extent (0: not at
/// all), and why.
struct ReductionSplit {
  int64_t chunks = 0;
  std::string reason;
};

/// The split of a reduction with `outputs` output elements, each reducing `extent`
/// points, along trailing axes (`contiguous`) or not. chunks divides extent.
ReductionSplit chooseReductionSplit(const RoutePolicy& p, int64_t outputs, int64_t extent,
                                    bool contiguous);

/// How many column chunks a fused Cholesky solve of `batch` matrices
/// with `cols` right-hand sides runs in (1: one unit per matrix). `warpKernel`: the
/// kernel of n <= 32, a few lanes per matrix; else a block per matrix.
int64_t chooseSolveColumnChunks(const RoutePolicy& p, int64_t batch, int64_t cols, bool warpKernel);

/// The shape of the cluster QR kernel for m x n matrices: blocks per matrix and
/// columns per panel; 0 blocks where the kernel does not take them.
struct QrCluster {
  int ctas = 0;
  int panel = 0;
};

/// The shared bytes a block of the cluster QR kernel of m x n matrices with
/// `ctas` blocks and panels of `panel` columns needs: 16 bytes (the count of
/// streamed reflectors), its columns of A (stride m + 1, in panels dealt out in
/// turn), their taus, the taus of two panels, and the larger of two panel
/// buffers (with `qByRows`, and its share of Q's rows, m / ctas rounded up, of m
/// columns) and its columns of Q with one panel buffer.
int64_t qrClusterSharedBytes(int64_t m, int64_t n, int64_t ctas, int64_t panel, size_t elementSize,
                             bool qByRows = false);

/// True when `batch` m x n QRs on `ctas` blocks each stream R's reflectors
/// (qrClusterStreamMinRows) on a device of `multiprocessors` SMs.
bool qrClusterStreamed(const RoutePolicy& p, int64_t batch, int64_t m, int64_t ctas,
                       int64_t multiprocessors);

/// True when the blocks of a streamed QR (qrClusterStreamed) accumulate Q's rows
/// as the panels are made, which takes the forming of Q off the critical path:
/// where those rows fit in `maxSharedBytes` beside the rest.
bool qrClusterQByRows(const RoutePolicy& p, int64_t batch, int64_t m, int64_t n, int64_t ctas,
                      int64_t panel, size_t elementSize, size_t maxSharedBytes,
                      int64_t multiprocessors);

/// The cluster QR kernel's shape for m x n matrices of `elementSize`-byte
/// elements on a device with `maxSharedBytes` per block: the blocks by columns
/// (more where the columns would not fit in fewer blocks' shared memory), the
/// widest panel up to `widest` (0: the policy's) that fits and that the blocks'
/// columns need.
QrCluster chooseQrCluster(const RoutePolicy& p, int64_t m, int64_t n, size_t elementSize,
                          size_t maxSharedBytes, int64_t widest = 0);

/// True when `batch` m x n QRs that the cluster kernel can take
/// (chooseQrCluster's blocks are not 0) are faster there than in
/// cuBLAS's and cuSOLVER's routines. With `sharing` the call runs beside others on
/// other streams (deferred runs on several lanes): throughput counts, and one
/// matrix is a batch of one among many, so it takes the kernel (a few
/// multiprocessors) as batches do.
bool preferClusterQr(const RoutePolicy& p, int64_t batch, int64_t m, int64_t n,
                     bool sharing = false);

/// How the GPU computes a syrk: C = X X' (X n x k) or with `transpose` X'X (X k x n),
/// `batch` of them.
enum class SyrkRoute {
  SmallGram, ///< SmallBatched's Gram kernel (a batch of tiny X X')
  TallGram,  ///< SmallBatched's tall Gram (X'X of many rows and few columns)
  Gemm,      ///< one (batched) gemm, then the mirror
  Syrk,      ///< cuBLAS's syrk per item, then the mirror
};
/// The route of that syrk, given the widest X'X the tall Gram takes.
SyrkRoute chooseSyrkRoute(const RoutePolicy& p, int64_t batch, int64_t n, int64_t k, bool transpose,
                          int64_t tallGramMaxN);

/// True when a triangular solve with an n x n triangle and `columns` right-hand
/// sides (rows, on the right side) goes by blocks through gemm rather than trsm.
bool preferBlockedSolve(const RoutePolicy& p, int64_t n, int64_t columns);

/// True when a triangular solve with an n x n triangle that goes neither by blocks
/// nor by SmallBatched's small or one-vector kernels takes the panel solve rather
/// than trsm.
bool preferPanelSolve(const RoutePolicy& p, int64_t n);

/// The deferred lanes of a program whose lane holds `laneBytes` of device memory:
/// from 1 to deferredMaxLanes.
size_t chooseDeferredLanes(const RoutePolicy& p, int64_t laneBytes);

/// True when GRAPHC_LOG names `routes` (or `all`): route choices go to stderr.
bool logRoutes();

} // namespace graphc::passes
