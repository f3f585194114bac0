# Build options for checked builds (included from the top-level CMakeLists.txt).
#
#   GRAPHC_SANITIZE        sanitizers for every target: "address,undefined" (ASan +
#                          UBSan), "thread" (TSan), or empty. Failures abort (no
#                          recovery), so a finding fails its test. scripts/sanitize.sh
#                          builds and runs the CPU suite this way.
#   GRAPHC_STATIC_LIBSTDCXX link libstdc++ and libgcc statically: binaries built here
#                          then run on the GPU machines' newer images. Default ON, and
#                          OFF with sanitizers, whose runtimes replace operator new and
#                          the C++ runtime's threading hooks in the shared libstdc++.
set(GRAPHC_SANITIZE "" CACHE STRING "Sanitizers: address,undefined | thread | empty")
set(_graphc_static_default ON)
if(GRAPHC_SANITIZE)
  set(_graphc_static_default OFF)
endif()
option(GRAPHC_STATIC_LIBSTDCXX "Link libstdc++ and libgcc statically" ${_graphc_static_default})

if(GRAPHC_SANITIZE)
  string(REPLACE "," ";" _graphc_sanitizers "${GRAPHC_SANITIZE}")
  foreach(s IN LISTS _graphc_sanitizers)
    if(NOT s MATCHES "^(address|undefined|thread|leak)$")
      message(FATAL_ERROR "GRAPHC_SANITIZE: unknown sanitizer '${s}' "
                          "(address, undefined, thread, leak)")
    endif()
  endforeach()
  if("thread" IN_LIST _graphc_sanitizers AND "address" IN_LIST _graphc_sanitizers)
    message(FATAL_ERROR "GRAPHC_SANITIZE: thread and address cannot be combined")
  endif()
  add_compile_options(-fsanitize=${GRAPHC_SANITIZE} -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${GRAPHC_SANITIZE})
  message(STATUS "graphc: sanitizers ${GRAPHC_SANITIZE}")
endif()

if(GRAPHC_STATIC_LIBSTDCXX)
  add_link_options(-static-libstdc++ -static-libgcc)
endif()

# GRAPHC_FUZZ builds the libFuzzer targets of tests/fuzz (clang only): every target
# is compiled with libFuzzer's coverage instrumentation. Use with GRAPHC_SANITIZE
# (scripts/fuzz.sh sets both).
option(GRAPHC_FUZZ "Build the libFuzzer targets of tests/fuzz (clang)" OFF)
if(GRAPHC_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "GRAPHC_FUZZ needs clang (e.g. -DCMAKE_CXX_COMPILER=clang++-14)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
