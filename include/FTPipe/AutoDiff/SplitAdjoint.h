//===- SplitAdjoint.h - Split backward: input and weight parts -*- C++ -*-===//
//
// Zero-bubble pipelining (docs/StagePrograms.md, contract version 2) runs a
// stage's backward in two parts: the input part I computes the gradients its
// producers wait for, the weight part W the parameter gradients, later. This
// cuts an adjoint built by differentiateFunction in two along its ops: I gets
// every op that an input gradient depends on, W the rest of what the weight
// gradients depend on, and the values W reads from I's side travel as extra
// results of I ("carried" values; W takes the caller's values that it reads,
// such as the forward's saved ones, itself). Each op of the adjoint lands in
// one part (only constants, empty tensors and reshapes, which W rebuilds from
// the value they reshape rather than receive it twice, are in both), so I and W
// together do the adjoint's arithmetic, no more.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_AUTODIFF_SPLITADJOINT_H
#define FTPIPE_AUTODIFF_SPLITADJOINT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>

namespace mlir {
namespace ftpipe {
namespace autodiff {

/// For an adjoint `A(args) -> grads`:
///   input:  `I(args) -> (grads[i] for !weight[i], carried...)`
///   weight: `W(args[j] for direct[j], args[k] for k in held, carried...)
///            -> (grads[i] for weight[i])`
/// Both are private and inserted after `A`, which stays.
struct AdjointSplit {
  func::FuncOp input, weight;
  /// The held arguments W reads, by their number in `A`, in W's order.
  SmallVector<unsigned> held;
  unsigned numCarried = 0;
};

/// Splits `adjoint` (one block ending in func.return). `weightResults` says
/// per result whether it goes to W; `directArguments` per argument whether W
/// takes it itself (for example the parameters, which the caller has at
/// hand) instead of receiving it from I; `heldArguments` whether W takes it
/// itself where it reads it (values the caller keeps until W runs, such as
/// the forward's saved values: passed on by I, each would be a copy in a
/// buffer of its own). None when W would run no op (every weight gradient
/// falls out of the input part, or there is none).
std::optional<AdjointSplit>
splitAdjoint(func::FuncOp adjoint, ArrayRef<bool> weightResults,
             ArrayRef<bool> directArguments, ArrayRef<bool> heldArguments,
             StringRef inputName, StringRef weightName);

} // namespace autodiff
} // namespace ftpipe
} // namespace mlir

#endif // FTPIPE_AUTODIFF_SPLITADJOINT_H
