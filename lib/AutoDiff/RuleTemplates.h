//===- RuleTemplates.h - One external model per op from a function -*- C++ -*-===//
//
// Private to lib/AutoDiff: most ops have one result and a rule that reads
// only that result's gradient, so a rule is written as a plain function and
// attached with `attachRule<OpTy, &function>(context)`.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_LIB_AUTODIFF_RULETEMPLATES_H
#define FTPIPE_LIB_AUTODIFF_RULETEMPLATES_H

#include "FTPipe/AutoDiff/AutoDiffInterfaces.h"

namespace mlir {
namespace ftpipe {
namespace autodiff {

/// A rule for a one-result op: fills `gradients` (one slot per operand,
/// initially null) from the result's gradient `dy`.
template <typename OpTy>
using AdjointFn = LogicalResult (*)(OpTy op, OpBuilder &b, Value dy,
                                    ArrayRef<bool> needsGradient,
                                    MutableArrayRef<Value> gradients);

template <typename OpTy, AdjointFn<OpTy> Fn>
struct SingleResultRule
    : public ReverseModeOpInterface::ExternalModel<SingleResultRule<OpTy, Fn>,
                                                   OpTy> {
  LogicalResult buildAdjoint(Operation *op, OpBuilder &b,
                             ArrayRef<Value> resultGradients,
                             ArrayRef<bool> needsGradient,
                             SmallVectorImpl<Value> &gradients) const {
    gradients.assign(op->getNumOperands(), Value());
    if (!resultGradients.front())
      return success();
    return Fn(cast<OpTy>(op), b, resultGradients.front(), needsGradient,
              gradients);
  }
};

template <typename OpTy, AdjointFn<OpTy> Fn>
void attachRule(MLIRContext *context) {
  OpTy::template attachInterface<SingleResultRule<OpTy, Fn>>(*context);
}

} // namespace autodiff
} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_LIB_AUTODIFF_RULETEMPLATES_H
