//===- TosaRules.cpp - Reverse-mode rules of the TOSA ops -----------------===//
//
// One adjoint per TOSA op that can carry a gradient, written in TOSA (plus
// `tensor` for slices and `scf` for the scatter-add of gather). TOSA
// broadcasts size-1 dimensions implicitly, so the adjoint of an operand that
// was broadcast sums over those dimensions (buildUnbroadcast). Comparison,
// logical and integer ops carry no gradient and need no rule.
//
//===----------------------------------------------------------------------===//

#include "RuleTemplates.h"
#include "RuleUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/DialectRegistry.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ftpipe;
using namespace mlir::ftpipe::autodiff;

static RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// `gradients[i] = unbroadcast(value, type of operand i)` if needed.
static void setUnbroadcast(Operation *op, OpBuilder &b, unsigned i,
                           Value value, ArrayRef<bool> needs,
                           MutableArrayRef<Value> gradients) {
  if (needs[i])
    gradients[i] = buildUnbroadcast(b, op->getLoc(), value,
                                    tensorType(op->getOperand(i)));
}

static LogicalResult addAdjoint(tosa::AddOp op, OpBuilder &b, Value dy,
                                ArrayRef<bool> needs,
                                MutableArrayRef<Value> gradients) {
  setUnbroadcast(op, b, 0, dy, needs, gradients);
  setUnbroadcast(op, b, 1, dy, needs, gradients);
  return success();
}

static LogicalResult subAdjoint(tosa::SubOp op, OpBuilder &b, Value dy,
                                ArrayRef<bool> needs,
                                MutableArrayRef<Value> gradients) {
  setUnbroadcast(op, b, 0, dy, needs, gradients);
  if (needs[1])
    setUnbroadcast(op, b, 1, buildNegate(b, op.getLoc(), dy), needs,
                   gradients);
  return success();
}

static LogicalResult mulAdjoint(tosa::MulOp op, OpBuilder &b, Value dy,
                                ArrayRef<bool> needs,
                                MutableArrayRef<Value> gradients) {
  if (op.getShift() != 0)
    return op.emitError("no reverse-mode rule for 'tosa.mul' with a shift");
  Location loc = op.getLoc();
  if (needs[0])
    setUnbroadcast(op, b, 0, buildMul(b, loc, dy, op.getInput2()), needs,
                   gradients);
  if (needs[1])
    setUnbroadcast(op, b, 1, buildMul(b, loc, dy, op.getInput1()), needs,
                   gradients);
  return success();
}

static LogicalResult negateAdjoint(tosa::NegateOp op, OpBuilder &b, Value dy,
                                   ArrayRef<bool>,
                                   MutableArrayRef<Value> gradients) {
  gradients[0] = buildNegate(b, op.getLoc(), dy);
  return success();
}

static LogicalResult identityAdjoint(tosa::IdentityOp, OpBuilder &, Value dy,
                                     ArrayRef<bool>,
                                     MutableArrayRef<Value> gradients) {
  gradients[0] = dy;
  return success();
}

static LogicalResult expAdjoint(tosa::ExpOp op, OpBuilder &b, Value dy,
                                ArrayRef<bool>,
                                MutableArrayRef<Value> gradients) {
  gradients[0] = buildMul(b, op.getLoc(), dy, op.getResult());
  return success();
}

static LogicalResult logAdjoint(tosa::LogOp op, OpBuilder &b, Value dy,
                                ArrayRef<bool>,
                                MutableArrayRef<Value> gradients) {
  Location loc = op.getLoc();
  gradients[0] = buildMul(b, loc, dy, buildReciprocal(b, loc, op.getInput1()));
  return success();
}

/// dy * (1 - y^2)
static LogicalResult tanhAdjoint(tosa::TanhOp op, OpBuilder &b, Value dy,
                                 ArrayRef<bool>,
                                 MutableArrayRef<Value> gradients) {
  Location loc = op.getLoc();
  Value y = op.getResult();
  Value one = buildScalarConstLike(b, loc, y, 1.0);
  gradients[0] =
      buildMul(b, loc, dy, buildSub(b, loc, one, buildMul(b, loc, y, y)));
  return success();
}

