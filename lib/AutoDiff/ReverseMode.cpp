//===- ReverseMode.cpp - Reverse-mode differentiation of a function -------===//
//
// The backward of F(args) -> results is built in one new function: a copy of
// F's ops (the recomputed forward), then, in reverse order, the adjoint of
// every active op, built by its ReverseModeOpInterface; gradients of a value
// used several times are summed. Without recomputation the function is then
// cut in two: the forward values the adjoints read become extra results of F
// and arguments of the backward (constants, and arguments only rearranged
// such as transposed weights, are rebuilt instead; a reshape is rebuilt from
// the value it reshapes, which is saved).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/AutoDiff/ReverseMode.h"
#include "CapturedGradient.h"
#include "FTPipe/AutoDiff/AutoDiffInterfaces.h"
#include "RuleUtils.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::ftpipe;
using namespace mlir::ftpipe::autodiff;

/// Ops with no operands and no effects (constants, empty tensors): rebuilt
/// where needed instead of saved.
static bool isRematerializable(Operation *op) {
  return op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         isMemoryEffectFree(op);
}

static int64_t elementCount(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return 1;
  return shaped.hasStaticShape() ? shaped.getNumElements() : -1;
}

/// True if `value` is one of the function's arguments rearranged: a chain
/// of ops without effects or regions that `isRearrangement` accepts, each
/// with one result and one operand that is not a constant, of as many
/// elements (a transposed or reshaped weight). Such a value is rebuilt in the
/// backward, where the arguments are available too, instead of saved: it
/// costs one copy of a tensor the backward reads anyway (none once the
/// lowering fuses a transpose into its contraction), where saving it keeps
/// a copy in memory until the backward runs.
static bool
isArgumentLayout(Value value, Block &entry, unsigned numArgs,
                 const std::function<bool(Operation *)> &isRearrangement) {
  if (auto argument = dyn_cast<BlockArgument>(value))
    return argument.getOwner() == &entry && argument.getArgNumber() < numArgs;
  Operation *op = value.getDefiningOp();
  if (!op || !isRearrangement || !isRearrangement(op) ||
      op->getNumResults() != 1 || op->getNumRegions() != 0 ||
      !isMemoryEffectFree(op))
    return false;
  Value source;
  for (Value operand : op->getOperands()) {
    Operation *producer = operand.getDefiningOp();
    if (producer && isRematerializable(producer))
      continue;
    if (source)
      return false;
    source = operand;
  }
  int64_t count = elementCount(value.getType());
  return source && count >= 0 && count == elementCount(source.getType()) &&
         isArgumentLayout(source, entry, numArgs, isRearrangement);
}

/// Rebuilds `value` (a constant or isArgumentLayout) at `builder`'s point,
/// with the copies of its operands; `rebuilt` maps forward values to copies.
static Value rebuild(Value value, OpBuilder &builder, IRMapping &rebuilt) {
  if (isa<BlockArgument>(value))
    return value;
  if (Value copy = rebuilt.lookupOrNull(value))
    return copy;
  Operation *op = value.getDefiningOp();
  for (Value operand : op->getOperands())
    rebuilt.map(operand, rebuild(operand, builder, rebuilt));
  Operation *copy = builder.clone(*op, rebuilt);
  builder.setInsertionPointAfter(copy);
  return copy->getResult(cast<OpResult>(value).getResultNumber());
}

/// Removes the forward ops whose results nothing reads.
static void eraseDeadForwardOps(ArrayRef<Operation *> forwardOps) {
  for (Operation *op : llvm::reverse(forwardOps))
    if (op->use_empty() && isMemoryEffectFree(op))
      op->erase();
}

