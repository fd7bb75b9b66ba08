//===- RuleUtils.cpp - Helpers shared by the reverse-mode rules -----------===//
//
// Implements RuleUtils.h: the IR the rules of every dialect share.
//
//===----------------------------------------------------------------------===//

#include "RuleUtils.h"
#include "FTPipe/AutoDiff/AutoDiffInterfaces.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

using namespace mlir;
using namespace mlir::ftpipe;
using namespace mlir::ftpipe::autodiff;

static TypedAttr floatAttr(OpBuilder &b, Type elementType, double value) {
  if (isa<FloatType>(elementType))
    return b.getFloatAttr(elementType, value);
  return b.getIntegerAttr(elementType, static_cast<int64_t>(value));
}

Value autodiff::buildZeros(OpBuilder &b, Location loc, Type type) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return b.create<arith::ConstantOp>(loc, floatAttr(b, type, 0.0));
  Value zero = b.create<arith::ConstantOp>(
      loc, floatAttr(b, tensorType.getElementType(), 0.0));
  Value empty = b.create<tensor::EmptyOp>(loc, tensorType.getShape(),
                                          tensorType.getElementType());
  return b.create<linalg::FillOp>(loc, zero, empty).getResult(0);
}

Value autodiff::buildScalarConst(OpBuilder &b, Location loc, Type elementType,
                                 int64_t rank, double value) {
  auto type = RankedTensorType::get(SmallVector<int64_t>(rank, 1), elementType);
  auto attr = DenseElementsAttr::get(type, floatAttr(b, elementType, value));
  return b.create<tosa::ConstOp>(loc, type, attr);
}

Value autodiff::buildScalarConstLike(OpBuilder &b, Location loc, Value like,
                                     double value) {
  auto type = cast<RankedTensorType>(like.getType());
  return buildScalarConst(b, loc, type.getElementType(), type.getRank(),
                          value);
}

/// The shape TOSA's implicit broadcast gives operands of equal rank.
static RankedTensorType broadcastType(ArrayRef<Value> operands, Type element) {
  auto first = cast<RankedTensorType>(operands.front().getType());
  SmallVector<int64_t> shape(first.getShape());
  for (Value operand : operands.drop_front()) {
    auto type = cast<RankedTensorType>(operand.getType());
    assert(type.getRank() == first.getRank() && "TOSA ranks differ");
    for (auto [dim, size] : llvm::zip(shape, type.getShape()))
      if (dim == 1)
        dim = size;
  }
  return RankedTensorType::get(shape, element);
}

static RankedTensorType broadcastType(Value lhs, Value rhs, Type element) {
  return broadcastType({lhs, rhs}, element);
}

Value autodiff::buildAdd(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  Type element = cast<RankedTensorType>(lhs.getType()).getElementType();
  return b.create<tosa::AddOp>(loc, broadcastType(lhs, rhs, element), lhs,
                               rhs);
}

Value autodiff::buildSub(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  Type element = cast<RankedTensorType>(lhs.getType()).getElementType();
  return b.create<tosa::SubOp>(loc, broadcastType(lhs, rhs, element), lhs,
                               rhs);
}

Value autodiff::buildMul(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  Type element = cast<RankedTensorType>(lhs.getType()).getElementType();
  return b.create<tosa::MulOp>(loc, broadcastType(lhs, rhs, element), lhs, rhs,
                               b.getI8IntegerAttr(0));
}

Value autodiff::buildNegate(OpBuilder &b, Location loc, Value value) {
  return b.create<tosa::NegateOp>(loc, value.getType(), value);
}

Value autodiff::buildReciprocal(OpBuilder &b, Location loc, Value value) {
  return b.create<tosa::ReciprocalOp>(loc, value.getType(), value);
}

Value autodiff::buildSelect(OpBuilder &b, Location loc, Value pred,
                            Value onTrue, Value onFalse) {
  Type element = cast<RankedTensorType>(onTrue.getType()).getElementType();
  return b.create<tosa::SelectOp>(
      loc, broadcastType({pred, onTrue, onFalse}, element), pred, onTrue,
      onFalse);
}

Value autodiff::buildUnbroadcast(OpBuilder &b, Location loc, Value gradient,
                                 RankedTensorType target) {
  auto type = cast<RankedTensorType>(gradient.getType());
  if (type.getRank() != target.getRank())
    return b.create<tosa::ReshapeOp>(
        loc, gradient, b.getDenseI64ArrayAttr(target.getShape()));
  for (int64_t axis = 0; axis < type.getRank(); ++axis) {
    if (target.getDimSize(axis) != 1 || type.getDimSize(axis) == 1)
      continue;
    SmallVector<int64_t> shape(type.getShape());
    shape[axis] = 1;
    type = RankedTensorType::get(shape, type.getElementType());
    gradient = b.create<tosa::ReduceSumOp>(loc, type, gradient,
                                           b.getI32IntegerAttr(axis));
  }
  return gradient;
}

Value autodiff::buildBroadcast(OpBuilder &b, Location loc, Value value,
                               RankedTensorType target) {
  if (value.getType() == target)
    return value;
  Value zeros = b.create<tosa::ConstOp>(
      loc, target,
      DenseElementsAttr::get(target,
                             floatAttr(b, target.getElementType(), 0.0)));
  return b.create<tosa::AddOp>(loc, target, zeros, value);
}

Value autodiff::buildGradientSum(OpBuilder &b, Location loc, Value lhs,
                                 Value rhs) {
  if (isa<RankedTensorType>(lhs.getType()))
    return b.create<tosa::AddOp>(loc, lhs.getType(), lhs, rhs);
  return b.create<arith::AddFOp>(loc, lhs, rhs);
}

Value autodiff::buildCastTo(OpBuilder &b, Location loc, Value value,
                            Type type) {
  if (value.getType() == type)
    return value;
  return b.create<tosa::CastOp>(loc, type, value);
}

LogicalResult autodiff::propagateTangent(Operation *original, Operation *copy,
                                         OpBuilder &b,
                                         DenseMap<Value, Value> &tangents) {
  SmallVector<Value> operandTangents;
  for (Value operand : copy->getOperands())
    operandTangents.push_back(tangents.lookup(operand));
  if (llvm::all_of(operandTangents, [](Value v) { return !v; }))
    return success();
  auto rule = dyn_cast<ScalarTangentOpInterface>(copy);
  if (!rule)
    return original->emitError("no tangent rule for '")
           << original->getName() << "' in the body of '"
           << original->getParentOp()->getName() << "'";
  FailureOr<Value> tangent = rule.buildTangent(b, operandTangents);
  if (failed(tangent))
    return failure();
  if (*tangent)
    tangents[copy->getResult(0)] = *tangent;
  return success();
}

bool autodiff::isReshape(Operation *op) {
  return isa<tosa::ReshapeOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
             op) &&
         op->getNumOperands() == 1 && op->getNumResults() == 1;
}