/// y = x^-1/2: dy * (-1/2) y^3
static LogicalResult rsqrtAdjoint(tosa::RsqrtOp op, OpBuilder &b, Value dy,
                                  ArrayRef<bool>,
                                  MutableArrayRef<Value> gradients) {
  Location loc = op.getLoc();
  Value y = op.getResult();
  Value cube = buildMul(b, loc, buildMul(b, loc, y, y), y);
  Value half = buildScalarConstLike(b, loc, y, -0.5);
  gradients[0] = buildMul(b, loc, dy, buildMul(b, loc, cube, half));
  return success();
}

/// y = 1/x: -dy y^2
static LogicalResult reciprocalAdjoint(tosa::ReciprocalOp op, OpBuilder &b,
                                       Value dy, ArrayRef<bool>,
                                       MutableArrayRef<Value> gradients) {
  Location loc = op.getLoc();
  Value y = op.getResult();
  gradients[0] =
      buildNegate(b, loc, buildMul(b, loc, dy, buildMul(b, loc, y, y)));
  return success();
}

/// y = x^e: dx = dy e x^(e-1), de = dy y log(x)
static LogicalResult powAdjoint(tosa::PowOp op, OpBuilder &b, Value dy,
                                ArrayRef<bool> needs,
                                MutableArrayRef<Value> gradients) {
  Location loc = op.getLoc();
  Value x = op.getInput1(), e = op.getInput2();
  if (needs[0]) {
    Value one = buildScalarConstLike(b, loc, e, 1.0);
    Value eMinusOne = buildSub(b, loc, e, one);
    Value power = b.create<tosa::PowOp>(
        loc, tensorType(op.getResult()).clone(
                 tensorType(buildMul(b, loc, x, eMinusOne)).getShape()),
        x, eMinusOne);
    setUnbroadcast(op, b, 0,
                   buildMul(b, loc, dy, buildMul(b, loc, e, power)), needs,
                   gradients);
  }
  if (needs[1]) {
    Value logX = b.create<tosa::LogOp>(loc, x.getType(), x);
    setUnbroadcast(
        op, b, 1,
        buildMul(b, loc, dy, buildMul(b, loc, op.getResult(), logX)), needs,
        gradients);
  }
  return success();
}

/// dy 2/sqrt(pi) exp(-x^2)
static LogicalResult erfAdjoint(tosa::ErfOp op, OpBuilder &b, Value dy,
                                ArrayRef<bool>,
                                MutableArrayRef<Value> gradients) {
  Location loc = op.getLoc();
  Value x = op.getInput();
  Value square = buildNegate(b, loc, buildMul(b, loc, x, x));
  Value gauss = b.create<tosa::ExpOp>(loc, square.getType(), square);
  Value scale = buildScalarConstLike(b, loc, x, 2.0 / std::sqrt(M_PI));
  gradients[0] = buildMul(b, loc, dy, buildMul(b, loc, gauss, scale));
  return success();
}

/// dy y (1 - y)
static LogicalResult sigmoidAdjoint(tosa::SigmoidOp op, OpBuilder &b, Value dy,
                                    ArrayRef<bool>,
                                    MutableArrayRef<Value> gradients) {
  Location loc = op.getLoc();
  Value y = op.getResult();
  Value one = buildScalarConstLike(b, loc, y, 1.0);
  gradients[0] =
      buildMul(b, loc, dy, buildMul(b, loc, y, buildSub(b, loc, one, y)));
  return success();
}

