//===- runtime/core/Npy.cpp - Reading and writing NumPy .npy files --------===//
#include "runtime/core/Npy.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <sstream>

namespace graphc {
using ir::Shape;

namespace {

constexpr llvm::StringLiteral kMagic("\x93NUMPY");

/// The .npy descr of a dtype (little endian).
llvm::StringRef descrOf(DType t) {
  switch (t) {
  case DType::Bool:
    return "|b1";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  }
  return "";
}

/// Reads the header dict, e.g. {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }.
class HeaderParser {
public:
  HeaderParser(llvm::StringRef text, llvm::StringRef name) : text_(text), name_(name) {}

  void parse(std::string& descr, bool& fortran, Shape& shape) {
    bool seenDescr = false, seenOrder = false, seenShape = false;
    expect('{');
    while (!accept('}')) {
      std::string key = quoted();
      expect(':');
      if (key == "descr") {
        descr = quoted();
        seenDescr = true;
      } else if (key == "fortran_order") {
        fortran = word() == "True";
        seenOrder = true;
      } else if (key == "shape") {
        shape = tuple();
        seenShape = true;
      } else {
        fail(fmt::format("unknown header key '{}'", key));
      }
      if (!accept(',')) {
        expect('}');
        break;
      }
    }
    if (!seenDescr || !seenOrder || !seenShape)
      fail("the header lacks 'descr', 'fortran_order' or 'shape'");
  }

private:
  [[noreturn]] void fail(const std::string& message) const {
    throw Error(fmt::format("{}: malformed .npy header: {}", name_.str(), message));
  }
  void skipSpace() { text_ = text_.ltrim(" \t\n"); }
  bool accept(char c) {
    skipSpace();
    return text_.consume_front(llvm::StringRef(&c, 1));
  }
  void expect(char c) {
    if (!accept(c))
      fail(fmt::format("expected '{}'", c));
  }
  std::string quoted() {
    skipSpace();
    if (text_.empty() || (text_[0] != '\'' && text_[0] != '"'))
      fail("expected a quoted string");
    char q = text_[0];
    size_t end = text_.find(q, 1);
    if (end == llvm::StringRef::npos)
      fail("unterminated string");
    std::string s = text_.slice(1, end).str();
    text_ = text_.drop_front(end + 1);
    return s;
  }
  llvm::StringRef word() {
    skipSpace();
    // npos when the text ends inside the word: take_front and drop_front clamp to
    // the text's length only when given at most that length.
    size_t n =
        std::min(text_.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"),
                 text_.size());
    llvm::StringRef w = text_.take_front(n);
    if (w != "True" && w != "False")
      fail("expected True or False");
    text_ = text_.drop_front(n);
    return w;
  }
  Shape tuple() {
    Shape shape;
    expect('(');
    while (!accept(')')) {
      skipSpace();
      size_t n = std::min(text_.find_first_not_of("0123456789"), text_.size());
      int64_t d = 0;
      if (n == 0 || text_.take_front(n).getAsInteger(10, d))
        fail("expected a dimension");
      shape.push_back(d);
      text_ = text_.drop_front(n);
      if (!accept(',')) {
        expect(')');
        break;
      }
    }
    return shape;
  }

  llvm::StringRef text_;
  llvm::StringRef name_;
};

} // namespace

Array decodeNpy(llvm::StringRef bytes, llvm::StringRef name) {
  auto fail = [&](const std::string& message) -> Error {
    return Error(fmt::format("{}: {}", name.str(), message));
  };
  if (!bytes.startswith(kMagic))
    throw fail("not a .npy file (bad magic string)");
  if (bytes.size() < 10)
    throw fail("truncated .npy file (no header)");
  auto major = static_cast<uint8_t>(bytes[6]), minor = static_cast<uint8_t>(bytes[7]);
  size_t lengthBytes = major == 1 ? 2 : 4;
  if ((major != 1 && major != 2) || minor != 0)
    throw fail(fmt::format(".npy version {}.{} is not supported (only 1.0 and 2.0)", major, minor));
  if (bytes.size() < 8 + lengthBytes)
    throw fail("truncated .npy file (no header)");
  uint64_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |= uint64_t(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
  size_t dataStart = 8 + lengthBytes + headerLength;
  if (bytes.size() < dataStart)
    throw fail("truncated .npy file (header cut short)");

  std::string descr;
  bool fortran = false;
  Shape shape;
  HeaderParser(bytes.slice(8 + lengthBytes, dataStart), name).parse(descr, fortran, shape);
  if (fortran)
    throw fail("Fortran-order .npy arrays are not supported; save with C order");
  std::optional<DType> dtype;
  for (DType t : ir::kAllDTypes) {
    llvm::StringRef want = descrOf(t);
    // '|', '<' and '=' all mean little endian here ('=' is native, and x86 is little).
    if (descr == want || (descr.size() == 3 && descr.substr(1) == want.substr(1) &&
                          (descr[0] == '<' || descr[0] == '|' || descr[0] == '=')))
      dtype = t;
  }
  if (!dtype)
    throw fail(fmt::format("dtype '{}' is not supported (bool, i32, i64, f32, f64 "
                           "little endian)",
                           descr));
  // The size the header claims is checked against the file before any allocation.
  ir::TensorType type(*dtype, shape);
  std::optional<int64_t> size = ir::checkedByteSize(*dtype, shape);
  if (!size)
    throw fail(fmt::format("the header's shape {} needs more than 2^63 bytes", type.str()));
  if (bytes.size() - dataStart < static_cast<uint64_t>(*size))
    throw fail(fmt::format("truncated .npy file: {} data bytes for {}, {} expected",
                           bytes.size() - dataStart, type.str(), *size));
  Array a;
  try {
    a = Array::empty(*dtype, shape);
  } catch (const AllocationError& e) {
    throw fail(e.message());
  }
  std::memcpy(a.rawData(), bytes.data() + dataStart, static_cast<size_t>(*size));
  return a;
}

std::string encodeNpy(const Array& a) {
  if (!a.valid())
    throw Error("cannot write an empty Array as .npy");
  if (a.device() != Device::Host)
    throw Error("writing .npy needs a host array");
  // "(3, 4)"; a 1-tuple keeps its comma: "(3,)".
  std::string shape = fmt::format("{}", fmt::join(a.shape(), ", "));
  if (a.rank() == 1)
    shape += ",";
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}",
                                   descrOf(a.dtype()).str(), shape);
  // Pad with spaces and a newline so the data starts at a multiple of 64 bytes.
  bool v2 = header.size() + 64 + 10 > 65535;
  size_t prefix = 8 + (v2 ? 4 : 2);
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out = kMagic.str();
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  for (size_t i = 0; i < prefix - 8; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  out += header;
  Array c = a.contiguous();
  out.append(static_cast<const char*>(c.rawData()), c.numel() * c.elementSize());
  return out;
}

Array readNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(fmt::format("{}: cannot open for reading", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return decodeNpy(buffer.str(), path);
}

void writeNpy(const std::string& path, const Array& a) {
  std::string bytes = encodeNpy(a);
  errno = 0;
  std::ofstream out(path, std::ios::binary);
  if (!out || !out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())) || !out.flush())
    throw Error(fmt::format("{}: cannot write{}", path,
                            errno ? std::string(": ") + std::strerror(errno) : ""));
}

} // namespace graphc
