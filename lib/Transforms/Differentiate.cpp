//===- Differentiate.cpp - The backward of every stage function -----------===//
//
// Runs lib/AutoDiff's reverse mode on each stage function that
// ftpipe-outline-stages made (or, without stages, on the model function
// itself) and records on the result which argument each gradient belongs to.
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/AutoDiff/ReverseMode.h"
#include "FTPipe/AutoDiff/SplitAdjoint.h"
#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"
#include "FTPipe/Transforms/Passes.h"
#include "FTPipe/Dialect/FTPipe/StageAttrs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "ftpipe-differentiate"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_DIFFERENTIATEPASS
#include "FTPipe/Transforms/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;
using namespace mlir::ftpipe;
namespace sa = mlir::ftpipe::stage_attrs;

namespace {
class DifferentiatePass
    : public mlir::ftpipe::impl::DifferentiatePassBase<DifferentiatePass> {
public:
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

/// Rewrites element-wise arith/math ops on whole tensors as linalg.generic,
/// whose rule covers them.
static LogicalResult generalizeElementwise(func::FuncOp func) {
  bool any = false;
  func.walk([&](Operation *op) {
    if (isa_and_present<arith::ArithDialect, math::MathDialect>(
            op->getDialect()) &&
        llvm::any_of(op->getResultTypes(),
                     [](Type t) { return isa<RankedTensorType>(t); }) &&
        !isa<arith::ConstantOp>(op))
      any = true;
  });
  if (!any)
    return success();
  RewritePatternSet patterns(func.getContext());
  linalg::populateElementwiseToLinalgConversionPatterns(patterns);
  return applyPatternsAndFoldGreedily(func, std::move(patterns));
}

static bool hasUnitAttr(func::FuncOp func, unsigned arg, StringRef name) {
  return static_cast<bool>(func.getArgAttr(arg, name));
}

/// Splits the adjoint of stage function `func` into its input and weight
/// parts (contract version 2) when the weight part has work of its own. W
/// takes the parameters and data inputs itself, and those of the stage's
/// received values and saved values that it reads (the runtime keeps them
/// until W: `ftpipe.adjoint_argument = N` on W's argument, N the adjoint's
/// argument); everything else it reads comes from I (`ftpipe.weight_saved =
/// K` on I's K-th extra result and W's matching argument).
static void splitAdjointOf(func::FuncOp func, func::FuncOp adjoint) {
  unsigned numArgs = func.getNumArguments();
  SmallVector<bool> weightResults, directArguments, heldArguments;
  for (unsigned k = 0; k < adjoint.getNumResults(); ++k) {
    int64_t of =
        adjoint.getResultAttrOfType<IntegerAttr>(k, sa::kGradOf).getInt();
    weightResults.push_back(
        hasUnitAttr(func, of, FTPipeDialect::kParamAttrName));
  }
  for (unsigned i = 0; i < adjoint.getNumArguments(); ++i) {
    directArguments.push_back(
        i < numArgs && (hasUnitAttr(func, i, FTPipeDialect::kParamAttrName) ||
                        func.getArgAttr(i, sa::kInput)));
    // The stage's received values (the forward saves them) and its saved
    // values, not the output gradients.
    heldArguments.push_back(i < numArgs
                                ? !directArguments.back()
                                : bool(adjoint.getArgAttr(i, sa::kSaved)));
  }
  std::optional<autodiff::AdjointSplit> split = autodiff::splitAdjoint(
      adjoint, weightResults, directArguments, heldArguments,
      (func.getSymName() + sa::kAdjointInputSuffix).str(),
      (func.getSymName() + sa::kAdjointWeightSuffix).str());
  if (!split)
    return;
  Builder b(func.getContext());
  unsigned numInputGrads = split->input.getNumResults() - split->numCarried;
  unsigned firstCarried = split->weight.getNumArguments() - split->numCarried;
  unsigned firstHeld = firstCarried - split->held.size();
  for (auto [k, argument] : llvm::enumerate(split->held))
    split->weight.setArgAttr(firstHeld + k, sa::kAdjointArgument,
                             b.getI64IntegerAttr(argument));
  for (unsigned k = 0; k < split->numCarried; ++k) {
    split->input.setResultAttr(numInputGrads + k, sa::kWeightSaved,
                               b.getI64IntegerAttr(k));
    split->weight.setArgAttr(firstCarried + k, sa::kWeightSaved,
                             b.getI64IntegerAttr(k));
  }
}

/// Builds and annotates the adjoint of `func`.
static LogicalResult differentiate(func::FuncOp func, ArrayRef<bool> activeArgs,
                                   ArrayRef<bool> activeResults, bool recompute,
                                   bool split) {
  if (failed(generalizeElementwise(func)))
    return emitError(func.getLoc(), "cannot rewrite the element-wise ops of '")
           << func.getSymName() << "' as linalg.generic";
  autodiff::ReverseModeOptions options;
  options.activeArguments.assign(activeArgs.begin(), activeArgs.end());
  options.activeResults.assign(activeResults.begin(), activeResults.end());
  options.recompute = recompute;
  options.backwardName = (func.getSymName() + sa::kAdjointSuffix).str();
  // Transposed and reshaped weights are rebuilt, not saved.
  options.isRearrangement = [](Operation *op) {
    return isa<tosa::TransposeOp, tosa::ReshapeOp, tensor::ExpandShapeOp,
               tensor::CollapseShapeOp, linalg::TransposeOp>(op);
  };
  unsigned numResults = func.getNumResults();
  FailureOr<autodiff::ReverseModeResult> result =
      autodiff::differentiateFunction(func, options);
  if (failed(result))
    return failure();
  Builder b(func.getContext());
  func::FuncOp backward = result->backward;
  for (StringRef attr :
       {FTPipeDialect::kStageAttrName, FTPipeDialect::kDeviceAttrName})
    if (Attribute a = func->getAttr(attr))
      backward->setAttr(attr, a);
  unsigned next = 0;
  for (auto [i, active] : llvm::enumerate(activeArgs))
    if (active)
      backward.setResultAttr(next++, sa::kGradOf, b.getI64IntegerAttr(i));
  // Saved values: numbered on the forward's extra results and the
  // backward's matching arguments.
  for (unsigned k = 0; k < result->numSaved; ++k) {
    func.setResultAttr(numResults + k, sa::kSaved, b.getI64IntegerAttr(k));
    backward.setArgAttr(func.getNumArguments() + k, sa::kSaved,
                        b.getI64IntegerAttr(k));
  }
  if (result->numSaved) {
    // Calls of the stage (in the model function) get the extra results.
    SmallVector<func::CallOp> calls;
    func->getParentOp()->walk([&](func::CallOp call) {
      if (call.getCallee() == func.getSymName())
        calls.push_back(call);
    });
    for (func::CallOp call : calls) {
      OpBuilder builder(call);
      auto updated = builder.create<func::CallOp>(call.getLoc(), func,
                                                  call.getOperands());
      updated->setAttrs(call->getAttrs());
      for (unsigned i = 0; i < numResults; ++i)
        call.getResult(i).replaceAllUsesWith(updated.getResult(i));
      call.erase();
    }
  }
  func->setAttr(sa::kRecompute, b.getBoolAttr(recompute));
  func->setAttr(sa::kNumSaved, b.getI64IntegerAttr(result->numSaved));
  if (split)
    splitAdjointOf(func, backward);
  return success();
}

void DifferentiatePass::runOnOperation() {
  ModuleOp module = getOperation();
  if (recompute != "true" && recompute != "false" && recompute != "plan") {
    module.emitError("recompute must be true, false or plan, not '")
        << recompute << "'";
    return signalPassFailure();
  }
  SmallVector<func::FuncOp> stages, models;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isDeclaration() ||
        func.getSymName().ends_with(sa::kAdjointSuffix))
      continue;
    if (func->hasAttr(FTPipeDialect::kStageAttrName))
      stages.push_back(func);
    else if (func.isPublic())
      models.push_back(func);
  }
  if (!stages.empty()) {
    for (func::FuncOp func : stages) {
      SmallVector<bool> activeArgs, activeResults;
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        activeArgs.push_back(hasUnitAttr(func, i, sa::kActive));
      for (unsigned i = 0; i < func.getNumResults(); ++i)
        activeResults.push_back(
            static_cast<bool>(func.getResultAttr(i, sa::kActive)));
      bool stageRecomputes = recompute == "true";
      if (recompute == "plan") {
        auto plan =
            module->getAttrOfType<PlanAttr>(FTPipeDialect::kPlanAttrName);
        int64_t stage =
            func->getAttrOfType<IntegerAttr>(FTPipeDialect::kStageAttrName)
                .getInt();
        stageRecomputes = !plan || plan.recomputes(stage);
      }
      if (failed(differentiate(func, activeArgs, activeResults, stageRecomputes,
                               splitBackward)))
        return signalPassFailure();
    }
    return;
  }
  // The unpartitioned model: differentiate with respect to the parameters.
  for (func::FuncOp func : models) {
    if (func.getNumResults() != 1 ||
        !autodiff::isDifferentiable(func.getResultTypes()[0]))
      continue;
    SmallVector<bool> activeArgs;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      activeArgs.push_back(
          hasUnitAttr(func, i, FTPipeDialect::kParamAttrName) &&
          !hasUnitAttr(func, i, FTPipeDialect::kFrozenAttrName) &&
          autodiff::isDifferentiable(func.getArgumentTypes()[i]));
    if (failed(differentiate(func, activeArgs, {true}, recompute != "false",
                             /*split=*/false)))
      return signalPassFailure();
    func::FuncOp backward = module.lookupSymbol<func::FuncOp>(
        (func.getSymName() + sa::kAdjointSuffix).str());
    backward.setPublic();
  }
}