/// A boolean tensor shaped like the broadcast of `lhs` and `rhs`.
static Value buildGreaterEqual(OpBuilder &b, Location loc, Value lhs,
                               Value rhs) {
  auto shape = tensorType(buildAdd(b, loc, lhs, rhs)).getShape();
  return b.create<tosa::GreaterEqualOp>(
      loc, RankedTensorType::get(shape, b.getI1Type()), lhs, rhs);
}

/// Routes dy to the first operand where `firstWins`, else to the second.
static void routeByMask(Operation *op, OpBuilder &b, Value firstWins,
                        Value dy, ArrayRef<bool> needs,
                        MutableArrayRef<Value> gradients) {
  Location loc = op->getLoc();
  Value zero = buildScalarConstLike(b, loc, dy, 0.0);
  if (needs[0])
    setUnbroadcast(op, b, 0, buildSelect(b, loc, firstWins, dy, zero), needs,
                   gradients);
  if (needs.size() > 1 && needs[1])
    setUnbroadcast(op, b, 1, buildSelect(b, loc, firstWins, zero, dy), needs,
                   gradients);
}

static LogicalResult maximumAdjoint(tosa::MaximumOp op, OpBuilder &b, Value dy,
                                    ArrayRef<bool> needs,
                                    MutableArrayRef<Value> gradients) {
  Value mask =
      buildGreaterEqual(b, op.getLoc(), op.getInput1(), op.getInput2());
  routeByMask(op, b, mask, dy, needs, gradients);
  return success();
}

static LogicalResult minimumAdjoint(tosa::MinimumOp op, OpBuilder &b, Value dy,
                                    ArrayRef<bool> needs,
                                    MutableArrayRef<Value> gradients) {
  Value mask =
      buildGreaterEqual(b, op.getLoc(), op.getInput2(), op.getInput1());
  routeByMask(op, b, mask, dy, needs, gradients);
  return success();
}

/// Passes dy where min <= x <= max (PyTorch's clamp convention).
static LogicalResult clampAdjoint(tosa::ClampOp op, OpBuilder &b, Value dy,
                                  ArrayRef<bool>,
                                  MutableArrayRef<Value> gradients) {
  Location loc = op.getLoc();
  Value x = op.getInput();
  Value low = buildScalarConstLike(b, loc, x,
                                   op.getMinFp().convertToDouble());
  Value high = buildScalarConstLike(b, loc, x,
                                    op.getMaxFp().convertToDouble());
  Value inside = b.create<tosa::LogicalAndOp>(
      loc, RankedTensorType::get(tensorType(x).getShape(), b.getI1Type()),
      buildGreaterEqual(b, loc, x, low), buildGreaterEqual(b, loc, high, x));
  gradients[0] =
      buildSelect(b, loc, inside, dy, buildScalarConstLike(b, loc, dy, 0.0));
  return success();
}

static LogicalResult absAdjoint(tosa::AbsOp op, OpBuilder &b, Value dy,
                                ArrayRef<bool>,
                                MutableArrayRef<Value> gradients) {
  Location loc = op.getLoc();
  Value x = op.getInput1();
  Value positive =
      buildGreaterEqual(b, loc, x, buildScalarConstLike(b, loc, x, 0.0));
  gradients[0] = buildSelect(b, loc, positive, dy, buildNegate(b, loc, dy));
  return success();
}

static LogicalResult selectAdjoint(tosa::SelectOp op, OpBuilder &b, Value dy,
                                   ArrayRef<bool> needs,
                                   MutableArrayRef<Value> gradients) {
  Location loc = op.getLoc();
  Value zero = buildScalarConstLike(b, loc, dy, 0.0);
  Value pred = op.getPred();
  if (needs[1])
    gradients[1] = buildUnbroadcast(b, loc, buildSelect(b, loc, pred, dy, zero),
                                    tensorType(op.getOnTrue()));
  if (needs[2])
    gradients[2] = buildUnbroadcast(b, loc, buildSelect(b, loc, pred, zero, dy),
                                    tensorType(op.getOnFalse()));
  return success();
}

