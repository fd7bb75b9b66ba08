//===- EarlyDeallocation.cpp - Free buffers after their last use ----------===//
//
// ftpipe-early-deallocation: upstream's ownership-based deallocation frees a
// block's buffers at the block's end, so a stage's backward holds all of its
// intermediate values until it returns. Each dealloc of an allocation or a
// call result of the same block moves to just after the buffer's last use in
// that block.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_EARLYDEALLOCATIONPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

struct EarlyDeallocationPass
    : ftpipe::impl::EarlyDeallocationPassBase<EarlyDeallocationPass> {
  void runOnOperation() override;
};

} // namespace

/// The last op of `block` that uses `buffer` or anything derived from it
/// (every result of every user, transitively; a use in a nested region
/// counts at its ancestor in `block`), skipping `dealloc`. Null when one of
/// them reaches the block's terminator or leaves the block.
static Operation *lastUse(Value buffer, Block &block,
                          ArrayRef<Operation *> skipped) {
  SmallVector<Value> worklist = {buffer};
  DenseSet<Value> seen = {buffer};
  Operation *last = buffer.getDefiningOp();
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (llvm::is_contained(skipped, user))
        continue;
      Operation *ancestor = block.findAncestorOpInBlock(*user);
      if (!ancestor || ancestor == block.getTerminator())
        return nullptr;
      if (last->isBeforeInBlock(ancestor))
        last = ancestor;
      // What the user makes may hold the buffer (a view, a pointer, a loop
      // result): follow it, and the ancestor's results as well.
      for (Operation *op : {user, ancestor})
        for (Value result : op->getResults())
          if (seen.insert(result).second)
            worklist.push_back(result);
    }
  }
  return last;
}

void EarlyDeallocationPass::runOnOperation() {
  SmallVector<memref::DeallocOp> deallocs;
  getOperation().walk([&](memref::DeallocOp op) { deallocs.push_back(op); });
  for (memref::DeallocOp dealloc : deallocs) {
    // The buffer's allocation, or the call that returned it (the dealloc of
    // a call result frees the base buffer of its strided metadata).
    // The metadata op moves with the dealloc when nothing else uses it.
    Value buffer = dealloc.getMemref();
    SmallVector<Operation *, 2> moved = {dealloc};
    auto metadata = buffer.getDefiningOp<memref::ExtractStridedMetadataOp>();
    if (metadata && metadata.getBaseBuffer() == buffer &&
        metadata.getSource().getDefiningOp<func::CallOp>() &&
        buffer.hasOneUse() &&
        llvm::all_of(metadata->getResults().drop_front(),
                     [](Value v) { return v.use_empty(); })) {
      buffer = metadata.getSource();
      moved.insert(moved.begin(), metadata);
    }
    Operation *alloc = buffer.getDefiningOp();
    Block *block = dealloc->getBlock();
    if (!alloc || !isa<memref::AllocOp, func::CallOp>(alloc) ||
        alloc->getBlock() != block || moved.front()->getBlock() != block)
      continue;
    Operation *last = lastUse(buffer, *block, moved);
    if (!last || !last->isBeforeInBlock(moved.front()))
      continue;
    for (Operation *op : moved) {
      op->moveAfter(last);
      last = op;
    }
  }
}
