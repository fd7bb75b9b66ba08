/*===- CudaRuntimeWrappers.h - Host side of CUDA artifacts ---------*- C -*-===*
 *
 * What the host side of a CUDA artifact calls besides the stage ABI and the
 * cuBLAS entry, implemented over the CUDA runtime API in the shared library
 * FTPipeCUDARuntime (Debian's MLIR ships no libmlir_cuda_runtime):
 *
 * - The `mgpu*` functions that upstream's `gpu-to-llvm` lowering calls to
 *   load the embedded device binary, look up a kernel and launch it on a
 *   stream (the subset FTPipe's CUDA lowering emits; same names and C
 *   signatures as upstream's mlir/lib/ExecutionEngine/CudaRuntimeWrappers.cpp).
 *   A binary is loaded once per process and kept (upstream's host lowering
 *   asks for a load and an unload around every launch).
 * - The allocation functions of finalize-memref-to-llvm with
 *   use-generic-functions: every buffer of generated code is CUDA managed
 *   memory (cudaMallocManaged), valid on the host and on the device.
 *
 * The memory model of CUDA artifacts (docs/Compile.md): every buffer that
 * crosses their C ABI -- entry point arguments and results, and the buffers
 * passed to ftpipe_rt_send_T / ftpipe_rt_recv_T -- is managed memory. Callers
 * pass managed memory (or memory the device and the host can both reach) and
 * free returned buffers with ftpipe_cuda_free (not free). Every launch and
 * every gemm is synchronous: when an entry point returns, its results are
 * ready on the host. Errors print the failing CUDA call on stderr and abort.
 *
 *===----------------------------------------------------------------------===*/

#ifndef FTPIPE_RUNTIME_CUDARUNTIMEWRAPPERS_H
#define FTPIPE_RUNTIME_CUDARUNTIMEWRAPPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FTPIPE_CUDA_EXPORT __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

/* Upstream's gpu-to-llvm ABI (modules, kernels, streams, memory). */
FTPIPE_CUDA_EXPORT void *mgpuModuleLoad(void *data, size_t size);
FTPIPE_CUDA_EXPORT void mgpuModuleUnload(void *module);
FTPIPE_CUDA_EXPORT void *mgpuModuleGetFunction(void *module, const char *name);
FTPIPE_CUDA_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX,
                                         intptr_t gridY, intptr_t gridZ,
                                         intptr_t blockX, intptr_t blockY,
                                         intptr_t blockZ, int32_t smem,
                                         void *stream, void **params,
                                         void **extra, size_t paramsCount);
FTPIPE_CUDA_EXPORT void *mgpuStreamCreate(void);
FTPIPE_CUDA_EXPORT void mgpuStreamDestroy(void *stream);
FTPIPE_CUDA_EXPORT void mgpuStreamSynchronize(void *stream);
FTPIPE_CUDA_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, void *stream,
                                      bool isHostShared);
FTPIPE_CUDA_EXPORT void mgpuMemFree(void *ptr, void *stream);
FTPIPE_CUDA_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                                   void *stream);

/* finalize-memref-to-llvm{use-generic-functions}: managed memory. */
FTPIPE_CUDA_EXPORT void *_mlir_memref_to_llvm_alloc(size_t size);
FTPIPE_CUDA_EXPORT void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                            size_t size);
FTPIPE_CUDA_EXPORT void _mlir_memref_to_llvm_free(void *ptr);

/* For drivers: managed buffers to pass to entry points, and the way to free
 * the buffers that entry points return (their `allocated` pointer). */
FTPIPE_CUDA_EXPORT void *ftpipe_cuda_alloc(size_t size);
FTPIPE_CUDA_EXPORT void ftpipe_cuda_free(void *ptr);

#ifdef __cplusplus
}
#endif

#endif /* FTPIPE_RUNTIME_CUDARUNTIMEWRAPPERS_H */
