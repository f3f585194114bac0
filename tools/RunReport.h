//===- tools/RunReport.h - What `graphc run` measured ---------*- C++ -*-===//
//
// `graphc run` fills a RunReport as it goes (the backend and why auto chose it, the
// compile time, the upload of the inputs into the backend's memory, the runs on
// arrays already there, the download of the outputs, and each output's checksums)
// and prints it as text or, with --json, as one JSON object:
//
//   {"graph": "enkf", "backend": "cpu", "auto": "...", "compile_ms": 0.41,
//    "upload_ms": 0.002, "run_ms": {"median": 0.39, "min": 0.38, "runs": 5},
//    "download_ms": 0.001, "outputs": [{"type": "f64[6,6]", "sum": -0.41,
//    "abs_sum": 13.1, "file": "out/enkf_out0.npy"}]}
//
// A sharded run adds "ranks" and, per output of a rank's own, its "share". Non-finite
// checksums are JSON null; absent strings too.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

namespace graphc::tools {

/// The measurements and results of one `graphc run`.
struct RunReport {
  struct Output {
    std::string type; ///< "f64[6,6]"
    double sum = 0, abs = 0;
    std::string file;  ///< where it was written, or ""
    std::string share; ///< a rank's share, "axis 0: [14, 27) of 40", or ""
  };
  std::string graph, backend;
  std::string autoReason; ///< why auto chose the backend; "" when it was named
  std::string passes;     ///< --passes, or "" for the default pipeline
  std::string ranks;      ///< "4 ranks" or "rank 1 of 2 at unix:PATH"; "" unsharded
  size_t inputs = 0, randomInputs = 0;
  uint64_t seed = 0;
  double compileMs = 0, uploadMs = 0, downloadMs = 0;
  std::vector<double> runMs; ///< each timed run on device-resident arrays
  std::vector<Output> outputs;

  /// The lines `graphc run` prints.
  std::string text() const;
  /// One JSON object, with a newline.
  std::string json() const;
};

} // namespace graphc::tools
