# Run by `cmake --install` (cmake/Install.cmake): copies graphc's public headers
# into <prefix>/include/graphc/, keeping their folders, with each include of another
# graphc header ("ir/Graph.h") rewritten to its installed name ("graphc/ir/Graph.h"),
# so that <prefix>/include alone is on a consumer's include path. The source tree
# keeps its short includes.
#
# Expects GRAPHC_HEADER_ROOTS (the source root, and the folder of the headers
# generated at configure time), GRAPHC_HEADER_DIRS (the folders under a root) and
# GRAPHC_HEADER_DESTINATION (relative to the install prefix).

set(destination "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${GRAPHC_HEADER_DESTINATION}")
string(REPLACE ";" "|" dirs "${GRAPHC_HEADER_DIRS}")
foreach(root ${GRAPHC_HEADER_ROOTS})
  set(headers)
  foreach(dir ${GRAPHC_HEADER_DIRS})
    file(GLOB_RECURSE found RELATIVE "${root}" "${root}/${dir}/*.h" "${root}/${dir}/*.def")
    list(APPEND headers ${found})
  endforeach()
  foreach(header ${headers})
    file(READ "${root}/${header}" text)
    string(REGEX REPLACE "#include \"(${dirs})/" "#include \"graphc/\\1/" text "${text}")
    set(target "${destination}/${header}")
    if(EXISTS "${target}")
      file(READ "${target}" old)
      if(old STREQUAL text)
        message(STATUS "Up-to-date: ${target}")
        continue()
      endif()
    endif()
    message(STATUS "Installing: ${target}")
    file(WRITE "${target}" "${text}")
  endforeach()
endforeach()
