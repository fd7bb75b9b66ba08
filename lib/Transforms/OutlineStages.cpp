//===- OutlineStages.cpp - One function per stage of the plan -------------===//
//
// Moves each stage's ops into a private function and rewrites the model
// function as calls of them in dependency order. Decides, once for the whole
// model, which stage boundaries carry a gradient (activity), and which device
// owns each parameter. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "PartitionProblem.h"

#include "FTPipe/AutoDiff/ReverseMode.h"
#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"
#include "FTPipe/Dialect/FTPipe/StageAttrs.h"
#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <map>
#include <set>

#define DEBUG_TYPE "ftpipe-outline-stages"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_OUTLINESTAGESPASS
#include "FTPipe/Transforms/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;
using namespace mlir::ftpipe;
namespace sa = mlir::ftpipe::stage_attrs;

namespace {
class OutlineStagesPass
    : public mlir::ftpipe::impl::OutlineStagesPassBase<OutlineStagesPass> {
public:
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

/// The stage of an op (every op of a partitioned function has one).
static int64_t stageOf(Operation *op) {
  return op->getAttrOfType<IntegerAttr>(FTPipeDialect::kStageAttrName).getInt();
}

/// Adds to `copies` the ops of `body` that are copied into stages and that
/// `op` (or an op nested in it) reads, and, in turn, those they read.
static void collectCopies(Operation *op, Block &body,
                          llvm::SetVector<Operation *> &copies) {
  op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands()) {
      Operation *def = operand.getDefiningOp();
      // Only the model's own ops: not the index ops of a body.
      if (def && def->getBlock() == &body && isCopiedIntoStages(def) &&
          copies.insert(def))
        collectCopies(def, body, copies);
    }
  });
}

/// The name a model gives an argument: its NameLoc, else `argN`.
static std::string argumentName(BlockArgument arg) {
  if (auto name = dyn_cast<NameLoc>(arg.getLoc()))
    return name.getName().str();
  return "arg" + std::to_string(arg.getArgNumber());
}

/// True for the model's loss: a float tensor of one element.
static bool isLoss(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && tensor.getNumElements() == 1 &&
         isa<FloatType>(tensor.getElementType());
}

static FailureOr<func::FuncOp> findModelFunction(ModuleOp module,
                                                 StringRef name) {
  func::FuncOp found;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isDeclaration())
      continue;
    if (!name.empty() ? func.getSymName() == name
                      : llvm::any_of(func.getOps(), [](Operation &op) {
                          return op.hasAttr(FTPipeDialect::kStageAttrName);
                        })) {
      if (found)
        return emitError(func.getLoc())
               << "two functions carry stages ('" << found.getSymName()
               << "' and '" << func.getSymName()
               << "'): name one with function=";
      found = func;
    }
  }
  if (!found)
    return emitError(module.getLoc())
           << (name.empty() ? "no function has ops with stages: partition "
                              "the model first"
                            : "no function named '" + name.str() + "'");
  return found;
}

namespace {
/// What one stage reads and produces.
struct StageInfo {
  int64_t id = 0;
  int64_t device = 0;
  SmallVector<Operation *> ops;
  /// Constants and replicated ops the stage makes its own copy of.
  llvm::SetVector<Operation *> copies;
  /// Values defined elsewhere that the stage reads, in first-use order.
  llvm::SetVector<Value> reads;
  /// Values of the stage read elsewhere, in definition order, then the
  /// forwarded values it receives and passes on to the next stage reading
  /// them.
  llvm::SetVector<Value> writes;
  /// Per forwarded value it receives: the stage it receives it from (its
  /// producer's for the first reader, the previous reader's otherwise).
  DenseMap<Value, int64_t> forwardedFrom;
};
} // namespace

