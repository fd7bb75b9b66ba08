//===- TensorRules.cpp - Reverse-mode rules of tensor views and reshapes --===//
//
// Slices, insertions, reshapes, casts, padding and concatenation move values
// without arithmetic: their adjoints move the gradient back (and put zeros
// where nothing came from).
//
//===----------------------------------------------------------------------===//

#include "RuleTemplates.h"
#include "RuleUtils.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::ftpipe;
using namespace mlir::ftpipe::autodiff;

static LogicalResult extractSliceAdjoint(tensor::ExtractSliceOp op,
                                         OpBuilder &b, Value dy,
                                         ArrayRef<bool> needs,
                                         MutableArrayRef<Value> gradients) {
  if (!needs[0])
    return success();
  Location loc = op.getLoc();
  Value zeros = buildZeros(b, loc, op.getSourceType());
  if (op.getSourceType().getRank() != op.getResultType().getRank())
    return op.emitError("no reverse-mode rule for 'tensor.extract_slice' that "
                        "drops dimensions");
  gradients[0] = b.create<tensor::InsertSliceOp>(
      loc, dy, zeros, op.getMixedOffsets(), op.getMixedSizes(),
      op.getMixedStrides());
  return success();
}

static LogicalResult insertSliceAdjoint(tensor::InsertSliceOp op,
                                        OpBuilder &b, Value dy,
                                        ArrayRef<bool> needs,
                                        MutableArrayRef<Value> gradients) {
  Location loc = op.getLoc();
  if (op.getSourceType().getRank() != op.getDestType().getRank())
    return op.emitError("no reverse-mode rule for 'tensor.insert_slice' that "
                        "adds dimensions");
  if (needs[0])
    gradients[0] = b.create<tensor::ExtractSliceOp>(
        loc, op.getSourceType(), dy, op.getMixedOffsets(), op.getMixedSizes(),
        op.getMixedStrides());
  if (needs[1]) {
    // What was overwritten gets no gradient.
    Value zeros = buildZeros(b, loc, op.getSourceType());
    gradients[1] = b.create<tensor::InsertSliceOp>(
        loc, zeros, dy, op.getMixedOffsets(), op.getMixedSizes(),
        op.getMixedStrides());
  }
  return success();
}

/// Reshapes of static shapes: the adjoint reshapes back.
template <typename OpTy>
static LogicalResult reshapeAdjoint(OpTy op, OpBuilder &b, Value dy,
                                    ArrayRef<bool> needs,
                                    MutableArrayRef<Value> gradients) {
  if (!needs[0])
    return success();
  auto type = cast<RankedTensorType>(op->getOperand(0).getType());
  if (!type.hasStaticShape())
    return op.emitError("no reverse-mode rule for '")
           << op->getName() << "' of a dynamic shape";
  gradients[0] = b.create<tosa::ReshapeOp>(
      op.getLoc(), type, dy, b.getDenseI64ArrayAttr(type.getShape()));
  return success();
}

static LogicalResult castAdjoint(tensor::CastOp op, OpBuilder &b, Value dy,
                                 ArrayRef<bool>,
                                 MutableArrayRef<Value> gradients) {
  gradients[0] =
      b.create<tensor::CastOp>(op.getLoc(), op.getSource().getType(), dy);
  return success();
}

static LogicalResult padAdjoint(tensor::PadOp op, OpBuilder &b, Value dy,
                                ArrayRef<bool> needs,
                                MutableArrayRef<Value> gradients) {
  if (!needs[0])
    return success();
  auto type = op.getSourceType();
  SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t size : type.getShape())
    sizes.push_back(b.getIndexAttr(size));
  gradients[0] = b.create<tensor::ExtractSliceOp>(
      op.getLoc(), type, dy, op.getMixedLowPad(), sizes, strides);
  return success();
}

static LogicalResult concatAdjoint(tensor::ConcatOp op, OpBuilder &b,
                                   Value dy, ArrayRef<bool> needs,
                                   MutableArrayRef<Value> gradients) {
  int64_t offset = 0;
  uint64_t dim = op.getDim();
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    if (needs[i]) {
      SmallVector<int64_t> start(type.getRank(), 0);
      start[dim] = offset;
      gradients[i] = b.create<tosa::SliceOp>(op.getLoc(), type, dy, start,
                                             type.getShape());
    }
    offset += type.getDimSize(dim);
  }
  return success();
}

/// A scalar read from a tensor: its gradient lands at that index.
static LogicalResult extractAdjoint(tensor::ExtractOp op, OpBuilder &b,
                                    Value dy, ArrayRef<bool> needs,
                                    MutableArrayRef<Value> gradients) {
  if (!needs[0])
    return success();
  Location loc = op.getLoc();
  Value zeros = buildZeros(b, loc, op.getTensor().getType());
  gradients[0] =
      b.create<tensor::InsertOp>(loc, dy, zeros, op.getIndices());
  return success();
}

void mlir::ftpipe::autodiff::registerTensorRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    attachRule<tensor::ExtractSliceOp, extractSliceAdjoint>(ctx);
    attachRule<tensor::InsertSliceOp, insertSliceAdjoint>(ctx);
    attachRule<tensor::ExpandShapeOp, reshapeAdjoint<tensor::ExpandShapeOp>>(
        ctx);
    attachRule<tensor::CollapseShapeOp,
               reshapeAdjoint<tensor::CollapseShapeOp>>(ctx);
    attachRule<tensor::CastOp, castAdjoint>(ctx);
    attachRule<tensor::PadOp, padAdjoint>(ctx);
    attachRule<tensor::ConcatOp, concatAdjoint>(ctx);
    attachRule<tensor::ExtractOp, extractAdjoint>(ctx);
  });
}
