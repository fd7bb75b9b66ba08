/*===- BLASKernels.h - The gemm entry that generated CPU code calls -*- C -*-===*
 *
 * `ftpipe-linalg-to-blas` turns every contraction into one call of
 * `ftpipe_blas_gemm_T` (T = f32 or f64), implemented in the shared library
 * FTPipeCPUKernels over OpenBLAS. One entry serves every shape, rank and
 * layout: the operands come as MLIR unranked memrefs (rank, descriptor; the
 * descriptor layout is FTPipeMemRefHead of StageABI.h), and a role code per
 * operand says which of its dimensions is which loop:
 *
 *   C[b..][m][n] (+)= sum_k A[b..][m][k] * B[b..][k][n]
 *
 * A role code holds FTPIPE_BLAS_ROLE_BITS bits per role, roles in the order
 * rows, columns, batch 0, batch 1, batch 2 (A: rows m, columns k; B: rows k,
 * columns n; C: rows m, columns n); the value is the memref dimension plus
 * one, or 0 when the operand has no such dimension (an operand broadcast over
 * a batch loop). `batches` is the number of batch loops (at most
 * FTPIPE_BLAS_MAX_BATCH), `accumulate` 1 to add the product to C, 0 to
 * overwrite C. Any strides work: unit-stride rows or columns go to BLAS as
 * they are (transposed or not), others are packed first.
 *
 *===----------------------------------------------------------------------===*/

#ifndef FTPIPE_RUNTIME_BLASKERNELS_H
#define FTPIPE_RUNTIME_BLASKERNELS_H

#include <stdint.h>

#define FTPIPE_BLAS_ROLE_BITS 4
#define FTPIPE_BLAS_MAX_BATCH 3

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"))) void
ftpipe_blas_gemm_f32(int64_t rankA, void *a, int64_t rankB, void *b,
                     int64_t rankC, void *c, int64_t codeA, int64_t codeB,
                     int64_t codeC, int64_t batches, int64_t accumulate);
__attribute__((visibility("default"))) void
ftpipe_blas_gemm_f64(int64_t rankA, void *a, int64_t rankB, void *b,
                     int64_t rankC, void *c, int64_t codeA, int64_t codeB,
                     int64_t codeC, int64_t batches, int64_t accumulate);

/// Counters of the gemm calls made through the entries since the last reset:
/// BLAS calls, and the process's CPU seconds while inside them (the BLAS
/// routine alone, not the decoding or packing around it; all of OpenBLAS's
/// threads, and any other thread of the process running meanwhile). For
/// benchmarks that compare generated code with its contractions on BLAS, one
/// thread; `reset` non-zero clears them after reading.
__attribute__((visibility("default"))) void
ftpipe_blas_stats(int64_t *calls, double *seconds, int64_t reset);

#ifdef __cplusplus
}
#endif

#endif /* FTPIPE_RUNTIME_BLASKERNELS_H */
