//===- CudaRuntimeWrappers.cpp - Host functions of generated CUDA code ----===//
//
// The mgpu* functions of upstream's gpu-to-llvm lowering and the generic
// allocation functions of finalize-memref-to-llvm, over the CUDA runtime API
// (CudaRuntimeWrappers.h): device memory from CudaDeviceMemory.h's pool,
// every launch on the calling thread's runtime stream. The runtime API rather
// than the driver API: the driver library (libcuda.so.1) comes with the GPU
// driver, and a library linked to it does not even load on a machine without
// one, where cudart loads and reports "no device" on the first call.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/CudaRuntimeWrappers.h"

#include "CudaCheck.h"
#include "CudaDeviceMemory.h"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace {

/// The device binaries loaded so far, by the address of their embedded
/// bytes, and their kernels by name. Generated code asks for a load and an
/// unload around every launch; loading once per process and keeping the
/// library makes a launch cost a lookup.
struct LoadedLibraries {
  std::mutex mutex;
  std::map<const void *, cudaLibrary_t> libraries;
  std::map<std::pair<cudaLibrary_t, std::string>, cudaKernel_t> kernels;
};

LoadedLibraries &loaded() {
  static LoadedLibraries instance;
  return instance;
}

} // namespace

extern "C" void *mgpuModuleLoad(void *data, size_t /*size*/) {
  LoadedLibraries &state = loaded();
  std::lock_guard<std::mutex> lock(state.mutex);
  auto [it, inserted] = state.libraries.try_emplace(data, nullptr);
  if (inserted)
    FTPIPE_CUDA_CHECK(cudaLibraryLoadData(&it->second, data, nullptr, nullptr,
                                          0, nullptr, nullptr, 0));
  return it->second;
}

extern "C" void mgpuModuleUnload(void * /*module*/) {
  // Kept loaded for the next launch (see LoadedLibraries).
}

extern "C" void *mgpuModuleGetFunction(void *module, const char *name) {
  LoadedLibraries &state = loaded();
  std::lock_guard<std::mutex> lock(state.mutex);
  auto library = static_cast<cudaLibrary_t>(module);
  auto [it, inserted] =
      state.kernels.try_emplace({library, std::string(name)}, nullptr);
  if (inserted)
    FTPIPE_CUDA_CHECK(cudaLibraryGetKernel(&it->second, library, name));
  return reinterpret_cast<void *>(it->second);
}

extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                 intptr_t gridZ, intptr_t blockX,
                                 intptr_t blockY, intptr_t blockZ, int32_t smem,
                                 void *stream, void **params, void ** /*extra*/,
                                 size_t /*paramsCount*/) {
  dim3 grid(gridX, gridY, gridZ), block(blockX, blockY, blockZ);
  // `stream` is the runtime stream (mgpuStreamCreate); named again so that
  // a launch never lands on the legacy default stream.
  (void)stream;
  FTPIPE_CUDA_CHECK(cudaLaunchKernel(static_cast<const void *>(function), grid,
                                     block, params, smem,
                                     ftpipe::cuda::runtimeStream()));
}

// Generated code creates a stream around every launch and synchronises it
// after; both map to the thread's runtime stream, on which everything that
// uses the kernel's results (kernels, cuBLAS, copies, frees) is ordered
// anyway, so the host does not wait.
extern "C" void *mgpuStreamCreate() { return ftpipe::cuda::runtimeStream(); }

extern "C" void mgpuStreamDestroy(void * /*stream*/) {}

extern "C" void mgpuStreamSynchronize(void * /*stream*/) {}

extern "C" void *mgpuMemAlloc(uint64_t sizeBytes, void * /*stream*/,
                              bool isHostShared) {
  if (isHostShared)
    ftpipe::cudaFailure("mgpuMemAlloc", __FILE__, __LINE__,
                        "host-shared (managed) memory was asked for; FTPipe's "
                        "CUDA path keeps every buffer in device memory");
  return ftpipe::cuda::deviceAlloc(sizeBytes);
}

extern "C" void mgpuMemFree(void *ptr, void * /*stream*/) {
  ftpipe::cuda::deviceFree(ptr);
}

extern "C" void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                           void * /*stream*/) {
  FTPIPE_CUDA_CHECK(cudaMemcpyAsync(dst, src, sizeBytes, cudaMemcpyDefault,
                                    ftpipe::cuda::runtimeStream()));
}

extern "C" void *_mlir_memref_to_llvm_alloc(size_t size) {
  return ftpipe::cuda::deviceAlloc(size);
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t /*alignment*/,
                                                    size_t size) {
  // Pool allocations are aligned to at least 256 bytes, more than any
  // alignment the lowering asks for.
  return ftpipe::cuda::deviceAlloc(size);
}

extern "C" void _mlir_memref_to_llvm_free(void *ptr) {
  ftpipe::cuda::deviceFree(ptr);
}