/// A stage function's arguments, as model values: the parameters and the data
/// inputs it reads (in the model's argument order), then the values it
/// receives (in first-use order).
static SmallVector<Value> stageArguments(func::FuncOp model,
                                         const llvm::SetVector<Value> &reads) {
  SmallVector<Value> params, inputs, received;
  for (Value value : reads) {
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg)
      received.push_back(value);
    else if (model.getArgAttr(arg.getArgNumber(),
                              FTPipeDialect::kParamAttrName))
      params.push_back(value);
    else
      inputs.push_back(value);
  }
  auto byArgNumber = [](Value a, Value b) {
    return cast<BlockArgument>(a).getArgNumber() <
           cast<BlockArgument>(b).getArgNumber();
  };
  llvm::sort(params, byArgNumber);
  llvm::sort(inputs, byArgNumber);
  SmallVector<Value> arguments(params);
  arguments.append(inputs);
  arguments.append(received);
  return arguments;
}

/// Routes the results of the ops the partitioner forwarded
/// (`ftpipe.forward`): the first stage reading one receives it from its
/// producer, each later one (in `order`) from an earlier reader (the latest
/// on its own device, else the one before it: partition::forwardingSources),
/// which passes it on as an extra result. Fails with an error at the op when
/// two of its readers do not depend on each other (`producers`: the stages each
/// stage reads from).
static LogicalResult
routeForwardedValues(Block &body, ArrayRef<int64_t> order,
                     std::map<int64_t, std::set<int64_t>> &producers,
                     std::map<int64_t, StageInfo> &stages) {
  // Every stage's transitive producers, and its position in `order`.
  std::map<int64_t, std::set<int64_t>> after;
  DenseMap<int64_t, size_t> position;
  for (auto [i, id] : llvm::enumerate(order)) {
    position[id] = i;
    for (int64_t p : producers[id]) {
      after[id].insert(p);
      after[id].insert(after[p].begin(), after[p].end());
    }
  }
  for (Operation &op : body.without_terminator()) {
    if (!op.hasAttr(FTPipeDialect::kForwardAttrName) || isCopiedIntoStages(&op))
      continue;
    for (Value value : op.getResults()) {
      SmallVector<int64_t> readers;
      for (auto &[id, info] : stages)
        if (id != stageOf(&op) && info.reads.count(value))
          readers.push_back(id);
      llvm::sort(readers, [&](int64_t a, int64_t b) {
        return position[a] < position[b];
      });
      SmallVector<::ftpipe::partition::DeviceId> devices;
      for (int64_t r : readers)
        devices.push_back(stages[r].device);
      std::vector<size_t> source =
          ::ftpipe::partition::forwardingSources(devices);
      for (size_t i = 1; i < readers.size(); ++i) {
        if (!after[readers[i]].count(readers[i - 1]))
          return op.emitError("'")
                 << FTPipeDialect::kForwardAttrName << "' op's result #"
                 << cast<OpResult>(value).getResultNumber()
                 << " is read by stages " << readers[i - 1] << " and "
                 << readers[i] << ", which do not depend on each other";
        int64_t from = readers[source[i]];
        stages[readers[i]].forwardedFrom[value] = from;
        stages[from].writes.insert(value);
      }
    }
  }
  return success();
}

/// Moves the ops that only compute evaluation metrics (results named by
/// `ftpipe.metric`, ftpipe-model-gen --metrics) into the stage of the loss,
/// wherever the plan put them: the stage that computes the loss then
/// returns the metrics too, so that the device that reports the loss
/// reports them. They read what the loss reads (logits and labels), and
/// cost little beside it.
static void pinMetricsToLossStage(func::FuncOp model, func::ReturnOp ret) {
  if (ret.getNumOperands() < 2)
    return;
  Operation *lossOp = ret.getOperand(0).getDefiningOp();
  if (!lossOp || !lossOp->hasAttr(FTPipeDialect::kStageAttrName))
    return;
  Attribute lossStage = lossOp->getAttr(FTPipeDialect::kStageAttrName);
  llvm::SmallPtrSet<Operation *, 16> metricOnly;
  auto feedsOnlyMetrics = [&](Operation *op) {
    return llvm::all_of(op->getUses(), [&](OpOperand &use) {
      if (use.getOwner() == ret)
        return use.getOperandNumber() > 0 &&
               model.getResultAttr(use.getOperandNumber(), sa::kMetric);
      return metricOnly.contains(use.getOwner());
    });
  };
  // Users come after their operands: one walk backwards decides.
  for (Operation &op : llvm::reverse(ret->getBlock()->without_terminator()))
    if (!op.use_empty() && op.hasAttr(FTPipeDialect::kStageAttrName) &&
        feedsOnlyMetrics(&op)) {
      metricOnly.insert(&op);
      op.setAttr(FTPipeDialect::kStageAttrName, lossStage);
    }
}

