//===- ir/Attr.h - Op attributes --------------------------------*- C++ -*-===//
//
// Ops carry a small dictionary of named, typed attributes (`{axes=[1], keepdims}`).
// Attrs keeps its entries sorted by name and drops false flags, so two attribute
// sets with the same meaning compare and hash equal. A node's attributes are tied to
// its op's schema (ir/Ops.def): reading one the schema does not declare, or as
// another kind (a misspelled `flag("uper")`), is an internal error, not a silent
// false or zero.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Types.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace graphc::ir {

enum class Op : uint16_t; // ir/Op.h

/// The kinds of attribute value. The order matches AttrValue's alternatives.
enum class AttrKind : uint8_t { Bool, Int, Float, Ints, Floats, DType, Str };

/// The schema spelling of a kind: "bool", "int", "ints", "float", "floats", "dtype", "str".
llvm::StringRef attrKindName(AttrKind k);

/// One attribute value.
using AttrValue = std::variant<bool, int64_t, double, std::vector<int64_t>, std::vector<double>,
                               DType, std::string>;

inline AttrKind kindOf(const AttrValue& v) {
  return static_cast<AttrKind>(v.index());
}

/// A named attribute.
struct Attr {
  std::string name;
  AttrValue value;
};

/// A canonical (sorted, flags-only-when-true) set of attributes.
class Attrs {
public:
  Attrs() = default;
  Attrs(std::initializer_list<Attr> attrs);

  /// Sets `name` to `value`, replacing any earlier value. A false bool removes it.
  Attrs& set(llvm::StringRef name, AttrValue value);
  /// The value of `name`, or nullptr.
  const AttrValue* find(llvm::StringRef name) const;
  bool has(llvm::StringRef name) const { return find(name) != nullptr; }

  /// Ties the set to `op`'s schema: from then on find(), has() and the typed accessors
  /// throw graphc::Error ("internal error: ...") for a name the schema lacks or, typed,
  /// of another kind. Graph::create ties every node's attributes; copies stay tied
  /// (set() included), equality and hashing ignore the tie.
  void tieTo(Op op) { op_ = op; }

  /// Typed accessors: the value, or false, `fallback`, 0, empty or f64 when absent.
  bool flag(llvm::StringRef name) const;
  int64_t getInt(llvm::StringRef name, int64_t fallback = 0) const;
  double getFloat(llvm::StringRef name) const;
  const std::vector<int64_t>& getInts(llvm::StringRef name) const;
  const std::vector<double>& getFloats(llvm::StringRef name) const;
  DType getDType(llvm::StringRef name) const;
  const std::string& getStr(llvm::StringRef name) const;

  bool empty() const { return entries_.empty(); }
  const llvm::SmallVector<Attr, 2>& entries() const { return entries_; }

  friend bool operator==(const Attrs& a, const Attrs& b);
  friend bool operator!=(const Attrs& a, const Attrs& b) { return !(a == b); }

private:
  /// Throws when tied and `name` is not in the schema, or is there as another kind
  /// than `kind` (when given).
  void checkRead(llvm::StringRef name, std::optional<AttrKind> kind) const;

  llvm::SmallVector<Attr, 2> entries_;
  std::optional<Op> op_; ///< the op whose schema reads are checked against
};

/// Text form of a value: `3`, `[1,2]`, `2.5`, `f32`, `"x"`, `true`.
std::string attrValueString(const AttrValue& v);
/// Text form of a set: `{axes=[1], keepdims}`, or "" when empty.
std::string attrsString(const Attrs& attrs);
/// Structural hash.
size_t hashValue(const Attrs& attrs);

} // namespace graphc::ir
