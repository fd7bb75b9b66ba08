/*===- HostAllocator.h - Buffers of generated CPU code ------------*- C -*-===*
 *
 * The CPU target lowers memref allocations to
 * finalize-memref-to-llvm{use-generic-functions}'s calls, implemented here in
 * FTPipeCPUKernels. Large freed blocks are kept and handed out again for a
 * request of the same rounded size, or shrunk for one of at least half their
 * size: a training step asks for the same buffers every micro-batch, and
 * without the cache glibc returns every block above its mmap threshold (at
 * most 32 MiB) to the kernel, which then zeroes fresh pages on the next
 * step. Live and cached bytes together never exceed the largest total that
 * was live at once, or the limit the runtime sets per task (a new block
 * first trims or evicts cached ones, or takes the one nearest its size
 * resized), so the cache costs no memory beyond the generated code's own
 * peak.
 * Every block is charged to the allocating thread's device in its memory
 * ledger (MemoryLedger.h): live blocks as generated, kept ones as cached.
 *
 * Drivers free the buffers that entry points return (their `allocated`
 * pointer) with _mlir_memref_to_llvm_free, never with free().
 *
 *===----------------------------------------------------------------------===*/

#ifndef FTPIPE_RUNTIME_HOSTALLOCATOR_H
#define FTPIPE_RUNTIME_HOSTALLOCATOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FTPIPE_HOST_EXPORT __attribute__((visibility("default")))

FTPIPE_HOST_EXPORT void *_mlir_memref_to_llvm_alloc(size_t size);
FTPIPE_HOST_EXPORT void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                            size_t size);
FTPIPE_HOST_EXPORT void _mlir_memref_to_llvm_free(void *ptr);

/* The runtime keeps a block an entry point returned (a saved value) instead
 * of copying it: from now on it is charged as the runtime's
 * (FTPIPE_MEM_RUNTIME) and no longer counts among the generated code's live
 * bytes, so the cache's bound stays the generated code's own peak. Freed
 * with _mlir_memref_to_llvm_free as before, it is kept in the cache where
 * that bound allows, for the next micro-batch's buffers. Returns 0 for a
 * pointer this allocator did not hand out (nothing changes then). */
FTPIPE_HOST_EXPORT int ftpipe_host_adopt(void *block);

/* Counters for tests and benchmarks: allocations served from the cache and
 * from the system, and the bytes cached now. */
FTPIPE_HOST_EXPORT void ftpipe_host_alloc_stats(int64_t *reused, int64_t *fresh,
                                                int64_t *cachedBytes);
/* Gives every cached block back to the system; the bound on the cache
 * starts again from the bytes live now (and follows the largest live total
 * again, as before any limit). */
FTPIPE_HOST_EXPORT void ftpipe_host_cache_release(void);
/* Bounds the calling thread's device's live and cached bytes together by
 * `bytes` from now on (the cache is trimmed now; live bytes above it only
 * keep the cache empty), instead of the largest live total: the runtime
 * sets it at each task to the recorded peak of the entry point the task
 * calls, which the memory replay counts for it. A block the runtime adopts
 * lowers the bound by its bytes and an adopted block freed raises it, so
 * the generated code's buffers, the cache and what the runtime adopted or
 * freed since together stay within `bytes`. */
FTPIPE_HOST_EXPORT void ftpipe_host_cache_limit(int64_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* FTPIPE_RUNTIME_HOSTALLOCATOR_H */
