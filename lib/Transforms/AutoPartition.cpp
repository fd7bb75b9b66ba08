//===- AutoPartition.cpp - Run every partitioner, keep the best -*- C++ -*-===//
//
// FTPipe's rule "run what is feasible, take the best": Seq-Pipe dp (when
// affordable), Seq-Pipe greedy and Mixed-Pipe; every feasible plan is scored
// by the simulator under the chosen schedule and the fastest one is kept
// (with `sync-schedule`: the shortest simulated step under that schedule).
// With `replicas=auto` (or W), each partitioner's plans go through the depth
// x replicas search (or W identical pipelines) and one choice is made over
// every option (lib/Partition/ReplicaChoice.h).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Refinement.h"
#include "FTPipe/Partition/Replication.h"
#include "FTPipe/Partition/Simulator.h"
#include "FTPipe/Transforms/Passes.h"

#include "PassUtils.h"
#include "ReplicaPlanning.h"

#include "llvm/Support/FormatVariadic.h"

#include <optional>

#define DEBUG_TYPE "ftpipe-auto-partition"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_AUTOPARTITIONPASS
#include "FTPipe/Transforms/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;
using namespace mlir::ftpipe;

namespace {
struct AutoPartitionPass
    : public mlir::ftpipe::impl::AutoPartitionPassBase<AutoPartitionPass> {
  using Base::Base;
  void runOnOperation() override;
};

/// One partitioner's outcome.
struct Candidate {
  std::string method;
  std::optional<partition::Plan> plan;
  /// Why there is no plan.
  std::string failure;
  double seconds = 0.0;
  double asyncMs = 0.0, simulatedMs = 0.0, imbalance = 0.0;
  /// Simulated step under the pass's sync-schedule (ms per mini-batch;
  /// infinite when the plan cannot run it, 0 without one).
  double stepMs = 0.0;
  size_t numStages = 0;
};
} // namespace

/// Runs `solve`, timing it, and scores its plan with the objective and the
/// simulator under `config`'s schedule, and under `sync` (a synchronous
/// kind; Async: none) as ftpipe-run runs it.
static Candidate
runCandidate(StringRef method, const PartitionProblem &problem,
             const partition::ObjectiveConfig &config,
             ::ftpipe::schedule::Kind sync,
             function_ref<llvm::Expected<partition::Plan>()> solve) {
  Candidate candidate;
  candidate.method = method.str();
  Stopwatch stopwatch;
  llvm::Expected<partition::Plan> plan = solve();
  candidate.seconds = stopwatch.seconds();
  if (!plan) {
    candidate.failure = llvm::toString(plan.takeError());
    return candidate;
  }
  const partition::Graph &graph = problem.opGraph.graph;
  llvm::Expected<partition::PlanMetrics> metrics =
      partition::evaluatePlan(graph, problem.hardware, *plan, config);
  llvm::Expected<partition::SimResult> sim = partition::simulatePlan(
      graph, problem.hardware, *plan, config, /*recordEvents=*/false);
  if (!metrics || !sim) {
    candidate.failure =
        llvm::toString(llvm::joinErrors(metrics.takeError(), sim.takeError()));
    return candidate;
  }
  candidate.asyncMs = metrics->asyncMsPerMicroBatch;
  candidate.imbalance = metrics->imbalance;
  candidate.simulatedMs = sim->msPerMicroBatch;
  if (sync != ::ftpipe::schedule::Kind::Async)
    candidate.stepMs = partition::synchronousStepMs(graph, problem.hardware,
                                                    *plan, config, sync);
  candidate.numStages = plan->numStages();
  candidate.plan = std::move(*plan);
  return candidate;
}