/// Swaps the last two dimensions of a rank-3 tensor.
static Value buildTransposeLast(OpBuilder &b, Location loc, Value value) {
  auto type = tensorType(value);
  SmallVector<int64_t> shape{type.getDimSize(0), type.getDimSize(2),
                             type.getDimSize(1)};
  auto permsType = RankedTensorType::get({3}, b.getI32Type());
  Value perms = b.create<tosa::ConstOp>(
      loc, permsType,
      DenseIntElementsAttr::get(permsType, ArrayRef<int32_t>{0, 2, 1}));
  return b.create<tosa::TransposeOp>(loc, type.clone(shape), value, perms);
}

/// C = A B: dA = dC B^T, dB = A^T dC (per batch).
static LogicalResult matmulAdjoint(tosa::MatMulOp op, OpBuilder &b, Value dy,
                                   ArrayRef<bool> needs,
                                   MutableArrayRef<Value> gradients) {
  Location loc = op.getLoc();
  Value lhs = op.getA(), rhs = op.getB();
  if (needs[0])
    gradients[0] = b.create<tosa::MatMulOp>(
        loc, lhs.getType(), dy, buildTransposeLast(b, loc, rhs), nullptr);
  if (needs[1])
    gradients[1] = b.create<tosa::MatMulOp>(
        loc, rhs.getType(), buildTransposeLast(b, loc, lhs), dy, nullptr);
  return success();
}

static LogicalResult reshapeAdjoint(tosa::ReshapeOp op, OpBuilder &b, Value dy,
                                    ArrayRef<bool>,
                                    MutableArrayRef<Value> gradients) {
  gradients[0] = b.create<tosa::ReshapeOp>(
      op.getLoc(), op.getInput1().getType(), dy,
      b.getDenseI64ArrayAttr(tensorType(op.getInput1()).getShape()));
  return success();
}

static LogicalResult transposeAdjoint(tosa::TransposeOp op, OpBuilder &b,
                                      Value dy, ArrayRef<bool> needs,
                                      MutableArrayRef<Value> gradients) {
  SmallVector<int64_t> perms;
  if (failed(op.getConstantPerms(perms)))
    return op.emitError("no reverse-mode rule for 'tosa.transpose' with "
                        "non-constant permutation");
  SmallVector<int32_t> inverse(perms.size());
  for (auto [i, p] : llvm::enumerate(perms))
    inverse[p] = static_cast<int32_t>(i);
  Location loc = op.getLoc();
  auto permsType = RankedTensorType::get({static_cast<int64_t>(perms.size())},
                                         b.getI32Type());
  Value inversePerms = b.create<tosa::ConstOp>(
      loc, permsType, DenseIntElementsAttr::get(permsType, inverse));
  gradients[0] = b.create<tosa::TransposeOp>(loc, op.getInput1().getType(), dy,
                                             inversePerms);
  return success();
}

/// The gradient of a slice is zero outside it.
static LogicalResult sliceAdjoint(tosa::SliceOp op, OpBuilder &b, Value dy,
                                  ArrayRef<bool>,
                                  MutableArrayRef<Value> gradients) {
  Location loc = op.getLoc();
  auto type = tensorType(op.getInput());
  Value zeros = buildZeros(b, loc, type);
  SmallVector<int64_t> strides(type.getRank(), 1);
  gradients[0] = b.create<tensor::InsertSliceOp>(
      loc, dy, zeros, ValueRange(), ValueRange(), ValueRange(),
      op.getStart(), op.getSize(), strides);
  return success();
}

static LogicalResult concatAdjoint(tosa::ConcatOp op, OpBuilder &b, Value dy,
                                   ArrayRef<bool> needs,
                                   MutableArrayRef<Value> gradients) {
  Location loc = op.getLoc();
  int64_t axis = op.getAxis();
  int64_t offset = 0;
  for (auto [i, input] : llvm::enumerate(op.getInput1())) {
    auto type = tensorType(input);
    if (needs[i]) {
      SmallVector<int64_t> start(type.getRank(), 0);
      start[axis] = offset;
      gradients[i] = b.create<tosa::SliceOp>(loc, type, dy, start,
                                             type.getShape());
    }
    offset += type.getDimSize(axis);
  }
  return success();
}

