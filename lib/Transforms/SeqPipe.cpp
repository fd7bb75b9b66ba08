//===- SeqPipe.cpp - Contiguous stages, one per device ----------*- C++ -*-===//
//
// The Seq-Pipe baselines: contiguous stages over program order, solved
// exactly by dynamic programming or greedily (lib/Partition/SeqPipe); with
// replicas=auto (or W), the depth x replicas search (or W identical
// pipelines) with the method's plans.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Transforms/Passes.h"

#include "PassUtils.h"
#include "ReplicaPlanning.h"

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
  PartitionProblem &problem = inputs->problem;

  PartitionerSetup partitionerSetup;
  partitionerSetup.recompute = setup.recompute;
  partitionerSetup.objective = partition::objectiveConfigOf(setup);
  partitionerSetup.replicate = replicate;
  partitionerSetup.forward = forward;
  Partitioners partitioners(problem.opGraph.graph, partitionerSetup);
  StringRef name = method == SeqPipeMethod::DP ? "seq-dp" : "seq-greedy";
  if (!replicas.isNone()) {
    // The depth x replicas search (or W identical pipelines) with this
    // method's plans alone.
    llvm::Expected<partition::ReplicaChoice> choice =
        partition::searchReplicasOver(
            problem.opGraph.graph, problem.hardware, partitionerSetup.objective,
            {partitioners.named(name)}, replicas.requested());
    if (!choice) {
      emitError(module.getLoc()) << name << " replicas=" << replicas.str()
                                 << ": " << llvm::toString(choice.takeError());
      return signalPassFailure();
    }
    if (verbose)
      printReplicaChoice(getArgument(), *choice,
                         problem.opGraph.graph.numNodes(), problem.hardware,
                         replicas, {});
    if (failed(commitReplicaOption(module, problem, choice->chosenOption(),
                                   name, partitionerSetup.objective,
                                   stopwatch.seconds())))
      return signalPassFailure();
    return;
  }
  llvm::Expected<partition::Plan> plan =
      partitioners.plan(name, problem.hardware);
  if (!plan) {
    emitError(module.getLoc())
        << name << ": " << llvm::toString(plan.takeError());
    return signalPassFailure();
  }
  if (failed(commitPlan(module, problem, *plan, name,
                        partitionerSetup.objective, stopwatch.seconds())))
    return signalPassFailure();
}
