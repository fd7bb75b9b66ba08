//===- AutoDiffInterfaces.h - reverse-mode rules as interfaces --*- C++ -*-===//
//
// The op interfaces through which ops take part in differentiation
// (AutoDiffInterfaces.td), and the registration of FTPipe's rules for the
// upstream dialects it reads.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_AUTODIFF_AUTODIFFINTERFACES_H
#define FTPIPE_AUTODIFF_AUTODIFFINTERFACES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Support/LogicalResult.h"

#include "FTPipe/AutoDiff/AutoDiffInterfaces.h.inc"

namespace mlir {
class DialectRegistry;

namespace ftpipe {
namespace autodiff {

/// Integer attribute on a `tosa.gather` of a table of rows (an embedding):
/// the row it names gets no gradient, as torch.nn.Embedding's `padding_idx`
/// (the rows the gather reads there still count in the forward). The same
/// name as FTPipeDialect::kPaddingRowAttrName, which verifies it; this
/// library does not link the dialect.
inline constexpr llvm::StringLiteral kPaddingRowAttrName = "ftpipe.padding_row";

/// Reverse-mode rules for the TOSA ops (lib/AutoDiff/TosaRules.cpp).
void registerTosaRules(DialectRegistry &registry);
/// The generic rule for every structured `linalg` op (LinalgRules.cpp).
void registerLinalgRules(DialectRegistry &registry);
/// Rules for `tensor` views, slices and reshapes (TensorRules.cpp).
void registerTensorRules(DialectRegistry &registry);
/// Forward-mode tangents of the scalar `arith` and `math` ops that appear in
/// `linalg` bodies (ArithMathRules.cpp).
void registerArithMathRules(DialectRegistry &registry);
/// All of the above.
void registerAllRules(DialectRegistry &registry);

} // namespace autodiff
} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_AUTODIFF_AUTODIFFINTERFACES_H
