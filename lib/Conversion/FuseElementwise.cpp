//===- FuseElementwise.cpp - Element-wise fusion that spares contractions -===//
//
// ftpipe-fuse-elementwise: generalises the named ops that are not
// contractions, then applies upstream's element-wise fusion with a control
// that keeps every contraction's `out += a * b` body intact.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

/// True if `op`'s body only yields one of its inputs (a copy, transpose or
/// broadcast).
bool isPureCopy(linalg::GenericOp op) {
  Block &body = *op.getBlock();
  if (!llvm::hasSingleElement(body))
    return false;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto arg = dyn_cast<BlockArgument>(yield.getValues().front());
  return yield.getNumOperands() == 1 && arg &&
         arg.getArgNumber() < op.getNumDpsInputs();
}

bool controlFusion(OpOperand *fusedOperand) {
  auto producer = fusedOperand->get().getDefiningOp<linalg::GenericOp>();
  auto consumer = dyn_cast<linalg::LinalgOp>(fusedOperand->getOwner());
  if (!producer || !consumer)
    return false;
  if (linalg::isaContractionOpInterface(consumer))
    return isPureCopy(producer);
  return producer->hasOneUse();
}

/// Named ops other than contractions become linalg.generic, so that fusion
/// sees them (transposes, broadcasts, element-wise named ops).
struct GeneralizeNonContraction
    : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (isa<linalg::GenericOp, linalg::FillOp>(op) ||
        linalg::isaContractionOpInterface(op) || !op.hasPureTensorSemantics())
      return failure();
    return linalg::generalizeNamedOp(rewriter, op);
  }
};

struct FuseElementwisePass
    : ftpipe::impl::FuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    ftpipe::populateFuseElementwisePatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(),
                                            std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::ftpipe::populateFuseElementwisePatterns(
    RewritePatternSet &patterns) {
  patterns.add<GeneralizeNonContraction>(patterns.getContext());
  linalg::populateElementwiseOpsFusionPatterns(patterns, controlFusion);
}
