//===- SplitDevices.cpp - Per-device entry points with transfers ----------===//
//
// Turns the outlined, differentiated model into the per-device entry points
// of docs/StagePrograms.md: for each stage a forward and a backward of one
// micro-batch that receive what they read, call the stage function or its
// adjoint, and send what others read. Edges and tags are numbered here, once.
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"
#include "FTPipe/Dialect/FTPipe/StageAttrs.h"
#include "FTPipe/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#define DEBUG_TYPE "ftpipe-split-devices"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_SPLITDEVICESPASS
#include "FTPipe/Transforms/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;
using namespace mlir::ftpipe;
namespace sa = mlir::ftpipe::stage_attrs;

namespace {
class SplitDevicesPass
    : public mlir::ftpipe::impl::SplitDevicesPassBase<SplitDevicesPass> {
public:
  using Base::Base;
  void runOnOperation() override;
};

/// One value read by another stage.
struct Edge {
  int64_t id;
  func::CallOp producer;
  unsigned result;
  func::CallOp consumer;
  unsigned operand;
};

/// A stage's call in the model function and its functions.
struct Stage {
  func::CallOp call;
  func::FuncOp forward, adjoint;
  /// A split adjoint's parts (ftpipe-differentiate), or null.
  func::FuncOp adjointInput, adjointWeight;
  int64_t id, device;
  /// The call's results the model returns as evaluation metrics, with their
  /// names (`ftpipe.metric`).
  SmallVector<std::pair<unsigned, StringAttr>> metrics;
};
} // namespace

static int64_t intAttr(Operation *op, StringRef name) {
  return op->getAttrOfType<IntegerAttr>(name).getInt();
}

static Value buildOnes(OpBuilder &b, Location loc, Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return b.create<tosa::ConstOp>(
      loc, tensor,
      DenseElementsAttr::get(tensor,
                             b.getFloatAttr(tensor.getElementType(), 1.0)));
}

static Value buildZerosOf(OpBuilder &b, Location loc, Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return b.create<tosa::ConstOp>(
      loc, tensor,
      DenseElementsAttr::get(tensor,
                             b.getFloatAttr(tensor.getElementType(), 0.0)));
}

