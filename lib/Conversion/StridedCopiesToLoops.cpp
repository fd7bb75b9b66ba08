//===- StridedCopiesToLoops.cpp - memref.copy of strided views as loops ---===//
//
// ftpipe-strided-copies-to-loops: a memref.copy whose source or target is not
// one contiguous block (a slice of a larger buffer, and the gradient written
// back into one) becomes a linalg.generic that yields its input, so that it
// lowers to a loop nest that LLVM vectorises, instead of the runtime's
// `memrefCopy`, which moves one element at a time (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_STRIDEDCOPIESTOLOOPSPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

/// True where the memref lowering copies `type` with one memcpy.
bool isContiguous(MemRefType type) {
  return type.getLayout().isIdentity() ||
         memref::isStaticShapeAndContiguousRowMajor(type);
}

struct StridedCopiesToLoopsPass
    : ftpipe::impl::StridedCopiesToLoopsPassBase<StridedCopiesToLoopsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation().walk([&](memref::CopyOp copy) {
      auto source = dyn_cast<MemRefType>(copy.getSource().getType());
      auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
      if (!source || !target || source.getRank() == 0 ||
          (isContiguous(source) && isContiguous(target)))
        return;
      rewriter.setInsertionPoint(copy);
      int64_t rank = source.getRank();
      AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
      SmallVector<utils::IteratorType> parallel(rank,
                                                utils::IteratorType::parallel);
      rewriter.create<linalg::GenericOp>(
          copy.getLoc(), copy.getSource(), copy.getTarget(),
          ArrayRef<AffineMap>{identity, identity}, parallel,
          [](OpBuilder &b, Location loc, ValueRange args) {
            b.create<linalg::YieldOp>(loc, args.front());
          });
      rewriter.eraseOp(copy);
    });
  }
};

} // namespace
