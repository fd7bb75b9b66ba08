//===- DataValues.h - Checks of the values in tensors -----------*- C++ -*-===//
//
// The checks that look at values, not only names, types and shapes: ids that
// index a table must lie inside it (a value outside made the compiled
// embedding read past its table and its adjoint write past the gradient),
// and weights, optimizer state and losses must be finite (NaN or Inf
// propagates through every later update).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_DATAVALUES_H
#define FTPIPE_RUNTIME_DATAVALUES_H

#include "FTPipe/Runtime/StageProgram.h"
#include "FTPipe/Runtime/Tensor.h"

#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>

namespace ftpipe {
namespace runtime {

/// Element `i` (flat) of an integer tensor, or none for other element types.
std::optional<int64_t> integerAt(const Tensor &tensor, int64_t i);

/// The first value of `tensor` (a data set's tensor for `input`, samples
/// first) outside [0, input.indexBound) and not input.indexIgnored, as a
/// message naming the tensor, the sample, the position and the value; none
/// if every value is valid or the input indexes nothing.
std::optional<std::string> checkIndexValues(const DataInputInfo &input,
                                            const Tensor &tensor);

/// Refuses the first NaN or infinity in the floating-point tensors of
/// `tensors`, naming the tensor, the position and the value.
llvm::Error checkFinite(const std::map<std::string, Tensor> &tensors);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_DATAVALUES_H
