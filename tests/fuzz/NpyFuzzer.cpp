//===- tests/fuzz/NpyFuzzer.cpp - libFuzzer target: the .npy reader -------===//
//
// Any byte string through decodeNpy: an Array or a graphc::Error naming the file,
// never a crash, a read past the buffer, std::bad_alloc or an allocation the file
// cannot fill. A decoded array is written back and read again: same type, same
// bytes.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Npy.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char*>(data), size);
  graphc::Array a;
  try {
    a = graphc::decodeNpy(bytes, "fuzz.npy");
  } catch (const graphc::Error& e) {
    if (e.message().rfind("fuzz.npy: ", 0) != 0) {
      std::fprintf(stderr, "error without the file name: %s\n", e.what());
      std::abort();
    }
    return 0;
  }
  // The data came from the file: never more bytes than it had.
  if (a.type().bytes() > static_cast<int64_t>(size)) {
    std::fprintf(stderr, "%s decoded from %zu bytes\n", a.type().str().c_str(), size);
    std::abort();
  }
  graphc::Array b = graphc::decodeNpy(graphc::encodeNpy(a), "again.npy");
  if (b.type() != a.type() ||
      std::memcmp(a.rawData(), b.rawData(), static_cast<size_t>(a.type().bytes())) != 0) {
    std::fprintf(stderr, "round trip of %s differs\n", a.type().str().c_str());
    std::abort();
  }
  return 0;
}
