# `cmake --install` of FTPipe as a CMake package (docs/Integrating.md):
# headers (sources and generated .inc), the libraries as the build made them
# (static by default, shared with BUILD_SHARED_LIBS), libFTPipe-C.so, the
# tools, and FTPipeConfig.cmake / FTPipeConfigVersion.cmake with the targets
# FTPipe::Passes, ::Dialect, ::Analysis, ::Transforms, ::ModelGen, ::CAPI,
# ::Partition, ::Runtime and the tools.
#
# Separate export sets keep lib/Partition and lib/Runtime usable without
# MLIR: FTPipe::Partition and what it links (the pipeline model
# FTPipe::Schedule, the bounded input reader FTPipe::Support) live in
# FTPipePartitionTargets.cmake (need only LLVM), FTPipe::Runtime (when built)
# in FTPipeRuntimeTargets.cmake (LLVM, and CUDA when built with it),
# everything else in FTPipeTargets.cmake (needs MLIR). `find_package(FTPipe COMPONENTS Partition)` loads only the first.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(FTPIPE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/FTPipe CACHE STRING
    "Where FTPipeConfig.cmake is installed, relative to the prefix")

# Everything a host needs to register and run the passes and pipelines.
add_library(FTPipePasses INTERFACE)
target_link_libraries(FTPipePasses INTERFACE
  FTPipeTransforms FTPipeAnalysis FTPipeDialect FTPipePartition MLIR LLVM)

ftpipe_link_closure(ftpipe_mlir_libraries FTPipeDialect FTPipeAnalysis
  FTPipeTransforms FTPipeModelGen FTPipePasses FTPipeCAPI)
list(REMOVE_ITEM ftpipe_mlir_libraries FTPipePartition FTPipeSchedule FTPipeSupport
     FTPipeProfileSchema FTPipeRuntime FTPipePasses FTPipeCAPI)
set(ftpipe_tools "")
foreach(tool ftpipe-opt ftpipe-model-gen ftpipe-devices)
  if(TARGET ${tool})
    list(APPEND ftpipe_tools ${tool})
  endif()
endforeach()
# lib/Runtime, when built: no MLIR, its own export set like lib/Partition.
set(ftpipe_runtime_libraries "")
if(TARGET FTPipeRuntime)
  set(ftpipe_runtime_libraries FTPipeRuntime FTPipeManifestSchema FTPipeStageABI)
  # With CUDA, FTPipeRuntime's device optimizers link the CUDA runtime.
  if(TARGET FTPipeCUDARuntime)
    list(APPEND ftpipe_runtime_libraries FTPipeCUDARuntime)
  endif()
endif()
set(FTPIPE_PACKAGE_HAS_RUNTIME OFF)
if(ftpipe_runtime_libraries)
  set(FTPIPE_PACKAGE_HAS_RUNTIME ON)
endif()

# FTPipe::<name without the FTPipe prefix>.
foreach(library FTPipePartition FTPipeSchedule FTPipeSupport
        FTPipeProfileSchema FTPipePasses
        ${ftpipe_runtime_libraries}
        ${ftpipe_mlir_libraries})
  string(REGEX REPLACE "^FTPipe" "" export_name ${library})
  set_target_properties(${library} PROPERTIES EXPORT_NAME ${export_name})
endforeach()
set_target_properties(FTPipeCAPI PROPERTIES EXPORT_NAME CAPI)

foreach(library FTPipePartition FTPipeSchedule FTPipeSupport
        FTPipeProfileSchema FTPipeCAPI
        ${ftpipe_runtime_libraries} ${ftpipe_mlir_libraries})
  target_include_directories(${library} PUBLIC
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  # LLVM 19's headers need C++17; consumers get it from the targets.
  target_compile_features(${library} PUBLIC cxx_std_17)
endforeach()

# Installed binaries find FTPipe's shared libraries next to them and
# libMLIR.so / libLLVM.so where the build found them.
foreach(target FTPipePartition FTPipeSchedule FTPipeSupport
        FTPipeProfileSchema FTPipeCAPI
        ${ftpipe_runtime_libraries} ${ftpipe_mlir_libraries} ${ftpipe_tools})
  set_target_properties(${target} PROPERTIES
    INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR};$ORIGIN"
    INSTALL_RPATH_USE_LINK_PATH ON)
endforeach()

install(TARGETS FTPipePartition FTPipeSchedule FTPipeSupport
                FTPipeProfileSchema EXPORT FTPipePartitionTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(ftpipe_runtime_libraries)
  install(TARGETS ${ftpipe_runtime_libraries} EXPORT FTPipeRuntimeTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(EXPORT FTPipeRuntimeTargets NAMESPACE FTPipe::
    DESTINATION ${FTPIPE_INSTALL_CMAKEDIR})
endif()
install(TARGETS ${ftpipe_mlir_libraries} FTPipePasses FTPipeCAPI
                ${ftpipe_tools}
  EXPORT FTPipeTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/FTPipe
                  ${PROJECT_SOURCE_DIR}/include/FTPipe-c
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/FTPipe
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h.inc"
  PATTERN "CMakeFiles" EXCLUDE)

install(EXPORT FTPipePartitionTargets NAMESPACE FTPipe::
  DESTINATION ${FTPIPE_INSTALL_CMAKEDIR})
install(EXPORT FTPipeTargets NAMESPACE FTPipe::
  DESTINATION ${FTPIPE_INSTALL_CMAKEDIR})

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/FTPipeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/FTPipeConfig.cmake
  INSTALL_DESTINATION ${FTPIPE_INSTALL_CMAKEDIR})
# 0.x: a new minor version may break the API.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/FTPipeConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/FTPipeConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/FTPipeConfigVersion.cmake
  DESTINATION ${FTPIPE_INSTALL_CMAKEDIR})
