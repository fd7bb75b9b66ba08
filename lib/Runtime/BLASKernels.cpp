//===- BLASKernels.cpp - The gemm entry of generated CPU code -------------===//
//
// ftpipe_blas_gemm_f32 / _f64 (BLASKernels.h) over OpenBLAS's cblas_?gemm:
// decodes each operand's roles into a strided matrix view per batch index,
// picks the BLAS layout and transposition that its strides allow, and packs
// an operand into a dense copy only when neither its rows nor its columns are
// contiguous.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/BLASKernels.h"
#include "FTPipe/Runtime/StageABI.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

namespace {

std::atomic<int64_t> gemmCalls{0};
std::atomic<int64_t> gemmNanoseconds{0};

/// Counts one BLAS call and the time it takes.
class GemmTimer {
public:
  GemmTimer() : start(std::chrono::steady_clock::now()) {}
  ~GemmTimer() {
    gemmCalls.fetch_add(1, std::memory_order_relaxed);
    gemmNanoseconds.fetch_add(
        std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::steady_clock::now() - start)
            .count(),
        std::memory_order_relaxed);
  }

private:
  std::chrono::steady_clock::time_point start;
};

/// One operand: a (rows x cols) matrix per batch index, strides in elements.
template <typename T> struct MatrixView {
  T *base = nullptr;
  int64_t rows = 1, cols = 1, rowStride = 0, colStride = 0;
  int64_t batchStride[FTPIPE_BLAS_MAX_BATCH] = {0, 0, 0};
  int64_t batchSize[FTPIPE_BLAS_MAX_BATCH] = {1, 1, 1};
};

template <typename T>
MatrixView<T> decode(int64_t rank, void *descriptor, int64_t code) {
  auto *head = static_cast<FTPipeMemRefHead *>(descriptor);
  const int64_t *sizes = reinterpret_cast<const int64_t *>(head + 1);
  const int64_t *strides = sizes + rank;
  MatrixView<T> view;
  view.base = static_cast<T *>(head->aligned) + head->offset;
  auto role = [&](int index, int64_t &size, int64_t &stride) {
    int64_t dim = (code >> (FTPIPE_BLAS_ROLE_BITS * index)) &
                  ((1 << FTPIPE_BLAS_ROLE_BITS) - 1);
    if (dim == 0)
      return;
    size = sizes[dim - 1];
    stride = strides[dim - 1];
  };
  role(0, view.rows, view.rowStride);
  role(1, view.cols, view.colStride);
  for (int b = 0; b < FTPIPE_BLAS_MAX_BATCH; ++b)
    role(2 + b, view.batchSize[b], view.batchStride[b]);
  // A dimension of size 1 has no meaningful stride: give it one that makes
  // the other dimension's layout valid for BLAS.
  if (view.rows == 1)
    view.rowStride = view.colStride == 1 ? std::max<int64_t>(view.cols, 1) : 1;
  if (view.cols == 1)
    view.colStride = view.rowStride == 1 ? std::max<int64_t>(view.rows, 1) : 1;
  return view;
}

/// How one matrix goes to BLAS under `order`: transposed or not, and its
/// leading dimension; false if its strides fit neither.
bool blasLayout(int64_t rows, int64_t cols, int64_t rowStride,
                int64_t colStride, CBLAS_ORDER order, CBLAS_TRANSPOSE &trans,
                int64_t &ld) {
  bool rowMajor = colStride == 1 && rowStride >= std::max<int64_t>(cols, 1);
  bool colMajor = rowStride == 1 && colStride >= std::max<int64_t>(rows, 1);
  if (order == CblasRowMajor ? rowMajor : colMajor) {
    trans = CblasNoTrans;
    ld = order == CblasRowMajor ? rowStride : colStride;
    return true;
  }
  if (order == CblasRowMajor ? colMajor : rowMajor) {
    trans = CblasTrans;
    ld = order == CblasRowMajor ? colStride : rowStride;
    return true;
  }
  return false;
}

