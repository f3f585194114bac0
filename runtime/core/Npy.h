//===- runtime/core/Npy.h - Reading and writing NumPy .npy files -*- C++ -*-===//
//
// The .npy format (NumPy's "format.py"): a magic string, a version, a Python dict
// literal describing dtype, memory order and shape, then the raw elements. graphc
// reads and writes bool, i32, i64, f32 and f64 arrays in C order, little endian,
// with version 1.0 or 2.0 headers. Anything else (Fortran order, other dtypes, big
// endian, a truncated file) is a graphc::Error naming the file.
//
//   writeNpy("x.npy", Array::fromVector<double>({1, 2, 3}, {3}));
//   Array x = readNpy("x.npy");
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/core/Array.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace graphc {

/// Reads the .npy file at `path` into a new owning host array.
Array readNpy(const std::string& path);
/// Writes `a` (any strides; host memory) to `path` in C order.
void writeNpy(const std::string& path, const Array& a);

/// Decodes the bytes of a .npy file; `name` names it in errors.
Array decodeNpy(llvm::StringRef bytes, llvm::StringRef name = "<npy>");
/// Encodes `a` as the bytes of a .npy file (version 1.0 unless the header needs 2.0).
std::string encodeNpy(const Array& a);

} // namespace graphc
