//===- runtime/cuda/StepProfile.cpp - GPU time per step of a program ------===//
#include "runtime/cuda/StepProfile.h"

#include "runtime/cuda/Check.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

namespace graphc::cuda {

bool StepProfile::enabled() {
  const char* v = std::getenv("GRAPHC_PROFILE");
  return v && std::strstr(v, "steps");
}

StepProfile::StepProfile(std::string name, std::vector<std::string> steps)
    : name_(std::move(name)), steps_(std::move(steps)), events_(steps_.size() + 1),
      ms_(steps_.size()) {
  for (cudaEvent_t& e : events_)
    GRAPHC_CUDA_CHECK(cudaEventCreate(&e));
}

StepProfile::~StepProfile() {
  if (!ms_.empty() && !ms_.front().empty())
    std::fputs(table().c_str(), stderr);
  for (cudaEvent_t e : events_)
    cudaEventDestroy(e);
}

void StepProfile::mark(size_t i, cudaStream_t stream) {
  GRAPHC_CUDA_CHECK(cudaEventRecord(events_[i], stream));
}

void StepProfile::finishRun(cudaStream_t stream) {
  GRAPHC_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (size_t i = 0; i < steps_.size(); ++i) {
    float ms = 0;
    GRAPHC_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[i], events_[i + 1]));
    ms_[i].push_back(ms);
  }
}

std::string StepProfile::table() const {
  std::vector<double> median;
  double sum = 0;
  for (std::vector<float> t : ms_) {
    std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
    median.push_back(t.empty() ? 0.0 : t[t.size() / 2]);
    sum += median.back();
  }
  size_t runs = ms_.empty() ? 0 : ms_.front().size();
  std::string out = fmt::format("profile of @{}: {} run(s), median ms per step\n", name_, runs);
  for (size_t i = 0; i < steps_.size(); ++i)
    out += fmt::format("  step {:>3} {:>9.4f} {:>5.1f}%  {}\n", i, median[i],
                       sum > 0 ? 100 * median[i] / sum : 0.0, steps_[i]);
  out += fmt::format("  sum      {:>9.4f}\n", sum);
  return out;
}

} // namespace graphc::cuda
