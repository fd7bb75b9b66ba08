/*===- CuBLASKernels.h - The gemm entry of generated CUDA code -----*- C -*-===*
 *
 * The CUDA target's twin of BLASKernels.h: `ftpipe-linalg-to-blas` with
 * `library=cublas` turns every contraction into one call of
 * `ftpipe_cublas_gemm_T` (T = f32 or f64), implemented over cuBLAS in the
 * shared library FTPipeCUDARuntime. The arguments are those of
 * ftpipe_blas_gemm_T (unranked memrefs, role codes, batch count, accumulate);
 * the buffers are device memory (CudaRuntimeWrappers.h). The product is
 * queued on the calling thread's runtime stream, after the work queued there
 * before (nothing waits: whatever reads C next is ordered after it on the
 * same stream). On a CUDA or cuBLAS error it prints the error on stderr and
 * aborts.
 *
 *===----------------------------------------------------------------------===*/

#ifndef FTPIPE_RUNTIME_CUBLASKERNELS_H
#define FTPIPE_RUNTIME_CUBLASKERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"))) void
ftpipe_cublas_gemm_f32(int64_t rankA, void *a, int64_t rankB, void *b,
                       int64_t rankC, void *c, int64_t codeA, int64_t codeB,
                       int64_t codeC, int64_t batches, int64_t accumulate);
__attribute__((visibility("default"))) void
ftpipe_cublas_gemm_f64(int64_t rankA, void *a, int64_t rankB, void *b,
                       int64_t rankC, void *c, int64_t codeA, int64_t codeB,
                       int64_t codeC, int64_t batches, int64_t accumulate);

#ifdef __cplusplus
}
#endif

#endif /* FTPIPE_RUNTIME_CUBLASKERNELS_H */
