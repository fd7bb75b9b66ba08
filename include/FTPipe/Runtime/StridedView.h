//===- StridedView.h - A memref's layout, for copies on any device -*- C++
//-*-===//
//
// A strided view (an MLIR memref's base, sizes and strides, up to rank 8) and
// the two facts a copy between two views needs: where the element with a
// given row-major linear index lies in each (the indexing of the device copy
// kernel, lib/Runtime/CudaCopyKernels.cu, also compiled for the host and
// tested there) and whether a view is dense (then a copy is one memcpy).
// Header-only; no CUDA header.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_STRIDEDVIEW_H
#define FTPIPE_RUNTIME_STRIDEDVIEW_H

#include "FTPipe/Runtime/HostDevice.h"

#include <cstdint>

namespace ftpipe {
namespace cuda {

/// A strided view of `rank` dimensions: the address of its first element,
/// sizes, and strides in elements (an MLIR memref's layout).
struct StridedView {
  static constexpr int maxRank = 8;
  char *base = nullptr;
  int rank = 0;
  int64_t sizes[maxRank] = {};
  int64_t strides[maxRank] = {};
};

/// The offsets (in elements) in `src` and `dst` of the element with linear
/// index `i` in row-major order of `src.sizes` (the copy kernel's indexing).
FTPIPE_HOST_DEVICE inline void elementOffsets(const StridedView &src,
                                              const StridedView &dst, int64_t i,
                                              int64_t &srcOffset,
                                              int64_t &dstOffset) {
  srcOffset = 0;
  dstOffset = 0;
  for (int d = src.rank - 1; d >= 0; --d) {
    int64_t index = i % src.sizes[d];
    i /= src.sizes[d];
    srcOffset += index * src.strides[d];
    dstOffset += index * dst.strides[d];
  }
}

/// True if `view` is dense in row-major order (dimensions of size 1 may have
/// any stride): a copy between two such views is one memcpy.
inline bool isDense(const StridedView &view) {
  int64_t expected = 1;
  for (int d = view.rank - 1; d >= 0; --d) {
    if (view.sizes[d] != 1 && view.strides[d] != expected)
      return false;
    expected *= view.sizes[d];
  }
  return true;
}

} // namespace cuda
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_STRIDEDVIEW_H
