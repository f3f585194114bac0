//===- tools/Output.cpp - Where a command prints its result ---------------===//
#include "tools/Output.h"

#include "support/Error.h"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <unistd.h>

namespace graphc::tools {

Output::Output(const std::string& path, const std::string& flag) : path_(path), flag_(flag) {
  if (path.empty() || path == "-")
    return;
  temp_ = fmt::format("{}.tmp{}", path, getpid());
  stream_ = std::fopen(temp_.c_str(), "wb");
  if (!stream_) {
    int error = errno;
    stream_ = stdout;
    temp_.clear();
    throw Error(fmt::format("{} {}: cannot write the file: {}", flag, path, std::strerror(error)));
  }
}

Output::~Output() {
  if (temp_.empty())
    return;
  std::fclose(stream_);
  std::remove(temp_.c_str());
}

void Output::commit() {
  if (temp_.empty()) {
    std::fflush(stdout);
    return;
  }
  bool failed = std::ferror(stream_) != 0;
  failed = std::fclose(stream_) != 0 || failed;
  int error = errno;
  stream_ = stdout;
  if (!failed && std::rename(temp_.c_str(), path_.c_str()) != 0) {
    failed = true;
    error = errno;
  }
  if (failed) {
    std::remove(temp_.c_str());
    temp_.clear();
    throw Error(fmt::format("{} {}: writing failed: {}", flag_, path_, std::strerror(error)));
  }
  temp_.clear();
}

void declareOutput(ArgParser& parser, std::string* path) {
  parser.option("output", "FILE", "write the result to FILE instead of standard output", path);
  parser.shortName('o', "output");
}

} // namespace graphc::tools
