# Install rules and the CMake package. `cmake --install build --prefix P` puts:
#   P/include/graphc/...          the public headers (#include <graphc/frontend/Graphc.h>)
#   P/lib/libgraphc_*.a           the libraries
#   P/bin/graphc                  the command
#   P/lib/cmake/graphc/           graphcConfig.cmake, its version file and the targets
# A consumer writes find_package(graphc) and links graphc::graphc (the DSL with every
# backend of the build) or a finer target: graphc::ir, graphc::passes,
# graphc::runtime_core, graphc::cpu, graphc::backends, graphc::frontend, ...
# The dependencies are found again by graphcConfig.cmake (fmt, the CUDA Toolkit) or
# checked for (the static LLVM and LAPACK libraries the build linked).

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(GRAPHC_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/graphc")

# The exported targets: graphc_NAME as graphc::NAME, graphc_lib as graphc::graphc.
set(graphc_exported graphc_fmt graphc_llvm graphc_llvm_jit graphc_lapack graphc_dlpack graphc_support graphc_ir graphc_passes
    graphc_codegen graphc_runtime_core graphc_cpu graphc_backends graphc_frontend graphc_lib)
if(GRAPHC_HAS_CUDA)
  list(APPEND graphc_exported graphc_cuda graphc_cuda_runtime graphc_cuda_backend)
endif()
foreach(target ${graphc_exported})
  string(REGEX REPLACE "^graphc_" "" name ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
endforeach()
set_target_properties(graphc_lib PROPERTIES EXPORT_NAME graphc)

install(TARGETS ${graphc_exported} EXPORT graphcTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS graphc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT graphcTargets NAMESPACE graphc:: DESTINATION ${GRAPHC_INSTALL_CMAKEDIR})

# The headers, with their includes of each other rewritten (cmake/InstallHeaders.cmake).
install(CODE "
  set(GRAPHC_HEADER_ROOTS \"${PROJECT_SOURCE_DIR};${PROJECT_BINARY_DIR}/generated\")
  set(GRAPHC_HEADER_DIRS \"support;ir;passes;codegen;runtime;frontend\")
  set(GRAPHC_HEADER_DESTINATION \"${CMAKE_INSTALL_INCLUDEDIR}/graphc\")
  include(\"${PROJECT_SOURCE_DIR}/cmake/InstallHeaders.cmake\")
")

# The files the static dependencies came from, for graphcConfig.cmake to check.
set(GRAPHC_STATIC_DEPENDENCIES ${LLVM_SUPPORT_LIB} ${LLVM_DEMANGLE_LIB} ${LLVM_JIT_LIBS} ${TINFO_STATIC_LIB}
    ${Z_STATIC_LIB} ${LAPACKE_STATIC_LIB} ${OPENBLAS_STATIC_LIB} ${GFORTRAN_STATIC_LIB}
    ${QUADMATH_STATIC_LIB} ${GRAPHC_LLVM_ROOT}/include/llvm/ADT/ArrayRef.h
    ${LAPACKE_INCLUDE_DIR}/lapacke.h ${DLPACK_INCLUDE_DIR}/dlpack/dlpack.h)
set(GRAPHC_CUDA_TOOLKIT_ROOT "")
if(GRAPHC_HAS_CUDA)
  get_filename_component(GRAPHC_CUDA_TOOLKIT_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
endif()
configure_package_config_file(cmake/graphcConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/graphcConfig.cmake
                              INSTALL_DESTINATION ${GRAPHC_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/graphcConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/graphcConfig.cmake
              ${PROJECT_BINARY_DIR}/graphcConfigVersion.cmake
        DESTINATION ${GRAPHC_INSTALL_CMAKEDIR})
