//===- OutlineLayers.cpp - One function per repeated layer ----------------===//
//
// ftpipe-outline-layers: cuts each function into runs of ops of one layer
// (by location scope) and the runs before and after the layers, moves them
// into private functions, merges the functions whose bodies are identical
// and keeps LLVM from inlining them back, so each distinct layer's code is
// optimised once and in a small function (docs/Compile.md, "Compile time"). The
// CPU lowering runs it on buffers whose deallocations are placed: the ops,
// their order and so the buffers alive at each point stay as they were.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/SetVector.h"

#include <functional>

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_OUTLINELAYERSPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

struct OutlineLayersPass
    : ftpipe::impl::OutlineLayersPassBase<OutlineLayersPass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

/// The first name in `loc` (through fused and call-site locations).
static std::optional<StringRef> scopeName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().strref();
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      if (std::optional<StringRef> name = scopeName(inner))
        return name;
    return std::nullopt;
  }
  if (auto site = dyn_cast<CallSiteLoc>(loc))
    return scopeName(site.getCallee());
  return std::nullopt;
}

/// The layer of an op: its scope up to the first component that ends in an
/// index (`GPT2Block[3]`); empty when it has none. A dealloc has none: it
/// sits after its buffer's last use, and its location is where the buffer
/// was made.
static StringRef layerOf(Operation *op) {
  if (isa<memref::DeallocOp>(op))
    return "";
  std::optional<StringRef> scope = scopeName(op->getLoc());
  if (!scope)
    return "";
  size_t start = 0;
  while (start < scope->size()) {
    size_t end = scope->find('/', start);
    if (end == StringRef::npos)
      end = scope->size();
    StringRef component = scope->slice(start, end);
    if (component.ends_with("]")) {
      size_t open = component.rfind('[');
      StringRef index = component.slice(open + 1, component.size() - 1);
      if (open != StringRef::npos && !index.empty() &&
          llvm::all_of(index, llvm::isDigit))
        return scope->take_front(end);
    }
    start = end + 1;
  }
  return "";
}

/// A cast or reshape of one buffer: made again on whichever side of a cut
/// reads it, so that calls pass and return only the buffers themselves (each
/// memref a call passes is a descriptor of several words, and an unranked
/// one a descriptor in memory).
static bool isRematerialized(Operation *op) {
  return isa<memref::CastOp, memref::CollapseShapeOp, memref::ExpandShapeOp>(
             op) &&
         op->getNumOperands() == 1;
}

/// Whether `op` is glue: a call, a constant or an op of the memref dialect
/// without regions (allocations, deallocations, views, contiguous copies:
/// the CPU lowering has made the strided ones loops before). Anything else
/// computes, in loops once lowered; a run that holds such an op is outlined
/// whatever its size, so that the function left is glue.
static bool isGlue(Operation *op) {
  return op->getNumRegions() == 0 &&
         (isa<func::CallOp>(op) || op->hasTrait<OpTrait::ConstantLike>() ||
          isa_and_nonnull<memref::MemRefDialect>(op->getDialect()));
}

/// Moves `ops` (consecutive, in one block) into a new private function
/// named `name` and calls it in their place.
static func::FuncOp outline(ArrayRef<Operation *> ops, StringRef name,
                            OpBuilder &moduleBuilder) {
  llvm::SmallPtrSet<Operation *, 32> inside(ops.begin(), ops.end());
  auto isInside = [&](Operation *op) {
    for (; op; op = op->getParentOp())
      if (inside.contains(op))
        return true;
    return false;
  };
  llvm::SetVector<Value> inputs, outputs;
  // Constants, and casts and reshapes of values from before the run, are
  // cloned in.
  llvm::SetVector<Operation *> clonedIn;
  std::function<void(Value)> readBefore = [&](Value operand) {
    Operation *producer = operand.getDefiningOp();
    if (producer && (producer->hasTrait<OpTrait::ConstantLike>() ||
                     isRematerialized(producer))) {
      if (clonedIn.insert(producer))
        for (Value source : producer->getOperands())
          readBefore(source);
      return;
    }
    inputs.insert(operand);
  };
  for (Operation *op : ops)
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        Operation *producer = operand.getDefiningOp();
        if (producer && isInside(producer))
          continue;
        if (auto arg = dyn_cast<BlockArgument>(operand))
          if (isInside(arg.getOwner()->getParentOp()))
            continue;
        readBefore(operand);
      }
    });
  // Casts and reshapes read after the run are made again after the call.
  llvm::SetVector<Operation *> clonedOut;
  SmallVector<Value> readAfter;
  for (Operation *op : ops)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *user) { return !isInside(user); }))
        readAfter.push_back(result);
  for (size_t i = 0; i < readAfter.size(); ++i) {
    Value value = readAfter[i];
    Operation *producer = value.getDefiningOp();
    if (!isRematerialized(producer)) {
      outputs.insert(value);
      continue;
    }
    clonedOut.insert(producer);
    Operation *source = producer->getOperand(0).getDefiningOp();
    if (source && isInside(source))
      readAfter.push_back(producer->getOperand(0));
  }
  auto inBlockOrder = [](llvm::SetVector<Operation *> &set) {
    SmallVector<Operation *> order = set.takeVector();
    llvm::sort(order, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    return order;
  };

  SmallVector<Type> inputTypes, outputTypes;
  for (Value input : inputs)
    inputTypes.push_back(input.getType());
  for (Value output : outputs)
    outputTypes.push_back(output.getType());
  Location loc = ops.front()->getLoc();
  auto function = moduleBuilder.create<func::FuncOp>(
      loc, name, moduleBuilder.getFunctionType(inputTypes, outputTypes));
  function.setPrivate();
  Block *body = function.addEntryBlock();
  OpBuilder builder = OpBuilder::atBlockEnd(body);
  IRMapping mapping;
  for (auto [input, argument] : llvm::zip(inputs, body->getArguments()))
    mapping.map(input, argument);
  for (Operation *op : inBlockOrder(clonedIn))
    builder.clone(*op, mapping);
  for (Operation *op : ops)
    builder.clone(*op, mapping);
  SmallVector<Value> returned;
  for (Value output : outputs)
    returned.push_back(mapping.lookup(output));
  builder.create<func::ReturnOp>(loc, returned);
  // What only the caller read.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (isRematerialized(&op) && op.use_empty())
      op.erase();

  OpBuilder callBuilder(ops.front());
  auto call =
      callBuilder.create<func::CallOp>(loc, function, inputs.getArrayRef());
  IRMapping after;
  for (auto [output, result] : llvm::zip(outputs, call.getResults())) {
    Value(output).replaceUsesWithIf(
        result, [&](OpOperand &use) { return !isInside(use.getOwner()); });
    after.map(output, result);
  }
  callBuilder.setInsertionPointAfter(call);
  for (Operation *op : inBlockOrder(clonedOut)) {
    Operation *copy = callBuilder.clone(*op, after);
    op->getResult(0).replaceUsesWithIf(copy->getResult(0), [&](OpOperand &use) {
      return !isInside(use.getOwner());
    });
  }
  for (Operation *op : llvm::reverse(ops))
    op->erase();
  return function;
}

void OutlineLayersPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
  OpBuilder moduleBuilder = OpBuilder::atBlockEnd(module.getBody());
  SymbolTable symbols(module);
  SmallVector<func::FuncOp> outlined;
  for (func::FuncOp function : functions) {
    if (function.isExternal())
      continue;
    Block &block = function.getBody().front();
    // Runs of ops of one layer; ops of none join the run they sit in, but
    // those before the first layer (embeddings; a backward's head) make a
    // run of their own, and the glue after the last op that computes
    // (copies of a backward's results), at least min-ops long, stays: the
    // function keeps glue without loops, which ftpipe-plain-glue has
    // compiled as it is.
    SmallVector<SmallVector<Operation *>> runs;
    StringRef current;
    for (Operation &op : block.without_terminator()) {
      StringRef layer = layerOf(&op);
      if (runs.empty() || (!layer.empty() && layer != current)) {
        runs.emplace_back();
        current = layer;
      }
      runs.back().push_back(&op);
    }
    if (!runs.empty()) {
      SmallVector<Operation *> &last = runs.back();
      auto glue = std::find_if_not(last.rbegin(), last.rend(), isGlue).base();
      if (last.end() - glue >= minOps)
        last.erase(glue, last.end());
      if (last.empty())
        runs.pop_back();
    }
    // A function of one layer is as small as it gets (and an entry point's
    // wrapper, whose ops all carry its location, would only gain a call).
    if (runs.size() < 2)
      continue;
    int64_t part = 0;
    for (ArrayRef<Operation *> run : runs) {
      // Leading constants stay: other runs may read them.
      while (!run.empty() && run.front()->hasTrait<OpTrait::ConstantLike>())
        run = run.drop_front();
      if (run.size() < minOps && llvm::all_of(run, isGlue))
        continue;
      std::string name =
          (function.getSymName() + "_layer" + Twine(part++)).str();
      while (symbols.lookup(name))
        name += "_";
      func::FuncOp layer = outline(run, name, moduleBuilder);
      symbols.insert(layer);
      outlined.push_back(layer);
    }
    // The casts and reshapes that every reader now makes again.
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (isRematerialized(&op) && op.use_empty())
        op.erase();
  }

  // One function per distinct body.
  SmallVector<func::FuncOp> kept;
  for (func::FuncOp function : outlined) {
    func::FuncOp same;
    for (func::FuncOp other : kept)
      if (other.getFunctionType() == function.getFunctionType() &&
          OperationEquivalence::isRegionEquivalentTo(
              &other.getBody(), &function.getBody(),
              OperationEquivalence::IgnoreLocations)) {
        same = other;
        break;
      }
    if (!same) {
      function->setAttr("no_inline", UnitAttr::get(&getContext()));
      kept.push_back(function);
      continue;
    }
    if (failed(SymbolTable::replaceAllSymbolUses(
            function.getSymNameAttr(), same.getSymNameAttr(), module))) {
      function.emitError("cannot redirect the calls of an outlined layer");
      return signalPassFailure();
    }
    function.erase();
  }
}
