//===- tests/golden/Golden.h - Text-in, text-out golden tests ---*- C++ -*-===//
//
// A small FileCheck-style harness shared by every pass. A golden file
// tests/golden/<suite>/<name>.gir holds cases separated by a line `// -----`. Each
// case is .gir text plus expectation comments:
//
//   // CHECK: text          text appears in the output, after the previous match
//   // CHECK-NEXT: text     text appears on the line after the previous match's line
//   // CHECK-NOT: text      text does not appear between the neighbouring matches
//   //                      (FileCheck's rule: after the last match, up to the end)
//   // CHECK-NOWHERE: text  text appears nowhere in the output
//   // ERROR: text          the case fails with a graphc::Error whose what() holds text
//
// A CHECK or CHECK-NEXT text matches neither inside a word (`%x` is not found in
// `%xw`, `group 1` not in `group 10`) nor part of a line's trailing `//` comment: a
// text that reaches into the comment (the suite's annotation: fusion group, facts,
// reasons) runs to the end of the line, so `%a = exp %x : f64[2]  // group 0` does
// not match `... // group 0; not fused with %x: ...`. CHECK-NOT and CHECK-NOWHERE
// look for plain substrings.
//
// Error positions are relative to the case (its first line is line 1); an ERROR
// text starting with `line:col:` must match right after the file name. A suite
// maps the parsed and verified module to the text the checks run on; registering
// one is a line in tests/golden/Suites.cpp:
//
//   GRAPHC_GOLDEN_SUITE(dump, [](ir::Module& m) { return ir::printModule(m); });
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace graphc::golden {

/// The transformation under test: gets the parsed, verified module (and may change
/// it), returns the text the CHECK lines run on. Errors are thrown as graphc::Error.
using SuiteFn = std::function<std::string(ir::Module&)>;

/// Registers `fn` as suite `name` (cases in tests/golden/<name>/). Returns true.
bool registerSuite(const std::string& name, SuiteFn fn);
/// Every registered suite, by name.
const std::map<std::string, SuiteFn>& suites();

/// Registers a golden suite at static-initialization time.
#define GRAPHC_GOLDEN_SUITE(name, ...)                                                             \
  static const bool graphcGoldenSuite_##name = ::graphc::golden::registerSuite(#name, __VA_ARGS__)

/// The kinds of expectation comment.
enum class CheckKind { Check, Next, Not, Nowhere, Error };

/// One expectation comment.
struct Check {
  CheckKind kind;
  std::string text;
  unsigned line; ///< line in the golden file, for messages
};

/// One case of a golden file.
struct Case {
  std::string suite;
  std::string file;       ///< path relative to tests/golden, e.g. "dump/sources.gir"
  unsigned index = 0;     ///< 1-based position in the file
  unsigned firstLine = 1; ///< line of the file where the case starts
  std::string input;
  std::vector<Check> checks;
  std::vector<std::string> problems; ///< malformed directives; the case fails with them

  bool expectsError() const;
  /// A gtest-safe name: "dump_sources_3".
  std::string testName() const;
  /// "dump/sources.gir:12 (case 3)".
  std::string where() const;
};

/// gtest prints parameters with this.
void PrintTo(const Case& c, std::ostream* os);

/// Splits the text of golden file `file` into cases. Malformed directives (unknown
/// `CHECK-*`, empty text, CHECK lines in an ERROR case) become the case's problems.
std::vector<Case> splitCases(llvm::StringRef text, const std::string& suite,
                             const std::string& file);

/// Every case of every file of every registered suite under `root` (tests/golden).
std::vector<Case> loadAllCases(const std::string& root);

/// Matches `output` against the CHECK, CHECK-NEXT and CHECK-NOT lines. Returns "" when
/// they hold, else a message naming the first failing check and its line.
std::string matchChecks(llvm::StringRef output, llvm::ArrayRef<Check> checks);

/// Checks that print and parse are inverse on every graph of `m`. Returns "" or a message.
std::string checkRoundTrip(const ir::Module& m);

/// Runs one case through `fn`: parse, verify, round trip, transform, verify, round
/// trip, match. Returns "" when the case passes, else what went wrong.
std::string runCase(const Case& c, const SuiteFn& fn);

} // namespace graphc::golden
