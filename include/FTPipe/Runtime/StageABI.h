/*===- StageABI.h - What generated stage code calls ----------------*- C -*-===*
 *
 * The C ABI between the code that `ftpipe-compile` generates for a device and
 * the runtime (docs/StagePrograms.md, "The C ABI of generated code"). Every
 * `ftpipe.send` / `ftpipe.recv` becomes a call of the function of its element
 * type. A tensor travels as MLIR's unranked memref: its rank and a pointer to
 * a descriptor laid out as below (the layout of MLIR's StridedMemRefType,
 * restated here so that no MLIR header is needed).
 *
 *===----------------------------------------------------------------------===*/

#ifndef FTPIPE_RUNTIME_STAGEABI_H
#define FTPIPE_RUNTIME_STAGEABI_H

#include <stdint.h>

#if defined(_WIN32)
#define FTPIPE_RT_EXPORT __declspec(dllexport)
#else
#define FTPIPE_RT_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// The head of a memref descriptor; `int64_t sizes[rank]` and
/// `int64_t strides[rank]` (in elements) follow `offset`.
typedef struct FTPipeMemRefHead {
  void *allocated;
  void *aligned;
  int64_t offset;
} FTPipeMemRefHead;

#define FTPIPE_RT_DECLARE_TRANSFERS(T)                                         \
  FTPIPE_RT_EXPORT void ftpipe_rt_send_##T(int64_t peer, int64_t tag,          \
                                           int64_t microbatch, int64_t rank,   \
                                           void *descriptor);                  \
  FTPIPE_RT_EXPORT void ftpipe_rt_recv_##T(int64_t peer, int64_t tag,          \
                                           int64_t microbatch, int64_t rank,   \
                                           void *descriptor);

FTPIPE_RT_DECLARE_TRANSFERS(f64)
FTPIPE_RT_DECLARE_TRANSFERS(f32)
FTPIPE_RT_DECLARE_TRANSFERS(f16)
FTPIPE_RT_DECLARE_TRANSFERS(bf16)
FTPIPE_RT_DECLARE_TRANSFERS(i64)
FTPIPE_RT_DECLARE_TRANSFERS(i32)
FTPIPE_RT_DECLARE_TRANSFERS(i16)
FTPIPE_RT_DECLARE_TRANSFERS(i8)
FTPIPE_RT_DECLARE_TRANSFERS(i1)

#undef FTPIPE_RT_DECLARE_TRANSFERS

/// Buffers outside host memory (CUDA artifacts: device memory). A runtime
/// whose generated code keeps its buffers elsewhere registers how a transfer
/// reads a (possibly strided) memref into `bytes` contiguous host bytes in
/// row-major order (`out`) and writes such bytes back into one (`in`); the
/// transfers then hand the transport host bytes either way. Drivers of CUDA
/// artifacts register FTPipeCUDARuntime's (ftpipe_cuda_enable_transfers,
/// docs/GPU.md). Registration holds for the whole process. Null functions (the
/// default) mean host memory: the transfers read and write the buffers
/// themselves.
typedef void (*FTPipeBufferOut)(int64_t rank, void *descriptor,
                                int64_t elementBytes, void *host);
typedef void (*FTPipeBufferIn)(int64_t rank, void *descriptor,
                               int64_t elementBytes, const void *host);
FTPIPE_RT_EXPORT void ftpipe_rt_set_buffer_access(FTPipeBufferOut out,
                                                  FTPipeBufferIn in);

/// Called by generated code when a gather's indices computed inside the
/// model (not read from data, which ftpipe-run checks against `index_bound`)
/// fall outside its table (ftpipe-trap-computed-indices): `site` is an i8
/// unranked memref (rank and descriptor) holding the gather's description,
/// `value` the first index outside [0, rows). Ends the run with a message.
FTPIPE_RT_EXPORT void ftpipe_rt_index_error(int64_t rank, void *site,
                                            int64_t value, int64_t rows);

/// In-process mailbox for drivers that run all devices' entry points in one
/// process (tests, the reference tools through ctypes): creates a mailbox for
/// `devices` devices and makes it current for the calling thread.
FTPIPE_RT_EXPORT void ftpipe_rt_local_begin(int64_t devices);
/// Makes `device` the calling thread's current device of the local mailbox.
FTPIPE_RT_EXPORT void ftpipe_rt_local_select(int64_t device);
/// Number of messages sent and not received; drops the mailbox.
FTPIPE_RT_EXPORT int64_t ftpipe_rt_local_end(void);

#ifdef __cplusplus
}
#endif

#endif /* FTPIPE_RUNTIME_STAGEABI_H */
