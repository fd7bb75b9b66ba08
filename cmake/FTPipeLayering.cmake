# Layering checks: which libraries a library may include and link.
#
# ftpipe_check_includes(<library> <forbidden-regex> <files...>) fails (at
# configure time, or in `cmake -P`) naming the first file that includes a
# header whose path matches <forbidden-regex>. Used by lib/Partition (no MLIR)
# and lib/Runtime (no MLIR, nothing of the compiler half); the CTests
# partition-includes-no-mlir and schedule-runtime-includes-no-compiler grep
# again at test time, for headers added after configuration.
function(ftpipe_check_includes library forbidden)
  foreach(file ${ARGN})
    file(STRINGS ${file} hits REGEX "#include [\"<](${forbidden})")
    if(hits)
      message(FATAL_ERROR "${file} includes ${hits}; ${library} must not")
    endif()
  endforeach()
endfunction()

# What lib/Runtime and include/FTPipe/Runtime may not include: MLIR, and the
# compiler half's libraries (the pipeline model below both is lib/Schedule).
set(FTPIPE_RUNTIME_FORBIDDEN_INCLUDES
    "mlir/|FTPipe/(Partition|Analysis|Transforms|Dialect|Conversion|AutoDiff|Target|ModelGen)/")
# What FTPipeRuntime may not link, directly or through another FTPipe
# library (checked at the end of lib/CMakeLists.txt).
set(FTPIPE_RUNTIME_FORBIDDEN_LINKS
    FTPipePartition FTPipeAnalysis FTPipeTransforms FTPipeDialect
    FTPipeConversion FTPipeAutoDiff FTPipeTarget FTPipeModelGen MLIR)
# What the compiler tools (ftpipe-compile, ftpipe-opt) may not link: the
# runtime's executor, communicators and kernels. Of lib/Runtime they link
# the manifest's library (FTPipeManifestSchema) only (checked at the end of
# tools/CMakeLists.txt).
set(FTPIPE_COMPILER_FORBIDDEN_LINKS
    FTPipeRuntime FTPipeStageABI FTPipeCPUKernels FTPipeCUDARuntime)

# ftpipe_refuse_links(<target> <forbidden...>) fails at configure time
# naming the first library of <forbidden...> that <target> links, directly
# or through the FTPipe libraries it links (ftpipe_links_of).
function(ftpipe_refuse_links target)
  ftpipe_links_of(links ${target})
  foreach(link ${links})
    if(link IN_LIST ARGN)
      message(FATAL_ERROR "${target} links ${link}; it must not "
                          "(cmake/FTPipeLayering.cmake)")
    endif()
  endforeach()
endfunction()

# ftpipe_link_closure(<out> <targets...>): the targets and every FTPipe
# library they link, transitively. Exporting the closure means a library that
# starts to link a new internal FTPipe library keeps `install(EXPORT)` valid.
function(ftpipe_link_closure out)
  set(result "")
  set(queue ${ARGN})
  while(queue)
    list(POP_FRONT queue target)
    if(NOT TARGET ${target} OR target IN_LIST result)
      continue()
    endif()
    get_target_property(imported ${target} IMPORTED)
    if(imported)
      continue()
    endif()
    list(APPEND result ${target})
    get_target_property(type ${target} TYPE)
    set(links "")
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(links ${target} LINK_LIBRARIES)
    endif()
    get_target_property(interface_links ${target} INTERFACE_LINK_LIBRARIES)
    foreach(link IN LISTS links interface_links)
      if(link MATCHES "^FTPipe" AND TARGET ${link})
        list(APPEND queue ${link})
      endif()
    endforeach()
  endwhile()
  set(${out} ${result} PARENT_SCOPE)
endfunction()

# ftpipe_links_of(<out> <target>): every library <target> links, directly or
# through the FTPipe libraries it links (names as given to
# target_link_libraries).
function(ftpipe_links_of out target)
  ftpipe_link_closure(closure ${target})
  set(result ${closure})
  foreach(library ${closure})
    get_target_property(links ${library} LINK_LIBRARIES)
    if(links)
      list(APPEND result ${links})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES result)
  set(${out} ${result} PARENT_SCOPE)
endfunction()
