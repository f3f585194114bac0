//===- tools/Input.cpp - Reading a .gir input -----------------------------===//
#include "tools/Input.h"

#include "ir/Parser.h"
#include "ir/Verifier.h"
#include "support/Error.h"

#include "llvm/Support/MemoryBuffer.h"

#include <fmt/format.h>

namespace graphc::tools {

std::string inputName(llvm::StringRef path) {
  return path == "-" ? "<stdin>" : path.str();
}

std::string readInput(llvm::StringRef path) {
  auto buffer = path == "-" ? llvm::MemoryBuffer::getSTDIN()
                            : llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    throw Error(fmt::format("cannot read '{}': {}", inputName(path), buffer.getError().message()));
  return (*buffer)->getBuffer().str();
}

ir::Module loadModule(llvm::StringRef path) {
  std::string text = readInput(path);
  ir::Module module = ir::parseModule(text, inputName(path));
  ir::verify(module);
  return module;
}

} // namespace graphc::tools
