//===- tests/support/ScratchDir.cpp - A test's folder, removed with it ----===//
#include "support/ScratchDir.h"

#include <fmt/format.h>

#include <fstream>
#include <unistd.h>

namespace graphc::testing {

namespace fs = std::filesystem;

ScratchDir::ScratchDir(const std::string& name)
    : path_(fs::temp_directory_path() / fmt::format("graphc-{}-{}", name, getpid())) {
  fs::remove_all(path_);
  fs::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ec; // a destructor must not throw; a folder left behind is no failure
  fs::remove_all(path_, ec);
}

std::string ScratchDir::write(const std::string& name, const std::string& text) const {
  fs::path p = path_ / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

} // namespace graphc::testing
