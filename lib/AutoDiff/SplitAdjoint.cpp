//===- SplitAdjoint.cpp - A backward split into input and weight parts ----===//
//
// Backward slices over the adjoint's top-level ops (a value read inside an
// op's region counts as read by the op): I is the slice of the input
// gradients, W what the slice of the weight gradients adds to it. The values
// W reads that W does not compute itself, and that it does not take directly,
// are I's carried results, but for the arguments the caller holds until W
// (the forward's saved values), which W takes itself; a reshape of a value
// on I's side is rebuilt in W from that value instead (one buffer carried,
// not two views of it).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/AutoDiff/SplitAdjoint.h"
#include "RuleUtils.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

using namespace mlir;
using namespace mlir::ftpipe;
using namespace mlir::ftpipe::autodiff;

/// The values `op` reads: its operands and the values its regions use from
/// above.
static llvm::SetVector<Value> readsOf(Operation *op) {
  llvm::SetVector<Value> values(op->operand_begin(), op->operand_end());
  for (Region &region : op->getRegions())
    getUsedValuesDefinedAbove(region, values);
  return values;
}

/// Constants and empty tensors: rebuilt in W rather than carried.
static bool isRematerializable(Operation *op) {
  return op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         isMemoryEffectFree(op);
}

/// The ops of `block` that `roots` depend on, not looking past the ops of
/// `stop` (whose results the slice reads as they are), except rebuildable
/// ones.
static llvm::DenseSet<Operation *>
sliceOf(Block &block, ArrayRef<Value> roots,
        const llvm::DenseSet<Operation *> &stop = {}) {
  llvm::DenseSet<Operation *> slice;
  SmallVector<Value> worklist(roots.begin(), roots.end());
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val().getDefiningOp();
    if (!op)
      continue;
    while (op->getBlock() != &block)
      op = op->getParentOp();
    if ((stop.contains(op) && !isRematerializable(op)) ||
        !slice.insert(op).second)
      continue;
    llvm::append_range(worklist, readsOf(op));
  }
  return slice;
}

