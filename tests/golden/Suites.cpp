//===- tests/golden/Suites.cpp - The registered golden suites -------------===//
//
// One line per suite: the name is the folder under tests/golden, the function maps
// the parsed and verified module to the text the CHECK lines run on.
//
//===----------------------------------------------------------------------===//
#include "golden/Golden.h"

#include "ir/Printer.h"

namespace graphc::golden {

GRAPHC_GOLDEN_SUITE(dump, [](ir::Module& m) { return ir::printModule(m); });

} // namespace graphc::golden
