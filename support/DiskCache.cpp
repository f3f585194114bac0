//===- support/DiskCache.cpp - Files of the kernel caches ------------===//
#include "support/DiskCache.h"

#include <fmt/format.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace graphc {

std::string kernelCacheDir() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  if (std::string dir = env("GRAPHC_CACHE_DIR"); !dir.empty())
    return dir;
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty())
    return xdg + "/graphc/kernels";
  if (std::string home = env("HOME"); !home.empty())
    return home + "/.cache/graphc/kernels";
  return "";
}

bool usableCacheDir(const std::string& dir) {
  if (dir.empty())
    return false;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  return !ec && access(dir.c_str(), W_OK) == 0;
}

uint64_t fnv1a(llvm::StringRef bytes, uint64_t h) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

void putU64(std::string& out, uint64_t v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void putString(std::string& out, llvm::StringRef s) {
  putU64(out, s.size());
  out += s.str();
}

llvm::StringRef RecordReader::take(uint64_t n) {
  if (!ok || n > data.size()) {
    ok = false;
    return {};
  }
  llvm::StringRef out = data.take_front(n);
  data = data.drop_front(n);
  return out;
}

uint64_t RecordReader::u64() {
  uint64_t v = 0;
  llvm::StringRef b = take(sizeof v);
  if (ok)
    std::memcpy(&v, b.data(), sizeof v);
  return v;
}

std::optional<std::string> readWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool writeFileAtomically(const std::string& path, llvm::StringRef bytes) {
  static std::atomic<uint64_t> counter{0};
  std::string temp = fmt::format("{}.tmp.{}.{}", path, getpid(), counter++);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      out.close();
      std::remove(temp.c_str());
      return false;
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec)
    std::remove(temp.c_str());
  return !ec;
}

} // namespace graphc
