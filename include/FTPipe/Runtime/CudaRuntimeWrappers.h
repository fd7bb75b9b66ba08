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
 *   use-generic-functions, and the copies of ftpipe-device-copies (strided
 *   copies on the device): every buffer of
 *   generated code is device memory from the device's stream-ordered pool
 *   (cudaMallocAsync semantics, freed blocks kept for reuse). Never managed
 *   memory: `mgpuMemAlloc` refuses host-shared memory.
 *
 * The memory model of CUDA artifacts (docs/GPU.md): every buffer that
 * crosses their C ABI -- entry point arguments and results -- is device
 * memory. Drivers allocate arguments with ftpipe_cuda_alloc, fill them with
 * ftpipe_cuda_copy_to_device, read results with ftpipe_cuda_copy_to_host and
 * free the buffers that entry points return (their `allocated` pointer) with
 * ftpipe_cuda_free. Kernels, cuBLAS calls, copies, allocations and frees of
 * one thread are all ordered on that thread's runtime stream
 * (ftpipe_cuda_stream): an entry point returns with its work queued; the
 * copies to the host wait for it. The host code of an artifact never reads
 * or writes device memory. Errors print the failing CUDA call on stderr and
 * abort.
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

/* finalize-memref-to-llvm{use-generic-functions}: device memory. */
FTPIPE_CUDA_EXPORT void *_mlir_memref_to_llvm_alloc(size_t size);
FTPIPE_CUDA_EXPORT void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                            size_t size);
FTPIPE_CUDA_EXPORT void _mlir_memref_to_llvm_free(void *ptr);

/* memref.copy of host code (ftpipe-device-copies): target[i] = source[i] on
 * the device, for unranked memrefs passed as (rank, descriptor) pairs; the
 * source of a dense copy may be host memory (a constant). */
#define FTPIPE_CUDA_DECLARE_COPY(T)                                            \
  FTPIPE_CUDA_EXPORT void ftpipe_cuda_copy_##T(                                \
      int64_t sourceRank, void *source, int64_t targetRank, void *target);
FTPIPE_CUDA_DECLARE_COPY(f64)
FTPIPE_CUDA_DECLARE_COPY(f32)
FTPIPE_CUDA_DECLARE_COPY(f16)
FTPIPE_CUDA_DECLARE_COPY(bf16)
FTPIPE_CUDA_DECLARE_COPY(i64)
FTPIPE_CUDA_DECLARE_COPY(i32)
FTPIPE_CUDA_DECLARE_COPY(i16)
FTPIPE_CUDA_DECLARE_COPY(i8)
FTPIPE_CUDA_DECLARE_COPY(i1)
#undef FTPIPE_CUDA_DECLARE_COPY

/* For drivers. ftpipe_cuda_available: 1 if a CUDA device can be used, 0
 * otherwise (no device, no driver), without aborting. Device buffers to pass
 * to entry points, and the way to free the buffers that entry points return
 * (their `allocated` pointer); copies across (each returns when the copy is
 * done, after the work queued before it); a wait for the thread's queued
 * work; the thread's stream (a cudaStream_t); the most pool memory in use at
 * once since the start or the last reset, in bytes. */
FTPIPE_CUDA_EXPORT int ftpipe_cuda_available(void);
FTPIPE_CUDA_EXPORT void *ftpipe_cuda_alloc(size_t size);
FTPIPE_CUDA_EXPORT void ftpipe_cuda_free(void *ptr);
FTPIPE_CUDA_EXPORT void
ftpipe_cuda_copy_to_device(void *device, const void *host, size_t bytes);
FTPIPE_CUDA_EXPORT void ftpipe_cuda_copy_to_host(void *host, const void *device,
                                                 size_t bytes);
FTPIPE_CUDA_EXPORT void ftpipe_cuda_synchronize(void);
FTPIPE_CUDA_EXPORT void *ftpipe_cuda_stream(void);
FTPIPE_CUDA_EXPORT uint64_t ftpipe_cuda_peak_bytes(void);
FTPIPE_CUDA_EXPORT void ftpipe_cuda_reset_peak(void);

/* Makes the stage ABI's transfers (ftpipe_rt_send_T / ftpipe_rt_recv_T) read
 * and write device buffers (ftpipe_rt_set_buffer_access): staged through host
 * bytes, which any transport carries. A driver of CUDA artifacts calls it once
 * before the first transfer; it holds for the whole process. */
FTPIPE_CUDA_EXPORT void ftpipe_cuda_enable_transfers(void);

#ifdef __cplusplus
}
#endif

#endif /* FTPIPE_RUNTIME_CUDARUNTIMEWRAPPERS_H */
