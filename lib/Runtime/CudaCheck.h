//===- CudaCheck.h - Abort on a failed CUDA call ----------------*- C++ -*-===//
//
// FTPIPE_CUDA_CHECK(call): the host functions of generated CUDA code cannot
// return an error to it, so a failed CUDA runtime call prints the call, the
// file and CUDA's message on stderr and aborts. A private header of
// lib/Runtime (CudaRuntimeWrappers.cpp, CuBLASKernels.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_LIB_RUNTIME_CUDACHECK_H
#define FTPIPE_LIB_RUNTIME_CUDACHECK_H

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

namespace ftpipe {

[[noreturn]] inline void cudaFailure(const char *call, const char *file,
                                     int line, const char *message) {
  std::fprintf(stderr, "ftpipe CUDA runtime: %s failed at %s:%d: %s\n", call,
               file, line, message);
  std::abort();
}

} // namespace ftpipe

#define FTPIPE_CUDA_CHECK(call)                                                \
  do {                                                                         \
    cudaError_t ftpipeStatus = (call);                                         \
    if (ftpipeStatus != cudaSuccess)                                           \
      ::ftpipe::cudaFailure(#call, __FILE__, __LINE__,                         \
                            cudaGetErrorString(ftpipeStatus));                 \
  } while (false)

#endif // FTPIPE_LIB_RUNTIME_CUDACHECK_H
