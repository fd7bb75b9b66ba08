//===- GemmOperands.h - Role codes to BLAS calls, for any BLAS --*- C++ -*-===//
//
// The part of the gemm entries of generated code (BLASKernels.h) that does
// not depend on the BLAS: decoding each operand's role code into a strided
// matrix view per batch index, choosing the storage order and transpositions
// that the strides allow, packing an operand into a dense copy when they
// allow none, and looping over the batch indices. The OpenBLAS entry
// (BLASKernels.cpp) and the cuBLAS entry (CuBLASKernels.cpp) instantiate
// `gemmBatched` with a backend:
//
//   struct Backend {
//     // C (+)= op(A) * op(B), all three in `columnMajor` order or all in
//     // row-major order; leading dimensions in elements.
//     void gemm(bool columnMajor, bool transA, bool transB, int64_t m,
//               int64_t n, int64_t k, const T *a, int64_t lda, const T *b,
//               int64_t ldb, T beta, T *c, int64_t ldc);
//     // Scratch memory for dense copies, where the BLAS reads and writes.
//     Buffer allocate(int64_t count);  // Buffer: data() -> T*, movable
//     // copyMatrix and scaleMatrix below, where the operands live
//     // (HostMatrixAccess for host memory).
//     void copy(const MatrixView<T> &view, T *matrix, T *dense, bool toDense);
//     void scale(const MatrixView<T> &view, T *matrix, T factor);
//   };
//
// A private header of lib/Runtime; no MLIR, no BLAS header.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_LIB_RUNTIME_GEMMOPERANDS_H
#define FTPIPE_LIB_RUNTIME_GEMMOPERANDS_H

#include "FTPipe/Runtime/BLASKernels.h"
#include "FTPipe/Runtime/StageABI.h"

#include <algorithm>
#include <cstdint>

