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
    if (!generic) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized)) {
        op.emitError("cannot write this reduction as a linalg.generic");
        return signalPassFailure();
      }
      generic = *generalized;
    }
    if (failed(linalg::interchangeGenericOp(rewriter, generic, order))) {
      generic.emitError("cannot move this op's reductions inside");
      return signalPassFailure();
    }
  }
}