/// Cuts the combined function after its forward part: forward values read by
/// the adjoint part become results of `forward` and arguments of `backward`.
static unsigned
splitSaved(func::FuncOp forward, func::FuncOp backward,
           ArrayRef<Operation *> forwardOps, const IRMapping &mapping,
           unsigned numArgs,
           const std::function<bool(Operation *)> &isRearrangement) {
  llvm::SmallPtrSet<Operation *, 32> inForward(forwardOps.begin(),
                                               forwardOps.end());
  auto isAdjointUse = [&](OpOperand &use) {
    Operation *user = use.getOwner();
    while (user->getParentOp() != backward)
      user = user->getParentOp();
    return !inForward.contains(user);
  };
  // Inverse of the forward -> backward value mapping.
  DenseMap<Value, Value> original;
  for (auto [from, to] : mapping.getValueMap())
    original[to] = from;

  Block &entry = backward.getBody().front();
  SmallVector<Value> savedForward;
  OpBuilder builder(backward.getContext());
  // Copies go into the adjoint part: after the last forward op.
  OpBuilder rebuilder(backward.getContext());
  rebuilder.setInsertionPointAfter(forwardOps.back());
  // Forward values mapped to their copies or saved arguments in the adjoint
  // part.
  IRMapping rebuilt;
  auto save = [&](Value value) {
    if (Value argument = rebuilt.lookupOrNull(value))
      return argument;
    unsigned position = numArgs + savedForward.size();
    BlockArgument argument =
        entry.insertArgument(position, value.getType(), value.getLoc());
    savedForward.push_back(original.lookup(value));
    rebuilt.map(value, argument);
    return Value(argument);
  };
  for (Operation *op : forwardOps) {
    for (Value value : op->getResults()) {
      if (llvm::none_of(value.getUses(), isAdjointUse))
        continue;
      if (isRematerializable(op) ||
          isArgumentLayout(value, entry, numArgs, isRearrangement)) {
        value.replaceUsesWithIf(
            rebuild(value, rebuilder, rebuilt),
            [&](OpOperand &use) { return isAdjointUse(use); });
        continue;
      }
      // A reshape is saved as the value it reshapes (isReshape): BERT's
      // query, key and value read three reshapes of one input, saved as
      // three results over one buffer, which the runtime copies.
      Value source = value;
      while (source.getDefiningOp() && isReshape(source.getDefiningOp()))
        source = source.getDefiningOp()->getOperand(0);
      if (source != value && !isa<BlockArgument>(source)) {
        save(source);
        value.replaceUsesWithIf(
            rebuild(value, rebuilder, rebuilt),
            [&](OpOperand &use) { return isAdjointUse(use); });
        continue;
      }
      value.replaceUsesWithIf(
          save(value), [&](OpOperand &use) { return isAdjointUse(use); });
    }
  }
  // The forward part is now dead.
  for (Operation *op : llvm::reverse(forwardOps)) {
    op->dropAllUses();
    op->erase();
  }
  backward.setType(FunctionType::get(backward.getContext(),
                                     entry.getArgumentTypes(),
                                     backward.getResultTypes()));
  // The forward returns the saved values too.
  auto ret = cast<func::ReturnOp>(forward.getBody().front().getTerminator());
  SmallVector<Value> results(ret.getOperands());
  results.append(savedForward);
  builder.setInsertionPoint(ret);
  builder.create<func::ReturnOp>(ret.getLoc(), results);
  ret.erase();
  forward.setType(FunctionType::get(forward.getContext(),
                                    forward.getArgumentTypes(),
                                    ValueRange(results).getTypes()));
  return savedForward.size();
}