void gemm(CBLAS_ORDER o, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m,
          int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
          int64_t ldb, float beta, float *c, int64_t ldc) {
  GemmTimer timer;
  cblas_sgemm(o, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}
void gemm(CBLAS_ORDER o, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m,
          int64_t n, int64_t k, const double *a, int64_t lda, const double *b,
          int64_t ldb, double beta, double *c, int64_t ldc) {
  GemmTimer timer;
  cblas_dgemm(o, ta, tb, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
}

/// A dense row-major copy of one matrix (or the way back into it).
template <typename T>
void copyMatrix(const MatrixView<T> &view, T *matrix, std::vector<T> &dense,
                bool toDense) {
  for (int64_t i = 0; i < view.rows; ++i)
    for (int64_t j = 0; j < view.cols; ++j) {
      T &strided = matrix[i * view.rowStride + j * view.colStride];
      T &packed = dense[i * view.cols + j];
      if (toDense)
        packed = strided;
      else
        strided = packed;
    }
}

template <typename T>
void gemmOne(const MatrixView<T> &a, T *pa, const MatrixView<T> &b, T *pb,
             const MatrixView<T> &c, T *pc, bool accumulate) {
  int64_t m = c.rows, n = c.cols, k = a.cols;
  if (m == 0 || n == 0)
    return;
  T beta = accumulate ? T(1) : T(0);
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        pc[i * c.rowStride + j * c.colStride] *= beta;
    return;
  }
  // The output decides the order; a dense copy when it fits neither.
  CBLAS_ORDER order = CblasRowMajor;
  CBLAS_TRANSPOSE unused;
  int64_t ldc;
  std::vector<T> denseC;
  T *outC = pc;
  if (!blasLayout(m, n, c.rowStride, c.colStride, CblasRowMajor, unused,
                  ldc) ||
      unused != CblasNoTrans) {
    if (blasLayout(m, n, c.rowStride, c.colStride, CblasColMajor, unused,
                   ldc) &&
        unused == CblasNoTrans) {
      order = CblasColMajor;
    } else {
      denseC.resize(m * n);
      copyMatrix(c, pc, denseC, /*toDense=*/true);
      outC = denseC.data();
      ldc = n;
    }
  }
  auto operand = [&](const MatrixView<T> &v, T *p, std::vector<T> &dense,
                     CBLAS_TRANSPOSE &trans, int64_t &ld) -> const T * {
    if (blasLayout(v.rows, v.cols, v.rowStride, v.colStride, order, trans, ld))
      return p;
    dense.resize(v.rows * v.cols);
    copyMatrix(v, p, dense, /*toDense=*/true);
    // Dense row-major is transposed in a column-major call.
    trans = order == CblasRowMajor ? CblasNoTrans : CblasTrans;
    ld = v.cols;
    return dense.data();
  };
  std::vector<T> denseA, denseB;
  CBLAS_TRANSPOSE ta, tb;
  int64_t lda, ldb;
  const T *inA = operand(a, pa, denseA, ta, lda);
  const T *inB = operand(b, pb, denseB, tb, ldb);
  gemm(order, ta, tb, m, n, k, inA, lda, inB, ldb, beta, outC, ldc);
  if (!denseC.empty())
    copyMatrix(c, pc, denseC, /*toDense=*/false);
}

template <typename T>
void gemmBatched(int64_t rankA, void *a, int64_t rankB, void *b,
                 int64_t rankC, void *c, int64_t codeA, int64_t codeB,
                 int64_t codeC, int64_t batches, int64_t accumulate) {
  MatrixView<T> va = decode<T>(rankA, a, codeA);
  MatrixView<T> vb = decode<T>(rankB, b, codeB);
  MatrixView<T> vc = decode<T>(rankC, c, codeC);
  const int64_t *sizes = vc.batchSize;
  for (int64_t i0 = 0; i0 < (batches > 0 ? sizes[0] : 1); ++i0)
    for (int64_t i1 = 0; i1 < (batches > 1 ? sizes[1] : 1); ++i1)
      for (int64_t i2 = 0; i2 < (batches > 2 ? sizes[2] : 1); ++i2) {
        auto at = [&](const MatrixView<T> &v) {
          return v.base + i0 * v.batchStride[0] + i1 * v.batchStride[1] +
                 i2 * v.batchStride[2];
        };
        gemmOne(va, at(va), vb, at(vb), vc, at(vc), accumulate != 0);
      }
}

} // namespace

extern "C" void ftpipe_blas_gemm_f32(int64_t rankA, void *a, int64_t rankB,
                                     void *b, int64_t rankC, void *c,
                                     int64_t codeA, int64_t codeB,
                                     int64_t codeC, int64_t batches,
                                     int64_t accumulate) {
  gemmBatched<float>(rankA, a, rankB, b, rankC, c, codeA, codeB, codeC,
                     batches, accumulate);
}

extern "C" void ftpipe_blas_gemm_f64(int64_t rankA, void *a, int64_t rankB,
                                     void *b, int64_t rankC, void *c,
                                     int64_t codeA, int64_t codeB,
                                     int64_t codeC, int64_t batches,
                                     int64_t accumulate) {
  gemmBatched<double>(rankA, a, rankB, b, rankC, c, codeA, codeB, codeC,
                      batches, accumulate);
}

extern "C" void ftpipe_blas_stats(int64_t *calls, double *seconds,
                                  int64_t reset) {
  *calls = gemmCalls.load();
  *seconds = double(gemmNanoseconds.load()) * 1e-9;
  if (reset) {
    gemmCalls = 0;
    gemmNanoseconds = 0;
  }
}
