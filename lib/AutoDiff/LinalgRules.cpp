//===- LinalgRules.cpp - The reverse-mode rule of structured linalg ops ---===//
//
// One rule for every op with the LinalgOp interface (linalg.generic and the
// named ops alike, which carry the same indexing maps and body). A body
// computes `y = g(inputs)` (a map), `y = out + g(inputs)` (a sum: the
// contractions and sum reductions) or `y = max(out, g(inputs))` (a max
// reduction). The gradient of input j is one new linalg.generic over the
// same loops, reading the inputs, dy (and y for max), writing input j's
// shape: the loops absent from input j's indexing map become reductions.
// Its body holds a copy of g's ops and the tangent of g with respect to input
// j (ScalarTangentOpInterface), so any body whose ops have tangent rules is
// handled.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/AutoDiff/AutoDiffInterfaces.h"
#include "RuleUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::ftpipe;
using namespace mlir::ftpipe::autodiff;

namespace {
enum class BodyKind { Map, Sum, Max };

/// What the body of a structured op computes.
struct BodyForm {
  BodyKind kind;
  /// The value g of the body, from the inputs' block arguments.
  Value inner;
  /// The op combining g with the output's block argument (Sum, Max).
  Operation *combiner = nullptr;
};
} // namespace

static bool dependsOn(Value value, Value on) {
  if (value == on)
    return true;
  Operation *def = value.getDefiningOp();
  if (!def)
    return false;
  return llvm::any_of(def->getOperands(),
                      [&](Value operand) { return dependsOn(operand, on); });
}

static FailureOr<BodyForm> analyseBody(linalg::LinalgOp op, unsigned k) {
  Block *body = op.getBlock();
  Value yielded = body->getTerminator()->getOperand(k);
  // linalg.map's body has no argument for its output: a map.
  if (body->getNumArguments() <= op.getNumDpsInputs() + k)
    return BodyForm{BodyKind::Map, yielded};
  BlockArgument out = body->getArgument(op.getNumDpsInputs() + k);
  if (out.use_empty())
    return BodyForm{BodyKind::Map, yielded};
  Operation *combiner = yielded.getDefiningOp();
  auto other = [&](Value lhs, Value rhs) -> Value {
    if (lhs == out && !dependsOn(rhs, out))
      return rhs;
    if (rhs == out && !dependsOn(lhs, out))
      return lhs;
    return Value();
  };
  // Other uses of the output's argument (an arg-max's comparison) do not
  // change what output k computes.
  if (combiner) {
    if (auto add = dyn_cast<arith::AddFOp>(combiner))
      if (Value inner = other(add.getLhs(), add.getRhs()))
        return BodyForm{BodyKind::Sum, inner, combiner};
    if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combiner))
      if (Value inner =
              other(combiner->getOperand(0), combiner->getOperand(1)))
        return BodyForm{BodyKind::Max, inner, combiner};
  }
  // A selection (`select(c, g, out)`, as an arg-max writes its maximum):
  // the result is one of the g, so the gradient goes where g equals it.
  if (auto select = dyn_cast_or_null<arith::SelectOp>(combiner))
    if (Value inner = other(select.getTrueValue(), select.getFalseValue()))
      return BodyForm{BodyKind::Max, inner, combiner};
  return op.emitError("no reverse-mode rule for '")
         << op->getName()
         << "' whose body combines the output other than by a sum or a "
            "maximum";
}