/// out[n, w, :] = values[n, indices[n, w], :]; the adjoint adds each row of
/// dy into its row of the values' gradient (rows may repeat, so a scatter
/// that overwrites would be wrong), except into the row that
/// `ftpipe.padding_row` names (nn.Embedding's `padding_idx`).
static LogicalResult gatherAdjoint(tosa::GatherOp op, OpBuilder &b, Value dy,
                                   ArrayRef<bool> needs,
                                   MutableArrayRef<Value> gradients) {
  if (!needs[0])
    return success();
  Location loc = op.getLoc();
  auto paddingRow = op->getAttrOfType<IntegerAttr>(kPaddingRowAttrName);
  auto valuesType = tensorType(op.getValues());
  auto dyType = tensorType(dy);
  int64_t channels = valuesType.getDimSize(2);
  auto rowType =
      RankedTensorType::get({1, 1, channels}, valuesType.getElementType());
  Value c0 = b.create<arith::ConstantIndexOp>(loc, 0);
  Value c1 = b.create<arith::ConstantIndexOp>(loc, 1);
  Value batches = b.create<arith::ConstantIndexOp>(loc, dyType.getDimSize(0));
  Value width = b.create<arith::ConstantIndexOp>(loc, dyType.getDimSize(1));
  Value indices = op.getIndices();
  auto outer = b.create<scf::ForOp>(
      loc, c0, batches, c1, ValueRange{buildZeros(b, loc, valuesType)},
      [&](OpBuilder &ob, Location l, Value n, ValueRange outerAcc) {
        auto inner = ob.create<scf::ForOp>(
            l, c0, width, c1, outerAcc,
            [&](OpBuilder &ib, Location il, Value w, ValueRange acc) {
              Value index =
                  ib.create<tensor::ExtractOp>(il, indices, ValueRange{n, w});
              Value k = ib.create<arith::IndexCastOp>(il, ib.getIndexType(),
                                                      index);
              // acc[n, k, :] += dy[n, w, :].
              auto addRow = [&](OpBuilder &rb, Location rl) {
                SmallVector<OpFoldResult> sizes{rb.getIndexAttr(1),
                                                rb.getIndexAttr(1),
                                                rb.getIndexAttr(channels)};
                SmallVector<OpFoldResult> strides(3, rb.getIndexAttr(1));
                SmallVector<OpFoldResult> from{n, w, rb.getIndexAttr(0)};
                SmallVector<OpFoldResult> to{n, k, rb.getIndexAttr(0)};
                Value row = rb.create<tensor::ExtractSliceOp>(
                    rl, rowType, dy, from, sizes, strides);
                Value current = rb.create<tensor::ExtractSliceOp>(
                    rl, rowType, acc[0], to, sizes, strides);
                Value sum = rb.create<tosa::AddOp>(rl, rowType, current, row);
                Value updated = rb.create<tensor::InsertSliceOp>(
                    rl, sum, acc[0], to, sizes, strides);
                rb.create<scf::YieldOp>(rl, updated);
              };
              if (!paddingRow) {
                addRow(ib, il);
                return;
              }
              // The padding row is left untouched (an scf.if rather than a
              // select of rows: the update stays in place once bufferized).
              Value padding = ib.create<arith::ConstantOp>(
                  il, IntegerAttr::get(index.getType(),
                                       paddingRow.getValue().getSExtValue()));
              Value isPadding = ib.create<arith::CmpIOp>(
                  il, arith::CmpIPredicate::eq, index, padding);
              auto update = ib.create<scf::IfOp>(
                  il, isPadding,
                  [&](OpBuilder &tb, Location tl) {
                    tb.create<scf::YieldOp>(tl, acc[0]);
                  },
                  addRow);
              ib.create<scf::YieldOp>(il, update.getResults());
            });
        ob.create<scf::YieldOp>(l, inner.getResults());
      });
  gradients[0] = outer.getResult(0);
  return success();
}

