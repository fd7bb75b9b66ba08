//===- CapturedGradient.h - Gradients of tensors read inside linalg bodies ===//
//
// Private to lib/AutoDiff: a linalg body that reads an outer tensor with
// `tensor.extract` (an embedding lookup or a rotary-table read written as a
// body, as torch-mlir and the LLaMA file do) has a gradient for that tensor:
// a scatter-add over the op's loops.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_LIB_AUTODIFF_CAPTUREDGRADIENT_H
#define FTPIPE_LIB_AUTODIFF_CAPTUREDGRADIENT_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir {
namespace ftpipe {
namespace autodiff {

/// The gradient of `captured` (a tensor the body of `op` reads with one
/// tensor.extract) given the gradient `dy` of op's result: for every point
/// of the loops, dy at the output's index times the body's derivative with
/// respect to the extracted element is added at the extracted index. Fails
/// with an error at the op for forms it does not handle.
FailureOr<Value> buildCapturedGradient(linalg::LinalgOp op, OpBuilder &b,
                                       Value dy, Value captured);

} // namespace autodiff
} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_LIB_AUTODIFF_CAPTUREDGRADIENT_H
