//===- ir/Types.h - Element types and static tensor types -------*- C++ -*-===//
//
// graphc values are dense tensors with a static shape and one element type.
// A TensorType prints as `f64[3000,1]`; a scalar (rank 0) prints as `f64[]`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace graphc::ir {

/// Element types. The spelling is the text-format keyword.
enum class DType : uint8_t { Bool, I32, I64, F32, F64 };

/// All element types, in declaration order.
inline constexpr DType kAllDTypes[] = {DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64};

/// "bool", "i32", "i64", "f32" or "f64".
llvm::StringRef dtypeName(DType t);
/// The dtype spelled `name`, if any.
std::optional<DType> parseDType(llvm::StringRef name);
/// Size of one element in bytes.
int64_t dtypeSize(DType t);
inline bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F64;
}
inline bool isInteger(DType t) {
  return t == DType::I32 || t == DType::I64;
}
/// Integer or floating point: the types arithmetic is defined on.
inline bool isNumeric(DType t) {
  return isFloat(t) || isInteger(t);
}

/// Dimensions of a tensor, outermost first (C order).
using Shape = llvm::SmallVector<int64_t, 4>;

/// Number of elements of a shape (1 for a scalar). Throws graphc::Error when a
/// dimension is negative or the count does not fit in int64_t.
int64_t numElements(llvm::ArrayRef<int64_t> shape);
/// The element count of `shape`, or nullopt when a dimension is negative or the
/// count does not fit in int64_t. A zero dimension makes the count 0 whatever the
/// others are. Every size check (parser, type rules, Array, .npy reader, memory
/// plan) goes through this and checkedByteSize.
std::optional<int64_t> checkedNumElements(llvm::ArrayRef<int64_t> shape);
/// The bytes of a dense `dtype` array of `shape`, or nullopt as for
/// checkedNumElements (or when the byte count does not fit in int64_t).
std::optional<int64_t> checkedByteSize(DType dtype, llvm::ArrayRef<int64_t> shape);
/// "[3,4]".
std::string shapeString(llvm::ArrayRef<int64_t> shape);

/// A static tensor type: element type and shape.
struct TensorType {
  DType dtype = DType::F64;
  Shape shape;

  TensorType() = default;
  TensorType(DType dtype, llvm::ArrayRef<int64_t> shape)
      : dtype(dtype), shape(shape.begin(), shape.end()) {}

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const { return numElements(shape); }
  /// The bytes of a dense array of this type; throws graphc::Error when they do not
  /// fit in int64_t (the type rules reject such types: see checkedByteSize).
  int64_t bytes() const;
  /// "f64[3,4]".
  std::string str() const;

  friend bool operator==(const TensorType& a, const TensorType& b) {
    return a.dtype == b.dtype && a.shape == b.shape;
  }
  friend bool operator!=(const TensorType& a, const TensorType& b) { return !(a == b); }
};

/// Hash of a tensor type (for hash-consing).
size_t hashValue(const TensorType& t);

} // namespace graphc::ir
