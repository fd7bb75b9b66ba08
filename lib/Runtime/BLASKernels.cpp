//===- BLASKernels.cpp - The gemm entry of generated CPU code -------------===//
//
// ftpipe_blas_gemm_f32 / _f64 (BLASKernels.h) over OpenBLAS's cblas_?gemm:
// the decoding, layout choice, packing and batch loop of GemmOperands.h with
// a backend that calls cblas_?gemm on host memory and counts its CPU time.
//
//===----------------------------------------------------------------------===//

#include "GemmOperands.h"

#include <cblas.h>

#include <atomic>
#include <cstdint>
#include <ctime>
#include <vector>

namespace {

std::atomic<int64_t> gemmCalls{0};
std::atomic<int64_t> gemmNanoseconds{0};

/// The process's CPU time: unlike wall time, it does not count the time the
/// process waits for a core on a loaded machine.
int64_t cpuNanoseconds() {
  timespec now;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return int64_t(now.tv_sec) * 1000000000 + now.tv_nsec;
}

/// Counts one BLAS call and the CPU time it takes.
class GemmTimer {
public:
  GemmTimer() : start(cpuNanoseconds()) {}
  ~GemmTimer() {
    gemmCalls.fetch_add(1, std::memory_order_relaxed);
    gemmNanoseconds.fetch_add(cpuNanoseconds() - start,
                              std::memory_order_relaxed);
  }

private:
  int64_t start;
};

void cblasGemm(CBLAS_ORDER o, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m,
               int64_t n, int64_t k, const float *a, int64_t lda,
               const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  cblas_sgemm(o, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}
void cblasGemm(CBLAS_ORDER o, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m,
               int64_t n, int64_t k, const double *a, int64_t lda,
               const double *b, int64_t ldb, double beta, double *c,
               int64_t ldc) {
  cblas_dgemm(o, ta, tb, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
}

/// GemmOperands.h's backend on OpenBLAS: host memory throughout.
template <typename T>
struct OpenBLASBackend : ftpipe::gemm::HostMatrixAccess<T> {
  void gemm(bool columnMajor, bool transA, bool transB, int64_t m, int64_t n,
            int64_t k, const T *a, int64_t lda, const T *b, int64_t ldb, T beta,
            T *c, int64_t ldc) {
    GemmTimer timer;
    cblasGemm(columnMajor ? CblasColMajor : CblasRowMajor,
              transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, m, n, k, a, lda, b, ldb, beta,
              c, ldc);
  }
  std::vector<T> allocate(int64_t count) { return std::vector<T>(count); }
};

} // namespace

FTPIPE_GEMM_C_ENTRY(ftpipe_blas_gemm_f32, OpenBLASBackend, float)
FTPIPE_GEMM_C_ENTRY(ftpipe_blas_gemm_f64, OpenBLASBackend, double)

extern "C" void ftpipe_blas_stats(int64_t *calls, double *seconds,
                                  int64_t reset) {
  *calls = gemmCalls.load();
  *seconds = double(gemmNanoseconds.load()) * 1e-9;
  if (reset) {
    gemmCalls = 0;
    gemmNanoseconds = 0;
  }
}
