//===- PartitionProblem.cpp - What partitioning passes share ----*- C++ -*-===//
//
// Loading a partitioning problem (and a planning pass's setup) from IR and
// committing a verified plan.
//
//===----------------------------------------------------------------------===//

#include "PartitionProblem.h"

#include "FTPipe/Analysis/PlanIO.h"
#include "FTPipe/Partition/Verify.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::ftpipe;

FailureOr<PartitionProblem>
mlir::ftpipe::loadPartitionProblem(ModuleOp module, StringRef function,
                                   unsigned devices) {
  FailureOr<func::FuncOp> func = getModelFunction(module, function);
  if (failed(func))
    return failure();
  FailureOr<OpGraph> opGraph = buildOpGraph(*func);
  if (failed(opGraph))
    return failure();
  FailureOr<partition::Hardware> hardware = readHardware(module);
  if (failed(hardware))
    return failure();
  if (devices > hardware->numDevices())
    return emitError(module.getLoc())
           << "devices=" << devices << " but hardware '" << hardware->name()
           << "' has " << hardware->numDevices() << " devices";
  if (devices != 0 && devices != hardware->numDevices()) {
    llvm::Expected<partition::Hardware> cut = hardware->firstDevices(devices);
    if (!cut)
      return emitError(module.getLoc()) << llvm::toString(cut.takeError());
    *hardware = std::move(*cut);
  }
  if (opGraph->graph.numNodes() == 0)
    return emitError(func->getLoc()) << "function has no ops to partition";
  return PartitionProblem{*func, std::move(*opGraph), std::move(*hardware)};
}

FailureOr<PlanningInputs>
mlir::ftpipe::loadPlanningInputs(ModuleOp module, StringRef pass,
                                 const SetupOptions &options,
                                 StringRef function, unsigned devices) {
  FailureOr<::ftpipe::schedule::TrainingSetup> setup =
      resolveTrainingSetup(module, pass, options);
  if (failed(setup))
    return failure();
  FailureOr<PartitionProblem> problem =
      loadPartitionProblem(module, function, devices);
  if (failed(problem))
    return failure();
  return PlanningInputs{*setup, std::move(*problem)};
}

bool mlir::ftpipe::isCopiedIntoStages(Operation *op) {
  if (op->hasAttr(FTPipeDialect::kReplicateAttrName))
    return true;
  return op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         isMemoryEffectFree(op);
}

/// `plan` without the stages whose every op is copied into its readers (a
/// stage of constants, which a partitioner may make where such ops cost
/// nothing): outlined, those stages would be empty and the stage ids would
/// skip them. Their ops join their first reader's stage (or the first stage),
/// the later stages move down.
static partition::Plan dropCopiedOnlyStages(const OpGraph &opGraph,
                                            partition::Plan plan) {
  size_t numStages = plan.stageDevice.size();
  std::vector<bool> kept(numStages, false);
  for (auto [node, op] : llvm::enumerate(opGraph.ops))
    if (!plan.replicated(node) && !isCopiedIntoStages(op))
      kept[plan.nodeStage[node]] = true;
  if (llvm::all_of(kept, [](bool k) { return k; }) ||
      llvm::none_of(kept, [](bool k) { return k; }))
    return plan;
  std::vector<partition::StageId> renumbered(numStages, 0);
  partition::StageId next = 0;
  for (size_t s = 0; s < numStages; ++s)
    if (kept[s])
      renumbered[s] = next++;
  // Readers come after what they read: from the last node back, every
  // reader's stage is final when its producer is moved.
  const partition::Graph &graph = opGraph.graph;
  for (size_t n = plan.nodeStage.size(); n-- > 0;) {
    partition::StageId &stage = plan.nodeStage[n];
    if (kept[stage]) {
      stage = renumbered[stage];
      continue;
    }
    llvm::ArrayRef<partition::NodeId> readers = graph.succs(n);
    stage = readers.empty() ? 0 : plan.nodeStage[readers.front()];
    for (partition::NodeId reader : readers)
      stage = std::min(stage, plan.nodeStage[reader]);
  }
  std::vector<partition::DeviceId> stageDevice;
  std::vector<bool> stageRecompute;
  for (size_t s = 0; s < numStages; ++s) {
    if (!kept[s])
      continue;
    stageDevice.push_back(plan.stageDevice[s]);
    if (!plan.stageRecompute.empty())
      stageRecompute.push_back(plan.stageRecompute[s]);
  }
  plan.stageDevice = std::move(stageDevice);
  plan.stageRecompute = std::move(stageRecompute);
  return plan;
}

LogicalResult
mlir::ftpipe::commitPlan(ModuleOp module, const PartitionProblem &problem,
                         const partition::Plan &planned, StringRef method,
                         const partition::ObjectiveConfig &config,
                         double seconds, ArrayRef<int64_t> replicas) {
  const partition::Graph &graph = problem.opGraph.graph;
  partition::Plan plan = dropCopiedOnlyStages(problem.opGraph, planned);
  if (llvm::Error error =
          partition::verifyPlan(graph, problem.hardware, plan, config))
    return emitError(module.getLoc())
           << "the " << method
           << " plan is not valid: " << llvm::toString(std::move(error));
  llvm::Expected<partition::PlanMetrics> metrics =
      partition::evaluatePlan(graph, problem.hardware, plan, config);
  if (!metrics)
    return emitError(module.getLoc()) << llvm::toString(metrics.takeError());
  FailureOr<HardwareAttr> hardware =
      getHardwareAttr(module.getContext(), problem.hardware,
                      [&] { return emitError(module.getLoc()); });
  if (failed(hardware))
    return failure();
  module->setAttr(FTPipeDialect::kHardwareAttrName, *hardware);
  writePlan(module, problem.opGraph, plan, method, *metrics, seconds, replicas);
  return success();
}

FailureOr<std::vector<uint32_t>>
mlir::ftpipe::readBlocks(const OpGraph &opGraph) {
  std::vector<uint32_t> nodeBlock;
  nodeBlock.reserve(opGraph.ops.size());
  for (Operation *op : opGraph.ops) {
    auto block = op->getAttrOfType<IntegerAttr>(FTPipeDialect::kBlockAttrName);
    if (!block)
      return op->emitError() << "op has no '" << FTPipeDialect::kBlockAttrName
                             << "': run --ftpipe-coarsen first";
    nodeBlock.push_back(block.getInt());
  }
  return nodeBlock;
}

void mlir::ftpipe::writeBlocks(const OpGraph &opGraph,
                               ArrayRef<uint32_t> nodeBlock) {
  if (opGraph.ops.empty())
    return;
  Builder builder(opGraph.ops.front()->getContext());
  for (auto [op, block] : llvm::zip(opGraph.ops, nodeBlock))
    op->setAttr(FTPipeDialect::kBlockAttrName,
                builder.getI64IntegerAttr(block));
}
