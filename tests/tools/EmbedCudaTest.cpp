//===- tests/tools/EmbedCudaTest.cpp - graphc_embed_cuda ------------------===//
//
// The build tool that embeds the hand-written CUDA modules
// (runtime/cuda/kernels/Embed.cpp): a module's files are concatenated in order,
// each local header inlined the first time the module includes it and dropped
// after, `#pragma once` dropped, `#line` directives keep the files' own line
// numbers; a missing header, a bad argument or the raw string's delimiter in a
// source is an error naming it.
//
//===----------------------------------------------------------------------===//
#include "RunTool.h"
#include "support/ScratchDir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

using namespace graphc::testing;
using ::testing::HasSubstr;

namespace {

namespace fs = std::filesystem;

/// Runs the tool on `modules` (NAME=FILE,...), writing into `folder`.
ToolResult embed(const ScratchDir& folder, const std::vector<std::string>& modules) {
  std::vector<std::string> args = {(folder / "out.cpp").string()};
  args.insert(args.end(), modules.begin(), modules.end());
  return runProgram(GRAPHC_EMBED_PATH, args);
}

} // namespace

TEST(EmbedCuda, InlinesEachHeaderOnceWithLineDirectives) {
  ScratchDir f("embed");
  f.write("Common.cuh", "#pragma once\ntypedef long long i64;\n");
  std::string a =
      f.write("A.cu", "// a\n#include \"Common.cuh\"\n__device__ i64 one() { return 1; }\n");
  std::string b = f.write("B.cu", "#include \"Common.cuh\"\n__device__ i64 two() { return 2; }\n");
  std::string c = f.write("C.cu", "__device__ int three() { return 3; }\n");
  ToolResult r = embed(f, {"kAb=" + a + "," + b, "kC=" + c});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  std::string out = readFile((f / "out.cpp").string());
  EXPECT_THAT(out, HasSubstr("#include \"runtime/cuda/kernels/Sources.h\""));
  EXPECT_THAT(out, HasSubstr("const char* const kAb = R\"graphc_cu(#line 1 \"A.cu\"\n"
                             "// a\n"
                             "#line 1 \"Common.cuh\"\n"
                             "typedef long long i64;\n"
                             "#line 3 \"A.cu\"\n"
                             "__device__ i64 one() { return 1; }\n"
                             "#line 1 \"B.cu\"\n"
                             "#line 2 \"B.cu\"\n"
                             "__device__ i64 two() { return 2; }\n"
                             ")graphc_cu\";\n"));
  EXPECT_THAT(out, HasSubstr("const char* const kC = R\"graphc_cu(#line 1 \"C.cu\"\n"
                             "__device__ int three() { return 3; }\n)graphc_cu\";\n"));
  EXPECT_EQ(out.find("#pragma once"), std::string::npos) << out;
}

TEST(EmbedCuda, ErrorsNameWhatIsWrong) {
  ScratchDir f("embed");
  std::string a = f.write("A.cu", "__device__ int x;\n#include \"Missing.cuh\"\n");
  ToolResult missing = embed(f, {"kA=" + a});
  EXPECT_EQ(missing.exitCode, 1) << missing.describe();
  EXPECT_THAT(missing.err, HasSubstr("A.cu:2: no file Missing.cuh beside it"));

  ToolResult bad = embed(f, {"kA"});
  EXPECT_EQ(bad.exitCode, 1) << bad.describe();
  EXPECT_THAT(bad.err, HasSubstr("expected NAME=FILE[,FILE...], not kA"));

  std::string d = f.write("D.cu", "const char* s = \")graphc_cu\";\n");
  ToolResult delimiter = embed(f, {"kD=" + d});
  EXPECT_EQ(delimiter.exitCode, 1) << delimiter.describe();
  EXPECT_THAT(delimiter.err, HasSubstr("the source of kD holds the raw string's delimiter"));

  ToolResult unreadable = embed(f, {"kE=" + (f / "None.cu").string()});
  EXPECT_EQ(unreadable.exitCode, 1) << unreadable.describe();
  EXPECT_THAT(unreadable.err, HasSubstr("cannot read"));
}
