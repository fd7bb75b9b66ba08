# Detects the optional dependencies. Each FTPIPE_ENABLE_<X> is AUTO (use it
# when found), ON (fail when missing) or OFF; FTPIPE_HAVE_<X> says what the
# build ended up with.

set(FTPIPE_ENABLE_CUDA AUTO CACHE STRING
    "Build the CUDA + NCCL parts: AUTO, ON or OFF")
set(FTPIPE_ENABLE_MPI AUTO CACHE STRING "Build the MPI parts: AUTO, ON or OFF")
set_property(CACHE FTPIPE_ENABLE_CUDA PROPERTY STRINGS AUTO ON OFF)
set_property(CACHE FTPIPE_ENABLE_MPI PROPERTY STRINGS AUTO ON OFF)

# ftpipe_resolve_option(<name> <found>): sets FTPIPE_HAVE_<name>.
function(ftpipe_resolve_option name found)
  set(mode "${FTPIPE_ENABLE_${name}}")
  if(mode STREQUAL "OFF")
    set(FTPIPE_HAVE_${name} OFF PARENT_SCOPE)
  elseif(found)
    set(FTPIPE_HAVE_${name} ON PARENT_SCOPE)
  elseif(mode STREQUAL "ON")
    message(FATAL_ERROR "FTPIPE_ENABLE_${name}=ON but ${name} was not found")
  else()
    set(FTPIPE_HAVE_${name} OFF PARENT_SCOPE)
  endif()
endfunction()

set(ftpipe_cuda_found OFF)
if(NOT FTPIPE_ENABLE_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    find_path(FTPIPE_NCCL_INCLUDE_DIR nccl.h
              HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include)
    find_library(FTPIPE_NCCL_LIBRARY nccl
                 HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/lib/x86_64-linux-gnu)
    if(FTPIPE_NCCL_INCLUDE_DIR AND FTPIPE_NCCL_LIBRARY)
      set(ftpipe_cuda_found ON)
    endif()
  endif()
endif()
ftpipe_resolve_option(CUDA ${ftpipe_cuda_found})
# CUDA C++ sources (lib/Runtime/*.cu: device copies, optimizer kernels) go
# through the toolkit's nvcc: SASS for sm_80 and sm_90 plus sm_90 PTX, which
# newer GPUs compile at load. One CUDA runtime per process: the kernels use the
# shared cudart that the C++ sources link.
if(FTPIPE_HAVE_CUDA)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80-real 90)
  endif()
  if(NOT DEFINED CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
  endif()
  set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
  enable_language(CUDA)
endif()

set(ftpipe_mpi_found OFF)
if(NOT FTPIPE_ENABLE_MPI STREQUAL "OFF")
  find_package(MPI QUIET COMPONENTS C)
  set(ftpipe_mpi_found ${MPI_C_FOUND})
endif()
ftpipe_resolve_option(MPI ${ftpipe_mpi_found})