void OutlineStagesPass::runOnOperation() {
  ModuleOp module = getOperation();
  FailureOr<func::FuncOp> found = findModelFunction(module, function);
  if (failed(found))
    return signalPassFailure();
  func::FuncOp model = *found;
  if (!model.getBody().hasOneBlock()) {
    emitError(model.getLoc(), "cannot outline the stages of '")
        << model.getSymName() << "': its body has several blocks";
    return signalPassFailure();
  }
  auto plan = module->getAttrOfType<PlanAttr>(FTPipeDialect::kPlanAttrName);
  if (!plan) {
    module.emitError("the module has no '")
        << FTPipeDialect::kPlanAttrName << "': partition the model first";
    return signalPassFailure();
  }
  ArrayRef<int64_t> stageDevice = plan.getStageDevice();
  Block &body = model.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  pinMetricsToLossStage(model, ret);

  // Stages, their ops and their boundaries.
  std::map<int64_t, StageInfo> stages;
  for (Operation &op : body.without_terminator()) {
    auto stage = op.getAttrOfType<IntegerAttr>(FTPipeDialect::kStageAttrName);
    if (!stage) {
      op.emitError("op has no '")
          << FTPipeDialect::kStageAttrName << "' in a partitioned function";
      return signalPassFailure();
    }
    if (stage.getInt() >= static_cast<int64_t>(stageDevice.size())) {
      op.emitError("op is in stage ")
          << stage.getInt() << " but the plan places only "
          << stageDevice.size() << " stages";
      return signalPassFailure();
    }
    if (isCopiedIntoStages(&op))
      continue;
    StageInfo &info = stages[stage.getInt()];
    info.id = stage.getInt();
    info.device = stageDevice[info.id];
    info.ops.push_back(&op);
  }
  for (auto &[id, info] : stages) {
    for (Operation *op : info.ops)
      collectCopies(op, body, info.copies);
    SmallVector<Operation *> readers(info.ops);
    readers.append(info.copies.begin(), info.copies.end());
    for (Operation *op : readers) {
      SmallVector<Value> read(op->getOperands());
      llvm::SetVector<Value> captured;
      for (Region &region : op->getRegions())
        getUsedValuesDefinedAbove(region, captured);
      read.append(captured.begin(), captured.end());
      for (Value value : read) {
        Operation *def = value.getDefiningOp();
        if (def && isCopiedIntoStages(def))
          continue;
        if (!def || stageOf(def) != id)
          info.reads.insert(value);
      }
    }
  }
  for (auto &[id, info] : stages)
    for (Value value : info.reads)
      if (Operation *def = value.getDefiningOp())
        stages[stageOf(def)].writes.insert(value);
  for (Value value : ret.getOperands()) {
    Operation *def = value.getDefiningOp();
    if (def && !isCopiedIntoStages(def))
      stages[stageOf(def)].writes.insert(value);
  }
  for (auto &[id, info] : stages) {
    // Keep writes in definition order (the tag numbering relies on it).
    SmallVector<Value> sorted(info.writes.begin(), info.writes.end());
    llvm::sort(sorted, [](Value a, Value b) {
      Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
      if (x != y)
        return x->isBeforeInBlock(y);
      return cast<OpResult>(a).getResultNumber() <
             cast<OpResult>(b).getResultNumber();
    });
    info.writes = llvm::SetVector<Value>(sorted.begin(), sorted.end());
  }

  // Dependency order of the stages (Kahn; ties by id).
  std::map<int64_t, std::set<int64_t>> producers;
  for (auto &[id, info] : stages)
    for (Value value : info.reads)
      if (Operation *def = value.getDefiningOp())
        producers[id].insert(stageOf(def));
  SmallVector<int64_t> order;
  std::set<int64_t> done;
  while (order.size() < stages.size()) {
    bool progress = false;
    for (auto &[id, info] : stages) {
      if (done.count(id))
        continue;
      if (llvm::all_of(producers[id],
                       [&](int64_t p) { return done.count(p) > 0; })) {
        order.push_back(id);
        done.insert(id);
        progress = true;
        break;
      }
    }
    if (!progress) {
      module.emitError("the stages of '")
          << model.getSymName() << "' depend on each other in a cycle";
      return signalPassFailure();
    }
  }

  if (failed(routeForwardedValues(body, order, producers, stages)))
    return signalPassFailure();

  // Activity over the whole model: params not frozen are the sources, the
  // loss the sink.
  SmallVector<Value> sources, sinks;
  for (BlockArgument arg : model.getArguments())
    if (model.getArgAttr(arg.getArgNumber(), FTPipeDialect::kParamAttrName) &&
        !model.getArgAttr(arg.getArgNumber(), FTPipeDialect::kFrozenAttrName))
      sources.push_back(arg);
  for (Value value : ret.getOperands())
    if (isLoss(value.getType()))
      sinks.push_back(value);
  autodiff::Activity activity(body, sources, sinks);

  // Parameter owners: the lowest device whose stages read the parameter.
  DenseMap<Value, int64_t> owner;
  for (auto &[id, info] : stages)
    for (Value value : info.reads)
      if (isa<BlockArgument>(value)) {
        auto [it, inserted] = owner.try_emplace(value, info.device);
        if (!inserted)
          it->second = std::min(it->second, info.device);
      }

  // Build the stage functions.
  OpBuilder builder(module.getContext());
  MLIRContext *context = module.getContext();
  IRMapping modelValues; // value in the model -> value after rewriting
  SmallVector<func::CallOp> calls;
  builder.setInsertionPoint(model);
  DenseMap<int64_t, func::FuncOp> stageFunctions;
  for (int64_t id : order) {
    StageInfo &info = stages[id];
    // Arguments: parameters, data inputs, received values.
    SmallVector<Value> arguments = stageArguments(model, info.reads);

    SmallVector<Type> argTypes, resultTypes;
    for (Value value : arguments)
      argTypes.push_back(value.getType());
    for (Value value : info.writes)
      resultTypes.push_back(value.getType());
    std::string name = "stage" + std::to_string(id);
    auto func = builder.create<func::FuncOp>(
        info.ops.front()->getLoc(), name,
        builder.getFunctionType(argTypes, resultTypes));
    func.setPrivate();
    func->setAttr(FTPipeDialect::kStageAttrName, builder.getI64IntegerAttr(id));
    func->setAttr(FTPipeDialect::kDeviceAttrName,
                  builder.getI64IntegerAttr(info.device));
    // Argument attributes.
    for (auto [i, value] : llvm::enumerate(arguments)) {
      if (auto arg = dyn_cast<BlockArgument>(value)) {
        if (DictionaryAttr attrs = model.getArgAttrDict(arg.getArgNumber()))
          for (NamedAttribute attr : attrs)
            func.setArgAttr(i, attr.getName(), attr.getValue());
        if (model.getArgAttr(arg.getArgNumber(),
                             FTPipeDialect::kParamAttrName)) {
          func.setArgAttr(i, sa::kOwner,
                          builder.getI64IntegerAttr(owner.lookup(value)));
          if (activity.isActive(value))
            func.setArgAttr(i, sa::kActive, UnitAttr::get(context));
        } else {
          func.setArgAttr(i, sa::kInput,
                          builder.getStringAttr(argumentName(arg)));
        }
        continue;
      }
      auto from = info.forwardedFrom.find(value);
      func.setArgAttr(
          i, sa::kFromStage,
          builder.getI64IntegerAttr(from != info.forwardedFrom.end()
                                        ? from->second
                                        : stageOf(value.getDefiningOp())));
      if (activity.isActive(value))
        func.setArgAttr(i, sa::kActive, UnitAttr::get(context));
    }
    for (auto [i, value] : llvm::enumerate(info.writes)) {
      if (activity.isActive(value))
        func.setResultAttr(i, sa::kActive, UnitAttr::get(context));
      if (llvm::is_contained(sinks, value))
        func.setResultAttr(i, sa::kLoss, UnitAttr::get(context));
    }
    // Body: the stage's ops and its copies, in the model's order.
    Block *entry = func.addEntryBlock();
    IRMapping mapping;
    for (auto [value, arg] : llvm::zip(arguments, entry->getArguments()))
      mapping.map(value, arg);
    OpBuilder inner = OpBuilder::atBlockEnd(entry);
    SmallVector<Operation *> stageOps(info.copies.begin(), info.copies.end());
    stageOps.append(info.ops.begin(), info.ops.end());
    llvm::sort(stageOps, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    for (Operation *op : stageOps) {
      Operation *copy = inner.clone(*op, mapping);
      copy->removeAttr(FTPipeDialect::kStageAttrName);
      copy->removeAttr(FTPipeDialect::kReplicateAttrName);
      copy->removeAttr(FTPipeDialect::kForwardAttrName);
    }
    SmallVector<Value> results;
    for (Value value : info.writes)
      results.push_back(mapping.lookup(value));
    inner.create<func::ReturnOp>(model.getLoc(), results);
    stageFunctions[id] = func;
  }

  // Rewrite the model function as calls, in dependency order. A forwarded
  // value comes from the call of the stage that passes it on.
  OpBuilder callBuilder(ret);
  IRMapping callValues;
  DenseMap<int64_t, func::CallOp> callOf;
  for (int64_t id : order) {
    StageInfo &info = stages[id];
    func::FuncOp func = stageFunctions[id];
    SmallVector<Value> operands;
    for (Value value : stageArguments(model, info.reads)) {
      auto from = info.forwardedFrom.find(value);
      if (from != info.forwardedFrom.end()) {
        const llvm::SetVector<Value> &passed = stages[from->second].writes;
        unsigned index = llvm::find(passed, value) - passed.begin();
        operands.push_back(callOf[from->second].getResult(index));
        continue;
      }
      operands.push_back(callValues.lookupOrDefault(value));
    }
    auto call = callBuilder.create<func::CallOp>(info.ops.front()->getLoc(),
                                                 func, operands);
    call->setAttr(FTPipeDialect::kStageAttrName,
                  callBuilder.getI64IntegerAttr(id));
    callOf[id] = call;
    for (auto [value, result] : llvm::zip(info.writes, call.getResults()))
      if (!value.getDefiningOp() || stageOf(value.getDefiningOp()) == id)
        callValues.map(value, result);
  }
  // Constants returned directly stay in the model function.
  SmallVector<Value> results;
  for (Value value : ret.getOperands())
    results.push_back(callValues.lookupOrDefault(value));
  ret->setOperands(results);
  // Erase the original ops (all of them now unused or copied).
  SmallVector<Operation *> originals;
  for (Operation &op : body.without_terminator())
    if (!isa<func::CallOp>(op) || !op.hasAttr(FTPipeDialect::kStageAttrName))
      originals.push_back(&op);
  for (Operation *op : llvm::reverse(originals)) {
    if (!op->use_empty())
      continue;
    op->erase();
  }
  SmallVector<int64_t> orderAttr(order.begin(), order.end());
  model->setAttr(sa::kStageOrder, builder.getDenseI64ArrayAttr(orderAttr));
}
