//===- CapturedGradient.cpp - Gradients of tensors read inside bodies -----===//
//
// The scatter-add adjoint of a tensor that a linalg body reads with
// tensor.extract: a loop nest over the op's iteration space (scf.for with the
// gradient as loop-carried tensor) that re-evaluates the body at each point,
// takes its tangent with respect to the extracted element and adds dy times
// that tangent at the extracted index. Repeated indices add up, as they must
// for an embedding whose rows are looked up several times.
//
//===----------------------------------------------------------------------===//

#include "CapturedGradient.h"
#include "FTPipe/AutoDiff/AutoDiffInterfaces.h"
#include "RuleUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::ftpipe;
using namespace mlir::ftpipe::autodiff;

/// The index values of `map` at the loop point `ivs`.
static FailureOr<SmallVector<Value>> indicesAt(OpBuilder &b, Location loc,
                                               AffineMap map,
                                               ArrayRef<Value> ivs) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      indices.push_back(ivs[dim.getPosition()]);
    else if (auto constant = dyn_cast<AffineConstantExpr>(expr))
      indices.push_back(
          b.create<arith::ConstantIndexOp>(loc, constant.getValue()));
    else
      return failure();
  }
  return indices;
}

FailureOr<Value> autodiff::buildCapturedGradient(linalg::LinalgOp op,
                                                 OpBuilder &b, Value dy,
                                                 Value captured) {
  Location loc = op.getLoc();
  Block *body = op.getBlock();
  auto fail = [&](StringRef why) -> FailureOr<Value> {
    return op.emitError("no reverse-mode rule for '")
           << op->getName() << "' reading a value that needs a gradient "
           << "from inside its region: " << why;
  };
  tensor::ExtractOp read;
  for (Operation &inner : *body) {
    if (auto extract = dyn_cast<tensor::ExtractOp>(inner);
        extract && extract.getTensor() == captured) {
      if (read)
        return fail("the body reads it twice");
      read = extract;
    }
  }
  if (!read)
    return fail("the body reads it other than with tensor.extract");
  if (op.getNumDpsInits() != 1 ||
      !body->getArgument(op.getNumDpsInputs()).use_empty())
    return fail("the body also reads its output");
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return fail("its loops have dynamic sizes");
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto capturedType = cast<RankedTensorType>(captured.getType());
  Type element = capturedType.getElementType();
  Value yielded = body->getTerminator()->getOperand(0);

  // The loop nest, one scf.for per loop, the gradient carried through.
  Value zero = buildZeros(b, loc, capturedType);
  Value c0 = b.create<arith::ConstantIndexOp>(loc, 0);
  Value c1 = b.create<arith::ConstantIndexOp>(loc, 1);
  SmallVector<Value> ivs;
  SmallVector<scf::ForOp> loops;
  Value carried = zero;
  OpBuilder nb = b;
  for (int64_t range : ranges) {
    Value upper = nb.create<arith::ConstantIndexOp>(loc, range);
    auto loop = nb.create<scf::ForOp>(loc, c0, upper, c1, ValueRange{carried});
    if (!loops.empty())
      nb.create<scf::YieldOp>(loc, loop.getResults());
    loops.push_back(loop);
    ivs.push_back(loop.getInductionVar());
    carried = loop.getRegionIterArgs()[0];
    nb.setInsertionPointToStart(loop.getBody());
  }
  // The body at this point: inputs read at their indices, linalg.index
  // replaced by the loop variables.
  IRMapping mapping;
  for (unsigned i = 0; i < op.getNumDpsInputs(); ++i) {
    Value input = op.getDpsInputs()[i];
    Value value = input;
    if (isa<RankedTensorType>(input.getType())) {
      FailureOr<SmallVector<Value>> at = indicesAt(nb, loc, maps[i], ivs);
      if (failed(at)) {
        loops.front()->erase();
        return fail("an input's indexing map is not a permutation");
      }
      value = nb.create<tensor::ExtractOp>(loc, input, *at);
    }
    mapping.map(body->getArgument(i), value);
  }
  DenseMap<Value, Value> tangents;
  LogicalResult status = success();
  for (Operation &inner : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    Operation *copy = nb.clone(inner, mapping);
    if (&inner == read.getOperation()) {
      tangents[copy->getResult(0)] =
          nb.create<arith::ConstantOp>(loc, nb.getFloatAttr(element, 1.0));
      continue;
    }
    if (failed(propagateTangent(&inner, copy, nb, tangents))) {
      status = failure();
      break;
    }
  }
  Value tangent = tangents.lookup(mapping.lookupOrDefault(yielded));
  Value updated = carried;
  if (succeeded(status) && tangent) {
    FailureOr<SmallVector<Value>> outAt =
        indicesAt(nb, loc, maps[op.getNumDpsInputs()], ivs);
    if (failed(outAt)) {
      status = failure();
    } else {
      Value grad = nb.create<tensor::ExtractOp>(loc, dy, *outAt);
      Value contribution = nb.create<arith::MulFOp>(loc, grad, tangent);
      SmallVector<Value> at;
      for (Value index : read.getIndices())
        at.push_back(mapping.lookupOrDefault(index));
      Value current = nb.create<tensor::ExtractOp>(loc, carried, at);
      Value sum = nb.create<arith::AddFOp>(loc, current, contribution);
      updated = nb.create<tensor::InsertOp>(loc, sum, carried, at);
    }
  }
  nb.create<scf::YieldOp>(loc, updated);
  if (failed(status)) {
    loops.front()->erase();
    return failure();
  }
  return loops.front().getResult(0);
}
