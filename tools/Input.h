//===- tools/Input.h - Reading a .gir input -------------------*- C++ -*-===//
//
// Subcommands read their input with readInput: a path, or `-` for standard input.
// A missing or unreadable file is a graphc::Error naming the path and the reason.
// checkParamNames() rejects an option that names a parameter no graph has.
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

/// The parameters of `g` for messages: "%x, %A".
std::string paramList(const ir::Graph& g);

/// Throws graphc::Error unless every name of `names` ("a,b") is a parameter of a
/// graph of `module`; the message starts with `option` ("--donate a,b").
void checkParamNames(const ir::Module& module, llvm::StringRef names, llvm::StringRef option);

} // namespace graphc::tools
