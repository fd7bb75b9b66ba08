//===- IndexBounds.h - Which tables a data input indexes --------*- C++ -*-===//
//
// Token ids, token type ids, position ids and labels are integer data inputs
// whose values select rows of a table (an embedding, the classes of a loss)
// through tosa.gather. A value outside the table reads and, in the adjoint,
// writes outside a buffer. The compiler finds the table each such input
// indexes and records its size in the manifest (`index_bound`), so that the
// runtime checks every value of a data set before training.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_ANALYSIS_INDEXBOUNDS_H
#define FTPIPE_ANALYSIS_INDEXBOUNDS_H

#include "mlir/IR/Value.h"

#include <cstdint>
#include <optional>

namespace mlir {
namespace ftpipe {

/// The rows a data input may select, and a value that stands for "no row".
struct IndexBound {
  /// Valid values are 0 .. bound - 1 (the smallest table it indexes).
  int64_t bound = 0;
  /// A value that the model maps to a valid row before any gather reads it
  /// (a loss's ignore index, compared with tosa.equal and replaced by
  /// tosa.select), if any.
  std::optional<int64_t> ignored;
};

/// The bound of `input`, an integer block argument, if its values reach the
/// indices of a tosa.gather: followed through reshapes, slices, clamps (the
/// guard of ftpipe-clamp-gather-indices), casts, selects
/// (as either branch), calls and regions whose arguments are their op's
/// operands. None if no gather reads it.
std::optional<IndexBound> findIndexBound(Value input);

} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_ANALYSIS_INDEXBOUNDS_H
