//===- MixedPipe.cpp - The whole Mixed-Pipe algorithm -----------*- C++ -*-===//
//
// Coarsening, assignment and refinement for L in {P, 2P, 3P, 4P}, keeping the
// best feasible plan (lib/Partition/MixedPipe).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/MixedPipe.h"
#include "FTPipe/Partition/Replication.h"
#include "FTPipe/Transforms/Passes.h"

#include "PartitionProblem.h"
#include "PassUtils.h"

#include "llvm/Support/FormatVariadic.h"

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
            ? llvm::formatv("{0} stages, assigned {1:f3} ms, refined {2:f3} "
                            "ms, simulated {3:f3} ms, {4:f3} s",
                            candidate.numStages, candidate.assignedMs,
                            candidate.refinedMs, candidate.simulatedMs,
                            candidate.times.totalSec())
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
  const PartitionProblem &problem = inputs->problem;

  partition::MixedPipeConfig config;
  config.objective = partition::objectiveConfigOf(setup);
  // Candidates run in parallel unless the context's threading is off
  // (`--mlir-disable-threading`).
  if (!module.getContext()->isMultithreadingEnabled())
    config.threads = 1;
  const partition::Graph &graph = problem.opGraph.graph;
  auto solve = [&](const partition::Graph &g,
                   const partition::ObjectiveConfig &objective)
      -> llvm::Expected<partition::Plan> {
    partition::MixedPipeConfig cfg = config;
    cfg.objective = objective;
    llvm::Expected<partition::MixedPipeResult> result =
        partition::runMixedPipe(g, problem.hardware, cfg);
    if (!result)
      return result.takeError();
    if (verbose)
      printCandidates(*result);
    return std::move(result->plan);
  };
  llvm::Expected<partition::Plan> plan =
      partition::solvePartitioning(setup.recompute, replicate, forward, graph,
                                   problem.hardware, config.objective, solve,
                                   /*tryKeeping=*/true);
  if (!plan) {
    emitError(module.getLoc())
        << "mixed-pipe: " << llvm::toString(plan.takeError());
    return signalPassFailure();
  }
  if (failed(commitPlan(module, problem, *plan, "mixed-pipe", config.objective,
                        stopwatch.seconds())))
    return signalPassFailure();
}
