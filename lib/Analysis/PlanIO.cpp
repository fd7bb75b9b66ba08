//===- PlanIO.cpp - The partition plan in IR --------------------*- C++ -*-===//
//
// Moves plans between IR attributes and lib/Partition.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Analysis/PlanIO.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::ftpipe;

FailureOr<partition::Plan> mlir::ftpipe::readPlan(ModuleOp module,
                                                  const OpGraph &opGraph) {
  size_t numNodes = opGraph.ops.size();
  auto planAttr = module->getAttrOfType<PlanAttr>(FTPipeDialect::kPlanAttrName);
  partition::Plan plan;
  plan.nodeStage.resize(numNodes);
  size_t numWithStage = 0;
  for (auto [node, op] : llvm::enumerate(opGraph.ops)) {
    if (op->hasAttr(FTPipeDialect::kReplicateAttrName)) {
      plan.nodeReplicated.resize(numNodes, false);
      plan.nodeReplicated[node] = true;
    }
    if (op->hasAttr(FTPipeDialect::kForwardAttrName)) {
      plan.nodeForwarded.resize(numNodes, false);
      plan.nodeForwarded[node] = true;
    }
    auto stage = op->getAttrOfType<IntegerAttr>(FTPipeDialect::kStageAttrName);
    if (!stage)
      continue;
    plan.nodeStage[node] = stage.getInt();
    ++numWithStage;
  }
  if (numWithStage == 0 && !planAttr)
    return partition::Plan::singleStage(numNodes);
  if (numWithStage != numNodes) {
    for (Operation *op : opGraph.ops)
      if (!op->hasAttr(FTPipeDialect::kStageAttrName))
        return op->emitError()
               << "op has no '" << FTPipeDialect::kStageAttrName << "' while "
               << numWithStage << " of " << numNodes << " ops have one";
  }
  if (!planAttr)
    return emitError(module.getLoc())
           << "ops have stages but the module has no '"
           << FTPipeDialect::kPlanAttrName << "' to place them on devices";
  for (int64_t device : planAttr.getStageDevice())
    plan.stageDevice.push_back(device);
  plan.stageRecompute.assign(planAttr.getRecompute().begin(),
                             planAttr.getRecompute().end());
  for (auto [node, op] : llvm::enumerate(opGraph.ops))
    if (plan.nodeStage[node] >= plan.stageDevice.size())
      return op->emitError() << "op is in stage " << plan.nodeStage[node]
                             << " but the plan places only "
                             << plan.stageDevice.size() << " stages";
  return plan;
}

void mlir::ftpipe::writePlan(ModuleOp module, const OpGraph &opGraph,
                             const partition::Plan &plan, StringRef method,
                             const partition::PlanMetrics &metrics,
                             double seconds, ArrayRef<int64_t> replicas) {
  Builder builder(module.getContext());
  for (auto [node, op] : llvm::enumerate(opGraph.ops)) {
    op->setAttr(FTPipeDialect::kStageAttrName,
                builder.getI64IntegerAttr(plan.nodeStage[node]));
    if (plan.replicated(node))
      op->setAttr(FTPipeDialect::kReplicateAttrName, builder.getUnitAttr());
    else
      op->removeAttr(FTPipeDialect::kReplicateAttrName);
    if (plan.forwarded(node))
      op->setAttr(FTPipeDialect::kForwardAttrName, builder.getUnitAttr());
    else
      op->removeAttr(FTPipeDialect::kForwardAttrName);
  }
  SmallVector<int64_t> stageDevice(plan.stageDevice.begin(),
                                   plan.stageDevice.end());
  SmallVector<int64_t> memory;
  for (const partition::DeviceMetrics &device : metrics.devices)
    memory.push_back(device.memoryBytes);
  // Recomputation everywhere is what a plan without the list means.
  SmallVector<bool> recompute;
  for (const partition::StageMetrics &stage : metrics.stages)
    recompute.push_back(stage.recompute);
  if (llvm::all_of(recompute, [](bool r) { return r; }))
    recompute.clear();
  if (llvm::all_of(replicas, [](int64_t r) { return r == 1; }))
    replicas = {};
  module->setAttr(FTPipeDialect::kPlanAttrName,
                  PlanAttr::get(module.getContext(), method, stageDevice,
                                metrics.asyncMsPerMicroBatch, memory, seconds,
                                recompute, replicas));
}

FailureOr<partition::Hardware> mlir::ftpipe::readHardware(ModuleOp module) {
  auto attr =
      module->getAttrOfType<HardwareAttr>(FTPipeDialect::kHardwareAttrName);
  if (!attr)
    return emitError(module.getLoc())
           << "module has no '" << FTPipeDialect::kHardwareAttrName
           << "': run --ftpipe-annotate-costs first";
  return getHardware(attr, [&] { return emitError(module.getLoc()); });
}