/// Builds `@stageS_forward` and `@stageS_backward`, and with a split adjoint
/// `@stageS_backward_input` and `@stageS_backward_weight`.
static void buildEntryPoints(OpBuilder &b, const Stage &stage,
                             ArrayRef<Edge> edges,
                             const DenseMap<func::CallOp, Stage *> &stageOf) {
  MLIRContext *context = b.getContext();
  func::FuncOp forward = stage.forward, adjoint = stage.adjoint;
  Location loc = forward.getLoc();
  unsigned numArgs = forward.getNumArguments();
  int64_t numSaved = 0;
  if (auto attr = forward->getAttrOfType<IntegerAttr>(sa::kNumSaved))
    numSaved = attr.getInt();
  unsigned numResults = forward.getNumResults() - numSaved;

  // Parameters, and those of them that get a gradient (not frozen).
  SmallVector<unsigned> params, trained, inputs, received;
  for (unsigned i = 0; i < numArgs; ++i) {
    if (forward.getArgAttr(i, FTPipeDialect::kParamAttrName)) {
      params.push_back(i);
      if (!forward.getArgAttr(i, FTPipeDialect::kFrozenAttrName))
        trained.push_back(i);
    } else if (forward.getArgAttr(i, sa::kInput))
      inputs.push_back(i);
    else
      received.push_back(i);
  }
  auto edgeInto = [&](unsigned operand) -> const Edge & {
    return *llvm::find_if(edges, [&](const Edge &e) {
      return e.consumer == stage.call && e.operand == operand;
    });
  };
  auto deviceOf = [&](func::CallOp call) {
    return stageOf.lookup(call)->device;
  };
  std::optional<unsigned> lossResult;
  for (unsigned r = 0; r < numResults; ++r)
    if (forward.getResultAttr(r, sa::kLoss))
      lossResult = r;
  // Results that pass a received value on (forwarded values, see
  // ftpipe-outline-stages): result -> argument. They are sent as soon as
  // they arrive, and their gradients are added after the adjoint, so that
  // neither waits for this stage's own work.
  DenseMap<unsigned, unsigned> passes;
  Block &body = forward.getBody().front();
  for (unsigned r = 0; r < numResults; ++r) {
    auto arg = dyn_cast<BlockArgument>(body.getTerminator()->getOperand(r));
    if (arg && arg.getOwner() == &body &&
        llvm::is_contained(received, arg.getArgNumber()))
      passes[r] = arg.getArgNumber();
  }

  auto setEntryAttrs = [&](func::FuncOp entry, StringRef kind) {
    entry->setAttr(FTPipeDialect::kStageAttrName,
                   b.getI64IntegerAttr(stage.id));
    entry->setAttr(FTPipeDialect::kDeviceAttrName,
                   b.getI64IntegerAttr(stage.device));
    entry->setAttr(sa::kEntry, b.getStringAttr(kind));
    entry.setArgAttr(0, sa::kMicrobatch, UnitAttr::get(context));
  };
  // Leading arguments shared by both entry points: mb, params, inputs.
  SmallVector<Type> leading{b.getIndexType()};
  for (unsigned i : params)
    leading.push_back(forward.getArgumentTypes()[i]);
  for (unsigned i : inputs)
    leading.push_back(forward.getArgumentTypes()[i]);
  auto copyLeadingAttrs = [&](func::FuncOp entry) {
    unsigned position = 1;
    for (unsigned i : llvm::concat<unsigned>(params, inputs)) {
      if (DictionaryAttr attrs = forward.getArgAttrDict(i))
        for (NamedAttribute attr : attrs)
          if (attr.getName() != sa::kActive)
            entry.setArgAttr(position, attr.getName(), attr.getValue());
      ++position;
    }
  };
  std::string prefix = "stage" + std::to_string(stage.id);

  // The forward entry point.
  SmallVector<Type> savedTypes;
  for (unsigned i : received)
    savedTypes.push_back(forward.getArgumentTypes()[i]);
  for (int64_t k = 0; k < numSaved; ++k)
    savedTypes.push_back(forward.getResultTypes()[numResults + k]);
  SmallVector<Type> forwardResults;
  if (lossResult)
    forwardResults.push_back(forward.getResultTypes()[*lossResult]);
  for (auto [r, name] : stage.metrics)
    forwardResults.push_back(forward.getResultTypes()[r]);
  forwardResults.append(savedTypes);
  auto forwardEntry = b.create<func::FuncOp>(
      loc, prefix + "_forward", b.getFunctionType(leading, forwardResults));
  setEntryAttrs(forwardEntry, "forward");
  copyLeadingAttrs(forwardEntry);
  {
    Block *entry = forwardEntry.addEntryBlock();
    OpBuilder fb = OpBuilder::atBlockEnd(entry);
    Value mb = entry->getArgument(0);
    SmallVector<Value> operands(numArgs);
    unsigned position = 1;
    for (unsigned i : llvm::concat<unsigned>(params, inputs))
      operands[i] = entry->getArgument(position++);
    for (unsigned i : received) {
      const Edge &edge = edgeInto(i);
      operands[i] = fb.create<RecvOp>(loc, forward.getArgumentTypes()[i], mb,
                                      deviceOf(edge.producer), 2 * edge.id);
    }
    for (const Edge &edge : edges)
      if (edge.producer == stage.call && passes.count(edge.result))
        fb.create<SendOp>(loc, operands[passes.lookup(edge.result)], mb,
                          deviceOf(edge.consumer), 2 * edge.id);
    auto call = fb.create<func::CallOp>(loc, forward, operands);
    for (const Edge &edge : edges)
      if (edge.producer == stage.call && !passes.count(edge.result))
        fb.create<SendOp>(loc, call.getResult(edge.result), mb,
                          deviceOf(edge.consumer), 2 * edge.id);
    SmallVector<Value> results;
    if (lossResult)
      results.push_back(call.getResult(*lossResult));
    for (auto [r, name] : stage.metrics)
      results.push_back(call.getResult(r));
    for (unsigned i : received)
      results.push_back(operands[i]);
    for (int64_t k = 0; k < numSaved; ++k)
      results.push_back(call.getResult(numResults + k));
    fb.create<func::ReturnOp>(loc, results);
    unsigned offset = lossResult ? 1 : 0;
    if (lossResult)
      forwardEntry.setResultAttr(0, sa::kLoss, UnitAttr::get(context));
    for (auto [name, k] : llvm::zip(llvm::make_second_range(stage.metrics),
                                    llvm::seq<unsigned>(offset, -1u)))
      forwardEntry.setResultAttr(k, sa::kMetric, name);
    offset += stage.metrics.size();
    for (unsigned k = 0; k < savedTypes.size(); ++k)
      forwardEntry.setResultAttr(offset + k, sa::kSaved,
                                 b.getI64IntegerAttr(k));
  }

  // The backward entry points: the whole backward, and with a split adjoint
  // its input part (same arguments and transfers; returns what the weight
  // part reads) and its weight part (no transfers).
  SmallVector<Type> backwardArgs(leading);
  backwardArgs.append(savedTypes);
  auto setGradAttrs = [&](func::FuncOp entry) {
    for (auto [k, i] : llvm::enumerate(trained))
      if (auto name = forward.getArgAttr(i, FTPipeDialect::kNameAttrName))
        entry.setResultAttr(k, sa::kGrad, name);
  };
  // Per trained parameter its gradient from `gradients` (zeros where none).
  auto paramGradients = [&](OpBuilder &bb, ArrayRef<Value> gradients) {
    SmallVector<Value> results;
    for (unsigned i : trained)
      results.push_back(
          gradients[i] ? gradients[i]
                       : buildZerosOf(bb, loc, forward.getArgumentTypes()[i]));
    return results;
  };
  auto buildBackward = [&](func::FuncOp callee, StringRef kind) {
    bool inputPart = callee && callee == stage.adjointInput;
    SmallVector<Type> resultTypes;
    if (inputPart) {
      for (unsigned k = 0; k < callee.getNumResults(); ++k)
        if (callee.getResultAttr(k, sa::kWeightSaved))
          resultTypes.push_back(callee.getResultTypes()[k]);
    } else {
      for (unsigned i : trained)
        resultTypes.push_back(forward.getArgumentTypes()[i]);
    }
    auto backwardEntry =
        b.create<func::FuncOp>(loc, prefix + "_" + kind.str(),
                               b.getFunctionType(backwardArgs, resultTypes));
    setEntryAttrs(backwardEntry, kind);
    copyLeadingAttrs(backwardEntry);
    for (unsigned k = 0; k < savedTypes.size(); ++k)
      backwardEntry.setArgAttr(leading.size() + k, sa::kSaved,
                               b.getI64IntegerAttr(k));
    if (!inputPart)
      setGradAttrs(backwardEntry);
    Block *entry = backwardEntry.addEntryBlock();
    OpBuilder bb = OpBuilder::atBlockEnd(entry);
    Value mb = entry->getArgument(0);
    SmallVector<Value> operands(numArgs);
    unsigned position = 1;
    for (unsigned i : llvm::concat<unsigned>(params, inputs))
      operands[i] = entry->getArgument(position++);
    for (unsigned i : received)
      operands[i] = entry->getArgument(position++);
    for (int64_t k = 0; k < numSaved; ++k)
      operands.push_back(entry->getArgument(position++));
    // Gradients of the active results: the loss seed and what consumers
    // send back (for a passed-on value, after the adjoint).
    auto addTo = [&](Value &sum, Type type, Value gradient) {
      sum = sum ? bb.create<tosa::AddOp>(loc, type, sum, gradient).getResult()
                : gradient;
    };
    auto receiveGradients = [&](unsigned r, Value &sum) {
      for (const Edge &edge : edges)
        if (edge.producer == stage.call && edge.result == r)
          addTo(sum, forward.getResultTypes()[r],
                bb.create<RecvOp>(loc, forward.getResultTypes()[r], mb,
                                  deviceOf(edge.consumer), 2 * edge.id + 1));
    };
    for (unsigned r = 0; r < numResults; ++r) {
      if (!forward.getResultAttr(r, sa::kActive))
        continue;
      Type type = forward.getResultTypes()[r];
      Value sum;
      if (lossResult && *lossResult == r)
        addTo(sum, type, buildOnes(bb, loc, type));
      if (!passes.count(r))
        receiveGradients(r, sum);
      operands.push_back(sum ? sum : buildZerosOf(bb, loc, type));
    }
    SmallVector<Value> gradients(numArgs), results;
    if (callee) {
      auto call = bb.create<func::CallOp>(loc, callee, operands);
      for (auto [k, result] : llvm::enumerate(call.getResults())) {
        if (callee.getResultAttr(k, sa::kWeightSaved))
          results.push_back(result);
        else if (auto of =
                     callee.getResultAttrOfType<IntegerAttr>(k, sa::kGradOf))
          gradients[of.getInt()] = result;
      }
    }
    for (auto [r, i] : passes)
      if (forward.getResultAttr(r, sa::kActive))
        receiveGradients(r, gradients[i]);
    for (unsigned i : received) {
      if (!gradients[i])
        continue;
      const Edge &edge = edgeInto(i);
      bb.create<SendOp>(loc, gradients[i], mb, deviceOf(edge.producer),
                        2 * edge.id + 1);
    }
    if (!inputPart)
      results = paramGradients(bb, gradients);
    bb.create<func::ReturnOp>(loc, results);
    if (inputPart)
      for (unsigned k = 0; k < results.size(); ++k)
        backwardEntry.setResultAttr(k, sa::kWeightSaved,
                                    b.getI64IntegerAttr(k));
  };
  buildBackward(adjoint, "backward");
  if (!stage.adjointInput)
    return;
  buildBackward(stage.adjointInput, "backward_input");

  // The weight part: the parameters and data inputs, the received and saved
  // values it reads (the runtime keeps them from the input part on), then
  // what the input part returned.
  func::FuncOp weight = stage.adjointWeight;
  SmallVector<Type> weightArgs(leading);
  SmallVector<unsigned> heldArgs, carriedArgs;
  // The saved value an argument of the adjoint is at the entry points.
  auto savedIndexOf = [&](unsigned argument) -> int64_t {
    if (argument >= numArgs)
      return received.size() + (argument - numArgs);
    return llvm::find(received, argument) - received.begin();
  };
  SmallVector<int64_t> heldSaved;
  for (unsigned k = 0; k < weight.getNumArguments(); ++k)
    if (auto held =
            weight.getArgAttrOfType<IntegerAttr>(k, sa::kAdjointArgument)) {
      weightArgs.push_back(weight.getArgumentTypes()[k]);
      heldArgs.push_back(k);
      heldSaved.push_back(savedIndexOf(held.getInt()));
    }
  for (unsigned k = 0; k < weight.getNumArguments(); ++k)
    if (weight.getArgAttr(k, sa::kWeightSaved)) {
      weightArgs.push_back(weight.getArgumentTypes()[k]);
      carriedArgs.push_back(k);
    }
  SmallVector<Type> gradTypes;
  for (unsigned i : trained)
    gradTypes.push_back(forward.getArgumentTypes()[i]);
  auto weightEntry =
      b.create<func::FuncOp>(loc, prefix + "_backward_weight",
                             b.getFunctionType(weightArgs, gradTypes));
  setEntryAttrs(weightEntry, "backward_weight");
  copyLeadingAttrs(weightEntry);
  for (auto [k, saved] : llvm::enumerate(heldSaved))
    weightEntry.setArgAttr(leading.size() + k, sa::kSaved,
                           b.getI64IntegerAttr(saved));
  for (unsigned k = 0; k < carriedArgs.size(); ++k)
    weightEntry.setArgAttr(leading.size() + heldArgs.size() + k,
                           sa::kWeightSaved, b.getI64IntegerAttr(k));
  setGradAttrs(weightEntry);
  Block *entry = weightEntry.addEntryBlock();
  OpBuilder wb = OpBuilder::atBlockEnd(entry);
  // The weight part takes the stage's parameters and inputs in argument
  // order, then the held and the carried values.
  SmallVector<Value> direct(numArgs);
  unsigned position = 1;
  for (unsigned i : llvm::concat<unsigned>(params, inputs))
    direct[i] = entry->getArgument(position++);
  SmallVector<Value> operands;
  for (unsigned i = 0; i < numArgs; ++i)
    if (direct[i])
      operands.push_back(direct[i]);
  for (unsigned k = 0; k < heldArgs.size() + carriedArgs.size(); ++k)
    operands.push_back(entry->getArgument(leading.size() + k));
  auto call = wb.create<func::CallOp>(loc, weight, operands);
  SmallVector<Value> gradients(numArgs);
  for (auto [k, result] : llvm::enumerate(call.getResults()))
    gradients[weight.getResultAttrOfType<IntegerAttr>(k, sa::kGradOf)
                  .getInt()] = result;
  wb.create<func::ReturnOp>(loc, paramGradients(wb, gradients));
}

