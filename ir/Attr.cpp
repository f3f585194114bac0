//===- ir/Attr.cpp - Op attributes ----------------------------------------===//
#include "ir/Attr.h"

#include "ir/Op.h"
#include "support/Error.h"

#include "llvm/ADT/Hashing.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace graphc::ir {

llvm::StringRef attrKindName(AttrKind k) {
  switch (k) {
  case AttrKind::Bool:
    return "bool";
  case AttrKind::Int:
    return "int";
  case AttrKind::Float:
    return "float";
  case AttrKind::Ints:
    return "ints";
  case AttrKind::Floats:
    return "floats";
  case AttrKind::DType:
    return "dtype";
  case AttrKind::Str:
    return "str";
  }
  return "?";
}

Attrs::Attrs(std::initializer_list<Attr> attrs) {
  for (const Attr& a : attrs)
    set(a.name, a.value);
}

Attrs& Attrs::set(llvm::StringRef name, AttrValue value) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const Attr& a, llvm::StringRef n) { return a.name < n; });
  bool present = it != entries_.end() && it->name == name;
  bool isFalseFlag = std::holds_alternative<bool>(value) && !std::get<bool>(value);
  if (isFalseFlag) {
    if (present)
      entries_.erase(it);
  } else if (present) {
    it->value = std::move(value);
  } else {
    entries_.insert(it, Attr{name.str(), std::move(value)});
  }
  return *this;
}

void Attrs::checkRead(llvm::StringRef name, std::optional<AttrKind> kind) const {
  if (!op_)
    return;
  const AttrSpec* spec = findAttrSpec(*op_, name);
  if (!spec)
    throw Error(fmt::format("internal error: {} has no attribute '{}' (ir/Ops.def)",
                            opName(*op_).str(), name.str()));
  if (kind && spec->kind != *kind)
    throw Error(fmt::format("internal error: attribute '{}' of {} is {}, read as {}", name.str(),
                            opName(*op_).str(), attrKindName(spec->kind).str(),
                            attrKindName(*kind).str()));
}

const AttrValue* Attrs::find(llvm::StringRef name) const {
  checkRead(name, std::nullopt);
  for (const Attr& a : entries_)
    if (a.name == name)
      return &a.value;
  return nullptr;
}

/// The value of `name` if it holds a T.
template <typename T> static const T* findAs(const Attrs& attrs, llvm::StringRef name) {
  const AttrValue* v = attrs.find(name);
  return v ? std::get_if<T>(v) : nullptr;
}

bool Attrs::flag(llvm::StringRef name) const {
  checkRead(name, AttrKind::Bool);
  const bool* b = findAs<bool>(*this, name);
  return b && *b;
}

int64_t Attrs::getInt(llvm::StringRef name, int64_t fallback) const {
  checkRead(name, AttrKind::Int);
  const int64_t* v = findAs<int64_t>(*this, name);
  return v ? *v : fallback;
}

double Attrs::getFloat(llvm::StringRef name) const {
  checkRead(name, AttrKind::Float);
  const double* v = findAs<double>(*this, name);
  return v ? *v : 0.0;
}

const std::vector<int64_t>& Attrs::getInts(llvm::StringRef name) const {
  checkRead(name, AttrKind::Ints);
  static const std::vector<int64_t> empty;
  const auto* v = findAs<std::vector<int64_t>>(*this, name);
  return v ? *v : empty;
}

const std::vector<double>& Attrs::getFloats(llvm::StringRef name) const {
  checkRead(name, AttrKind::Floats);
  static const std::vector<double> empty;
  const auto* v = findAs<std::vector<double>>(*this, name);
  return v ? *v : empty;
}

DType Attrs::getDType(llvm::StringRef name) const {
  checkRead(name, AttrKind::DType);
  const DType* v = findAs<DType>(*this, name);
  return v ? *v : DType::F64;
}

const std::string& Attrs::getStr(llvm::StringRef name) const {
  checkRead(name, AttrKind::Str);
  static const std::string empty;
  const std::string* v = findAs<std::string>(*this, name);
  return v ? *v : empty;
}

