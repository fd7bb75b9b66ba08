//===- CopyGlobalsToHeap.cpp - Constant buffers read from heap copies -----===//
//
// ftpipe-copy-globals-to-heap: every memref.get_global that code other than
// host calls reads becomes an allocation and a copy of the global, so that
// the CUDA target, whose allocations are device memory, never hands a kernel
// a pointer into the host's data segment.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_COPYGLOBALSTOHEAPPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

struct CopyGlobalsToHeapPass
    : ftpipe::impl::CopyGlobalsToHeapPassBase<CopyGlobalsToHeapPass> {
  void runOnOperation() override;
};

} // namespace

/// Whether every use of `value` (through casts) is an operand of a call.
static bool readOnlyByCalls(Value value) {
  for (Operation *user : value.getUsers()) {
    if (auto cast = dyn_cast<memref::CastOp>(user)) {
      if (!readOnlyByCalls(cast.getResult()))
        return false;
    } else if (!isa<func::CallOp>(user)) {
      return false;
    }
  }
  return true;
}

void CopyGlobalsToHeapPass::runOnOperation() {
  SmallVector<memref::GetGlobalOp> reads;
  getOperation().walk([&](memref::GetGlobalOp op) { reads.push_back(op); });
  for (memref::GetGlobalOp read : reads) {
    // A constant that only host calls read (the site text of
    // ftpipe_rt_index_error) stays in the host's data segment.
    if (readOnlyByCalls(read.getResult()))
      continue;
    auto type = cast<MemRefType>(read.getType());
    if (!type.hasStaticShape() || !type.getLayout().isIdentity()) {
      read.emitError("constant buffer with a dynamic shape or a layout: "
                     "cannot copy it to the heap");
      return signalPassFailure();
    }
    OpBuilder builder(read->getContext());
    builder.setInsertionPointAfter(read);
    auto copy = builder.create<memref::AllocOp>(
        read.getLoc(), MemRefType::get(type.getShape(), type.getElementType()),
        builder.getI64IntegerAttr(64));
    read.getResult().replaceAllUsesWith(copy.getResult());
    builder.create<memref::CopyOp>(read.getLoc(), read.getResult(),
                                   copy.getResult());
  }
}
