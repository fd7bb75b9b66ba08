//===- BufferViews.h - The buffer behind a view -----------------*- C++ -*-===//
//
// What the passes that reason about aliasing between buffers
// (ftpipe-elementwise-in-place, ftpipe-parallel-loops-outside) share: the
// buffer a memref value is a view of. A private header of lib/Conversion.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_LIB_CONVERSION_BUFFERVIEWS_H
#define FTPIPE_LIB_CONVERSION_BUFFERVIEWS_H

#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace ftpipe {

/// The buffer `view` is a view of, through view-like ops (subviews, casts,
/// reshapes); `view` itself if it is none.
inline Value rootBufferOf(Value view) {
  while (auto viewLike = view.getDefiningOp<ViewLikeOpInterface>())
    view = viewLike.getViewSource();
  return view;
}

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_LIB_CONVERSION_BUFFERVIEWS_H
