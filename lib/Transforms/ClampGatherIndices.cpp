//===- ClampGatherIndices.cpp - Keep gathers inside their tables ----------===//
//
// Clamps the indices of every tosa.gather to the rows of its table, so that
// the lowered gather and the scatter-add of its adjoint stay inside their
// buffers whatever the data holds (docs/Robustness.md). ftpipe-run refuses
// out-of-range ids in data files before training; the clamp is the guard
// for everything else.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"
#include "FTPipe/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "ftpipe-clamp-gather-indices"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_CLAMPGATHERINDICESPASS
#include "FTPipe/Transforms/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;
using namespace mlir::ftpipe;

namespace {
struct ClampGatherIndicesPass
    : public mlir::ftpipe::impl::ClampGatherIndicesPassBase<
          ClampGatherIndicesPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

/// Whether `indices` is already the result of a clamp to [0, rows - 1].
/// The bounds are read signed: tosa.clamp's getMinInt() and getMaxInt() give
/// them as uint64_t, to which a negative bound is a huge one.
static bool isClampedTo(Value indices, int64_t rows) {
  auto clamp = indices.getDefiningOp<tosa::ClampOp>();
  return clamp && clamp.getMinIntAttr().getInt() >= 0 &&
         clamp.getMaxIntAttr().getInt() <= rows - 1;
}

void ClampGatherIndicesPass::runOnOperation() {
  func::FuncOp function = getOperation();
  OpBuilder builder(&getContext());
  WalkResult result = function.walk([&](tosa::GatherOp gather) {
    auto values = cast<ShapedType>(gather.getValues().getType());
    int64_t rows = values.getDimSize(1);
    if (ShapedType::isDynamic(rows) || rows < 1) {
      gather.emitOpError("needs a static number of rows (dimension 1 of its "
                         "values) to keep its indices inside the table");
      return WalkResult::interrupt();
    }
    Value indices = gather.getIndices();
    if (isClampedTo(indices, rows))
      return WalkResult::advance();
    builder.setInsertionPoint(gather);
    auto clamp = builder.create<tosa::ClampOp>(
        gather.getLoc(), indices.getType(), indices,
        builder.getI64IntegerAttr(0), builder.getI64IntegerAttr(rows - 1),
        builder.getF32FloatAttr(0), builder.getF32FloatAttr(0));
    // The clamp belongs where the gather does (stage, block, device).
    for (NamedAttribute attr : gather->getDiscardableAttrs())
      if (attr.getName() != FTPipeDialect::kCostAttrName &&
          attr.getName() != FTPipeDialect::kPaddingRowAttrName)
        clamp->setAttr(attr.getName(), attr.getValue());
    clamp->setAttr(FTPipeDialect::kIndexGuardAttrName, builder.getUnitAttr());
    gather.getIndicesMutable().assign(clamp.getResult());
    ++numClamped;
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return signalPassFailure();
}
