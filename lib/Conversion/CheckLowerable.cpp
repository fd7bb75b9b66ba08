//===- CheckLowerable.cpp - Refuses what upstream's lowering crashes on ---===//
//
// ftpipe-check-lowerable: located errors for ops that MLIR 19's verifiers
// accept and its conversions crash on (docs/Robustness.md lists the cases).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_CHECKLOWERABLEPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

/// Whether `transpose`'s permutation is a constant permutation of its
/// input's dimensions.
LogicalResult checkPermutation(tosa::TransposeOp transpose) {
  DenseIntElementsAttr perms;
  if (!matchPattern(transpose.getPerms(), m_Constant(&perms)))
    return transpose.emitError("tosa.transpose: the permutation must be a "
                               "constant to be lowered");
  auto inputType = dyn_cast<ShapedType>(transpose.getInput1().getType());
  int64_t rank = inputType && inputType.hasRank() ? inputType.getRank() : -1;
  SmallVector<bool> seen(std::max<int64_t>(rank, 0), false);
  bool valid = rank >= 0 && perms.getNumElements() == rank;
  for (const APInt &value : perms.getValues<APInt>()) {
    if (!valid)
      break;
    int64_t dim = value.getSExtValue();
    valid = dim >= 0 && dim < rank && !seen[dim];
    if (valid)
      seen[dim] = true;
  }
  if (valid)
    return success();
  return transpose.emitError("tosa.transpose: the permutation is not a "
                             "permutation of the input's ")
         << rank << " dimensions";
}

struct CheckLowerablePass
    : ftpipe::impl::CheckLowerablePassBase<CheckLowerablePass> {
  void runOnOperation() override {
    WalkResult result = getOperation()->walk([](tosa::TransposeOp transpose) {
      return failed(checkPermutation(transpose)) ? WalkResult::interrupt()
                                                 : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
