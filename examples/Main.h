//===- examples/Main.h - The examples' main() and check verdict -*- C++ -*-===//
//
// Every example is `int run(int argc, char** argv)` behind the same main(): a
// graphc error ends it with `NAME: message` and status 1, and its numeric check
// ends it with `check passed` (0) or `NAME: check FAILED (tolerance T)` (1).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/Error.h"

#include <fmt/format.h>

namespace graphc::examples {

/// The exit status of an example whose check against `tolerance` `passed`.
inline int verdict(const char* name, bool passed, double tolerance) {
  if (!passed) {
    fmt::print(stderr, "{}: check FAILED (tolerance {:.0e})\n", name, tolerance);
    return 1;
  }
  fmt::print("check passed\n");
  return 0;
}

/// main() of the example `name`.
inline int exampleMain(const char* name, int (*run)(int, char**), int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const Error& e) {
    fmt::print(stderr, "{}: {}\n", name, e.what());
    return 1;
  }
}

} // namespace graphc::examples
