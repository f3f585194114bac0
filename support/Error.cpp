//===- support/Error.cpp - The error type graphc throws -------------------===//
#include "support/Error.h"

#include <fmt/format.h>

namespace graphc {

std::string SourceLoc::str() const {
  if (!valid())
    return "";
  return fmt::format("{}:{}:{}", file.empty() ? "<input>" : file, line, column);
}

static std::string render(const std::string& message, const SourceLoc& loc) {
  if (!loc.valid())
    return "error: " + message;
  return fmt::format("{}: error: {}", loc.str(), message);
}

Error::Error(std::string message, SourceLoc loc)
    : std::runtime_error(render(message, loc)), message_(std::move(message)), loc_(std::move(loc)) {
}

} // namespace graphc