/// The gradient of input `j`: a linalg.generic over the op's loops.
static FailureOr<Value> buildInputGradient(linalg::LinalgOp op,
                                           const BodyForm &form, unsigned j,
                                           unsigned k, OpBuilder &b,
                                           Value dy) {
  Location loc = op.getLoc();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned numInputs = op.getNumDpsInputs();
  AffineMap inputMap = maps[j], outputMap = maps[numInputs + k];
  Value input = op.getDpsInputs()[j];
  auto inputType = dyn_cast<RankedTensorType>(input.getType());
  if (!inputType)
    return op.emitError("no reverse-mode rule for '")
           << op->getName() << "' with a scalar input that needs a gradient";
  if (!inputMap.isProjectedPermutation(/*allowZeroInResults=*/true))
    return op.emitError("no reverse-mode rule for '")
           << op->getName() << "' whose input " << j
           << " has an indexing map that is not a projected permutation";
  // A constant 0 in the map reads a dimension of size 1 (a broadcast): the
  // gradient is built without those dimensions, then reshaped.
  RankedTensorType fullType = inputType;
  SmallVector<AffineExpr> dimResults;
  SmallVector<int64_t> reducedShape;
  for (auto [position, expr] : llvm::enumerate(inputMap.getResults())) {
    if (isa<AffineDimExpr>(expr)) {
      dimResults.push_back(expr);
      reducedShape.push_back(inputType.getDimSize(position));
    } else if (inputType.getDimSize(position) != 1) {
      return op.emitError("no reverse-mode rule for '")
             << op->getName() << "' whose input " << j
             << " reads a constant index of a dimension larger than 1";
    }
  }
  inputMap = AffineMap::get(inputMap.getNumDims(), 0, dimResults,
                            op.getContext());
  inputType = RankedTensorType::get(reducedShape, inputType.getElementType());

  SmallVector<utils::IteratorType> iterators;
  bool reduces = false;
  for (unsigned d = 0; d < op.getNumLoops(); ++d) {
    bool kept = inputMap.isFunctionOfDim(d);
    iterators.push_back(kept ? utils::IteratorType::parallel
                             : utils::IteratorType::reduction);
    reduces |= !kept;
  }
  SmallVector<Value> inputs(op.getDpsInputs());
  SmallVector<AffineMap> newMaps(maps.begin(), maps.begin() + numInputs);
  inputs.push_back(dy);
  newMaps.push_back(outputMap);
  Value result = op->getResult(k);
  if (form.kind == BodyKind::Max) {
    inputs.push_back(result);
    newMaps.push_back(outputMap);
  }
  newMaps.push_back(inputMap);
  Value init = buildZeros(b, loc, inputType);

  Block *body = op.getBlock();
  // The body ops g depends on.
  llvm::SmallPtrSet<Operation *, 16> slice;
  SmallVector<Value> worklist{form.inner};
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != body || !slice.insert(def).second)
      continue;
    worklist.append(def->operand_begin(), def->operand_end());
  }
  LogicalResult status = success();
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{inputType}, inputs, ValueRange{init}, newMaps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        IRMapping mapping;
        for (unsigned i = 0; i < numInputs; ++i)
          mapping.map(body->getArgument(i), args[i]);
        // Copy the ops that compute g (not the combiner, nor what only the
        // other outputs need).
        for (Operation &inner : body->without_terminator())
          if (slice.contains(&inner))
            nb.clone(inner, mapping);
        DenseMap<Value, Value> tangents;
        Type element = inputType.getElementType();
        tangents[args[j]] =
            nb.create<arith::ConstantOp>(nl, nb.getFloatAttr(element, 1.0));
        for (Operation &inner : body->without_terminator()) {
          if (!slice.contains(&inner))
            continue;
          Operation *copy = mapping.lookup(inner.getResult(0)).getDefiningOp();
          if (failed(propagateTangent(&inner, copy, nb, tangents))) {
            status = failure();
            break;
          }
        }
        Value acc = args.back();
        Value innerCopy = mapping.lookupOrDefault(form.inner);
        Value tangent = failed(status) ? Value() : tangents.lookup(innerCopy);
        if (!tangent) {
          nb.create<linalg::YieldOp>(nl, acc);
          return;
        }
        Value contribution =
            nb.create<arith::MulFOp>(nl, args[numInputs], tangent);
        if (form.kind == BodyKind::Max) {
          Value isMax = nb.create<arith::CmpFOp>(
              nl, arith::CmpFPredicate::OEQ, innerCopy, args[numInputs + 1]);
          Value zero =
              nb.create<arith::ConstantOp>(nl, nb.getFloatAttr(element, 0.0));
          contribution =
              nb.create<arith::SelectOp>(nl, isMax, contribution, zero);
        }
        // Mixed precision: the gradient has the input's element type.
        Type contributionType = contribution.getType();
        if (contributionType != element) {
          if (contributionType.getIntOrFloatBitWidth() <
              element.getIntOrFloatBitWidth())
            contribution = nb.create<arith::ExtFOp>(nl, element, contribution);
          else
            contribution =
                nb.create<arith::TruncFOp>(nl, element, contribution);
        }
        if (reduces)
          contribution = nb.create<arith::AddFOp>(nl, acc, contribution);
        nb.create<linalg::YieldOp>(nl, contribution);
      });
  if (failed(status)) {
    generic->erase();
    return failure();
  }
  if (inputType == fullType)
    return generic.getResult(0);
  return b.create<tosa::ReshapeOp>(loc, fullType, generic.getResult(0),
                                   b.getDenseI64ArrayAttr(fullType.getShape()))
      .getResult();
}