/// Doubles compare bitwise so that NaN attributes still hash-cons.
static bool sameBits(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

static bool sameValue(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index())
    return false;
  if (const double* x = std::get_if<double>(&a))
    return sameBits(*x, std::get<double>(b));
  if (const auto* x = std::get_if<std::vector<double>>(&a)) {
    const auto& y = std::get<std::vector<double>>(b);
    return x->size() == y.size() && std::equal(x->begin(), x->end(), y.begin(), sameBits);
  }
  return a == b;
}

bool operator==(const Attrs& a, const Attrs& b) {
  if (a.entries_.size() != b.entries_.size())
    return false;
  for (size_t i = 0; i < a.entries_.size(); ++i)
    if (a.entries_[i].name != b.entries_[i].name ||
        !sameValue(a.entries_[i].value, b.entries_[i].value))
      return false;
  return true;
}

/// Shortest text that reads back to the same double; integral values keep a ".0".
static std::string floatString(double x) {
  if (std::isnan(x))
    return "nan";
  if (std::isinf(x))
    return x < 0 ? "-inf" : "inf";
  std::string s = fmt::format("{}", x);
  if (s.find_first_of(".eE") == std::string::npos)
    s += ".0";
  return s;
}

std::string attrValueString(const AttrValue& v) {
  switch (kindOf(v)) {
  case AttrKind::Bool:
    return std::get<bool>(v) ? "true" : "false";
  case AttrKind::Int:
    return std::to_string(std::get<int64_t>(v));
  case AttrKind::Float:
    return floatString(std::get<double>(v));
  case AttrKind::Ints:
    return fmt::format("[{}]", fmt::join(std::get<std::vector<int64_t>>(v), ","));
  case AttrKind::Floats: {
    std::string out = "[";
    for (double x : std::get<std::vector<double>>(v))
      out += (out.size() > 1 ? "," : "") + floatString(x);
    return out + "]";
  }
  case AttrKind::DType:
    return dtypeName(std::get<DType>(v)).str();
  case AttrKind::Str: {
    std::string out = "\"";
    for (char c : std::get<std::string>(v)) {
      if (c == '"' || c == '\\')
        out += '\\';
      out += c;
    }
    return out + "\"";
  }
  }
  return "?";
}

std::string attrsString(const Attrs& attrs) {
  if (attrs.empty())
    return "";
  std::string out = "{";
  for (const Attr& a : attrs.entries()) {
    if (out.size() > 1)
      out += ", ";
    out += a.name;
    if (kindOf(a.value) != AttrKind::Bool)
      out += "=" + attrValueString(a.value);
  }
  return out + "}";
}

static size_t hashAttrValue(const AttrValue& v) {
  switch (kindOf(v)) {
  case AttrKind::Bool:
    return llvm::hash_value(std::get<bool>(v));
  case AttrKind::Int:
    return llvm::hash_value(std::get<int64_t>(v));
  case AttrKind::Float: {
    uint64_t bits;
    double x = std::get<double>(v);
    std::memcpy(&bits, &x, sizeof bits);
    return llvm::hash_value(bits);
  }
  case AttrKind::Ints: {
    const auto& xs = std::get<std::vector<int64_t>>(v);
    return llvm::hash_combine_range(xs.begin(), xs.end());
  }
  case AttrKind::Floats: {
    size_t h = 0;
    for (double x : std::get<std::vector<double>>(v))
      h = llvm::hash_combine(h, hashAttrValue(AttrValue(x)));
    return h;
  }
  case AttrKind::DType:
    return llvm::hash_value(static_cast<int>(std::get<DType>(v)));
  case AttrKind::Str:
    return llvm::hash_value(std::get<std::string>(v));
  }
  return 0;
}

size_t hashValue(const Attrs& attrs) {
  size_t h = 0;
  for (const Attr& a : attrs.entries())
    h = llvm::hash_combine(h, llvm::hash_value(a.name), static_cast<int>(kindOf(a.value)),
                           hashAttrValue(a.value));
  return h;
}

} // namespace graphc::ir
