//===- tests/golden/Golden.cpp - Text-in, text-out golden tests -----------===//
//
// Splitting golden files into cases, FileCheck-style matching, the print/parse round
// trip and the driver that runs one case through a suite.
//
//===----------------------------------------------------------------------===//
#include "golden/Golden.h"

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <ostream>
#include <sstream>

namespace graphc::golden {
namespace {

std::map<std::string, SuiteFn>& registry() {
  static std::map<std::string, SuiteFn> r;
  return r;
}

/// Reads the directive of one line, if any: "// CHECK-NEXT: text" -> (Next, "text").
/// Returns false when the line has none; sets `problem` when it is malformed.
bool parseDirective(llvm::StringRef line, Check& out, std::string& problem) {
  size_t slash = line.find("//");
  if (slash == llvm::StringRef::npos)
    return false;
  llvm::StringRef rest = line.drop_front(slash + 2).ltrim();
  if (!rest.startswith("CHECK") && !rest.startswith("ERROR"))
    return false;
  static const std::pair<llvm::StringRef, CheckKind> kinds[] = {
      {"CHECK:", CheckKind::Check},
      {"CHECK-NEXT:", CheckKind::Next},
      {"CHECK-NOT:", CheckKind::Not},
      {"CHECK-NOWHERE:", CheckKind::Nowhere},
      {"ERROR:", CheckKind::Error}};
  for (const auto& [prefix, kind] : kinds) {
    if (!rest.startswith(prefix))
      continue;
    out.kind = kind;
    out.text = rest.drop_front(prefix.size()).trim().str();
    if (out.text.empty())
      problem = fmt::format("empty {} directive", prefix.drop_back().str());
    return true;
  }
  problem = fmt::format("unknown directive '{}'", rest.split(' ').first.str());
  return true;
}

/// True when `message` contains `text`. A text starting "line:col:" must follow a ':'
/// so that "3:10:" does not match "13:10:".
bool errorMatches(llvm::StringRef message, llvm::StringRef text) {
  llvm::StringRef rest = text;
  bool positional = !rest.empty() && std::isdigit(static_cast<unsigned char>(rest[0])) &&
                    rest.ltrim("0123456789").startswith(":");
  if (!positional)
    return message.contains(text);
  return message.contains(":" + text.str());
}

/// The line of `text` that contains offset `pos`, 1-based.
unsigned lineOf(llvm::StringRef text, size_t pos) {
  return 1 + static_cast<unsigned>(text.take_front(pos).count('\n'));
}

bool isWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

/// Whether `text` found at `at` in `output` is a match: it neither starts nor ends
/// inside a word (`%x` is not in `%xw`, `group 1` not in `group 10`), and when it
/// reaches into the line's trailing `//` comment (a suite's annotation) it runs to
/// the end of the line (`// group 0` is not `// group 0; not fused with ...`).
bool acceptable(llvm::StringRef output, size_t at, llvm::StringRef text) {
  size_t end = at + text.size();
  if (at > 0 && isWordChar(output[at - 1]) && isWordChar(text.front()))
    return false;
  if (end < output.size() && isWordChar(output[end]) && isWordChar(text.back()))
    return false;
  size_t lineStart = output.rfind('\n', at);
  lineStart = lineStart == llvm::StringRef::npos ? 0 : lineStart + 1;
  llvm::StringRef line = output.drop_front(lineStart).split('\n').first;
  size_t comment = line.find("//");
  if (comment == llvm::StringRef::npos || end <= lineStart + comment)
    return true;
  return end == lineStart + line.rtrim().size();
}

/// The first acceptable match of `text` in `output[from, to)`, or npos.
size_t findMatch(llvm::StringRef output, llvm::StringRef text, size_t from,
                 size_t to = llvm::StringRef::npos) {
  to = std::min(to, output.size());
  for (size_t at = output.find(text, from); at != llvm::StringRef::npos && at + text.size() <= to;
       at = output.find(text, at + 1))
    if (acceptable(output, at, text))
      return at;
  return llvm::StringRef::npos;
}

} // namespace

bool registerSuite(const std::string& name, SuiteFn fn) {
  registry()[name] = std::move(fn);
  return true;
}

const std::map<std::string, SuiteFn>& suites() {
  return registry();
}

bool Case::expectsError() const {
  return std::any_of(checks.begin(), checks.end(),
                     [](const Check& c) { return c.kind == CheckKind::Error; });
}

std::string Case::testName() const {
  std::string stem = std::filesystem::path(file).stem().string();
  std::string name = fmt::format("{}_{}_{}", suite, stem, index);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name;
}

std::string Case::where() const {
  return fmt::format("{}:{} (case {})", file, firstLine, index);
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.where();
}

std::vector<Case> splitCases(llvm::StringRef text, const std::string& suite,
                             const std::string& file) {
  std::vector<Case> cases;
  auto startCase = [&](unsigned line) {
    Case c;
    c.suite = suite;
    c.file = file;
    c.index = static_cast<unsigned>(cases.size()) + 1;
    c.firstLine = line;
    cases.push_back(std::move(c));
  };
  startCase(1);
  unsigned lineNo = 0;
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    text = rest;
    ++lineNo;
    if (line.trim() == "// -----") {
      startCase(lineNo + 1);
      continue;
    }
    Case& c = cases.back();
    c.input += line.str() + "\n";
    Check check{CheckKind::Check, "", lineNo};
    std::string problem;
    if (parseDirective(line, check, problem)) {
      if (!problem.empty())
        c.problems.push_back(fmt::format("{}:{}: {}", file, lineNo, problem));
      c.checks.push_back(std::move(check));
    }
  }
  for (Case& c : cases) {
    bool hasError = c.expectsError();
    for (const Check& k : c.checks)
      if (hasError && k.kind != CheckKind::Error)
        c.problems.push_back(
            fmt::format("{}:{}: CHECK lines in a case that expects an ERROR", file, k.line));
  }
  // A trailing separator leaves an empty last case: drop cases with no text at all.
  cases.erase(std::remove_if(cases.begin(), cases.end(),
                             [](const Case& c) { return llvm::StringRef(c.input).trim().empty(); }),
              cases.end());
  return cases;
}