namespace ftpipe {
namespace gemm {

/// One operand: a (rows x cols) matrix per batch index, strides in elements.
template <typename T> struct MatrixView {
  T *base = nullptr;
  int64_t rows = 1, cols = 1, rowStride = 0, colStride = 0;
  int64_t batchStride[FTPIPE_BLAS_MAX_BATCH] = {0, 0, 0};
  int64_t batchSize[FTPIPE_BLAS_MAX_BATCH] = {1, 1, 1};
};

/// Decodes the memref `descriptor` of rank `rank` under role code `code`.
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

/// How one matrix goes to a BLAS call in column-major order (`columnMajor`)
/// or row-major order: as it is or transposed (`trans`), with leading
/// dimension `ld`; false if its strides fit neither.
inline bool blasLayout(int64_t rows, int64_t cols, int64_t rowStride,
                       int64_t colStride, bool columnMajor, bool &trans,
                       int64_t &ld) {
  bool rowMajor = colStride == 1 && rowStride >= std::max<int64_t>(cols, 1);
  bool colMajor = rowStride == 1 && colStride >= std::max<int64_t>(rows, 1);
  if (columnMajor ? colMajor : rowMajor) {
    trans = false;
    ld = columnMajor ? colStride : rowStride;
    return true;
  }
  if (columnMajor ? rowMajor : colMajor) {
    trans = true;
    ld = columnMajor ? rowStride : colStride;
    return true;
  }
  return false;
}

/// A dense row-major copy of one matrix (or the way back into it).
template <typename T>
void copyMatrix(const MatrixView<T> &view, T *matrix, T *dense, bool toDense) {
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

/// Every element of one matrix times `factor`.
template <typename T>
void scaleMatrix(const MatrixView<T> &view, T *matrix, T factor) {
  for (int64_t i = 0; i < view.rows; ++i)
    for (int64_t j = 0; j < view.cols; ++j)
      matrix[i * view.rowStride + j * view.colStride] *= factor;
}

/// A backend's copy and scale on host memory.
template <typename T> struct HostMatrixAccess {
  void copy(const MatrixView<T> &view, T *matrix, T *dense, bool toDense) {
    copyMatrix(view, matrix, dense, toDense);
  }
  void scale(const MatrixView<T> &view, T *matrix, T factor) {
    scaleMatrix(view, matrix, factor);
  }
};

/// C (+)= A * B for one batch index: the output decides the order (a dense
/// copy when it fits neither), each input goes as it is, transposed, or
/// packed.
template <typename T, typename Backend>
void gemmOne(Backend &backend, const MatrixView<T> &a, T *pa,
             const MatrixView<T> &b, T *pb, const MatrixView<T> &c, T *pc,
             bool accumulate) {
  int64_t m = c.rows, n = c.cols, k = a.cols;
  if (m == 0 || n == 0)
    return;
  T beta = accumulate ? T(1) : T(0);
  if (k == 0) {
    backend.scale(c, pc, beta);
    return;
  }
  bool columnMajor = false, trans;
  int64_t ldc;
  decltype(backend.allocate(0)) denseC, denseA, denseB;
  T *outC = pc;
  if (!blasLayout(m, n, c.rowStride, c.colStride, false, trans, ldc) || trans) {
    if (blasLayout(m, n, c.rowStride, c.colStride, true, trans, ldc) &&
        !trans) {
      columnMajor = true;
    } else {
      denseC = backend.allocate(m * n);
      backend.copy(c, pc, denseC.data(), /*toDense=*/true);
      outC = denseC.data();
      ldc = n;
    }
  }
  auto operand = [&](const MatrixView<T> &v, T *p, auto &dense, bool &transV,
                     int64_t &ld) -> const T * {
    if (blasLayout(v.rows, v.cols, v.rowStride, v.colStride, columnMajor,
                   transV, ld))
      return p;
    dense = backend.allocate(v.rows * v.cols);
    backend.copy(v, p, dense.data(), /*toDense=*/true);
    // Dense row-major is transposed in a column-major call.
    transV = columnMajor;
    ld = v.cols;
    return dense.data();
  };
  bool ta, tb;
  int64_t lda, ldb;
  const T *inA = operand(a, pa, denseA, ta, lda);
  const T *inB = operand(b, pb, denseB, tb, ldb);
  backend.gemm(columnMajor, ta, tb, m, n, k, inA, lda, inB, ldb, beta, outC,
               ldc);
  if (outC != pc)
    backend.copy(c, pc, denseC.data(), /*toDense=*/false);
}

/// The whole entry: decodes the three operands and calls `gemmOne` for every
/// batch index.
template <typename T, typename Backend>
void gemmBatched(Backend &backend, int64_t rankA, void *a, int64_t rankB,
                 void *b, int64_t rankC, void *c, int64_t codeA, int64_t codeB,
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
        gemmOne(backend, va, at(va), vb, at(vb), vc, at(vc), accumulate != 0);
      }
}

/// The body of a C entry: a fresh Backend<T> runs gemmBatched.
template <template <typename> class Backend, typename T>
void runEntry(int64_t rankA, void *a, int64_t rankB, void *b, int64_t rankC,
              void *c, int64_t codeA, int64_t codeB, int64_t codeC,
              int64_t batches, int64_t accumulate) {
  Backend<T> backend;
  gemmBatched<T>(backend, rankA, a, rankB, b, rankC, c, codeA, codeB, codeC,
                 batches, accumulate);
}

} // namespace gemm
} // namespace ftpipe

/// Defines the C entry SYMBOL (BLASKernels.h's signature) on BACKEND<T>.
#define FTPIPE_GEMM_C_ENTRY(SYMBOL, BACKEND, T)                                \
  extern "C" void SYMBOL(int64_t rankA, void *a, int64_t rankB, void *b,       \
                         int64_t rankC, void *c, int64_t codeA, int64_t codeB, \
                         int64_t codeC, int64_t batches, int64_t accumulate) { \
    ::ftpipe::gemm::runEntry<BACKEND, T>(rankA, a, rankB, b, rankC, c, codeA,  \
                                         codeB, codeC, batches, accumulate);   \
  }

#endif // FTPIPE_LIB_RUNTIME_GEMMOPERANDS_H
