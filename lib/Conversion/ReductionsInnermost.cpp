//===- ReductionsInnermost.cpp - Reduction loops inside parallel ones -----===//
//
// ftpipe-reductions-innermost: interchanges linalg ops whose reduction
// dimensions precede parallel ones, so that loop lowering nests each
// reduction inside the parallel loops (one GPU kernel with a loop per
// thread) instead of around them (a host loop of kernel launches).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_REDUCTIONSINNERMOSTPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

struct ReductionsInnermostPass
    : ftpipe::impl::ReductionsInnermostPassBase<ReductionsInnermostPass> {
  void runOnOperation() override;
};

} // namespace

/// The loop order with the parallel dimensions first, or an empty vector if
/// no reduction precedes a parallel dimension.
static SmallVector<unsigned>
parallelFirst(ArrayRef<utils::IteratorType> iterators) {
  SmallVector<unsigned> order;
  for (auto [i, type] : llvm::enumerate(iterators))
    if (type == utils::IteratorType::parallel)
      order.push_back(i);
  for (auto [i, type] : llvm::enumerate(iterators))
    if (type != utils::IteratorType::parallel)
      order.push_back(i);
  for (unsigned i = 0; i < order.size(); ++i)
    if (order[i] != i)
      return order;
  return {};
}

/// The linalg.generic that `reduce` is: the input indexed by every
/// dimension, the init by the kept ones, the combiner as its body.
static linalg::GenericOp generalize(RewriterBase &rewriter,
                                    linalg::ReduceOp reduce) {
  MLIRContext *context = reduce.getContext();
  int64_t rank = cast<ShapedType>(reduce.getInputs()[0].getType()).getRank();
  ArrayRef<int64_t> reduced = reduce.getDimensions();
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  SmallVector<AffineExpr> kept;
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(reduced, d))
      iterators[d] = utils::IteratorType::reduction;
    else
      kept.push_back(getAffineDimExpr(d, context));
  }
  SmallVector<AffineMap> maps(reduce.getInputs().size(),
                              AffineMap::getMultiDimIdentityMap(rank, context));
  maps.append(reduce.getInits().size(),
              AffineMap::get(rank, 0, kept, context));
  rewriter.setInsertionPoint(reduce);
  auto generic = rewriter.create<linalg::GenericOp>(
      reduce.getLoc(), reduce->getResultTypes(), reduce.getInputs(),
      reduce.getInits(), maps, iterators);
  rewriter.inlineRegionBefore(reduce.getCombiner(), generic.getRegion(),
                              generic.getRegion().end());
  rewriter.replaceOp(reduce, generic->getResults());
  return generic;
}

void ReductionsInnermostPass::runOnOperation() {
  IRRewriter rewriter(&getContext());
  SmallVector<linalg::LinalgOp> ops;
  getOperation().walk([&](linalg::LinalgOp op) {
    if (isa<linalg::GenericOp, linalg::ReduceOp>(op) &&
        !parallelFirst(op.getIteratorTypesArray()).empty())
      ops.push_back(op);
  });
  for (linalg::LinalgOp op : ops) {
    SmallVector<unsigned> order = parallelFirst(op.getIteratorTypesArray());
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (auto reduce = dyn_cast<linalg::ReduceOp>(op.getOperation()))
      generic = generalize(rewriter, reduce);
    if (failed(linalg::interchangeGenericOp(rewriter, generic, order))) {
      generic.emitError("cannot move this op's reductions inside");
      return signalPassFailure();
    }
  }
}