void AutoPartitionPass::runOnOperation() {
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
  const partition::Graph &graph = problem.opGraph.graph;
  // The devices planned for (problem.hardware becomes the chosen pipeline's
  // under replicas=auto).
  const partition::Hardware hw = problem.hardware;
  partition::ObjectiveConfig objective = partition::objectiveConfigOf(setup);
  auto sync = [&]() -> std::optional<::ftpipe::schedule::Kind> {
    if (syncSchedule == ::ftpipe::schedule::Kind::Async)
      return std::nullopt;
    return syncSchedule.getValue();
  };
  // A plan for a synchronous step is checked for the memory of that
  // schedule, not async's, and the module records that it runs under it.
  if (std::optional<::ftpipe::schedule::Kind> kind = sync()) {
    objective.memorySchedule = partition::memoryScheduleFor(*kind);
    recordSyncSchedule(module, setup, *kind);
  }

  PartitionerSetup partitionerSetup;
  partitionerSetup.recompute = setup.recompute;
  partitionerSetup.objective = objective;
  partitionerSetup.replicate = replicate;
  partitionerSetup.forward = forward;
  partitionerSetup.syncSchedule = sync();
  partitionerSetup.multithreaded = getContext().isMultithreadingEnabled();
  Partitioners partitioners(graph, partitionerSetup);
  bool dpAffordable = graph.numNodes() <= dpMaxOps;
  std::string dpSkipped = llvm::formatv("skipped: {0} ops > dp-max-ops={1}",
                                        graph.numNodes(), dpMaxOps.getValue())
                              .str();

  if (!replicas.isNone()) {
    llvm::Expected<partition::ReplicaChoice> choice =
        partition::searchReplicasOver(graph, hw, objective,
                                      partitioners.all(dpMaxOps),
                                      replicas.requested(), sync());
    if (!choice) {
      emitError(module.getLoc()) << "auto-partition replicas=" << replicas.str()
                                 << ": " << llvm::toString(choice.takeError());
      return signalPassFailure();
    }
    if (!quiet) {
      std::vector<std::pair<std::string, std::string>> skipped;
      if (!dpAffordable)
        skipped.push_back({"seq-dp", dpSkipped});
      printReplicaChoice(getArgument(), *choice, graph.numNodes(), hw, replicas,
                         skipped);
    }
    if (verbose)
      for (auto [m, method] : llvm::enumerate(choice->searches)) {
        llvm::errs() << "options of " << method.method << ":\n";
        if (!method.search) {
          llvm::errs() << "  no option: " << method.failure << "\n";
          continue;
        }
        printReplicaSearch(*method.search, hw, sync(),
                           choice->chosen.method == m ? &choice->chosenOption()
                                                      : nullptr);
      }
    if (failed(commitReplicaOption(module, problem, choice->chosenOption(),
                                   choice->chosenMethod(), objective,
                                   stopwatch.seconds())))
      return signalPassFailure();
    return;
  }

  std::vector<Candidate> candidates;
  if (dpAffordable)
    candidates.push_back(
        runCandidate("seq-dp", problem, objective, syncSchedule,
                     [&] { return partitioners.plan("seq-dp", hw); }));
  else
    candidates.push_back({"seq-dp", std::nullopt, dpSkipped});
  candidates.push_back(
      runCandidate("seq-greedy", problem, objective, syncSchedule,
                   [&] { return partitioners.plan("seq-greedy", hw); }));
  candidates.push_back(
      runCandidate("mixed-pipe", problem, objective, syncSchedule,
                   [&] { return partitioners.plan("mixed-pipe", hw); }));

  // The shortest sync step first (equal infinite steps: neither runs it),
  // then the simulated time under the schedule.
  const Candidate *best = nullptr;
  auto key = [](const Candidate &c) {
    return std::make_pair(c.stepMs, c.simulatedMs);
  };
  for (const Candidate &candidate : candidates)
    if (candidate.plan && (!best || key(candidate) < key(*best)))
      best = &candidate;

  if (!quiet) {
    llvm::errs() << llvm::formatv(
        "ftpipe-auto-partition: {0} ops on {1} devices of '{2}'\n",
        graph.numNodes(), hw.numDevices(), hw.name());
    for (const Candidate &candidate : candidates) {
      if (!candidate.plan) {
        llvm::errs() << llvm::formatv("  {0,-10} no plan: {1}\n",
                                      candidate.method, candidate.failure);
        continue;
      }
      llvm::errs() << llvm::formatv(
          "  {0,-10} {1,3} stages  async {2,10:f3} ms  simulated {3,10:f3} "
          "ms/micro-batch  imbalance {4:f3}  {5:f3} s{6}{7}\n",
          candidate.method, candidate.numStages, candidate.asyncMs,
          candidate.simulatedMs, candidate.imbalance, candidate.seconds,
          candidate.stepMs > 0
              ? llvm::formatv(
                    "  {0} step {1:f3} ms/mini-batch",
                    ::ftpipe::schedule::nameOf(syncSchedule.getValue()),
                    candidate.stepMs)
                    .str()
              : std::string(),
          &candidate == best ? "  <- chosen" : "");
    }
  }

  if (!best) {
    // One short line, each method's reason as a note, and only the
    // suggestions that change something.
    InFlightDiagnostic diag = emitError(module.getLoc())
                              << "no partitioner found a plan that fits";
    for (const Candidate &candidate : candidates)
      diag.attachNote(module.getLoc())
          << candidate.method << ": " << candidate.failure;
    Diagnostic &help = diag.attachNote(module.getLoc());
    help << "what may help: more devices";
    if (!objective.recompute)
      help << ", recompute=true";
    if (objective.optimizer != ::ftpipe::schedule::Optimizer::SGD)
      help << ", an optimizer with less state (optimizer=sgd)";
    help << ", a smaller micro-batch";
    return signalPassFailure();
  }
  // A plan that will run a synchronous schedule: its stage boundaries moved
  // where the step gets shorter.
  partition::Plan plan = *best->plan;
  if (std::optional<::ftpipe::schedule::Kind> kind = sync()) {
    llvm::Expected<partition::SyncRefinementStats> refined =
        partition::refineForSyncStep(graph, hw, plan, objective, *kind);
    if (!refined) {
      emitError(module.getLoc()) << llvm::toString(refined.takeError());
      return signalPassFailure();
    }
    if (!quiet && refined->moves > 0)
      llvm::errs() << llvm::formatv(
          "  sync refinement: {0} step {1:f3} -> {2:f3} ms/mini-batch ({3} "
          "boundaries moved)\n",
          ::ftpipe::schedule::nameOf(*kind), refined->initialStepMs,
          refined->finalStepMs, refined->moves);
  }
  if (failed(commitPlan(module, problem, plan, best->method, objective,
                        stopwatch.seconds())))
    return signalPassFailure();
}
