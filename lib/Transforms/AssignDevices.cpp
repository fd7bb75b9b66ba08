//===- AssignDevices.cpp - Place blocks on devices --------------*- C++ -*-===//
//
// Mixed-Pipe's second phase as a pass: places the blocks written by
// ftpipe-coarsen onto devices (lib/Partition/Assignment) and records the
// resulting stages and plan.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Assignment.h"
#include "FTPipe/Transforms/Passes.h"

#include "PartitionProblem.h"
#include "PassUtils.h"

#define DEBUG_TYPE "ftpipe-assign-devices"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_ASSIGNDEVICESPASS
#include "FTPipe/Transforms/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;
using namespace mlir::ftpipe;

namespace {
struct AssignDevicesPass
    : public mlir::ftpipe::impl::AssignDevicesPassBase<AssignDevicesPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

void AssignDevicesPass::runOnOperation() {
  ModuleOp module = getOperation();
  Stopwatch stopwatch;
  FailureOr<PlanningInputs> inputs = loadPlanningInputs(
      module, getArgument(),
      {schedule, microbatches, optimizer, stashing, recompute}, function,
      devices);
  if (failed(inputs))
    return signalPassFailure();
  const ::ftpipe::schedule::TrainingSetup &setup = inputs->setup;
  const PartitionProblem &problem = inputs->problem;
  FailureOr<std::vector<uint32_t>> nodeBlock = readBlocks(problem.opGraph);
  if (failed(nodeBlock))
    return signalPassFailure();

  const partition::Graph &graph = problem.opGraph.graph;
  partition::ObjectiveConfig objective = partition::objectiveConfigOf(setup);
  llvm::Expected<partition::CoarseGraph> coarse =
      partition::buildCoarseGraph(graph, *nodeBlock);
  if (!coarse) {
    emitError(module.getLoc()) << "the blocks are not a valid coarsening: "
                               << llvm::toString(coarse.takeError());
    return signalPassFailure();
  }
  llvm::Expected<partition::Plan> plan =
      partition::assignDevices(graph, problem.hardware, *coarse, objective);
  if (!plan) {
    emitError(module.getLoc())
        << "assignment failed: " << llvm::toString(plan.takeError());
    return signalPassFailure();
  }
  if (failed(commitPlan(module, problem, *plan, "mixed-assign", objective,
                        stopwatch.seconds())))
    return signalPassFailure();
}
