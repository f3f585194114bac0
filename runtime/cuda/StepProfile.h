//===- runtime/cuda/StepProfile.h - GPU time per step of a program -*- C++ -*-===//
//
// With GRAPHC_PROFILE=steps, every run of a prepared CUDA program is timed step by
// step: an event before each step and one after the last, read once the run is
// done. Profiled runs are enqueued step by step (no CUDA graph) and each waits for
// itself, so the times are the steps' own, without overlap. When the executable
// goes, a table of the steps' median times goes to stderr (medians: a first run
// pays for loading modules and creating handles).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

namespace graphc::cuda {

class StepProfile {
public:
  /// True when GRAPHC_PROFILE names "steps".
  static bool enabled();

  /// A profile of a program called `name` whose steps are called `steps`.
  StepProfile(std::string name, std::vector<std::string> steps);
  ~StepProfile(); ///< prints the table, when a run was timed
  StepProfile(const StepProfile&) = delete;
  StepProfile& operator=(const StepProfile&) = delete;

  /// Records the event before step `i` (i = steps: after the last) on `stream`.
  void mark(size_t i, cudaStream_t stream);
  /// Waits for the run marked on `stream` and adds its steps' times.
  void finishRun(cudaStream_t stream);

  /// The table: one line per step (median ms, share of the sum), then the sum.
  std::string table() const;

private:
  std::string name_;
  std::vector<std::string> steps_;
  std::vector<cudaEvent_t> events_;
  std::vector<std::vector<float>> ms_; ///< by step, one time per run
};

} // namespace graphc::cuda
