//===- examples/dlpack_ctypes/LibcData.cpp - libc's data, for a .so -------===//
//
// graphc's static libraries (and libtinfo.a) are position-dependent code (PIE):
// they read three of libc's variables directly, as an executable may, which a
// shared object cannot (the linker has no copy relocation to give it). Rather
// than build every library a second time as PIC, libgraphc_dlpack.so defines
// its own hidden copies of them, which those reads then find:
//
//   __libc_single_threaded  0: libstdc++ always takes the atomic path (always
//                           correct; only the single-threaded shortcut is lost)
//   stdout, stderr          libc's FILE pointers, copied before anything runs
//
// A new libc variable read by graphc's code fails the link of this library by
// name ("relocation R_X86_64_PC32 cannot be used against symbol ..."): add it here.
//
//===----------------------------------------------------------------------===//
#include <dlfcn.h>

#define GRAPHC_HIDDEN __attribute__((visibility("hidden")))

// No <cstdio> here: its declarations of stdout and stderr are libc's.
extern "C" {
GRAPHC_HIDDEN char __libc_single_threaded = 0;
GRAPHC_HIDDEN void* stdout = nullptr;
GRAPHC_HIDDEN void* stderr = nullptr;
}

namespace {

/// Before every other initializer of the library (priority 101 runs first).
__attribute__((constructor(101))) void copyLibcStreams() {
  auto** out = static_cast<void**>(dlsym(RTLD_DEFAULT, "stdout"));
  auto** err = static_cast<void**>(dlsym(RTLD_DEFAULT, "stderr"));
  stdout = out ? *out : nullptr;
  stderr = err ? *err : nullptr;
}

} // namespace
