//===- codegen/CudaReductionPlan.h - The plan of a reduction kernel -------===//
//
// What the CUDA C++ of a reduction kernel (CudaReduction.cpp) is planned from:
// the passes over a segment (Emitter::Passes) and how a lane holds its share of
// the segment (Emitter::RowPlan), both made by Emitter::planReduction
// (CudaReductionPlan.cpp) with the kernel's launch form.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/CudaEmitter.h"

namespace graphc::codegen::detail {

/// What the passes over a segment of a reduction kernel compute: per stage its Reduce
/// instructions and the domain instructions they read, the domain outputs' instructions,
/// and the loop expressions of the launch form.
struct Emitter::Passes {
  int64_t length = 0;      ///< points per segment
  bool contiguous = false; ///< segments are contiguous runs of the domain
  int stages = 1;
  int varStages = 0;                     ///< stages with a var, which reads a cached row twice
  std::vector<std::vector<int>> reduces; ///< by stage
  std::vector<std::vector<bool>> forReductions; ///< by stage
  std::vector<bool> forOutputs;
  bool domainOutputs = false, reducedOutputs = false;
  ir::Shape keptExtents, reducedExtents, dense;
  std::string unitStart, unitStride, laneStart, laneStride;
};

/// How a lane holds its share of a segment.
///
/// Row caching: when the segment is read in more than one pass and a lane's share
/// of it is a few points, each input read at every point is loaded once into the
/// lane's registers (c<input>[u], its u-th point), all loads in flight at once, and
/// every pass reads the registers. Where a block's segment is longer, its cached
/// inputs go to shared memory instead when they fit CudaTarget (at most one row per
/// input, c<input>[j] at the segment's point j, each lane reading back only the
/// points it loaded, so that no barrier guards them, but where the row comes by
/// vectors, then one barrier) and the row would be read three times or more
/// (a var's two passes count twice): softmax over rows of 50257 f32 reads each row
/// from memory once. A var over cached rows takes two passes over the cache, the mean
/// and the squared deviations from it: plain sums, where merging moments across the
/// lanes (a division at every step) made row normalization over rows of 4097 f32
/// take 0.067 ms on an H200, against 0.038 in two passes. Vectors: in kernels
/// moving more than kWideBytes, cached rows and domain outputs of one type, f32 or
/// f64, in segments of a multiple of `width` points go in runs of `width` points
/// per lane, loaded and stored 16 bytes at a time where every such buffer is
/// aligned (W4's kernel on an H200: 73 us against 75.7 a point at a time); a lane's
/// u-th point is then point u % width of its u / width-th run (runs past the
/// segment's end, where the runs do not tile it, are skipped), and loads the same
/// at every segment and contiguous along it (layernorm's g and b) are read by
/// vectors too in the output pass. Rows of a length that is no multiple of `width`
/// are `peeled`: a row's runs start at its first aligned point, and the fewer than
/// 2 * width points before and after them go one to a lane, in one more register.
struct Emitter::RowPlan {
  int64_t lanes = 0, perLane = 0;
  std::vector<bool> cached; ///< by input
  bool caching = false, ragged = false;
  bool shared = false;                ///< cached in shared memory, not registers
  std::vector<int64_t> sharedOffsets; ///< by cached input: its row's byte offset
  int64_t sharedBytes = 0;
  int64_t width = 1;
  bool peeled = false;
  std::vector<int> rowVectors;
  /// Where a block's row in shared memory leaves no room for another block on its
  /// SM (a grid of a block an SM walking the rows, by vectors): each lane copies its
  /// runs of the next row into their slots (gc_copy_async) as it frees them, so
  /// that they arrive while the block stores its row. A run's slot is the same in
  /// every row: a peeled row's runs start 16 bytes in, its first h points before them.
  bool ahead = false;
};

} // namespace graphc::codegen::detail
