# Run by the test package.consumer (cmake -P). Installs BUILD_DIR into
# WORK_DIR/prefix, checks the installed layout, builds the project of
# SOURCE_DIR/tests/package/wrapper (which finds graphc and builds examples/readme)
# against it, runs the program on the cpu backend and compares README.md's example
# program and output block with the real ones.

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "${command}: exit ${rc}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

foreach(file include/graphc/frontend/Graphc.h include/graphc/ir/Ops.def include/graphc/ir/OpCases.h
             include/graphc/ir/ElementwiseOps.h bin/graphc
             lib/cmake/graphc/graphcConfig.cmake lib/cmake/graphc/graphcConfigVersion.cmake
             lib/cmake/graphc/graphcTargets.cmake lib/libgraphc_ir.a)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "the install has no ${file}")
  endif()
endforeach()
# Installed headers include each other under graphc/, so include/ alone finds them.
file(READ ${prefix}/include/graphc/frontend/Tensor.h tensor)
if(NOT tensor MATCHES "#include \"graphc/ir/")
  message(FATAL_ERROR "include/graphc/frontend/Tensor.h does not include graphc/ir/...")
endif()
run(${prefix}/bin/graphc --version)
if(NOT out MATCHES "^graphc ${VERSION}\n")
  message(FATAL_ERROR "the installed graphc --version printed: ${out}")
endif()

set(launcher "")
if(CXX_LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_LAUNCHER})
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/package/wrapper -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX_COMPILER} ${launcher}
    -DCMAKE_PREFIX_PATH=${prefix} -DGRAPHC_EXPECTED_VERSION=${VERSION}
    -DREADME_EXAMPLE_DIR=${SOURCE_DIR}/examples/readme)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
set(ENV{GRAPHC_BACKEND} cpu)
run(${WORK_DIR}/build/readme/readme)
set(output "${out}")

# README.md shows examples/readme/main.cpp, then its output, then its CMakeLists.txt.
file(READ ${SOURCE_DIR}/README.md readme)
function(expect_block what fence text)
  string(FIND "${readme}" "${fence}\n${text}```\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "README.md does not show ${what} as it is; it is:\n${fence}\n${text}```")
  endif()
endfunction()
file(READ ${SOURCE_DIR}/examples/readme/main.cpp program)
file(READ ${SOURCE_DIR}/examples/readme/CMakeLists.txt lists)
expect_block("examples/readme/main.cpp" "```cpp" "${program}")
expect_block("the example's output" "```text" "${output}")
expect_block("examples/readme/CMakeLists.txt" "```cmake" "${lists}")

file(REMOVE_RECURSE ${WORK_DIR}) # about 350 MB of libraries with debug information
