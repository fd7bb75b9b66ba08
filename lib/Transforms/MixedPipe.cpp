//===- MixedPipe.cpp - The whole Mixed-Pipe algorithm -----------*- C++ -*-===//
//
// Coarsening, assignment and refinement for L in {P, 2P, 3P, 4P}, keeping the
// best feasible plan (lib/Partition/MixedPipe); with replicas=auto, for each
// pipeline depth x data-parallel width, with replicas=W for W identical
// pipelines (lib/Partition/ReplicaSearch).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/MixedPipe.h"
#include "FTPipe/Partition/ReplicaSearch.h"
#include "FTPipe/Partition/Replication.h"
#include "FTPipe/Transforms/Passes.h"

#include "PassUtils.h"
#include "ReplicaPlanning.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

#define DEBUG_TYPE "ftpipe-mixed-pipe"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_MIXEDPIPEPASS
#include "FTPipe/Transforms/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;
using namespace mlir::ftpipe;

namespace {
struct MixedPipePass
    : public mlir::ftpipe::impl::MixedPipePassBase<MixedPipePass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

/// Prints every L tried (verbose=true).
static void printCandidates(const partition::MixedPipeResult &result) {
  for (const partition::MixedPipeCandidate &candidate : result.candidates)
    llvm::errs() << llvm::formatv(
        "mixed-pipe L={0,-3} {1}\n", candidate.numBlocks,
        candidate.feasible
            ? llvm::formatv(
                  "{0} stages, assigned {1:f3} ms, refined {2:f3} "
                  "ms, simulated {3:f3} ms, {4:f3} s{5}",
                  candidate.numStages, candidate.assignedMs,
                  candidate.refinedMs, candidate.simulatedMs,
                  candidate.times.totalSec(),
                  candidate.stepMs > 0
                      ? llvm::formatv(", step {0:f3} ms", candidate.stepMs)
                            .str()
                      : std::string())
                  .str()
            : "infeasible: " + candidate.failure);
}

void MixedPipePass::runOnOperation() {
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
  partition::MixedPipeConfig config;
  config.objective = partition::objectiveConfigOf(setup);
  // A plan for a synchronous step is checked for the memory of that
  // schedule, not async's, and the module records that it runs under it.
  if (syncSchedule != ::ftpipe::schedule::Kind::Async) {
    config.syncSchedule = syncSchedule.getValue();
    config.objective.memorySchedule =
        partition::memoryScheduleFor(*config.syncSchedule);
    recordSyncSchedule(module, setup, *config.syncSchedule);
  }
  // Candidates run in parallel unless the context's threading is off
  // (`--mlir-disable-threading`).
  if (!module.getContext()->isMultithreadingEnabled())
    config.threads = 1;
  const partition::Graph &graph = problem.opGraph.graph;
  // The plan on `hw`'s devices, under the recompute option.
  auto planOn =
      [&](const partition::Hardware &hw) -> llvm::Expected<partition::Plan> {
    auto solve = [&](const partition::Graph &g,
                     const partition::ObjectiveConfig &objective)
        -> llvm::Expected<partition::Plan> {
      partition::MixedPipeConfig cfg = config;
      cfg.objective = objective;
      llvm::Expected<partition::MixedPipeResult> result =
          partition::runMixedPipe(g, hw, cfg);
      if (!result)
        return result.takeError();
      if (verbose)
        printCandidates(*result);
      return std::move(result->plan);
    };
    return partition::solvePartitioning(
        setup.recompute, replicate, forward, graph, hw, config.objective, solve,
        /*tryKeeping=*/true, config.syncSchedule);
  };
  if (replicas.isNone()) {
    llvm::Expected<partition::Plan> plan = planOn(problem.hardware);
    if (!plan) {
      emitError(module.getLoc())
          << "mixed-pipe: " << llvm::toString(plan.takeError());
      return signalPassFailure();
    }
    // A plan that will run a synchronous schedule: its stage boundaries
    // moved where the step gets shorter.
    if (config.syncSchedule) {
      llvm::Expected<partition::SyncRefinementStats> refined =
          partition::refineForSyncStep(graph, problem.hardware, *plan,
                                       config.objective, *config.syncSchedule);
      if (!refined) {
        emitError(module.getLoc())
            << "mixed-pipe: " << llvm::toString(refined.takeError());
        return signalPassFailure();
      }
      if (verbose)
        llvm::errs() << llvm::formatv(
            "mixed-pipe sync refinement: step {0:f3} -> {1:f3} ms, {2} "
            "boundaries moved, {3} re-cuts bounded, {4} simulated\n",
            refined->initialStepMs, refined->finalStepMs, refined->moves,
            refined->recutsBounded, refined->simulations);
    }
    if (failed(commitPlan(module, problem, *plan, "mixed-pipe",
                          config.objective, stopwatch.seconds())))
      return signalPassFailure();
    return;
  }

  llvm::Expected<partition::ReplicaSearchResult> search =
      partition::searchReplicas(graph, problem.hardware, config.objective,
                                planOn, replicas.requested(),
                                config.syncSchedule);
  if (!search) {
    emitError(module.getLoc()) << "mixed-pipe replicas=" << replicas.str()
                               << ": " << llvm::toString(search.takeError());
    return signalPassFailure();
  }
  if (verbose)
    printReplicaSearch(*search, problem.hardware, config.syncSchedule,
                       &search->chosen());
  if (failed(commitReplicaOption(module, problem, search->chosen(),
                                 "mixed-pipe", config.objective,
                                 stopwatch.seconds())))
    return signalPassFailure();
}
