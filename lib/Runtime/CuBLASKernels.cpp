//===- CuBLASKernels.cpp - The gemm entry of generated CUDA code ----------===//
//
// ftpipe_cublas_gemm_f32 / _f64 (CuBLASKernels.h): the decoding, layout
// choice, packing and batch loop of GemmOperands.h with a backend that calls
// cublas?gemm on managed memory. cuBLAS is column-major only: a row-major
// product C = A * B is issued as the column-major C^T = B^T * A^T.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/CuBLASKernels.h"

#include "CudaCheck.h"
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

/// The calling thread's cuBLAS handle, on the legacy default stream.
cublasHandle_t handle() {
  thread_local cublasHandle_t instance = [] {
    cublasHandle_t created = nullptr;
    checkCuBLAS(cublasCreate(&created), "cublasCreate");
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

/// A managed buffer that packing writes on the host and cuBLAS reads.
template <typename T> class ManagedBuffer {
public:
  ManagedBuffer() = default;
  explicit ManagedBuffer(int64_t count) {
    FTPIPE_CUDA_CHECK(cudaMallocManaged(reinterpret_cast<void **>(&ptr),
                                        sizeof(T) * (count ? count : 1)));
  }
  ManagedBuffer(ManagedBuffer &&other) : ptr(std::exchange(other.ptr, {})) {}
  ManagedBuffer &operator=(ManagedBuffer &&other) {
    std::swap(ptr, other.ptr);
    return *this;
  }
  ~ManagedBuffer() {
    // cudaFree waits for the device: a gemm still reading it finishes first.
    if (ptr)
      FTPIPE_CUDA_CHECK(cudaFree(ptr));
  }
  T *data() const { return ptr; }

private:
  T *ptr = nullptr;
};

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
  ManagedBuffer<T> allocate(int64_t count) { return ManagedBuffer<T>(count); }
  void hostAccess() { FTPIPE_CUDA_CHECK(cudaStreamSynchronize(nullptr)); }
};

} // namespace

FTPIPE_GEMM_C_ENTRY(ftpipe_cublas_gemm_f32, CuBLASBackend, float)
FTPIPE_GEMM_C_ENTRY(ftpipe_cublas_gemm_f64, CuBLASBackend, double)
