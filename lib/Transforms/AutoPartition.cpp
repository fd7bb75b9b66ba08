//===- AutoPartition.cpp - Run every partitioner, keep the best -*- C++ -*-===//
//
// FTPipe's rule "run what is feasible, take the best": Seq-Pipe dp (when
// affordable), Seq-Pipe greedy and Mixed-Pipe; every feasible plan is scored
// by the simulator under the chosen schedule and the fastest one is kept
// (with `sync-schedule`: the shortest simulated step under that schedule).
// With `replicas=auto`, each partitioner's plans go through the depth x
// replicas search and one choice is made over every option
// (lib/Partition/ReplicaChoice.h).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/MixedPipe.h"
#include "FTPipe/Partition/Refinement.h"
#include "FTPipe/Partition/ReplicaChoice.h"
#include "FTPipe/Partition/Replication.h"
#include "FTPipe/Partition/SeqPipe.h"
#include "FTPipe/Partition/Simulator.h"
#include "FTPipe/Transforms/Passes.h"

#include "PartitionProblem.h"
#include "PassUtils.h"

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

/// The searches of replicas=auto, a line per partitioner: its pure
/// pipeline and its fastest option with replicas (simulated ms per
/// mini-batch), then the choice.
static void printReplicaChoice(const partition::ReplicaChoice &choice,
                               size_t numNodes, const partition::Hardware &hw,
                               StringRef dpSkipped) {
  llvm::errs() << llvm::formatv(
      "ftpipe-auto-partition: {0} ops on {1} devices of '{2}', replicas=auto\n",
      numNodes, hw.numDevices(), hw.name());
  if (!dpSkipped.empty())
    llvm::errs() << llvm::formatv("  {0,-10} {1}\n", "seq-dp", dpSkipped);
  auto describe = [](const partition::ReplicaOption &option) {
    return llvm::formatv("{0,10:f3} ms (depth {1}, replicas {2})",
                         option.simulatedMsPerMiniBatch, option.depth(),
                         partition::describeOption(option))
        .str();
  };
  for (auto [m, method] : llvm::enumerate(choice.searches)) {
    if (!method.search) {
      llvm::errs() << llvm::formatv("  {0,-10} no option: {1}\n", method.method,
                                    method.failure);
      continue;
    }
    auto column = [&](std::optional<size_t> o) {
      return o ? describe(method.search->options[*o]) : std::string("-");
    };
    llvm::errs() << llvm::formatv(
        "  {0,-10} pure {1}  replicated {2}{3}\n", method.method,
        column(method.bestPure), column(method.bestReplicated),
        choice.chosen.method == m ? "  <- chosen" : "");
  }
  llvm::errs() << llvm::formatv("  chosen: {0} {1}\n", choice.chosenMethod(),
                                describe(choice.chosenOption()));
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
  // schedule, not async's.
  if (std::optional<::ftpipe::schedule::Kind> kind = sync())
    objective.memorySchedule = partition::memoryScheduleFor(*kind);

  if (replicas != "none" && replicas != "auto") {
    emitError(module.getLoc())
        << "replicas must be 'none' or 'auto', got '" << replicas << "'";
    return signalPassFailure();
  }

  auto planOf = [](auto result) -> llvm::Expected<partition::Plan> {
    if (!result)
      return result.takeError();
    return std::move(result->plan);
  };
  auto seqDP = [&](const partition::Graph &g, const partition::Hardware &on,
                   const partition::ObjectiveConfig &config) {
    partition::SeqPipeConfig seqConfig;
    seqConfig.objective = config;
    return planOf(partition::seqPipeDP(g, on, seqConfig));
  };
  auto seqGreedy = [&](const partition::Graph &g, const partition::Hardware &on,
                       const partition::ObjectiveConfig &config) {
    partition::SeqPipeConfig seqConfig;
    seqConfig.objective = config;
    return planOf(partition::seqPipeGreedy(g, on, seqConfig));
  };
  auto mixed = [&](const partition::Graph &g, const partition::Hardware &on,
                   const partition::ObjectiveConfig &config) {
    partition::MixedPipeConfig mixedConfig;
    mixedConfig.objective = config;
    mixedConfig.syncSchedule = sync();
    if (!getContext().isMultithreadingEnabled())
      mixedConfig.threads = 1;
    return planOf(partition::runMixedPipe(g, on, mixedConfig));
  };
  // Each method on the given devices under the recompute option
  // (recompute=auto: chosen per stage, lib/Partition/Recomputation.h).
  // Seq-Pipe dp does not also plan for keeping everything (its search grows
  // too much when activations fill the memory).
  auto onDevices = [&](auto method, bool tryKeeping) {
    return [&, method, tryKeeping](const partition::Hardware &on) {
      auto solve = [&](const partition::Graph &g,
                       const partition::ObjectiveConfig &config) {
        return method(g, on, config);
      };
      return partition::solvePartitioning(setup.recompute, replicate, forward,
                                          graph, on, objective, solve,
                                          tryKeeping, sync());
    };
  };
  auto dp = onDevices(seqDP, false);
  auto greedy = onDevices(seqGreedy, true);
  auto mixedPipe = onDevices(mixed, true);
  bool dpAffordable = graph.numNodes() <= dpMaxOps;
  std::string dpSkipped = llvm::formatv("skipped: {0} ops > dp-max-ops={1}",
                                        graph.numNodes(), dpMaxOps.getValue())
                              .str();

  if (replicas == "auto") {
    std::vector<partition::NamedPartitioner> partitioners;
    if (dpAffordable)
      partitioners.push_back({"seq-dp", dp});
    partitioners.push_back({"seq-greedy", greedy});
    partitioners.push_back({"mixed-pipe", mixedPipe});
    llvm::Expected<partition::ReplicaChoice> choice =
        partition::searchReplicasOver(graph, hw, objective, partitioners);
    if (!choice) {
      emitError(module.getLoc()) << "auto-partition replicas=auto: "
                                 << llvm::toString(choice.takeError());
      return signalPassFailure();
    }
    if (!quiet)
      printReplicaChoice(*choice, graph.numNodes(), hw,
                         dpAffordable ? std::string() : dpSkipped);
    const partition::ReplicaOption &chosen = choice->chosenOption();
    llvm::Expected<partition::Hardware> pipeline =
        partition::pipelineHardware(hw, chosen.layout);
    if (!pipeline) {
      emitError(module.getLoc()) << llvm::toString(pipeline.takeError());
      return signalPassFailure();
    }
    // The module holds one pipeline: its plan on its devices.
    problem.hardware = std::move(*pipeline);
    if (failed(commitPlan(module, problem, chosen.plan, choice->chosenMethod(),
                          objective, stopwatch.seconds(),
                          chosen.layout.replicas)))
      return signalPassFailure();
    return;
  }

  std::vector<Candidate> candidates;
  if (dpAffordable)
    candidates.push_back(runCandidate("seq-dp", problem, objective,
                                      syncSchedule, [&] { return dp(hw); }));
  else
    candidates.push_back({"seq-dp", std::nullopt, dpSkipped});
  candidates.push_back(runCandidate("seq-greedy", problem, objective,
                                    syncSchedule, [&] { return greedy(hw); }));
  candidates.push_back(runCandidate("mixed-pipe", problem, objective,
                                    syncSchedule,
                                    [&] { return mixedPipe(hw); }));

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
