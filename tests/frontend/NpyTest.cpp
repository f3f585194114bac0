//===- tests/frontend/NpyTest.cpp - .npy reading and writing --------------===//
//
// Round trips for every supported dtype (through memory and files), a hand-made
// NumPy-style file with version 1.0 and 2.0 headers, and the errors: Fortran order,
// unsupported dtypes, big endian, bad magic, truncated files, missing files.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"
#include "support/ScratchDir.h"

#include "runtime/core/Npy.h"

#include <cstdio>
#include <filesystem>

namespace graphc {
namespace {

using testing::toDoubles;

/// A .npy file as NumPy writes it: magic, version, little-endian header length, the
/// dict padded with spaces to a 64-byte boundary, a newline, then the data.
std::string npyBytes(int major, const std::string& dict, const std::string& data) {
  size_t lengthBytes = major == 1 ? 2 : 4;
  std::string header = dict;
  while ((8 + lengthBytes + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(major);
  out += char(0);
  for (size_t i = 0; i < lengthBytes; ++i)
    out += char((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

template <typename T> std::string rawBytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

TEST(Npy, RoundTripsEveryDType) {
  testing::ScratchDir scratch("npy-round-trip");
  const std::string dir = scratch.path().string();
  for (DType t : ir::kAllDTypes) {
    for (const Shape& shape : {Shape{}, Shape{7}, Shape{3, 4}, Shape{2, 0, 3}}) {
      Array a = Array::randomUniform(t, shape, 42, -100, 100);
      Array b = decodeNpy(encodeNpy(a), "mem");
      EXPECT_EQ(b.type(), a.type());
      EXPECT_EQ(toDoubles(b), toDoubles(a)) << a.type().str();
      std::string path = dir + "/rt_" + ir::dtypeName(t).str() + ".npy";
      writeNpy(path, a);
      Array c = readNpy(path);
      EXPECT_EQ(c.type(), a.type());
      EXPECT_EQ(toDoubles(c), toDoubles(a)) << a.type().str();
    }
  }
}

TEST(Npy, WritesStridedArraysInCOrder) {
  Array a = Array::fromVector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  Array t = a.view({3, 2}, {1, 3}); // transposed view
  Array b = decodeNpy(encodeNpy(t));
  EXPECT_EQ(b.toVector<int32_t>(), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
}

TEST(Npy, WritesTheHeaderNumPyWrites) {
  Array a = Array::fromVector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  std::string want = npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
                              rawBytes<double>({1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(encodeNpy(a), want);
  std::string vec = npyBytes(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                             std::string("\1\0\1", 3));
  EXPECT_EQ(encodeNpy(Array::fromVector<bool>({true, false, true}, {3})), vec);
}

TEST(Npy, ReadsVersion1And2Headers) {
  for (int major : {1, 2}) {
    std::string bytes =
        npyBytes(major, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }",
                 rawBytes<int64_t>({1, -2, 3, -4}));
    Array a = decodeNpy(bytes, "v.npy");
    EXPECT_EQ(a.type(), TensorType(DType::I64, {2, 2}));
    EXPECT_EQ(a.toVector<int64_t>(), (std::vector<int64_t>{1, -2, 3, -4}));
  }
  // Key order and quoting as other writers produce them.
  Array b = decodeNpy(npyBytes(1, "{\"shape\": (3,), \"fortran_order\": False, \"descr\": \"<f4\"}",
                               rawBytes<float>({1.5f, 2.5f, 3.5f})));
  EXPECT_EQ(b.toVector<float>(), (std::vector<float>{1.5f, 2.5f, 3.5f}));
}

void expectNpyError(const std::string& bytes, const std::string& part) {
  try {
    decodeNpy(bytes, "bad.npy");
    ADD_FAILURE() << "no error for " << part;
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("bad.npy"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find(part), std::string::npos) << e.what();
  }
}

TEST(Npy, RejectsWhatItCannotRead) {
  std::string data = rawBytes<double>({1, 2, 3, 4});
  expectNpyError(npyBytes(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }", data),
                 "Fortran");
  expectNpyError(npyBytes(1, "{'descr': '<c16', 'fortran_order': False, 'shape': (2,), }", data),
                 "<c16");
  expectNpyError(npyBytes(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (2, 2), }", data),
                 ">f8");
  expectNpyError(npyBytes(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }", data),
                 "<u2");
  expectNpyError(npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }", data),
                 "truncated");
  std::string whole =
      npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", data);
  expectNpyError(whole.substr(0, 40), "truncated");
  expectNpyError(whole.substr(0, 9), "truncated");
  expectNpyError("PK\3\4 not npy at all", "magic");
  expectNpyError(npyBytes(3, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", data),
                 "version 3.0");
  expectNpyError(npyBytes(1, "{'descr': '<f8', 'shape': (2, 2), }", data), "fortran_order");
  EXPECT_THROW(readNpy(::testing::TempDir() + "/does_not_exist.npy"), Error);
}

// A file that cannot be made or written names its path and why; nothing is left.
TEST(Npy, WritingWhereNoFileCanBeMadeIsAnError) {
  Array a = Array::zeros(ir::DType::F64, {2});
  testing::ScratchDir scratch("npy-unwritable");
  const std::string dir = scratch.path().string();
  auto expectWriteError = [&](const std::string& path, const std::string& why) {
    try {
      writeNpy(path, a);
      FAIL() << "expected graphc::Error for " << path;
    } catch (const Error& e) {
      EXPECT_NE(e.message().find(path + ": cannot write"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find(why), std::string::npos) << e.message();
    }
  };
  expectWriteError(dir + "/missing/x.npy", "No such file or directory");
  expectWriteError(dir, "Is a directory");
  EXPECT_FALSE(std::filesystem::exists(dir + "/missing"));
}

/// A version 1.0 file whose header is exactly `dict` (no padding, no newline).
std::string unpaddedNpy(const std::string& dict) {
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(dict.size() & 0xff);
  out += char(dict.size() >> 8);
  return out + dict;
}

// A header that ends right after a token is malformed, not read past its end (a
// debug build's assertion fired in StringRef::drop_front).
TEST(Npy, HeadersEndingInsideATokenAreMalformed) {
  expectNpyError(unpaddedNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (4"),
                 "malformed .npy header");
  expectNpyError(unpaddedNpy("{'descr': '<f8', 'fortran_order': False"), "malformed .npy header");
  expectNpyError(unpaddedNpy("{'descr': '<f8', 'fortran_order': Fal"), "expected True or False");
  expectNpyError(unpaddedNpy("{'descr': '<f8', 'shape': (4, 2"), "malformed .npy header");
}

// The header's size is checked against the file before anything is allocated: a
// shape of 2^61 f64 elements (2^64 bytes) or of 10^12 (8 TB) over a few bytes is a
// clear error, not a crash or std::bad_alloc.
TEST(Npy, ImpossibleHeaderSizesAreErrors) {
  expectNpyError(npyBytes(1,
                          "{'descr': '<f8', 'fortran_order': False, 'shape': "
                          "(2305843009213693952,), }",
                          "x"),
                 "the header's shape f64[2305843009213693952] needs more than 2^63 bytes");
  expectNpyError(npyBytes(1,
                          "{'descr': '<f8', 'fortran_order': False, 'shape': "
                          "(1000000000000,), }",
                          std::string(15, 'x')),
                 "truncated .npy file: 15 data bytes for f64[1000000000000], 8000000000000 "
                 "expected");
  expectNpyError(npyBytes(1,
                          "{'descr': '<f8', 'fortran_order': False, 'shape': "
                          "(4294967296, 4294967296), }",
                          ""),
                 "needs more than 2^63 bytes");
  // No elements, but strides past int64_t (found by fuzz_npy).
  expectNpyError(npyBytes(1,
                          "{'descr': '<i4', 'fortran_order': False, 'shape': "
                          "(0, 4294967296, 4294967296, 4), }",
                          ""),
                 "the strides of shape [0,4294967296,4294967296,4] do not fit in int64_t");
}

} // namespace
} // namespace graphc
