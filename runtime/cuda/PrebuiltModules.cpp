//===- runtime/cuda/PrebuiltModules.cpp - Library modules built ahead -----===//
#include "runtime/cuda/PrebuiltModules.h"

#include <fmt/format.h>

#include <cstring>
#include <mutex>

namespace graphc::cuda {
namespace {

constexpr char kTableMagic[] = "GRAPHCP1";

/// Reads a u64 off the front of `data`; false when too short.
bool takeU64(llvm::StringRef& data, uint64_t& v) {
  if (data.size() < sizeof v)
    return false;
  std::memcpy(&v, data.data(), sizeof v);
  data = data.drop_front(sizeof v);
  return true;
}

struct Table {
  std::mutex mutex;
  std::map<std::string, llvm::StringRef> records;
};

Table& table() {
  static Table t;
  return t;
}

} // namespace

std::string prebuiltKey(const ModuleSource& m, int cc, llvm::ArrayRef<std::string> flags) {
  return fmt::format("graphc prebuilt module\nsm {}\nflags {}\nname {}\nexpressions {}\n{}", cc,
                     fmt::join(flags, " "), m.name, fmt::join(m.nameExpressions, ";"), m.source);
}

std::string prebuiltTable(llvm::ArrayRef<std::string> records) {
  std::string out = kTableMagic;
  auto put = [&](uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(records.size());
  for (const std::string& r : records) {
    put(r.size());
    out += r;
  }
  return out;
}

std::map<std::string, llvm::StringRef> prebuiltRecords(llvm::StringRef data) {
  std::map<std::string, llvm::StringRef> out;
  uint64_t count = 0;
  if (!data.consume_front(llvm::StringRef(kTableMagic, 8)) || !takeU64(data, count))
    return {};
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t size = 0;
    if (!takeU64(data, size) || size > data.size())
      return {};
    llvm::StringRef record = data.take_front(size);
    data = data.drop_front(size);
    // The key is the record's second field (encodeModule: magic, key, ...).
    llvm::StringRef rest = record.drop_front(std::min<size_t>(8, record.size()));
    uint64_t keySize = 0;
    if (!takeU64(rest, keySize) || keySize > rest.size())
      return {};
    out[rest.take_front(keySize).str()] = record;
  }
  return data.empty() ? out : std::map<std::string, llvm::StringRef>();
}

void setPrebuiltTable(llvm::StringRef data) {
  std::map<std::string, llvm::StringRef> records = prebuiltRecords(data);
  std::lock_guard<std::mutex> lock(table().mutex);
  table().records = std::move(records);
}

std::optional<CompiledModule> prebuiltModule(const std::string& key) {
  llvm::StringRef record;
  {
    std::lock_guard<std::mutex> lock(table().mutex);
    auto it = table().records.find(key);
    if (it == table().records.end())
      return std::nullopt;
    record = it->second;
  }
  return decodeModule(record, key);
}

} // namespace graphc::cuda
