//===- tests/support/ScratchDir.h - A test's folder, removed with it -*- C++ -*-===//
//
// For tests that write files: a folder of this process's own under the system's
// temporary directory, empty when made and removed with everything in it when
// the object goes, so that no run leaves files behind.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <filesystem>
#include <string>

namespace graphc::testing {

class ScratchDir {
public:
  /// `<temp>/graphc-<name>-<pid>`, made empty.
  explicit ScratchDir(const std::string& name);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  /// Writes `text` into the file `name` of the folder; returns its path.
  std::string write(const std::string& name, const std::string& text) const;

private:
  std::filesystem::path path_;
};

} // namespace graphc::testing
