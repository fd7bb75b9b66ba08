//===- CudaDeviceMemory.h - The CUDA runtime's stream and memory -*- C++
//-*-===//
//
// The one model of device memory of FTPipe's CUDA path: every buffer of
// generated code, of the gemm entry and of the device optimizers comes from
// the device's default stream-ordered pool (cudaMallocAsync), kept cached
// (release threshold at the maximum, so a freed block is reused without a
// new cudaMalloc), and is ordered on the calling thread's runtime stream:
// kernels, cuBLAS calls, copies, allocations and frees of one thread all go
// to that one stream, so nothing on the way needs a synchronisation and the
// host waits only where it reads a result (ftpipe_cuda_synchronize,
// ftpipe_cuda_copy_to_host). Never managed memory.
// A private header of lib/Runtime (the CUDA sources of FTPipeCUDARuntime).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_LIB_RUNTIME_CUDADEVICEMEMORY_H
#define FTPIPE_LIB_RUNTIME_CUDADEVICEMEMORY_H

#include "FTPipe/Runtime/StridedView.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace ftpipe {
namespace cuda {

/// The calling thread's runtime stream (non-blocking, made on first use).
cudaStream_t runtimeStream();

/// `bytes` of device memory from the pool, ordered on runtimeStream(); never
/// null (a size of 0 gets one byte). Aborts when the device has no memory
/// left, naming the size.
void *deviceAlloc(size_t bytes);
/// Returns a block of deviceAlloc to the pool, ordered on runtimeStream().
void deviceFree(void *ptr);

/// The view of an MLIR memref descriptor of rank `rank` (the unranked
/// memref's pair) over elements of `elementBytes` bytes; the base includes
/// the offset.
inline StridedView memrefView(int64_t rank, void *descriptor,
                              size_t elementBytes) {
  struct Head {
    char *allocated, *aligned;
    int64_t offset;
  };
  auto *head = static_cast<Head *>(descriptor);
  const int64_t *sizes = reinterpret_cast<const int64_t *>(head + 1);
  StridedView v;
  v.rank = static_cast<int>(rank);
  v.base = head->aligned + head->offset * static_cast<int64_t>(elementBytes);
  for (int d = 0; d < v.rank && d < StridedView::maxRank; ++d) {
    v.sizes[d] = sizes[d];
    v.strides[d] = sizes[rank + d];
  }
  return v;
}

/// dst[i] = src[i] for every index of the common shape (`src.sizes`),
/// element by element of `elementBytes` bytes, on the runtime stream: one
/// cudaMemcpyAsync where both views are dense in the same order (the source
/// may then be host memory), a kernel otherwise (CudaCopyKernels.cu), which
/// needs both in device memory. Aborts on a rank above maxRank.
void stridedCopy(const StridedView &src, const StridedView &dst,
                 size_t elementBytes);

/// x *= factor for every element of the rows x cols matrix at `base` with
/// the given strides (in elements), on the runtime stream.
template <typename T>
void scaleMatrix(T *base, int64_t rows, int64_t cols, int64_t rowStride,
                 int64_t colStride, T factor);

} // namespace cuda
} // namespace ftpipe

#endif // FTPIPE_LIB_RUNTIME_CUDADEVICEMEMORY_H
