//===- ElementwiseInPlace.cpp - Element-wise ops into their copy's target -===//
//
// ftpipe-elementwise-in-place: an element-wise linalg.generic that writes a
// temporary buffer which is then copied into X writes X instead (the
// temporary, the copy and its deallocations go), where no other input can
// alias X. For the CUDA target: a gather adjoint's per-token update then
// has no copy, and ftpipe-parallel-loops-outside can interchange its loop.
//
//===----------------------------------------------------------------------===//

#include "BufferViews.h"
#include "FTPipe/Conversion/Passes.h"

#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define DEBUG_TYPE "ftpipe-elementwise-in-place"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_ELEMENTWISEINPLACEPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

struct ElementwiseInPlacePass
    : ftpipe::impl::ElementwiseInPlacePassBase<ElementwiseInPlacePass> {
  void runOnOperation() override;
};

} // namespace

/// Whether `a` and `b` are the same view: the same value, or equivalent
/// side-effect-free ops of the same operands.
static bool sameView(Value a, Value b) {
  if (a == b)
    return true;
  Operation *opA = a.getDefiningOp(), *opB = b.getDefiningOp();
  return opA && opB && isMemoryEffectFree(opA) &&
         OperationEquivalence::isEquivalentTo(
             opA, opB, OperationEquivalence::IgnoreLocations);
}

/// Whether `input` cannot alias `target` other than element for element.
static bool disjointOrSame(Value input, Value target) {
  if (!isa<MemRefType>(input.getType()) || sameView(input, target))
    return true;
  Value a = ftpipe::rootBufferOf(input), b = ftpipe::rootBufferOf(target);
  return a != b && (a.getDefiningOp<memref::AllocOp>() ||
                    b.getDefiningOp<memref::AllocOp>());
}

/// Writes `copy`'s target directly from the element-wise op that fills its
/// source, if that is legal; returns whether it did.
static bool writeInPlace(memref::CopyOp copy, DominanceInfo &dominance) {
  Value temporary = copy.getSource(), target = copy.getTarget();
  auto alloc = temporary.getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return false;
  linalg::GenericOp generic;
  SmallVector<Operation *> deallocs;
  for (OpOperand &use : temporary.getUses()) {
    Operation *user = use.getOwner();
    if (user == copy || isa<memref::DeallocOp>(user)) {
      if (isa<memref::DeallocOp>(user))
        deallocs.push_back(user);
      continue;
    }
    auto op = dyn_cast<linalg::GenericOp>(user);
    if (!op || generic || op.getNumDpsInits() != 1 ||
        &use != op.getDpsInitOperand(0))
      return false;
    generic = op;
  }
  if (!generic || generic->getBlock() != copy->getBlock() ||
      !generic->isBeforeInBlock(copy) ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }) ||
      !generic.getMatchingBlockArgument(generic.getDpsInitOperand(0))
           .use_empty())
    return false;
  // Nothing between the op and the copy may read or write memory.
  for (Operation *op = generic->getNextNode(); op != copy;
       op = op->getNextNode())
    if (!isMemoryEffectFree(op))
      return false;
  for (Value input : generic.getDpsInputs())
    if (!disjointOrSame(input, target))
      return false;
  // The target must exist when the op runs: a view made between the two
  // moves before it.
  if (!dominance.properlyDominates(target, generic)) {
    Operation *view = target.getDefiningOp();
    if (!view || view->getBlock() != generic->getBlock() ||
        !isMemoryEffectFree(view) ||
        !llvm::all_of(view->getOperands(), [&](Value operand) {
          return dominance.properlyDominates(operand, generic);
        }))
      return false;
    view->moveBefore(generic);
  }
  generic.getDpsInitOperand(0)->set(target);
  copy.erase();
  for (Operation *dealloc : deallocs)
    dealloc->erase();
  alloc.erase();
  return true;
}

void ElementwiseInPlacePass::runOnOperation() {
  DominanceInfo &dominance = getAnalysis<DominanceInfo>();
  SmallVector<memref::CopyOp> copies;
  getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
  bool changed = false;
  for (memref::CopyOp copy : copies)
    changed |= writeInPlace(copy, dominance);
  if (!changed)
    markAllAnalysesPreserved();
}
