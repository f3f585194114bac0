//===- runtime/cuda/PrebuiltTable.cpp - The build's prebuilt modules ------===//
//
// Embeds the table graphc_prebuild wrote at build time (the path is
// GRAPHC_PREBUILT_TABLE; runtime/cuda/PrebuiltModules.h) in read-only data.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/PrebuiltModules.h"

asm(".section .rodata\n"
    ".balign 16\n"
    ".global graphc_prebuilt_table_begin\n"
    ".hidden graphc_prebuilt_table_begin\n"
    "graphc_prebuilt_table_begin:\n"
    ".incbin \"" GRAPHC_PREBUILT_TABLE "\"\n"
    ".global graphc_prebuilt_table_end\n"
    ".hidden graphc_prebuilt_table_end\n"
    "graphc_prebuilt_table_end:\n"
    ".previous\n");

extern "C" const char graphc_prebuilt_table_begin[], graphc_prebuilt_table_end[];

llvm::StringRef graphc::cuda::builtInPrebuiltTable() {
  return {graphc_prebuilt_table_begin,
          static_cast<size_t>(graphc_prebuilt_table_end - graphc_prebuilt_table_begin)};
}
