//===- CudaCopyKernels.cu - Strided copies and scaling on the device ------===//
//
// CudaDeviceMemory.h's stridedCopy and scaleMatrix, and the copy functions
// of ftpipe-device-copies: what generated code's memref.copy, the gemm
// entry's packing of operands whose strides cuBLAS
// cannot take, and its k = 0 case need, done on the device (the host never
// touches device memory). One thread per element, the index decomposed in
// row-major order of the shape.
//
//===----------------------------------------------------------------------===//

#include "CudaDeviceMemory.h"

#include "CudaCheck.h"

#include <cstring>

using namespace ftpipe;
using cuda::StridedView;

namespace {

constexpr int blockSize = 256;

template <typename Word>
__global__ void copyElements(StridedView src, StridedView dst, int64_t count) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count)
    return;
  int64_t from, to;
  cuda::elementOffsets(src, dst, i, from, to);
  reinterpret_cast<Word *>(dst.base)[to] =
      reinterpret_cast<const Word *>(src.base)[from];
}

__global__ void copyBytes(StridedView src, StridedView dst, int64_t count,
                          int64_t elementBytes) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count)
    return;
  int64_t from, to;
  cuda::elementOffsets(src, dst, i, from, to);
  for (int64_t b = 0; b < elementBytes; ++b)
    dst.base[to * elementBytes + b] = src.base[from * elementBytes + b];
}

template <typename T>
__global__ void scaleElements(T *base, int64_t rows, int64_t cols,
                              int64_t rowStride, int64_t colStride, T factor) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * cols)
    return;
  base[(i / cols) * rowStride + (i % cols) * colStride] *= factor;
}

unsigned blocks(int64_t count) {
  return static_cast<unsigned>((count + blockSize - 1) / blockSize);
}

} // namespace

void cuda::stridedCopy(const StridedView &src, const StridedView &dst,
                       size_t elementBytes) {
  if (src.rank > StridedView::maxRank || src.rank != dst.rank)
    cudaFailure("ftpipe::cuda::stridedCopy", __FILE__, __LINE__,
                "views of different ranks or of a rank above 8");
  int64_t count = 1;
  for (int d = 0; d < src.rank; ++d)
    count *= src.sizes[d];
  if (count == 0)
    return;
  cudaStream_t stream = runtimeStream();
  if (isDense(src) && isDense(dst)) {
    // cudaMemcpyDefault: the source of a constant's copy is the host's data
    // segment (ftpipe-copy-globals-to-heap).
    FTPIPE_CUDA_CHECK(cudaMemcpyAsync(dst.base, src.base, count * elementBytes,
                                      cudaMemcpyDefault, stream));
    return;
  }
  switch (elementBytes) {
  case 1:
    copyElements<uint8_t>
        <<<blocks(count), blockSize, 0, stream>>>(src, dst, count);
    break;
  case 2:
    copyElements<uint16_t>
        <<<blocks(count), blockSize, 0, stream>>>(src, dst, count);
    break;
  case 4:
    copyElements<uint32_t>
        <<<blocks(count), blockSize, 0, stream>>>(src, dst, count);
    break;
  case 8:
    copyElements<uint64_t>
        <<<blocks(count), blockSize, 0, stream>>>(src, dst, count);
    break;
  default:
    copyBytes<<<blocks(count), blockSize, 0, stream>>>(
        src, dst, count, static_cast<int64_t>(elementBytes));
  }
  FTPIPE_CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void cuda::scaleMatrix(T *base, int64_t rows, int64_t cols, int64_t rowStride,
                       int64_t colStride, T factor) {
  if (rows * cols == 0)
    return;
  scaleElements<T><<<blocks(rows * cols), blockSize, 0, runtimeStream()>>>(
      base, rows, cols, rowStride, colStride, factor);
  FTPIPE_CUDA_CHECK(cudaGetLastError());
}

template void cuda::scaleMatrix<float>(float *, int64_t, int64_t, int64_t,
                                       int64_t, float);
template void cuda::scaleMatrix<double>(double *, int64_t, int64_t, int64_t,
                                        int64_t, double);

/// ftpipe-device-copies' calls (CudaRuntimeWrappers.h): unranked
/// descriptors as (rank, descriptor) pairs.
#define FTPIPE_CUDA_DEFINE_COPY(T, BYTES)                                      \
  extern "C" __attribute__((visibility("default"))) void ftpipe_cuda_copy_##T( \
      int64_t sourceRank, void *source, int64_t targetRank, void *target) {    \
    cuda::stridedCopy(cuda::memrefView(sourceRank, source, BYTES),             \
                      cuda::memrefView(targetRank, target, BYTES), BYTES);     \
  }

FTPIPE_CUDA_DEFINE_COPY(f64, 8)
FTPIPE_CUDA_DEFINE_COPY(f32, 4)
FTPIPE_CUDA_DEFINE_COPY(f16, 2)
FTPIPE_CUDA_DEFINE_COPY(bf16, 2)
FTPIPE_CUDA_DEFINE_COPY(i64, 8)
FTPIPE_CUDA_DEFINE_COPY(i32, 4)
FTPIPE_CUDA_DEFINE_COPY(i16, 2)
FTPIPE_CUDA_DEFINE_COPY(i8, 1)
FTPIPE_CUDA_DEFINE_COPY(i1, 1)