FailureOr<ReverseModeResult>
autodiff::differentiateFunction(func::FuncOp forward,
                                const ReverseModeOptions &options) {
  if (!forward.getBody().hasOneBlock())
    return emitError(forward.getLoc(), "cannot differentiate '")
           << forward.getSymName() << "': its body has several blocks";
  Block &body = forward.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  unsigned numArgs = forward.getNumArguments();
  assert(options.activeArguments.size() == numArgs &&
         options.activeResults.size() == ret.getNumOperands());

  SmallVector<Type> argTypes(forward.getArgumentTypes()), resultTypes;
  for (auto [active, value] :
       llvm::zip(options.activeResults, ret.getOperands()))
    if (active)
      argTypes.push_back(value.getType());
  for (auto [active, arg] :
       llvm::zip(options.activeArguments, forward.getArguments()))
    if (active)
      resultTypes.push_back(arg.getType());

  OpBuilder builder(forward);
  builder.setInsertionPointAfter(forward);
  auto backward = builder.create<func::FuncOp>(
      forward.getLoc(), options.backwardName,
      builder.getFunctionType(argTypes, resultTypes));
  backward.setPrivate();
  Block *entry = backward.addEntryBlock();
  IRMapping mapping;
  for (unsigned i = 0; i < numArgs; ++i)
    mapping.map(forward.getArgument(i), entry->getArgument(i));
  builder.setInsertionPointToEnd(entry);
  SmallVector<Operation *> forwardOps;
  for (Operation &op : body.without_terminator())
    forwardOps.push_back(builder.clone(op, mapping));

  SmallVector<Value> sources, sinks;
  for (unsigned i = 0; i < numArgs; ++i)
    if (options.activeArguments[i])
      sources.push_back(entry->getArgument(i));
  for (auto [active, value] :
       llvm::zip(options.activeResults, ret.getOperands()))
    if (active)
      sinks.push_back(mapping.lookupOrDefault(value));
  Activity activity(*entry, sources, sinks);

  DenseMap<Value, Value> gradients;
  auto accumulate = [&](Value value, Value gradient) {
    Value &slot = gradients[value];
    if (!slot) {
      slot = gradient;
      return;
    }
    slot = buildGradientSum(builder, value.getLoc(), slot, gradient);
  };
  unsigned next = numArgs;
  for (auto [active, value] :
       llvm::zip(options.activeResults, ret.getOperands()))
    if (active)
      accumulate(mapping.lookupOrDefault(value), entry->getArgument(next++));

  for (Operation *op : llvm::reverse(forwardOps)) {
    SmallVector<Value> resultGradients;
    bool any = false;
    for (Value result : op->getResults()) {
      Value gradient =
          activity.isActive(result) ? gradients.lookup(result) : Value();
      resultGradients.push_back(gradient);
      any |= static_cast<bool>(gradient);
    }
    if (!any)
      continue;
    SmallVector<bool> needs;
    bool anyNeeded = false;
    for (Value operand : op->getOperands()) {
      needs.push_back(activity.isActive(operand));
      anyNeeded |= needs.back();
    }
    // Values a region reads from outside: a linalg body reading a tensor
    // (a gather written as a body) scatters its gradient back.
    llvm::SetVector<Value> captured;
    for (Region &region : op->getRegions())
      getUsedValuesDefinedAbove(region, captured);
    for (Value value : captured) {
      if (!activity.isActive(value))
        continue;
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (!linalgOp || !resultGradients.front())
        return op->emitError("no reverse-mode rule for '")
               << op->getName()
               << "' reading a value that needs a gradient from inside its "
                  "region";
      builder.setInsertionPointToEnd(entry);
      FailureOr<Value> gradient = buildCapturedGradient(
          linalgOp, builder, resultGradients.front(), value);
      if (failed(gradient))
        return failure();
      accumulate(value, *gradient);
    }
    if (!anyNeeded)
      continue;
    auto rule = dyn_cast<ReverseModeOpInterface>(op);
    if (!rule)
      return op->emitError("no reverse-mode rule for '")
             << op->getName()
             << "': attach a ReverseModeOpInterface model to differentiate it";
    SmallVector<Value> operandGradients;
    builder.setInsertionPointToEnd(entry);
    if (failed(rule.buildAdjoint(builder, resultGradients, needs,
                                 operandGradients)))
      return failure();
    for (auto [operand, needed, gradient] :
         llvm::zip(op->getOperands(), needs, operandGradients))
      if (needed && gradient)
        accumulate(operand, buildCastTo(builder, op->getLoc(), gradient,
                                        operand.getType()));
  }

  builder.setInsertionPointToEnd(entry);
  SmallVector<Value> results;
  for (unsigned i = 0; i < numArgs; ++i) {
    if (!options.activeArguments[i])
      continue;
    Value arg = entry->getArgument(i);
    Value gradient = gradients.lookup(arg);
    results.push_back(
        gradient ? gradient : buildZeros(builder, arg.getLoc(), arg.getType()));
  }
  builder.create<func::ReturnOp>(forward.getLoc(), results);

  ReverseModeResult result{backward, 0};
  if (options.recompute) {
    eraseDeadForwardOps(forwardOps);
    return result;
  }
  result.numSaved = splitSaved(forward, backward, forwardOps, mapping, numArgs,
                               options.isRearrangement);
  return result;
}
