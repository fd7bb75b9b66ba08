//===- CudaTransfers.cpp - Stage transfers of device buffers --------------===//
//
// The buffer access functions of the stage ABI (ftpipe_rt_set_buffer_access,
// StageABI.h) for device memory, which a driver of CUDA artifacts registers
// with ftpipe_cuda_enable_transfers (not at load: a process may link this
// library and still run CPU artifacts, whose buffers are host memory): a send gathers the (possibly strided) device buffer into a dense
// one on the device, after the work queued on the runtime stream, and copies
// it to the host bytes that the transport carries; a receive copies those
// bytes to the device and scatters them into the buffer. So every transport
// (the in-process mailbox between threads or between devices run in turn,
// MPI between processes) moves device buffers unchanged, staged through host
// memory: several stages of a plan can run on one GPU.
//
//===----------------------------------------------------------------------===//

#include "CudaCheck.h"
#include "CudaDeviceMemory.h"
#include "FTPipe/Runtime/CudaRuntimeWrappers.h"
#include "FTPipe/Runtime/StageABI.h"

using namespace ftpipe;

namespace {

/// The dense row-major view of `bytes` at `base` with the shape of `view`.
cuda::StridedView denseLike(const cuda::StridedView &view, void *base) {
  cuda::StridedView dense = view;
  dense.base = static_cast<char *>(base);
  int64_t stride = 1;
  for (int d = view.rank - 1; d >= 0; --d) {
    dense.strides[d] = stride;
    stride *= view.sizes[d];
  }
  return dense;
}

int64_t elements(const cuda::StridedView &view) {
  int64_t count = 1;
  for (int d = 0; d < view.rank; ++d)
    count *= view.sizes[d];
  return count;
}

void deviceOut(int64_t rank, void *descriptor, int64_t elementBytes,
               void *host) {
  cuda::StridedView view = cuda::memrefView(rank, descriptor, elementBytes);
  size_t bytes = elements(view) * elementBytes;
  cudaStream_t stream = cuda::runtimeStream();
  if (cuda::isDense(view)) {
    FTPIPE_CUDA_CHECK(cudaMemcpyAsync(host, view.base, bytes,
                                      cudaMemcpyDeviceToHost, stream));
  } else {
    void *dense = cuda::deviceAlloc(bytes);
    cuda::stridedCopy(view, denseLike(view, dense), elementBytes);
    FTPIPE_CUDA_CHECK(
        cudaMemcpyAsync(host, dense, bytes, cudaMemcpyDeviceToHost, stream));
    cuda::deviceFree(dense);
  }
  FTPIPE_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void deviceIn(int64_t rank, void *descriptor, int64_t elementBytes,
              const void *host) {
  cuda::StridedView view = cuda::memrefView(rank, descriptor, elementBytes);
  size_t bytes = elements(view) * elementBytes;
  cudaStream_t stream = cuda::runtimeStream();
  if (cuda::isDense(view)) {
    FTPIPE_CUDA_CHECK(cudaMemcpyAsync(view.base, host, bytes,
                                      cudaMemcpyHostToDevice, stream));
  } else {
    void *dense = cuda::deviceAlloc(bytes);
    FTPIPE_CUDA_CHECK(
        cudaMemcpyAsync(dense, host, bytes, cudaMemcpyHostToDevice, stream));
    cuda::stridedCopy(denseLike(view, dense), view, elementBytes);
    cuda::deviceFree(dense);
  }
  // The host bytes belong to the transport, which may drop them on return.
  FTPIPE_CUDA_CHECK(cudaStreamSynchronize(stream));
}

} // namespace

extern "C" void ftpipe_cuda_enable_transfers(void) {
  ftpipe_rt_set_buffer_access(deviceOut, deviceIn);
}
