//===- RuleUtils.h - Helpers shared by the reverse-mode rules ---*- C++ -*-===//
//
// Private to lib/AutoDiff: the small IR builders the rules of every dialect
// share (zeros, broadcast and un-broadcast in TOSA's implicit-broadcast
// convention, sums of gradients), so that each rule says only its formula.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_LIB_AUTODIFF_RULEUTILS_H
#define FTPIPE_LIB_AUTODIFF_RULEUTILS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir {
namespace ftpipe {
namespace autodiff {

/// A tensor (or scalar) of `type` filled with zeros.
Value buildZeros(OpBuilder &b, Location loc, Type type);
/// A `tosa.const` of rank `rank` and all dimensions 1 holding `value`, so that
/// it broadcasts against any tensor of that rank.
Value buildScalarConst(OpBuilder &b, Location loc, Type elementType,
                       int64_t rank, double value);
/// The same, shaped like `like` (rank and element type).
Value buildScalarConstLike(OpBuilder &b, Location loc, Value like,
                           double value);
/// TOSA element-wise ops with the broadcast result type of their operands.
Value buildAdd(OpBuilder &b, Location loc, Value lhs, Value rhs);
Value buildSub(OpBuilder &b, Location loc, Value lhs, Value rhs);
Value buildMul(OpBuilder &b, Location loc, Value lhs, Value rhs);
Value buildNegate(OpBuilder &b, Location loc, Value value);
Value buildReciprocal(OpBuilder &b, Location loc, Value value);
/// `select(pred, onTrue, onFalse)` with broadcasting.
Value buildSelect(OpBuilder &b, Location loc, Value pred, Value onTrue,
                  Value onFalse);
/// Sums `gradient` over the dimensions in which `target` has size 1 and
/// `gradient` does not (the adjoint of TOSA's implicit broadcast).
Value buildUnbroadcast(OpBuilder &b, Location loc, Value gradient,
                       RankedTensorType target);
/// Broadcasts `value` (size-1 dimensions) to `target`.
Value buildBroadcast(OpBuilder &b, Location loc, Value value,
                     RankedTensorType target);
/// `lhs + rhs` for two gradients of one value (tensors or scalars).
Value buildGradientSum(OpBuilder &b, Location loc, Value lhs, Value rhs);
/// Pushes tangents through `copy` (a copy of the scalar op `original`) with
/// its ScalarTangentOpInterface: records the tangent of its result in
/// `tangents` (null entries are zero). Fails with an error at `original` when
/// a tangent reaches an op without a rule.
LogicalResult propagateTangent(Operation *original, Operation *copy,
                               OpBuilder &b, DenseMap<Value, Value> &tangents);
/// Converts a gradient to `type`'s element type where they differ.
Value buildCastTo(OpBuilder &b, Location loc, Value value, Type type);
/// Reshapes (tosa.reshape, tensor.expand_shape and collapse_shape of one
/// operand): the same elements in the same order, which the lowering makes
/// a view of the operand's buffer. A value kept for a later part (saved for
/// the backward, carried from I to W) is kept as what it reshapes and the
/// reshape rebuilt there, so that two kept values never share one buffer.
bool isReshape(Operation *op);

} // namespace autodiff
} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_LIB_AUTODIFF_RULEUTILS_H
