//===- tests/support/GraphFiles.cpp - The repository's .gir files ---------===//
#include "support/GraphFiles.h"

#include "ir/Parser.h"
#include "support/Error.h"

#include <fstream>
#include <sstream>

namespace graphc::testing {

const std::vector<std::string> kExampleGraphFiles = {"examples/enkf.gir", "examples/enkf_orig.gir",
                                                     "examples/enkf_small.gir"};
const std::vector<std::string> kFusionGoldenFiles = {
    "tests/golden/fuse/chains.gir", "tests/golden/fuse/reductions.gir",
    "tests/golden/fuse/unfused.gir", "tests/golden/lower/plan.gir"};

std::string readSourceFile(const std::string& path) {
  std::ifstream in(std::string(GRAPHC_SOURCE_DIR) + "/" + path);
  if (!in)
    throw Error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::unique_ptr<ir::Graph>> graphsOf(const std::string& text, const std::string& name) {
  std::vector<std::unique_ptr<ir::Graph>> graphs;
  for (size_t start = 0;;) {
    size_t end = text.find("// -----", start);
    ir::Module m = ir::parseModule(text.substr(start, end - start), name);
    for (auto& g : m.graphs)
      graphs.push_back(std::move(g));
    if (end == std::string::npos)
      return graphs;
    start = end + 8;
  }
}

std::string toF32(std::string text) {
  for (size_t at = text.find("f64"); at != std::string::npos; at = text.find("f64", at))
    text.replace(at, 3, "f32");
  return text;
}

} // namespace graphc::testing
