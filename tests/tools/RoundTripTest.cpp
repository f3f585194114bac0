//===- tests/tools/RoundTripTest.cpp - `graphc dump` round-trips every .gir ===//
//
// Finds every .gir file in the repository (skipping build folders and hidden
// ones) and checks, through the binary, that dumping a valid input and dumping the
// dump again give the same text. Golden files (tests/golden/**) hold cases split by
// `// -----`; cases with `// ERROR:` lines are meant to fail and are skipped. The
// search happens when the test runs, so new files are covered without a rebuild.
//
//===----------------------------------------------------------------------===//
#include "RunTool.h"

#include "llvm/ADT/StringRef.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace graphc::testing;
namespace fs = std::filesystem;

namespace {

/// One input to round-trip: the text and where it came from.
struct Input {
  std::string where;
  std::string text;
};

/// Every .gir file under the repository root, sorted, minus build and hidden folders.
std::vector<fs::path> girFiles() {
  std::vector<fs::path> files;
  fs::path root(GRAPHC_SOURCE_DIR);
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    std::string filename = it->path().filename().string(); // outlives the StringRef
    llvm::StringRef name = filename;
    if (it->is_directory() && (name.startswith("build") || name.startswith(".")))
      it.disable_recursion_pending();
    else if (it->is_regular_file() && name.endswith(".gir"))
      files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// The cases of a golden file, or the whole file as one case elsewhere; without
/// the cases that expect an error.
std::vector<Input> validInputs(const fs::path& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  std::string rel = fs::relative(file, GRAPHC_SOURCE_DIR).string();
  bool golden = llvm::StringRef(rel).startswith("tests/golden/");

  std::vector<Input> inputs(1, {rel, ""});
  bool expectsError = false;
  std::istringstream lines(text.str());
  for (std::string line; std::getline(lines, line);) {
    llvm::StringRef t = llvm::StringRef(line).trim();
    if (golden && t == "// -----") {
      if (expectsError)
        inputs.pop_back();
      expectsError = false;
      inputs.push_back({rel + " case " + std::to_string(inputs.size() + 1), ""});
      continue;
    }
    expectsError |= golden && t.startswith("// ERROR:");
    inputs.back().text += line + "\n";
  }
  if (expectsError)
    inputs.pop_back();
  return inputs;
}

} // namespace

TEST(RoundTrip, EveryGirFileInTheRepository) {
  std::vector<fs::path> files = girFiles();
  size_t checked = 0;
  for (const fs::path& file : files) {
    for (const Input& input : validInputs(file)) {
      SCOPED_TRACE(input.where);
      ToolResult first = runGraphc({"dump", "-"}, input.text);
      ASSERT_EQ(first.exitCode, 0) << first.describe();
      ToolResult second = runGraphc({"dump", "-"}, first.out);
      ASSERT_EQ(second.exitCode, 0) << second.describe();
      EXPECT_EQ(second.out, first.out) << "the dump of the dump differs";
      ++checked;
    }
  }
  std::printf("round-tripped %zu inputs from %zu .gir files\n", checked, files.size());
  EXPECT_NE(std::find(files.begin(), files.end(),
                      fs::path(GRAPHC_SOURCE_DIR) / "examples/enkf_small.gir"),
            files.end());
  EXPECT_GT(checked, files.size() / 2);
}
