//===- ir/Types.cpp - Element types and static tensor types ---------------===//
#include "ir/Types.h"

#include "support/Error.h"

#include "llvm/ADT/Hashing.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace graphc::ir {

llvm::StringRef dtypeName(DType t) {
  switch (t) {
  case DType::Bool:
    return "bool";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  }
  return "?";
}

std::optional<DType> parseDType(llvm::StringRef name) {
  for (DType t : kAllDTypes)
    if (dtypeName(t) == name)
      return t;
  return std::nullopt;
}

int64_t dtypeSize(DType t) {
  switch (t) {
  case DType::Bool:
    return 1;
  case DType::I32:
  case DType::F32:
    return 4;
  case DType::I64:
  case DType::F64:
    return 8;
  }
  return 0;
}

std::optional<int64_t> checkedNumElements(llvm::ArrayRef<int64_t> shape) {
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    empty |= d == 0;
  }
  if (empty)
    return 0;
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      return std::nullopt;
  return n;
}

std::optional<int64_t> checkedByteSize(DType dtype, llvm::ArrayRef<int64_t> shape) {
  std::optional<int64_t> n = checkedNumElements(shape);
  int64_t bytes = 0;
  if (!n || __builtin_mul_overflow(*n, dtypeSize(dtype), &bytes))
    return std::nullopt;
  return bytes;
}

int64_t numElements(llvm::ArrayRef<int64_t> shape) {
  if (std::optional<int64_t> n = checkedNumElements(shape))
    return *n;
  throw Error(fmt::format("shape {} has a negative dimension or more than 2^63 elements",
                          shapeString(shape)));
}

int64_t TensorType::bytes() const {
  if (std::optional<int64_t> b = checkedByteSize(dtype, shape))
    return *b;
  throw Error(fmt::format("{} needs more than 2^63 bytes", str()));
}

std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

std::string TensorType::str() const {
  return fmt::format("{}{}", dtypeName(dtype).str(), shapeString(shape));
}

size_t hashValue(const TensorType& t) {
  return llvm::hash_combine(static_cast<int>(t.dtype),
                            llvm::hash_combine_range(t.shape.begin(), t.shape.end()));
}

} // namespace graphc::ir
