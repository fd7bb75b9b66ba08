//===- ParallelLoopsOutside.cpp - scf.parallel out of scf.for -------------===//
//
// ftpipe-parallel-loops-outside: interchanges `scf.for { scf.parallel }`
// into `scf.parallel { scf.for }` where different parallel iterations
// provably touch different elements of every buffer written. For the CUDA
// target: a gather adjoint's loop over tokens becomes one kernel over the
// channels whose threads loop over the tokens in order, not a host loop
// launching a kernel per token.
//
//===----------------------------------------------------------------------===//

#include "BufferViews.h"
#include "FTPipe/Conversion/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define DEBUG_TYPE "ftpipe-parallel-loops-outside"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_PARALLELLOOPSOUTSIDEPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

struct ParallelLoopsOutsidePass
    : ftpipe::impl::ParallelLoopsOutsidePassBase<ParallelLoopsOutsidePass> {
  void runOnOperation() override;
};

} // namespace

/// Whether `root` is a buffer whose origin is known: an allocation, a
/// global, or an argument of the function (which no allocation of the
/// function aliases).
static bool knownOrigin(Value root) {
  if (auto argument = dyn_cast<BlockArgument>(root))
    return isa<FunctionOpInterface>(argument.getOwner()->getParentOp());
  return root.getDefiningOp<memref::AllocOp>() ||
         root.getDefiningOp<memref::AllocaOp>() ||
         root.getDefiningOp<memref::GetGlobalOp>();
}

/// The dimension of `view`'s root buffer indexed by exactly `iv` when
/// `view` is accessed at `indices`: `iv` one of the indices, and every
/// `memref.subview` between `view` and the root keeps that dimension with
/// offset 0 and stride 1. None otherwise.
static std::optional<unsigned> rootDimension(Value view, ValueRange indices,
                                             Value iv) {
  auto found = llvm::find(indices, iv);
  if (found == indices.end())
    return std::nullopt;
  unsigned dim = found - indices.begin();
  for (Value root = ftpipe::rootBufferOf(view); view != root;) {
    if (auto cast = view.getDefiningOp<memref::CastOp>()) {
      view = cast.getSource();
      continue;
    }
    auto subview = view.getDefiningOp<memref::SubViewOp>();
    if (!subview)
      return std::nullopt;
    llvm::SmallBitVector dropped = subview.getDroppedDims();
    unsigned source = 0, kept = 0;
    for (; source < dropped.size(); ++source)
      if (!dropped[source] && kept++ == dim)
        break;
    if (source == dropped.size() || subview.getStaticOffsets()[source] != 0 ||
        subview.getStaticStrides()[source] != 1)
      return std::nullopt;
    dim = source;
    view = subview.getSource();
  }
  return dim;
}

/// The only scf.parallel in `loop`'s body, if it has no results, its
/// bounds come from outside `loop`, and only scf.ifs without results lie
/// between the two.
static scf::ParallelOp innerParallel(scf::ForOp loop) {
  scf::ParallelOp parallel;
  unsigned count = 0;
  loop.getBody()->walk([&](scf::ParallelOp op) {
    parallel = op;
    ++count;
  });
  if (count != 1 || parallel.getNumResults() != 0 ||
      !llvm::all_of(parallel->getOperands(), [&](Value bound) {
        return loop.isDefinedOutsideOfLoop(bound);
      }))
    return {};
  for (Operation *op = parallel->getParentOp(); op != loop;
       op = op->getParentOp())
    if (!isa<scf::IfOp>(op) || op->getNumResults() != 0)
      return {};
  return parallel;
}

/// Whether running `parallel`'s iterations each through the whole of
/// `loop` gives the same result as `loop` running `parallel` each time
/// (the conditions in Passes.td).
static bool interchangeable(scf::ForOp loop, scf::ParallelOp parallel) {
  if (loop.getNumResults() != 0)
    return false;
  struct Access {
    Value view;
    ValueRange indices;
    bool inParallel;
  };
  SmallVector<Access> accesses;
  DenseSet<Value> written;
  WalkResult result = loop.getBody()->walk([&](Operation *op) {
    bool inParallel = parallel->isProperAncestor(op);
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      accesses.push_back({load.getMemRef(), load.getIndices(), inParallel});
      return WalkResult::advance();
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      Value root = ftpipe::rootBufferOf(store.getMemRef());
      auto type = cast<MemRefType>(root.getType());
      if (!inParallel || !root.getDefiningOp<memref::AllocOp>() ||
          !type.getLayout().isIdentity())
        return WalkResult::interrupt();
      written.insert(root);
      accesses.push_back({store.getMemRef(), store.getIndices(), true});
      return WalkResult::advance();
    }
    if (isa<scf::ParallelOp, scf::ForOp, scf::IfOp>(op) ||
        op->hasTrait<OpTrait::IsTerminator>() ||
        (op->getNumRegions() == 0 && isMemoryEffectFree(op)))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  if (result.wasInterrupted())
    return false;
  // For each written buffer and parallel induction variable, the dimension
  // that variable indexes in every access.
  DenseMap<std::pair<Value, unsigned>, unsigned> dimensions;
  for (const Access &access : accesses) {
    Value root = ftpipe::rootBufferOf(access.view);
    if (!written.contains(root)) {
      if (!knownOrigin(root))
        return false;
      continue;
    }
    if (!access.inParallel)
      return false;
    for (auto [i, iv] : llvm::enumerate(parallel.getInductionVars())) {
      std::optional<unsigned> dim =
          rootDimension(access.view, access.indices, iv);
      if (!dim)
        return false;
      auto [it, inserted] = dimensions.try_emplace({root, i}, *dim);
      if (!inserted && it->second != *dim)
        return false;
    }
  }
  return true;
}

/// `scf.parallel { clone of loop with parallel's body in its place }`.
static void interchange(scf::ForOp loop, scf::ParallelOp parallel,
                        IRRewriter &rewriter) {
  rewriter.setInsertionPoint(loop);
  auto outer = rewriter.create<scf::ParallelOp>(
      parallel.getLoc(), parallel.getLowerBound(), parallel.getUpperBound(),
      parallel.getStep());
  rewriter.setInsertionPoint(outer.getBody()->getTerminator());
  IRMapping mapping;
  rewriter.clone(*loop, mapping);
  auto inner = cast<scf::ParallelOp>(mapping.lookup(parallel.getOperation()));
  Operation *reduce = inner.getBody()->getTerminator();
  rewriter.eraseOp(reduce);
  rewriter.inlineBlockBefore(inner.getBody(), inner, outer.getInductionVars());
  rewriter.eraseOp(inner);
  rewriter.eraseOp(loop);
}

void ParallelLoopsOutsidePass::runOnOperation() {
  IRRewriter rewriter(&getContext());
  // Inner loops first: an interchanged inner loop leaves its scf.parallel
  // where an outer loop may take it further out.
  SmallVector<scf::ForOp> loops;
  getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
  for (scf::ForOp loop : loops)
    if (scf::ParallelOp parallel = innerParallel(loop);
        parallel && interchangeable(loop, parallel))
      interchange(loop, parallel, rewriter);
}
