# ftpipe_add_library(<name> SOURCES ... [DEPENDS ...] [LINK ...])
#
# One FTPipe library. Libraries that use MLIR link the single shared
# libMLIR.so (with libLLVM.so); never the static component libraries, which
# would give two copies of MLIR's globals in one process.
function(ftpipe_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;LINK" ${ARGN})
  add_library(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PUBLIC ${ARG_LINK})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>)
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
