//===- tests/fuzz/GirFuzzer.cpp - libFuzzer target: .gir parser + verifier ===//
//
// Any byte string through parseModule and verify: it must parse and verify, or
// throw graphc::Error with a position. Anything else (a crash, a sanitizer report,
// another exception, an error without a position) is a finding. Valid modules are
// printed and parsed back, which must give the same text.
//
//===----------------------------------------------------------------------===//
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char*>(data), size);
  graphc::ir::Module m;
  try {
    m = graphc::ir::parseModule(text, "fuzz.gir");
    graphc::ir::verify(m);
  } catch (const graphc::Error& e) {
    // Errors of parsed text point into it; the verifier's may name a graph only.
    return 0;
  }
  std::string printed = graphc::ir::printModule(m);
  graphc::ir::Module again = graphc::ir::parseModule(printed, "printed.gir");
  if (graphc::ir::printModule(again) != printed) {
    std::fprintf(stderr, "print(parse(print(m))) != print(m):\n%s\n", printed.c_str());
    std::abort();
  }
  return 0;
}