void SplitDevicesPass::runOnOperation() {
  ModuleOp module = getOperation();
  func::FuncOp model;
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr(sa::kStageOrder))
      model = func;
  if (!model) {
    module.emitError("no outlined model function: run "
                     "--ftpipe-outline-stages and --ftpipe-differentiate "
                     "first");
    return signalPassFailure();
  }
  auto ret = cast<func::ReturnOp>(model.getBody().front().getTerminator());
  // The loss first, then the evaluation metrics (ftpipe-model-gen
  // --metrics), each a result of a stage.
  bool returnsOnlyLossAndMetrics = ret.getNumOperands() >= 1;
  for (auto [i, value] : llvm::enumerate(ret.getOperands()))
    returnsOnlyLossAndMetrics &=
        value.getDefiningOp<func::CallOp>() &&
        (i == 0 || model.getResultAttrOfType<StringAttr>(i, sa::kMetric));
  if (!returnsOnlyLossAndMetrics) {
    emitError(model.getLoc(), "'")
        << model.getSymName()
        << "' must return only its loss (and metrics named by '" << sa::kMetric
        << "') to be split into training entry points (generate it with "
           "--loss)";
    return signalPassFailure();
  }
  auto lossCall = cast<func::CallOp>(ret.getOperand(0).getDefiningOp());
  func::FuncOp lossStage =
      module.lookupSymbol<func::FuncOp>(lossCall.getCallee());
  if (!lossStage.getResultAttr(
          cast<OpResult>(ret.getOperand(0)).getResultNumber(), sa::kLoss)) {
    emitError(model.getLoc(), "the result of '")
        << model.getSymName() << "' is not a loss (a float of one element)";
    return signalPassFailure();
  }

  // Stages in call order, and the edges between them.
  SmallVector<Stage> stages;
  for (auto call : model.getBody().getOps<func::CallOp>()) {
    Stage stage;
    stage.call = call;
    stage.forward = module.lookupSymbol<func::FuncOp>(call.getCallee());
    stage.adjoint = module.lookupSymbol<func::FuncOp>(
        (call.getCallee() + sa::kAdjointSuffix).str());
    stage.adjointInput = module.lookupSymbol<func::FuncOp>(
        (call.getCallee() + sa::kAdjointInputSuffix).str());
    stage.adjointWeight = module.lookupSymbol<func::FuncOp>(
        (call.getCallee() + sa::kAdjointWeightSuffix).str());
    if (!stage.adjointInput != !stage.adjointWeight) {
      emitError(stage.forward.getLoc(), "stage function '")
          << call.getCallee()
          << "' has only one part of a split adjoint: run "
             "--ftpipe-differentiate again";
      return signalPassFailure();
    }
    stage.id = intAttr(stage.forward, FTPipeDialect::kStageAttrName);
    stage.device = intAttr(stage.forward, FTPipeDialect::kDeviceAttrName);
    bool needsAdjoint = llvm::any_of(
        llvm::seq<unsigned>(0, stage.forward.getNumArguments()),
        [&](unsigned i) { return stage.forward.getArgAttr(i, sa::kActive); });
    if (needsAdjoint && !stage.adjoint) {
      emitError(stage.forward.getLoc(), "stage ")
          << stage.id << " has no adjoint: run --ftpipe-differentiate first";
      return signalPassFailure();
    }
    stages.push_back(stage);
  }
  DenseMap<func::CallOp, Stage *> stageOf;
  for (Stage &stage : stages)
    stageOf[stage.call] = &stage;
  for (unsigned i = 1; i < ret.getNumOperands(); ++i) {
    auto result = cast<OpResult>(ret.getOperand(i));
    stageOf[cast<func::CallOp>(result.getOwner())]->metrics.push_back(
        {result.getResultNumber(),
         model.getResultAttrOfType<StringAttr>(i, sa::kMetric)});
  }
  SmallVector<Edge> edges;
  for (Stage &stage : stages) {
    for (OpResult result : stage.call->getResults()) {
      SmallVector<std::pair<int64_t, OpOperand *>> uses;
      for (OpOperand &use : result.getUses())
        if (auto consumer = dyn_cast<func::CallOp>(use.getOwner()))
          uses.push_back({stageOf[consumer]->id, &use});
      llvm::sort(uses, [](auto &a, auto &b) { return a.first < b.first; });
      for (auto [id, use] : uses)
        edges.push_back(Edge{static_cast<int64_t>(edges.size()), stage.call,
                             result.getResultNumber(),
                             cast<func::CallOp>(use->getOwner()),
                             use->getOperandNumber()});
    }
  }

  OpBuilder builder(module.getContext());
  builder.setInsertionPointToEnd(module.getBody());
  for (Stage &stage : stages)
    buildEntryPoints(builder, stage, edges, stageOf);
  SmallVector<int64_t> order;
  for (Stage &stage : stages)
    order.push_back(stage.id);
  module->setAttr(sa::kStageOrder, builder.getDenseI64ArrayAttr(order));
  model.erase();
}
