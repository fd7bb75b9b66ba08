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

LogicalResult mlir::ftpipe::commitPlan(ModuleOp module,
                                       const PartitionProblem &problem,
                                       const partition::Plan &plan,
                                       StringRef method,
                                       const partition::ObjectiveConfig &config,
                                       double seconds, int64_t replicas) {
  const partition::Graph &graph = problem.opGraph.graph;
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
