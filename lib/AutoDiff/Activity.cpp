//===- Activity.cpp - Which values carry a gradient -----------------------===//
//
// Activity analysis on one block: a value is varied if it depends on a
// source (a parameter or an input that gets a gradient), useful if a sink
// (a result that gets a gradient) depends on it, and active if both and of a
// float type. Only active ops need a rule, so integer index arithmetic,
// masks and constants never do. Values an op reads inside its regions (a
// linalg body reading an outer tensor) count as its operands.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/AutoDiff/ReverseMode.h"

#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace mlir::ftpipe;
using namespace mlir::ftpipe::autodiff;

bool autodiff::isDifferentiable(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    type = tensor.getElementType();
  return isa<FloatType>(type);
}

/// The operands of `op` plus the outer values its regions read.
static SmallVector<Value> readValues(Operation *op) {
  SmallVector<Value> values(op->getOperands());
  if (op->getNumRegions()) {
    llvm::SetVector<Value> captured;
    for (Region &region : op->getRegions())
      getUsedValuesDefinedAbove(region, captured);
    values.append(captured.begin(), captured.end());
  }
  return values;
}

Activity::Activity(Block &block, ArrayRef<Value> sources,
                   ArrayRef<Value> sinks) {
  for (Value source : sources)
    if (isDifferentiable(source.getType()))
      varied.insert(source);
  for (Operation &op : block) {
    bool anyVaried = llvm::any_of(
        readValues(&op), [&](Value v) { return varied.contains(v); });
    if (!anyVaried)
      continue;
    for (Value result : op.getResults())
      if (isDifferentiable(result.getType()))
        varied.insert(result);
  }
  for (Value sink : sinks)
    useful.insert(sink);
  for (Operation &op : llvm::reverse(block)) {
    bool anyUseful = llvm::any_of(
        op.getResults(), [&](Value v) { return useful.contains(v); });
    if (!anyUseful)
      continue;
    for (Value read : readValues(&op))
      useful.insert(read);
  }
}
