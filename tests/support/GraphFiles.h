//===- tests/support/GraphFiles.h - The repository's .gir files --*- C++ -*-===//
//
// The example and golden .gir files as test inputs for the suites that run graphs
// two ways (fused and not, GPU and CPU).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <memory>
#include <string>
#include <vector>

namespace graphc::testing {

/// The example graphs and the fusion and lowering golden files, relative to the
/// repository root.
extern const std::vector<std::string> kExampleGraphFiles;
extern const std::vector<std::string> kFusionGoldenFiles;

/// The text of `path`, relative to the repository root.
std::string readSourceFile(const std::string& path);

/// The graphs of a .gir text whose cases may be separated by `// -----` lines.
std::vector<std::unique_ptr<ir::Graph>> graphsOf(const std::string& text, const std::string& name);

/// The same text in single precision (every f64 becomes f32).
std::string toF32(std::string text);

} // namespace graphc::testing
