//===- ReverseMode.h - Reverse-mode differentiation of a function -*- C++
//-*-===//
//
// Builds the backward of a function on tensors: which values carry a
// gradient (activity), then one adjoint per active op in reverse order, each
// built by the op's ReverseModeOpInterface. Optionally splits the result into
// a forward that returns what the backward needs and a backward that takes
// it, instead of recomputing the forward.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_AUTODIFF_REVERSEMODE_H
#define FTPIPE_AUTODIFF_REVERSEMODE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir {
namespace ftpipe {
namespace autodiff {

/// True for the types that carry a gradient: floats and ranked tensors of
/// floats.
bool isDifferentiable(Type type);

/// The values of one block that carry a gradient: those that depend on a
/// source (varied) and on which a sink depends (useful), of a differentiable
/// type. Values read inside an op's regions count as read by the op.
class Activity {
public:
  Activity(Block &block, ArrayRef<Value> sources, ArrayRef<Value> sinks);
  bool isActive(Value value) const {
    return varied.contains(value) && useful.contains(value);
  }
  bool isVaried(Value value) const { return varied.contains(value); }
  bool isUseful(Value value) const { return useful.contains(value); }

private:
  llvm::DenseSet<Value> varied, useful;
};

/// What to differentiate and how.
struct ReverseModeOptions {
  /// One flag per argument of the forward: does it get a gradient?
  SmallVector<bool> activeArguments;
  /// One flag per result: does a gradient come in for it?
  SmallVector<bool> activeResults;
  /// True: the backward re-runs the forward from the arguments. False: the
  /// forward also returns the values the backward needs (saved values).
  bool recompute = true;
  /// Name of the backward function, inserted after the forward.
  std::string backwardName;
  /// Without recomputation: ops that only rearrange their one non-constant
  /// operand (transposes, reshapes). A value computed from the arguments by
  /// a chain of them is rebuilt in the backward instead of saved. Unset:
  /// none is.
  std::function<bool(Operation *)> isRearrangement;
};

/// The backward built for a forward function `F(args) -> (results)`:
///   recompute:    `B(args, dResults) -> dArgs`
///   no recompute: `F(args) -> (results, saved)` and
///                 `B(args, saved, dResults) -> dArgs`
/// where dResults are the gradients of the active results and dArgs those of
/// the active arguments, in order.
struct ReverseModeResult {
  func::FuncOp backward;
  /// Number of saved values appended to the forward's results (0 under
  /// recomputation).
  unsigned numSaved = 0;
};

/// Differentiates `forward` (one block, ending in func.return). Emits an error
/// at the op without a rule (naming it) and fails on the first such op.
FailureOr<ReverseModeResult>
differentiateFunction(func::FuncOp forward, const ReverseModeOptions &options);

} // namespace autodiff
} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_AUTODIFF_REVERSEMODE_H