std::optional<AdjointSplit>
autodiff::splitAdjoint(func::FuncOp adjoint, ArrayRef<bool> weightResults,
                       ArrayRef<bool> directArguments,
                       ArrayRef<bool> heldArguments, StringRef inputName,
                       StringRef weightName) {
  Block &body = adjoint.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  assert(weightResults.size() == ret.getNumOperands() &&
         directArguments.size() == body.getNumArguments() &&
         heldArguments.size() == body.getNumArguments());
  SmallVector<Value> inputRoots, weightRoots;
  for (auto [isWeight, value] : llvm::zip(weightResults, ret.getOperands()))
    (isWeight ? weightRoots : inputRoots).push_back(value);
  if (weightRoots.empty())
    return std::nullopt;
  llvm::DenseSet<Operation *> inInput = sliceOf(body, inputRoots);
  llvm::DenseSet<Operation *> inWeight = sliceOf(body, weightRoots, inInput);
  if (llvm::all_of(inWeight, isRematerializable))
    return std::nullopt;

  // What W reads from I's side, in the order W first reads it. A reshape
  // on I's side is rebuilt in W from what it reshapes (`reshapes`), which
  // is carried instead: the same bytes, and where W reads both a value and
  // its reshape (BERT's linear layers: the bias's gradient sums dy, the
  // weight's multiplies its 2-D view) one buffer, not two results over one
  // buffer, which the runtime cannot adopt and copies (until 2026-11-28:
  // 111 and 162 MiB an I on BERT-base QA's two split blocks' stages, which
  // the memory replay did not count).
  // A held argument W reads is W's own argument (until 2026-11-28 I
  // returned it, and the lowering copied it: 63 to 81 MiB an I on BERT-base
  // QA).
  llvm::SetVector<Value> carried, held;
  llvm::DenseSet<Operation *> reshapes;
  std::function<void(Value)> carry = [&](Value value) {
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      if (argument.getOwner() != &body ||
          directArguments[argument.getArgNumber()])
        return;
      (heldArguments[argument.getArgNumber()] ? held : carried).insert(value);
      return;
    }
    Operation *op = value.getDefiningOp();
    while (op->getBlock() != &body)
      op = op->getParentOp();
    if (inWeight.contains(op))
      return;
    if (op == value.getDefiningOp() && isReshape(op)) {
      if (reshapes.insert(op).second)
        carry(op->getOperand(0));
      return;
    }
    carried.insert(value);
  };
  for (Operation &op : body.without_terminator())
    if (inWeight.contains(&op))
      for (Value value : readsOf(&op))
        carry(value);
  for (Value value : weightRoots)
    carry(value);

  MLIRContext *context = adjoint.getContext();
  OpBuilder builder(context);
  builder.setInsertionPointAfter(adjoint);
  auto copyResultAttrs = [&](func::FuncOp to, bool weight) {
    unsigned next = 0;
    for (auto [i, isWeight] : llvm::enumerate(weightResults))
      if (isWeight == weight) {
        if (DictionaryAttr attrs = adjoint.getResultAttrDict(i))
          to.setResultAttrs(next, attrs);
        ++next;
      }
  };

  // I: the adjoint's arguments; the input gradients, then the carried values.
  SmallVector<Type> inputResults;
  for (Value value : inputRoots)
    inputResults.push_back(value.getType());
  for (Value value : carried)
    inputResults.push_back(value.getType());
  auto input = builder.create<func::FuncOp>(
      adjoint.getLoc(), inputName,
      FunctionType::get(context, adjoint.getArgumentTypes(), inputResults));
  input.setPrivate();
  input.setAllArgAttrs(adjoint.getAllArgAttrs());
  copyResultAttrs(input, false);
  {
    Block *entry = input.addEntryBlock();
    IRMapping mapping;
    mapping.map(body.getArguments(), entry->getArguments());
    OpBuilder b = OpBuilder::atBlockEnd(entry);
    for (Operation &op : body.without_terminator())
      if (inInput.contains(&op))
        b.clone(op, mapping);
    SmallVector<Value> results;
    for (Value value : llvm::concat<const Value>(inputRoots, carried))
      results.push_back(mapping.lookupOrDefault(value));
    b.create<func::ReturnOp>(ret.getLoc(), results);
  }

  // W: the direct arguments, the held ones it reads, then the carried
  // values; the weight gradients.
  SmallVector<Type> weightArgs, weightResultTypes;
  SmallVector<Value> weightArgValues;
  for (BlockArgument argument : body.getArguments())
    if (directArguments[argument.getArgNumber()]) {
      weightArgs.push_back(argument.getType());
      weightArgValues.push_back(argument);
    }
  SmallVector<unsigned> heldNumbers;
  for (Value value : held) {
    weightArgs.push_back(value.getType());
    weightArgValues.push_back(value);
    heldNumbers.push_back(cast<BlockArgument>(value).getArgNumber());
  }
  for (Value value : carried) {
    weightArgs.push_back(value.getType());
    weightArgValues.push_back(value);
  }
  for (Value value : weightRoots)
    weightResultTypes.push_back(value.getType());
  builder.setInsertionPointAfter(input);
  auto weight = builder.create<func::FuncOp>(
      adjoint.getLoc(), weightName,
      FunctionType::get(context, weightArgs, weightResultTypes));
  weight.setPrivate();
  unsigned next = 0;
  for (auto [i, direct] : llvm::enumerate(directArguments)) {
    if (!direct)
      continue;
    if (DictionaryAttr attrs = adjoint.getArgAttrDict(i))
      weight.setArgAttrs(next, attrs);
    ++next;
  }
  copyResultAttrs(weight, true);
  {
    Block *entry = weight.addEntryBlock();
    IRMapping mapping;
    mapping.map(weightArgValues, entry->getArguments());
    OpBuilder b = OpBuilder::atBlockEnd(entry);
    for (Operation &op : body.without_terminator())
      if (inWeight.contains(&op) || reshapes.contains(&op))
        b.clone(op, mapping);
    SmallVector<Value> results;
    for (Value value : weightRoots)
      results.push_back(mapping.lookupOrDefault(value));
    b.create<func::ReturnOp>(ret.getLoc(), results);
  }
  return AdjointSplit{input, weight, std::move(heldNumbers),
                      static_cast<unsigned>(carried.size())};
}