std::vector<Case> loadAllCases(const std::string& root) {
  namespace fs = std::filesystem;
  std::vector<Case> all;
  for (const auto& [suite, fn] : suites()) {
    fs::path dir = fs::path(root) / suite;
    if (!fs::is_directory(dir))
      continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.path().extension() == ".gir")
        files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& p : files) {
      std::ifstream in(p, std::ios::binary);
      std::stringstream buf;
      buf << in.rdbuf();
      std::string rel = suite + "/" + p.filename().string();
      for (Case& c : splitCases(buf.str(), suite, rel))
        all.push_back(std::move(c));
    }
  }
  return all;
}

std::string matchChecks(llvm::StringRef output, llvm::ArrayRef<Check> checks) {
  for (const Check& c : checks) // CHECK-NOWHERE: anywhere in the output is too much
    if (c.kind == CheckKind::Nowhere)
      if (size_t at = output.find(c.text); at != llvm::StringRef::npos)
        return fmt::format("line {}: CHECK-NOWHERE: '{}' found on output line {}", c.line, c.text,
                           lineOf(output, at));
  size_t pos = 0;       // where the next CHECK starts searching
  bool matched = false; // whether any positive check matched yet
  std::vector<const Check*> nots;
  auto checkNots = [&](size_t end) -> std::string {
    llvm::StringRef region = output.slice(pos, end);
    for (const Check* n : nots) {
      size_t at = region.find(n->text);
      if (at != llvm::StringRef::npos)
        return fmt::format("line {}: CHECK-NOT: '{}' found on output line {}", n->line, n->text,
                           lineOf(output, pos + at));
    }
    nots.clear();
    return "";
  };
  for (const Check& c : checks) {
    size_t found = llvm::StringRef::npos;
    switch (c.kind) {
    case CheckKind::Error:
    case CheckKind::Nowhere:
      continue;
    case CheckKind::Not:
      nots.push_back(&c);
      continue;
    case CheckKind::Check:
      found = findMatch(output, c.text, pos);
      if (found == llvm::StringRef::npos)
        return fmt::format("line {}: CHECK: '{}' not found after output line {}", c.line, c.text,
                           lineOf(output, pos));
      break;
    case CheckKind::Next: {
      size_t lineStart = 0;
      if (matched) {
        size_t nl = output.find('\n', pos);
        if (nl == llvm::StringRef::npos)
          return fmt::format("line {}: CHECK-NEXT: '{}' but the output has no next line", c.line,
                             c.text);
        lineStart = nl + 1;
      }
      llvm::StringRef line = output.drop_front(lineStart).split('\n').first;
      found = findMatch(output, c.text, lineStart, lineStart + line.size());
      if (found == llvm::StringRef::npos)
        return fmt::format("line {}: CHECK-NEXT: '{}' not on output line {}: '{}'", c.line, c.text,
                           lineOf(output, lineStart), line.str());
      break;
    }
    }
    if (std::string msg = checkNots(found); !msg.empty())
      return msg;
    pos = found + c.text.size();
    matched = true;
  }
  return checkNots(output.size());
}

std::string checkRoundTrip(const ir::Module& m) {
  for (const auto& g : m.graphs) {
    std::string text = ir::printGraph(*g);
    std::unique_ptr<ir::Graph> back;
    try {
      back = ir::parseGraph(text, "<printed>");
      ir::verify(*back);
    } catch (const Error& e) {
      return fmt::format("the printed graph @{} does not read back: {}\n{}", g->name(), e.what(),
                         text);
    }
    if (!ir::structurallyEqual(*g, *back))
      return fmt::format("parse(print(g)) differs from g for @{}:\n{}", g->name(), text);
    std::string again = ir::printGraph(*back);
    if (again != text)
      return fmt::format("print(parse(print(g))) != print(g) for @{}:\n{}---\n{}", g->name(), text,
                         again);
  }
  return "";
}

std::string runCase(const Case& c, const SuiteFn& fn) {
  if (!c.problems.empty()) {
    std::string out;
    for (const std::string& p : c.problems)
      out += p + "\n";
    return out;
  }
  std::string output;
  try {
    ir::Module m = ir::parseModule(c.input, c.file);
    ir::verify(m);
    if (std::string msg = checkRoundTrip(m); !msg.empty())
      return "after parsing: " + msg;
    output = fn(m);
    ir::verify(m);
    if (std::string msg = checkRoundTrip(m); !msg.empty())
      return "after the suite: " + msg;
  } catch (const Error& e) {
    if (!c.expectsError())
      return fmt::format("unexpected error: {}", e.what());
    for (const Check& k : c.checks)
      if (k.kind == CheckKind::Error && !errorMatches(e.what(), k.text))
        return fmt::format("line {}: ERROR: '{}' but the error was: {}", k.line, k.text, e.what());
    return "";
  }
  if (c.expectsError())
    return fmt::format("expected an error, but the case succeeded with output:\n{}", output);
  if (std::string msg = matchChecks(output, c.checks); !msg.empty())
    return fmt::format("{}:{}\n--- output ---\n{}", c.file, msg, output);
  return "";
}

} // namespace graphc::golden
