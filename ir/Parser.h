//===- ir/Parser.h - The text format, reading side --------------*- C++ -*-===//
//
// Reads the .gir text format written by ir/Printer.h. Errors are graphc::Error
// with the position `file:line:col` of the offending token.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/StringRef.h"

#include <memory>

namespace graphc::ir {

/// Parses every graph in `text`. `filename` names the source in error locations.
/// Throws graphc::Error ("file:line:col: error: ...") on malformed text, unknown ops,
/// bad attributes, typing errors and uses before definition.
Module parseModule(llvm::StringRef text, llvm::StringRef filename = "<input>");

/// Parses text that holds exactly one graph.
std::unique_ptr<Graph> parseGraph(llvm::StringRef text, llvm::StringRef filename = "<input>");

} // namespace graphc::ir
