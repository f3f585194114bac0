//===- tools/Input.h - Reading a .gir input -------------------*- C++ -*-===//
//
// Subcommands read their input with readInput: a path, or `-` for standard input.
// A missing or unreadable file is a graphc::Error naming the path and the reason.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace graphc::tools {

/// The whole contents of `path`, or of standard input when `path` is "-".
std::string readInput(llvm::StringRef path);

/// The name errors use for `path`: "<stdin>" for "-".
std::string inputName(llvm::StringRef path);

/// Reads, parses and verifies the module in `path`. Throws graphc::Error
/// ("file:line:col: error: ...") on the first problem.
ir::Module loadModule(llvm::StringRef path);

} // namespace graphc::tools
