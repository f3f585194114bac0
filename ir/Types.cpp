//===- ir/Types.cpp - Element types and static tensor types ---------------===//
#include "ir/Types.h"

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

int64_t numElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
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
