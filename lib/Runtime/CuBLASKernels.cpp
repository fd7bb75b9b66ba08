//===- CuBLASKernels.cpp - The gemm entry of generated CUDA code ----------===//
//
// ftpipe_cublas_gemm_f32 / _f64 (CuBLASKernels.h): the decoding, layout
// choice, packing and batch loop of GemmOperands.h with a backend that calls
// cublas?gemm on device memory, on the calling thread's runtime stream
// (CudaDeviceMemory.h), packing and scaling with kernels there too. cuBLAS is
// column-major only: a row-major product C = A * B is issued as the
// column-major C^T = B^T * A^T. The math mode is cuBLAS's default
// (CUBLAS_DEFAULT_MATH, set explicitly): f32 products in f32, no TF32
// (unless NVIDIA_TF32_OVERRIDE=1 is in the environment, which cuBLAS obeys).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/CuBLASKernels.h"

#include "CudaCheck.h"
#include "CudaDeviceMemory.h"
#include "GemmOperands.h"

#include <cublas_v2.h>

#include <climits>
#include <cstdint>
#include <utility>

namespace {

void checkCuBLAS(cublasStatus_t status, const char *call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    ftpipe::cudaFailure(call, __FILE__, __LINE__,
                        cublasGetStatusString(status));
}

int toInt(int64_t value) {
  if (value < 0 || value > INT_MAX)
    ftpipe::cudaFailure("ftpipe_cublas_gemm", __FILE__, __LINE__,
                        "a size or leading dimension exceeds cuBLAS's int");
  return static_cast<int>(value);
}

/// The calling thread's cuBLAS handle, on the thread's runtime stream.
cublasHandle_t handle() {
  thread_local cublasHandle_t instance = [] {
    cublasHandle_t created = nullptr;
    checkCuBLAS(cublasCreate(&created), "cublasCreate");
    checkCuBLAS(cublasSetStream(created, ftpipe::cuda::runtimeStream()),
                "cublasSetStream");
    checkCuBLAS(cublasSetMathMode(created, CUBLAS_DEFAULT_MATH),
                "cublasSetMathMode");
    return created;
  }();
  return instance;
}

cublasStatus_t cublasGemm(cublasHandle_t h, cublasOperation_t ta,
                          cublasOperation_t tb, int m, int n, int k,
                          const float *a, int lda, const float *b, int ldb,
                          float beta, float *c, int ldc) {
  const float one = 1.0f;
  return cublasSgemm(h, ta, tb, m, n, k, &one, a, lda, b, ldb, &beta, c, ldc);
}
cublasStatus_t cublasGemm(cublasHandle_t h, cublasOperation_t ta,
                          cublasOperation_t tb, int m, int n, int k,
                          const double *a, int lda, const double *b, int ldb,
                          double beta, double *c, int ldc) {
  const double one = 1.0;
  return cublasDgemm(h, ta, tb, m, n, k, &one, a, lda, b, ldb, &beta, c, ldc);
}

/// Device scratch memory for packed operands, returned to the pool (stream
/// ordered: after the gemm that reads it).
template <typename T> class DeviceBuffer {
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(int64_t count)
      : ptr(static_cast<T *>(ftpipe::cuda::deviceAlloc(sizeof(T) * count))) {}
  DeviceBuffer(DeviceBuffer &&other) : ptr(std::exchange(other.ptr, {})) {}
  DeviceBuffer &operator=(DeviceBuffer &&other) {
    std::swap(ptr, other.ptr);
    return *this;
  }
  ~DeviceBuffer() { ftpipe::cuda::deviceFree(ptr); }
  T *data() const { return ptr; }

private:
  T *ptr = nullptr;
};

/// A matrix view as a 2-D strided view.
template <typename T>
ftpipe::cuda::StridedView strided(const ftpipe::gemm::MatrixView<T> &view,
                                  T *base, bool dense) {
  ftpipe::cuda::StridedView v;
  v.base = reinterpret_cast<char *>(base);
  v.rank = 2;
  v.sizes[0] = view.rows;
  v.sizes[1] = view.cols;
  v.strides[0] = dense ? view.cols : view.rowStride;
  v.strides[1] = dense ? 1 : view.colStride;
  return v;
}

/// GemmOperands.h's backend on cuBLAS.
template <typename T> struct CuBLASBackend {
  void gemm(bool columnMajor, bool transA, bool transB, int64_t m, int64_t n,
            int64_t k, const T *a, int64_t lda, const T *b, int64_t ldb, T beta,
            T *c, int64_t ldc) {
    cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasStatus_t status =
        columnMajor
            ? cublasGemm(handle(), opA, opB, toInt(m), toInt(n), toInt(k), a,
                         toInt(lda), b, toInt(ldb), beta, c, toInt(ldc))
            : cublasGemm(handle(), opB, opA, toInt(n), toInt(m), toInt(k), b,
                         toInt(ldb), a, toInt(lda), beta, c, toInt(ldc));
    checkCuBLAS(status, "cublas?gemm");
  }
  DeviceBuffer<T> allocate(int64_t count) { return DeviceBuffer<T>(count); }
  void copy(const ftpipe::gemm::MatrixView<T> &view, T *matrix, T *dense,
            bool toDense) {
    ftpipe::cuda::StridedView original = strided(view, matrix, false);
    ftpipe::cuda::StridedView packed = strided(view, dense, true);
    if (toDense)
      ftpipe::cuda::stridedCopy(original, packed, sizeof(T));
    else
      ftpipe::cuda::stridedCopy(packed, original, sizeof(T));
  }
  void scale(const ftpipe::gemm::MatrixView<T> &view, T *matrix, T factor) {
    ftpipe::cuda::scaleMatrix(matrix, view.rows, view.cols, view.rowStride,
                              view.colStride, factor);
  }
};

} // namespace

FTPIPE_GEMM_C_ENTRY(ftpipe_cublas_gemm_f32, CuBLASBackend, float)
FTPIPE_GEMM_C_ENTRY(ftpipe_cublas_gemm_f64, CuBLASBackend, double)
