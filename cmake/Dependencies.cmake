# Locates graphc's third-party dependencies and wraps each in one imported target:
#   graphc::llvm    LLVM ADT/Support from Debian's llvm-14-dev, linked statically
#   graphc::llvm_jit  LLVM's IR, optimizer, X86 code generator and ORC JIT, linked
#                   statically (the cpu backend's compiled kernels; only the IR
#                   with GRAPHC_CPU_JIT=OFF)
#   graphc::fmt     fmt, header-only
#   graphc::lapack  LAPACKE + OpenBLAS (+ libgfortran/libquadmath), linked statically
#   graphc::dlpack  dlpack.h, the tensor exchange format (Debian's libdlpack-dev)
#   graphc::cuda    cudart, NVRTC, cuBLAS, cuSOLVER (only when GRAPHC_HAS_CUDA)
# Static linking keeps the binaries runnable on machines that have only the CUDA libraries.

find_package(fmt REQUIRED)
add_library(graphc_fmt INTERFACE)
target_link_libraries(graphc_fmt INTERFACE fmt::fmt-header-only)
add_library(graphc::fmt ALIAS graphc_fmt)

set(GRAPHC_LLVM_ROOT "/usr/lib/llvm-14" CACHE PATH "Root of the LLVM 14 installation")
find_library(LLVM_SUPPORT_LIB libLLVMSupport.a PATHS ${GRAPHC_LLVM_ROOT}/lib NO_DEFAULT_PATH REQUIRED)
find_library(LLVM_DEMANGLE_LIB libLLVMDemangle.a PATHS ${GRAPHC_LLVM_ROOT}/lib NO_DEFAULT_PATH REQUIRED)
find_library(TINFO_STATIC_LIB libtinfo.a REQUIRED)
find_library(Z_STATIC_LIB libz.a REQUIRED)
add_library(graphc_llvm INTERFACE)
target_include_directories(graphc_llvm SYSTEM INTERFACE ${GRAPHC_LLVM_ROOT}/include)
target_link_libraries(graphc_llvm INTERFACE ${LLVM_SUPPORT_LIB} ${LLVM_DEMANGLE_LIB}
                      ${TINFO_STATIC_LIB} ${Z_STATIC_LIB} pthread dl rt m)
add_library(graphc::llvm ALIAS graphc_llvm)

# The static libraries of the components the cpu backend's JIT needs, as llvm-config
# lists them (dependencies included, in link order); never libLLVM-14.so. With
# GRAPHC_CPU_JIT=OFF only LLVM's IR (codegen/Llvm.h prints kernels as IR, for
# `graphc dump --llvm`): no optimizer, code generator or JIT, kernels interpreted.
option(GRAPHC_CPU_JIT "Compile the cpu backend's fused kernels with LLVM's ORC JIT" ON)
if(GRAPHC_CPU_JIT)
  set(GRAPHC_LLVM_JIT_COMPONENTS orcjit x86codegen passes irreader)
else()
  set(GRAPHC_LLVM_JIT_COMPONENTS core)
endif()
find_program(LLVM_CONFIG llvm-config PATHS ${GRAPHC_LLVM_ROOT}/bin NO_DEFAULT_PATH REQUIRED)
execute_process(COMMAND ${LLVM_CONFIG} --link-static --libfiles ${GRAPHC_LLVM_JIT_COMPONENTS}
                OUTPUT_VARIABLE LLVM_JIT_LIBS OUTPUT_STRIP_TRAILING_WHITESPACE
                COMMAND_ERROR_IS_FATAL ANY)
separate_arguments(LLVM_JIT_LIBS UNIX_COMMAND "${LLVM_JIT_LIBS}")
add_library(graphc_llvm_jit INTERFACE)
target_link_libraries(graphc_llvm_jit INTERFACE ${LLVM_JIT_LIBS} ${TINFO_STATIC_LIB} ${Z_STATIC_LIB}
                      graphc_llvm)
add_library(graphc::llvm_jit ALIAS graphc_llvm_jit)

find_path(LAPACKE_INCLUDE_DIR lapacke.h REQUIRED)
find_library(LAPACKE_STATIC_LIB liblapacke.a REQUIRED)
find_library(OPENBLAS_STATIC_LIB libopenblas.a
             PATHS /usr/lib/x86_64-linux-gnu/openblas-pthread NO_DEFAULT_PATH REQUIRED)
execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libgfortran.a
                OUTPUT_VARIABLE GFORTRAN_STATIC_LIB OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libquadmath.a
                OUTPUT_VARIABLE QUADMATH_STATIC_LIB OUTPUT_STRIP_TRAILING_WHITESPACE)
add_library(graphc_lapack INTERFACE)
target_include_directories(graphc_lapack SYSTEM INTERFACE ${LAPACKE_INCLUDE_DIR})
target_link_libraries(graphc_lapack INTERFACE ${LAPACKE_STATIC_LIB} ${OPENBLAS_STATIC_LIB}
                      ${GFORTRAN_STATIC_LIB} ${QUADMATH_STATIC_LIB} pthread m)
add_library(graphc::lapack ALIAS graphc_lapack)

find_path(DLPACK_INCLUDE_DIR dlpack/dlpack.h REQUIRED)
add_library(graphc_dlpack INTERFACE)
target_include_directories(graphc_dlpack SYSTEM INTERFACE ${DLPACK_INCLUDE_DIR})
add_library(graphc::dlpack ALIAS graphc_dlpack)

# GRAPHC_CUDA=AUTO uses the CUDA Toolkit where it is found; ON requires it; OFF ignores it.
set(GRAPHC_CUDA AUTO CACHE STRING "Build the CUDA backend: AUTO, ON or OFF")
set_property(CACHE GRAPHC_CUDA PROPERTY STRINGS AUTO ON OFF)
set(GRAPHC_HAS_CUDA OFF)
if(NOT GRAPHC_CUDA STREQUAL "OFF")
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  if(GRAPHC_CUDA STREQUAL "ON")
    find_package(CUDAToolkit REQUIRED)
  else()
    find_package(CUDAToolkit QUIET)
  endif()
  if(CUDAToolkit_FOUND AND TARGET CUDA::nvrtc AND TARGET CUDA::cublas AND TARGET CUDA::cusolver)
    set(GRAPHC_HAS_CUDA ON)
    add_library(graphc_cuda INTERFACE)
    # The runtime API loads the driver lazily: binaries start where no driver is installed.
    target_link_libraries(graphc_cuda INTERFACE CUDA::cudart CUDA::nvrtc CUDA::cublas
                          CUDA::cusolver)
    target_compile_definitions(graphc_cuda INTERFACE GRAPHC_HAS_CUDA=1)
    target_link_options(graphc_cuda INTERFACE "-Wl,-rpath,${CUDAToolkit_LIBRARY_DIR}:/usr/local/cuda/lib64")
    add_library(graphc::cuda ALIAS graphc_cuda)
  elseif(GRAPHC_CUDA STREQUAL "ON")
    message(FATAL_ERROR "GRAPHC_CUDA=ON but NVRTC, cuBLAS or cuSOLVER were not found")
  endif()
endif()
message(STATUS "graphc: CUDA backend ${GRAPHC_HAS_CUDA}")
