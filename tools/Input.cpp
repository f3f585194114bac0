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

std::string paramList(const ir::Graph& g) {
  std::vector<std::string> names;
  for (const ir::Node* p : g.params())
    names.push_back("%" + p->attrs().getStr("name"));
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

void checkParamNames(const ir::Module& module, llvm::StringRef names, llvm::StringRef option) {
  llvm::SmallVector<llvm::StringRef, 4> parts;
  names.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef name : parts) {
    name = name.trim().ltrim('%');
    bool found = false;
    for (const auto& g : module.graphs)
      for (const ir::Node* p : g->params())
        found = found || p->attrs().getStr("name") == name;
    if (found)
      continue;
    if (module.graphs.size() == 1)
      throw Error(fmt::format("{}: @{} has no parameter %{} (its parameters: {})", option.str(),
                              module.graphs.front()->name(), name.str(),
                              paramList(*module.graphs.front())));
    throw Error(fmt::format("{}: no graph has a parameter %{}", option.str(), name.str()));
  }
}

} // namespace graphc::tools
