//===- ir/Op.cpp - Op codes and their static description ------------------===//
#include "ir/Op.h"

#include "llvm/ADT/StringMap.h"

#include <deque>
#include <vector>

namespace graphc::ir {
namespace {

/// Parses an Ops.def schema string ("axes:ints keepdims:bool?") into specs.
std::vector<AttrSpec> parseSchema(llvm::StringRef schema) {
  std::vector<AttrSpec> specs;
  llvm::SmallVector<llvm::StringRef, 4> items;
  schema.split(items, ' ', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef item : items) {
    auto [name, kind] = item.split(':');
    bool optional = kind.consume_back("?");
    AttrKind k = AttrKind::Bool;
    for (int i = 0; i <= static_cast<int>(AttrKind::Str); ++i)
      if (attrKindName(static_cast<AttrKind>(i)) == kind)
        k = static_cast<AttrKind>(i);
    specs.push_back({name, k, optional});
  }
  return specs;
}

struct OpTable {
  std::deque<std::vector<AttrSpec>> schemas; // stable storage for OpInfo::attrs
  std::vector<OpInfo> infos;
  llvm::StringMap<Op> byName;

  OpTable() {
#define GRAPHC_OP(Name, Spelling, NumOperands, NumResults, Kind, Schema)                           \
  schemas.push_back(parseSchema(Schema));                                                          \
  infos.push_back({Op::Name, Spelling, NumOperands, NumResults, OpKind::Kind, schemas.back()});    \
  byName[Spelling] = Op::Name;
#include "ir/Ops.def"
  }
};

const OpTable& table() {
  static const OpTable t;
  return t;
}

} // namespace

const OpInfo& opInfo(Op op) {
  return table().infos[static_cast<size_t>(op)];
}

std::optional<Op> parseOpName(llvm::StringRef name) {
  auto it = table().byName.find(name);
  if (it == table().byName.end())
    return std::nullopt;
  return it->second;
}

llvm::ArrayRef<OpInfo> allOps() {
  return table().infos;
}

const AttrSpec* findAttrSpec(Op op, llvm::StringRef name) {
  for (const AttrSpec& s : opInfo(op).attrs)
    if (s.name == name)
      return &s;
  return nullptr;
}

} // namespace graphc::ir
