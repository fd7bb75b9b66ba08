//===- SeqPipe.cpp - Contiguous stages, one per device ----------*- C++ -*-===//
//
// The Seq-Pipe baselines: contiguous stages over program order, solved
// exactly by dynamic programming or greedily (lib/Partition/SeqPipe).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/SeqPipe.h"
#include "FTPipe/Partition/Replication.h"
#include "FTPipe/Transforms/Passes.h"

#include "PartitionProblem.h"
#include "PassUtils.h"

#define DEBUG_TYPE "ftpipe-seq-pipe"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_SEQPIPEPASS
#include "FTPipe/Transforms/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;
using namespace mlir::ftpipe;

namespace {
struct SeqPipePass : public mlir::ftpipe::impl::SeqPipePassBase<SeqPipePass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

void SeqPipePass::runOnOperation() {
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

  partition::SeqPipeConfig config;
  config.objective = partition::objectiveConfigOf(setup);
  bool exact = method == SeqPipeMethod::DP;
  const partition::Graph &graph = problem.opGraph.graph;
  auto solve = [&](const partition::Graph &g,
                   const partition::ObjectiveConfig &objective)
      -> llvm::Expected<partition::Plan> {
    partition::SeqPipeConfig cfg = config;
    cfg.objective = objective;
    llvm::Expected<partition::SeqPipeResult> result =
        exact ? partition::seqPipeDP(g, problem.hardware, cfg)
              : partition::seqPipeGreedy(g, problem.hardware, cfg);
    if (!result)
      return result.takeError();
    return std::move(result->plan);
  };
  // Only greedy also plans for keeping everything: dp's search grows too
  // much when activations fill the memory.
  llvm::Expected<partition::Plan> plan =
      partition::solvePartitioning(setup.recompute, replicate, forward, graph,
                                   problem.hardware, config.objective, solve,
                                   /*tryKeeping=*/!exact);
  StringRef name = exact ? "seq-dp" : "seq-greedy";
  if (!plan) {
    emitError(module.getLoc())
        << name << ": " << llvm::toString(plan.takeError());
    return signalPassFailure();
  }
  if (failed(commitPlan(module, problem, *plan, name, config.objective,
                        stopwatch.seconds())))
    return signalPassFailure();
}