static LogicalResult reduceSumAdjoint(tosa::ReduceSumOp op, OpBuilder &b,
                                      Value dy, ArrayRef<bool>,
                                      MutableArrayRef<Value> gradients) {
  gradients[0] =
      buildBroadcast(b, op.getLoc(), dy, tensorType(op.getInput()));
  return success();
}

/// The gradient goes to the elements equal to the maximum.
static LogicalResult reduceMaxAdjoint(tosa::ReduceMaxOp op, OpBuilder &b,
                                      Value dy, ArrayRef<bool>,
                                      MutableArrayRef<Value> gradients) {
  Location loc = op.getLoc();
  Value x = op.getInput();
  Value isMax = b.create<tosa::EqualOp>(
      loc, RankedTensorType::get(tensorType(x).getShape(), b.getI1Type()), x,
      op.getResult());
  gradients[0] = buildSelect(b, loc, isMax, dy,
                             buildScalarConstLike(b, loc, dy, 0.0));
  return success();
}

static LogicalResult castAdjoint(tosa::CastOp op, OpBuilder &b, Value dy,
                                 ArrayRef<bool>,
                                 MutableArrayRef<Value> gradients) {
  if (!isa<FloatType>(tensorType(op.getInput()).getElementType()))
    return success();
  gradients[0] = buildCastTo(b, op.getLoc(), dy, op.getInput().getType());
  return success();
}

void mlir::ftpipe::autodiff::registerTosaRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tosa::TosaDialect *) {
    attachRule<tosa::AddOp, addAdjoint>(ctx);
    attachRule<tosa::SubOp, subAdjoint>(ctx);
    attachRule<tosa::MulOp, mulAdjoint>(ctx);
    attachRule<tosa::NegateOp, negateAdjoint>(ctx);
    attachRule<tosa::IdentityOp, identityAdjoint>(ctx);
    attachRule<tosa::ExpOp, expAdjoint>(ctx);
    attachRule<tosa::LogOp, logAdjoint>(ctx);
    attachRule<tosa::TanhOp, tanhAdjoint>(ctx);
    attachRule<tosa::RsqrtOp, rsqrtAdjoint>(ctx);
    attachRule<tosa::ReciprocalOp, reciprocalAdjoint>(ctx);
    attachRule<tosa::PowOp, powAdjoint>(ctx);
    attachRule<tosa::ErfOp, erfAdjoint>(ctx);
    attachRule<tosa::SigmoidOp, sigmoidAdjoint>(ctx);
    attachRule<tosa::MaximumOp, maximumAdjoint>(ctx);
    attachRule<tosa::MinimumOp, minimumAdjoint>(ctx);
    attachRule<tosa::ClampOp, clampAdjoint>(ctx);
    attachRule<tosa::AbsOp, absAdjoint>(ctx);
    attachRule<tosa::SelectOp, selectAdjoint>(ctx);
    attachRule<tosa::MatMulOp, matmulAdjoint>(ctx);
    attachRule<tosa::ReshapeOp, reshapeAdjoint>(ctx);
    attachRule<tosa::TransposeOp, transposeAdjoint>(ctx);
    attachRule<tosa::SliceOp, sliceAdjoint>(ctx);
    attachRule<tosa::ConcatOp, concatAdjoint>(ctx);
    attachRule<tosa::GatherOp, gatherAdjoint>(ctx);
    attachRule<tosa::ReduceSumOp, reduceSumAdjoint>(ctx);
    attachRule<tosa::ReduceMaxOp, reduceMaxAdjoint>(ctx);
    attachRule<tosa::CastOp, castAdjoint>(ctx);
  });
}
