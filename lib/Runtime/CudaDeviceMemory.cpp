//===- CudaDeviceMemory.cpp - The CUDA runtime's stream and memory --------===//
//
// CudaDeviceMemory.h's stream and pool, and the driver side of the C API of
// CudaRuntimeWrappers.h (allocation, copies across, synchronisation, peak).
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceMemory.h"

#include "CudaCheck.h"
#include "FTPipe/Runtime/CudaRuntimeWrappers.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>

using namespace ftpipe;

namespace {

/// The current device's default pool, set up once to keep what is freed
/// (a caching allocator: a release threshold of "never").
cudaMemPool_t pool() {
  static cudaMemPool_t instance = [] {
    int device = 0;
    FTPIPE_CUDA_CHECK(cudaGetDevice(&device));
    cudaMemPool_t created = nullptr;
    FTPIPE_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&created, device));
    uint64_t keepAll = UINT64_MAX;
    FTPIPE_CUDA_CHECK(cudaMemPoolSetAttribute(
        created, cudaMemPoolAttrReleaseThreshold, &keepAll));
    return created;
  }();
  return instance;
}

} // namespace

cudaStream_t cuda::runtimeStream() {
  // Never destroyed: a thread's last kernels may still run when it ends,
  // and at process exit the CUDA runtime may already be gone.
  thread_local cudaStream_t stream = [] {
    cudaStream_t created = nullptr;
    FTPIPE_CUDA_CHECK(
        cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking));
    return created;
  }();
  return stream;
}

void *cuda::deviceAlloc(size_t bytes) {
  void *ptr = nullptr;
  cudaError_t status =
      cudaMallocFromPoolAsync(&ptr, bytes ? bytes : 1, pool(), runtimeStream());
  if (status != cudaSuccess) {
    std::fprintf(stderr,
                 "ftpipe CUDA runtime: allocating %zu bytes of device memory "
                 "failed: %s\n",
                 bytes, cudaGetErrorString(status));
    std::abort();
  }
  return ptr;
}

void cuda::deviceFree(void *ptr) {
  if (ptr)
    FTPIPE_CUDA_CHECK(cudaFreeAsync(ptr, runtimeStream()));
}

extern "C" int ftpipe_cuda_available(void) {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

extern "C" void *ftpipe_cuda_alloc(size_t size) {
  return cuda::deviceAlloc(size);
}

extern "C" void ftpipe_cuda_free(void *ptr) { cuda::deviceFree(ptr); }

extern "C" void ftpipe_cuda_copy_to_device(void *device, const void *host,
                                           size_t bytes) {
  FTPIPE_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice,
                                    cuda::runtimeStream()));
  // The host buffer may be reused as soon as this returns.
  FTPIPE_CUDA_CHECK(cudaStreamSynchronize(cuda::runtimeStream()));
}

extern "C" void ftpipe_cuda_copy_to_host(void *host, const void *device,
                                         size_t bytes) {
  FTPIPE_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost,
                                    cuda::runtimeStream()));
  FTPIPE_CUDA_CHECK(cudaStreamSynchronize(cuda::runtimeStream()));
}

extern "C" void ftpipe_cuda_synchronize(void) {
  FTPIPE_CUDA_CHECK(cudaStreamSynchronize(cuda::runtimeStream()));
}

extern "C" void *ftpipe_cuda_stream(void) { return cuda::runtimeStream(); }

extern "C" uint64_t ftpipe_cuda_peak_bytes(void) {
  uint64_t peak = 0;
  FTPIPE_CUDA_CHECK(
      cudaMemPoolGetAttribute(pool(), cudaMemPoolAttrUsedMemHigh, &peak));
  return peak;
}

extern "C" void ftpipe_cuda_reset_peak(void) {
  uint64_t zero = 0;
  FTPIPE_CUDA_CHECK(
      cudaMemPoolSetAttribute(pool(), cudaMemPoolAttrUsedMemHigh, &zero));
}
