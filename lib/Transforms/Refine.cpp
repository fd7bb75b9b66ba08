//===- Refine.cpp - Improve a plan by moving ops ----------------*- C++ -*-===//
//
// Mixed-Pipe's third phase as a pass: uncoarsens (blocks from `ftpipe.block`
// when present, then single ops) and moves units between the plan's stages
// while the objective improves (lib/Partition/Refinement).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Analysis/PlanIO.h"
#include "FTPipe/Partition/Forwarding.h"
#include "FTPipe/Partition/Refinement.h"
#include "FTPipe/Transforms/Passes.h"

#include "PartitionProblem.h"
#include "PassUtils.h"

#define DEBUG_TYPE "ftpipe-refine"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_REFINEPASS
#include "FTPipe/Transforms/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;
using namespace mlir::ftpipe;

namespace {
struct RefinePass : public mlir::ftpipe::impl::RefinePassBase<RefinePass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

void RefinePass::runOnOperation() {
  ModuleOp module = getOperation();
  Stopwatch stopwatch;
  // The plan's hardware is already the planned-for devices.
  FailureOr<PlanningInputs> inputs = loadPlanningInputs(
      module, getArgument(),
      {schedule, microbatches, optimizer, stashing, recompute}, function,
      /*devices=*/0);
  if (failed(inputs))
    return signalPassFailure();
  const ::ftpipe::schedule::TrainingSetup &setup = inputs->setup;
  const PartitionProblem &problem = inputs->problem;
  auto planAttr = module->getAttrOfType<PlanAttr>(FTPipeDialect::kPlanAttrName);
  if (!planAttr) {
    emitError(module.getLoc())
        << "no plan to refine: run a partitioning pass first";
    return signalPassFailure();
  }
  FailureOr<partition::Plan> plan = readPlan(module, problem.opGraph);
  if (failed(plan))
    return signalPassFailure();

  // The coarsening hierarchy is not in the IR; its last level is, as blocks.
  const partition::Graph &graph = problem.opGraph.graph;
  partition::CoarseningHierarchy hierarchy;
  bool hasBlocks = llvm::all_of(problem.opGraph.ops, [](Operation *op) {
    return op->hasAttr(FTPipeDialect::kBlockAttrName);
  });
  if (hasBlocks) {
    FailureOr<std::vector<uint32_t>> nodeBlock = readBlocks(problem.opGraph);
    if (failed(nodeBlock))
      return signalPassFailure();
    llvm::Expected<partition::CoarseGraph> top =
        partition::buildCoarseGraph(graph, *nodeBlock);
    if (!top) {
      emitError(module.getLoc()) << "the blocks are not a valid coarsening: "
                                 << llvm::toString(top.takeError());
      return signalPassFailure();
    }
    partition::CoarseningLevel level;
    level.pass = "ir";
    level.numBlocks = top->numBlocks();
    level.nodeBlock = std::move(*nodeBlock);
    hierarchy.levels.push_back(std::move(level));
    hierarchy.top = std::move(*top);
  }

  partition::ObjectiveConfig objective = partition::objectiveConfigOf(setup);
  // Moves may break the chains forwarded values follow: refine without
  // forwarding, then decide it again on the refined plan.
  bool forwarded = !plan->nodeForwarded.empty();
  plan->nodeForwarded.clear();
  llvm::Expected<partition::RefinementStats> stats = partition::refinePlan(
      graph, problem.hardware, hierarchy, *plan, objective);
  if (!stats) {
    emitError(module.getLoc())
        << "refinement failed: " << llvm::toString(stats.takeError());
    return signalPassFailure();
  }
  if (setup.recompute == partition::RecomputeMode::Auto)
    if (llvm::Error error = partition::chooseRecomputation(
            graph, problem.hardware, *plan, objective)) {
      emitError(module.getLoc()) << llvm::toString(std::move(error));
      return signalPassFailure();
    }
  if (forwarded) {
    llvm::Expected<partition::Plan> again = partition::forwardSharedValues(
        graph, problem.hardware, std::move(*plan), objective);
    if (!again) {
      emitError(module.getLoc()) << llvm::toString(again.takeError());
      return signalPassFailure();
    }
    *plan = std::move(*again);
  }
  std::string method = (planAttr.getMethod() + "+refine").str();
  if (failed(commitPlan(module, problem, *plan, method, objective,
                        planAttr.getSeconds() + stopwatch.seconds())))
    return signalPassFailure();
}