namespace {
template <typename OpTy>
struct LinalgRule
    : public ReverseModeOpInterface::ExternalModel<LinalgRule<OpTy>, OpTy> {
  LogicalResult buildAdjoint(Operation *operation, OpBuilder &b,
                             ArrayRef<Value> resultGradients,
                             ArrayRef<bool> needsGradient,
                             SmallVectorImpl<Value> &gradients) const {
    auto op = cast<linalg::LinalgOp>(operation);
    gradients.assign(operation->getNumOperands(), Value());
    if (!op.hasPureTensorSemantics())
      return operation->emitError("no reverse-mode rule for '")
             << operation->getName() << "' on buffers";
    // One result carries the gradient (an arg-max's index result has none).
    SmallVector<unsigned> withGradient;
    for (auto [k, gradient] : llvm::enumerate(resultGradients))
      if (gradient)
        withGradient.push_back(k);
    if (withGradient.empty())
      return success();
    if (withGradient.size() > 1)
      return operation->emitError("no reverse-mode rule for '")
             << operation->getName()
             << "' with gradients for several of its results";
    unsigned k = withGradient.front();
    Value dy = resultGradients[k];
    FailureOr<BodyForm> form = analyseBody(op, k);
    if (failed(form))
      return failure();
    if (form->kind == BodyKind::Map) {
      // A map writes each output element once only if every reduction loop
      // has one iteration.
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      for (auto [range, iterator] :
           llvm::zip(ranges, op.getIteratorTypesArray()))
        if (iterator == utils::IteratorType::reduction && range != 1)
          return operation->emitError("no reverse-mode rule for '")
                 << operation->getName()
                 << "' whose body ignores the output across a reduction";
    }
    unsigned numInputs = op.getNumDpsInputs();
    for (unsigned j = 0; j < numInputs; ++j) {
      if (!needsGradient[j])
        continue;
      FailureOr<Value> gradient = buildInputGradient(op, *form, j, k, b, dy);
      if (failed(gradient))
        return failure();
      gradients[j] = *gradient;
    }
    // The output's initial value is added to (Sum), kept where it wins (Max)
    // or ignored (Map).
    if (needsGradient[numInputs + k] && form->kind == BodyKind::Sum)
      gradients[numInputs + k] = dy;
    if (needsGradient[numInputs + k] && form->kind == BodyKind::Max)
      return operation->emitError("no reverse-mode rule for '")
             << operation->getName()
             << "' with a max reduction whose initial value needs a gradient";
    return success();
  }
};

template <typename... OpTys> void attachLinalgRules(MLIRContext *ctx) {
  (OpTys::template attachInterface<LinalgRule<OpTys>>(*ctx), ...);
}
} // namespace

void mlir::ftpipe::autodiff::registerLinalgRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    attachLinalgRules<
        linalg::GenericOp, linalg::MatmulOp, linalg::BatchMatmulOp,
        linalg::MatmulTransposeAOp, linalg::MatmulTransposeBOp,
        linalg::BatchMatmulTransposeAOp, linalg::BatchMatmulTransposeBOp,
        linalg::MatvecOp, linalg::VecmatOp, linalg::DotOp,
        linalg::TransposeOp, linalg::BroadcastOp, linalg::ReduceOp,
        linalg::MapOp, linalg::CopyOp, linalg::AddOp, linalg::SubOp,
        linalg::MulOp, linalg::DivOp, linalg::ExpOp, linalg::LogOp,
        linalg::NegFOp, linalg::MaxOp, linalg::MinOp>(ctx);
  });
}
