//===- FuseElementwise.cpp - Element-wise fusion that spares contractions -===//
//
// ftpipe-fuse-elementwise: generalises the named ops that are not
// contractions, then applies upstream's element-wise fusion with a control
// that keeps every contraction's `out += a * b` body intact.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
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

/// A named contraction one of whose inputs is a pure copy (a transpose, once
/// unit dimensions are gone) becomes linalg.generic, so that the copy fuses
/// into it as an operand layout that the BLAS call reads in place.
struct GeneralizeContractionOfCopy
    : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (isa<linalg::GenericOp>(op) || !linalg::isaContractionOpInterface(op) ||
        !op.hasPureTensorSemantics())
      return failure();
    bool copyInput = llvm::any_of(op.getDpsInputs(), [](Value input) {
      auto producer = input.getDefiningOp<linalg::GenericOp>();
      return producer && isPureCopy(producer);
    });
    if (!copyInput)
      return failure();
    return linalg::generalizeNamedOp(rewriter, op);
  }
};

/// A transpose (a pure copy through a permutation) of the only result of a
/// contraction that starts from a fill: the contraction writes the
/// transposed layout itself (its output map composed with the inverse
/// permutation), which BLAS does by swapping its operands, instead of a
/// result that is then copied. Weight gradients come as such: the adjoint
/// of `x @ transpose(W)` computes `dW^T` and transposes it.
struct FoldTransposeIntoContraction : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp transpose,
                                PatternRewriter &rewriter) const override {
    if (!isPureCopy(transpose) || transpose.getNumDpsInputs() != 1 ||
        transpose.getNumDpsInits() != 1 ||
        transpose.getNumParallelLoops() != transpose.getNumLoops() ||
        !transpose.hasPureTensorSemantics())
      return failure();
    AffineMap in = transpose.getIndexingMapsArray()[0];
    AffineMap out = transpose.getIndexingMapsArray()[1];
    if (!out.isIdentity() || !in.isPermutation() || in.isIdentity())
      return failure();
    auto contraction =
        transpose.getDpsInputs()[0].getDefiningOp<linalg::GenericOp>();
    if (!contraction || !contraction->hasOneUse() ||
        contraction.getNumDpsInits() != 1 ||
        !linalg::isaContractionOpInterface(contraction))
      return failure();
    auto fill = contraction.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
    if (!fill)
      return failure();
    Location loc = contraction.getLoc();
    Value init = rewriter
                     .create<linalg::FillOp>(loc, fill.getInputs(),
                                             transpose.getDpsInits())
                     .getResult(0);
    SmallVector<AffineMap> maps = contraction.getIndexingMapsArray();
    maps.back() = inversePermutation(in).compose(maps.back());
    auto fused = rewriter.create<linalg::GenericOp>(
        loc, transpose.getResultTypes(), contraction.getDpsInputs(), init, maps,
        contraction.getIteratorTypesArray());
    rewriter.inlineRegionBefore(contraction.getRegion(), fused.getRegion(),
                                fused.getRegion().begin());
    rewriter.replaceOp(transpose, fused.getResults());
    rewriter.eraseOp(contraction);
    return success();
  }
};

/// True if `value` is a fill of zero.
bool isZeroFill(Value value) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  FloatAttr zero;
  return fill && matchPattern(fill.getInputs().front(), m_Constant(&zero)) &&
         zero.getValue().isZero();
}

/// `out = r + d` element by element, where `r` is the only result of a
/// contraction that starts from a fill of zero, read through a permutation
/// (a transpose of it fused already), and `d` is read as the output is: the
/// contraction accumulates into `d` itself, writing the permuted layout (its
/// output map composed with the inverse permutation), which BLAS does with
/// beta = 1 and swapped operands, instead of a result that a strided loop
/// then adds. The tied embedding's gradient comes as such: the head's
/// `transpose(x^T @ dy)` plus the embedding's scatter, 154 MB each at GPT-2's
/// vocabulary.
struct FoldAddIntoContraction : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp add,
                                PatternRewriter &rewriter) const override {
    if (add.getNumDpsInputs() != 2 || add.getNumDpsInits() != 1 ||
        add.getNumParallelLoops() != add.getNumLoops() ||
        !add.hasPureTensorSemantics())
      return failure();
    Block &body = *add.getBlock();
    auto sum = dyn_cast<arith::AddFOp>(body.front());
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    if (!llvm::hasNItems(body, 2) || !sum || yield.getValues()[0] != sum ||
        !body.getArgument(2).use_empty() ||
        !((sum.getLhs() == body.getArgument(0) &&
           sum.getRhs() == body.getArgument(1)) ||
          (sum.getLhs() == body.getArgument(1) &&
           sum.getRhs() == body.getArgument(0))))
      return failure();
    SmallVector<AffineMap> addMaps = add.getIndexingMapsArray();
    if (!addMaps[2].isIdentity())
      return failure();
    for (int64_t r = 0; r < 2; ++r) {
      Value result = add.getDpsInputs()[r], other = add.getDpsInputs()[1 - r];
      auto contraction = result.getDefiningOp<linalg::GenericOp>();
      if (!contraction || !contraction->hasOneUse() ||
          contraction.getNumDpsInits() != 1 ||
          !linalg::isaContractionOpInterface(contraction) ||
          !isZeroFill(contraction.getDpsInits()[0]) ||
          !addMaps[r].isPermutation() || !addMaps[1 - r].isIdentity() ||
          other.getType() != add.getResultTypes()[0])
        continue;
      SmallVector<AffineMap> maps = contraction.getIndexingMapsArray();
      maps.back() = inversePermutation(addMaps[r]).compose(maps.back());
      auto fused = rewriter.create<linalg::GenericOp>(
          contraction.getLoc(), add.getResultTypes(),
          contraction.getDpsInputs(), other, maps,
          contraction.getIteratorTypesArray());
      rewriter.inlineRegionBefore(contraction.getRegion(), fused.getRegion(),
                                  fused.getRegion().begin());
      rewriter.replaceOp(add, fused.getResults());
      rewriter.eraseOp(contraction);
      return success();
    }
    return failure();
  }
};

/// Named ops other than contractions become linalg.generic, so that fusion
/// sees them (transposes, broadcasts, element-wise named ops).
struct GeneralizeNonContraction : OpInterfaceRewritePattern<linalg::LinalgOp> {
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
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::ftpipe::populateFuseElementwisePatterns(
    RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<GeneralizeNonContraction, GeneralizeContractionOfCopy,
               FoldTransposeIntoContraction, FoldAddIntoContraction>(context);
  linalg::populateElementwiseOpsFusionPatterns(patterns, controlFusion);
  // Unit dimensions go (a batch matmul of one batch becomes a matmul, a
  // generic loses its unit loops), and the reshapes that this leaves
  // between a transpose and its contraction cancel out, so that the
  // transpose can fuse.
  linalg::populateContractionOpRankReducingPatterns(patterns);
  linalg::ControlDropUnitDims unitDims;
  unitDims.controlFn = [](Operation *op) -> SmallVector<unsigned> {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic || linalg::isaContractionOpInterface(generic))
      return {};
    return llvm::to_vector(llvm::seq<unsigned>(0, generic.getNumLoops()));
  };
  linalg::populateFoldUnitExtentDimsPatterns(patterns, unitDims);
  tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
  tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
}
