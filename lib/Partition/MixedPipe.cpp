//===- MixedPipe.cpp - The Mixed-Pipe partitioner -------------------------===//
//
// The orchestration of FTPipe's Mixed-Pipe, phase by phase as in the paper,
// with a timer per phase. The phases themselves live in Coarsening.cpp,
// Assignment.cpp and Refinement.cpp.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/MixedPipe.h"
#include "FTPipe/Partition/Simulator.h"
#include "FTPipe/Partition/Verify.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ThreadPool.h"

#include <chrono>
#include <cmath>
#include <optional>

using namespace ftpipe::partition;
using llvm::Error;
using llvm::Expected;

static Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

Error MixedPipeConfig::validate() const {
  if (Error err = objective.validate())
    return err;
  if (Error err = coarsening.validate())
    return err;
  if (Error err = assignment.validate())
    return err;
  if (Error err = refinement.validate())
    return err;
  if (stageMultipliers.empty())
    return makeError("mixed-pipe: stageMultipliers must not be empty");
  for (uint32_t m : stageMultipliers)
    if (m == 0)
      return makeError("mixed-pipe: stage multipliers must be positive");
  for (uint32_t m : pairedRunMultipliers)
    if (m == 0)
      return makeError("mixed-pipe: paired-run multipliers must be positive");
  return Error::success();
}

/// How far below its simulated time a plan's objective may lie and still
/// be trusted when a paired-runs candidate would raise it (the bar
/// for the objective agreeing with the simulator).
static constexpr double kCredibleObjectiveGap = 0.03;

namespace {
/// Seconds since construction.
class Timer {
public:
  double seconds() const {
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now();
};
} // namespace

/// Refines `plan` once more on single ops with weights' transposes and
/// reshapes glued to their readers (RefinementConfig::glueWeightOnlyOps), and
/// keeps the result when it is no slower by the objective or the simulator
/// and either faster by one of them or its busiest sender sends less: a cut
/// between a weight's transpose and its matmul sends the transposed weight,
/// and its gradient, every micro-batch.
static Error glueWeightOnlyOps(const Graph &graph, const Hardware &hw,
                               const MixedPipeConfig &config, Plan &plan) {
  RefinementConfig refinement = config.refinement;
  refinement.allLevels = false;
  refinement.glueWeightOnlyOps = true;
  refinement.attachWeightOnlyOps = true;
  Plan glued = plan;
  Expected<RefinementStats> stats = refinePlan(
      graph, hw, CoarseningHierarchy(), glued, config.objective, refinement);
  if (!stats)
    return stats.takeError();
  if (glued == plan)
    return Error::success();
  if (Error invalid = verifyPlan(graph, hw, glued, config.objective)) {
    llvm::consumeError(std::move(invalid));
    return Error::success();
  }
  Expected<PlanFigures> before = measurePlan(graph, hw, plan, config.objective);
  Expected<PlanFigures> after = measurePlan(graph, hw, glued, config.objective);
  if (!before || !after)
    return llvm::joinErrors(before.takeError(), after.takeError());
  if (after->noSlowerThan(*before) &&
      (after->fasterThan(*before) ||
       after->busiestSentBytes < before->busiestSentBytes))
    plan = std::move(glued);
  return Error::success();
}

/// -1, 0 or 1 as step `a` is shorter than, equal to (up to rounding) or
/// longer than step `b`; infinite steps are equal.
static int compareSteps(double a, double b) {
  if (a == b)
    return 0;
  double eps = std::isinf(a) || std::isinf(b) ? 0.0 : 1e-9 * std::max(a, b);
  return a < b - eps ? -1 : a > b + eps ? 1 : 0;
}

/// How far the chosen plan's simulated time must lie above its objective
/// for polishBySimulation to run: below that there is little to win back,
/// and every simulation costs.
static constexpr double kPolishGap = 0.01;

/// Polishes the chosen plan by the simulator (MixedPipeConfig::
/// polishSimulations) when its stages wait on one another.
static Error polishChoice(const Graph &graph, const Hardware &hw,
                          const MixedPipeConfig &config,
                          MixedPipeResult &result) {
  if (!config.selectBySimulation || config.polishSimulations == 0 ||
      result.simulatedMs <=
          result.metrics.asyncMsPerMicroBatch * (1 + kPolishGap))
    return Error::success();
  Plan polished = result.plan;
  Expected<size_t> moved = polishBySimulation(
      graph, hw, polished, config.objective, config.polishSimulations);
  if (!moved)
    return moved.takeError();
  if (*moved == 0)
    return Error::success();
  // The moves judge the objective's schedule; a sync step that rises
  // undoes them.
  double step = 0.0;
  if (config.syncSchedule) {
    step = synchronousStepMs(graph, hw, polished, config.objective,
                             *config.syncSchedule);
    if (compareSteps(step, result.stepMs) > 0)
      return Error::success();
  }
  result.plan = std::move(polished);
  result.polishMoves = *moved;
  result.stepMs = step;
  Expected<PlanMetrics> metrics =
      evaluatePlan(graph, hw, result.plan, config.objective);
  if (!metrics)
    return metrics.takeError();
  Expected<SimResult> sim =
      simulatePlan(graph, hw, result.plan, config.objective,
                   /*recordEvents=*/false);
  if (!sim)
    return sim.takeError();
  result.metrics = std::move(*metrics);
  result.simulatedMs = sim->msPerMicroBatch;
  return Error::success();
}

/// One candidate L: coarsen, assign, refine, verify.
static Expected<Plan> runForL(const Graph &graph, const Hardware &hw,
                              const MixedPipeConfig &config,
                              MixedPipeCandidate &cand) {
  const ObjectiveConfig &obj = config.objective;
  // Phases 1 and 2. Activations in flight make early blocks need several
  // times the memory coarsening can see; when no placement fits, coarsen
  // again with a tighter memory cap per block (finer blocks pack better).
  CoarseningConfig coarsening = config.coarsening;
  // Paired runs cut the order at compute quantiles: blocks sized by the
  // memory they really need (under recomputation, one micro-batch of
  // activations) leave a parameter-heavy part enough blocks to cut.
  coarsening.recompute = cand.pairedRuns && obj.recompute;
  coarsening.paramCopies = 2 + optimizerStateFactor(obj.optimizer);
  coarsening.maxInFlight = microBatchesInFlight(cand.numBlocks - 1, obj);
  uint32_t extra = extraWeightVersions(coarsening.maxInFlight, obj);
  coarsening.stashPerInFlight = extra + 1 == coarsening.maxInFlight && extra;
  if (extra && !coarsening.stashPerInFlight)
    coarsening.paramCopies += extra; // double-buffered: a fixed extra copy
  const double tighten[] = {1.0, 0.25, 0.0625};
  Expected<CoarseningHierarchy> hierarchy = makeError("not coarsened");
  Expected<Plan> plan = makeError("not assigned");
  for (double factor : tighten) {
    llvm::consumeError(hierarchy.takeError());
    llvm::consumeError(plan.takeError());
    coarsening.memoryFraction = config.coarsening.memoryFraction * factor;

    // Phase 1 (Sec. 4.2): coarsening to L blocks.
    Timer coarsenTimer;
    hierarchy = coarsenGraph(graph, hw, cand.numBlocks, coarsening);
    cand.times.coarsenSec += coarsenTimer.seconds();
    if (!hierarchy)
      return hierarchy.takeError();

    // Phase 2 (Sec. 4.3): blocks onto devices, blocks into stages.
    Timer assignTimer;
    plan = cand.pairedRuns ? assignPairedRuns(graph, hw, hierarchy->top, obj,
                                              config.assignment)
                           : assignDevices(graph, hw, hierarchy->top, obj,
                                           config.assignment);
    if (plan)
      if (Error err = verifyPlan(graph, hw, *plan, config.objective))
        plan = std::move(err);
    cand.times.assignSec += assignTimer.seconds();
    if (plan || config.coarsening.memoryFraction == 0.0)
      break;
  }
  if (!plan)
    return plan.takeError();
  Expected<PlanMetrics> assigned =
      evaluatePlan(graph, hw, *plan, config.objective);
  if (!assigned)
    return assigned.takeError();
  cand.assignedMs = assigned->asyncMsPerMicroBatch;

  // Phase 3 (Sec. 4.4): uncoarsening with refinement.
  Timer refineTimer;
  if (config.refine) {
    // Paired runs, new here, also keep weights' reshapes with their readers;
    // packing candidates refine as the paper does.
    RefinementConfig refinement = config.refinement;
    refinement.attachWeightOnlyOps |= cand.pairedRuns;
    Expected<RefinementStats> stats =
        refinePlan(graph, hw, *hierarchy, *plan, config.objective, refinement);
    if (!stats)
      return stats.takeError();
    if (Error err = glueWeightOnlyOps(graph, hw, config, *plan))
      return std::move(err);
  }
  cand.times.refineSec = refineTimer.seconds();
  if (Error err = verifyPlan(graph, hw, *plan, config.objective))
    return std::move(err);
  Expected<PlanMetrics> refined =
      evaluatePlan(graph, hw, *plan, config.objective);
  if (!refined)
    return refined.takeError();
  cand.refinedMs = refined->asyncMsPerMicroBatch;
  cand.numStages = plan->numStages();
  return plan;
}

Expected<MixedPipeResult>
ftpipe::partition::runMixedPipe(const Graph &graph, const Hardware &hw,
                                const MixedPipeConfig &config) {
  if (Error err = config.validate())
    return std::move(err);
  if (graph.numNodes() == 0)
    return makeError("mixed-pipe: the graph has no nodes");
  uint32_t P = hw.numDevices();

  MixedPipeResult result;
  bool found = false;
  // The candidates are independent: each runs on a thread of the pool (its
  // phases, verification and simulation), then they compete in a fixed order
  // below, so the choice does not depend on the number of threads.
  struct Job {
    MixedPipeCandidate cand;
    std::optional<Plan> plan;
    std::string error; // a failure of the simulator: the whole run fails
  };
  std::vector<Job> jobs;
  // For a synchronous step, packing also tries the paired runs' finer L:
  // more, smaller chunks per device (an interleaved placement) shorten the
  // fill and drain that a step pays, though not the async time.
  std::vector<uint32_t> packing = config.stageMultipliers;
  if (config.syncSchedule)
    for (uint32_t m : config.pairedRunMultipliers)
      if (!llvm::is_contained(packing, m))
        packing.push_back(m);
  for (bool paired : {false, true})
    for (uint32_t m : paired ? config.pairedRunMultipliers : packing) {
      Job &job = jobs.emplace_back();
      job.cand.numBlocks = m * P;
      job.cand.pairedRuns = paired;
    }
  {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(config.threads));
    for (Job &job : jobs)
      pool.async([&graph, &hw, &config, &job] {
        Expected<Plan> plan = runForL(graph, hw, config, job.cand);
        if (!plan) {
          job.cand.failure = llvm::toString(plan.takeError());
          return;
        }
        job.cand.feasible = true;
        if (config.selectBySimulation) {
          Expected<SimResult> sim =
              simulatePlan(graph, hw, *plan, config.objective,
                           /*recordEvents=*/false);
          if (!sim) {
            job.error = llvm::toString(sim.takeError());
            return;
          }
          job.cand.simulatedMs = sim->msPerMicroBatch;
        }
        if (config.syncSchedule)
          job.cand.stepMs = synchronousStepMs(
              graph, hw, *plan, config.objective, *config.syncSchedule);
        job.plan = std::move(*plan);
      });
    pool.wait();
  }
  // Candidates by placement: largest-first packing for every L, then paired
  // runs. Packing candidates compete by the simulated time (ties: the
  // objective), as before paired runs existed; a paired-runs candidate then
  // replaces the choice when the slower of its two figures (objective,
  // simulated time) is lower than the slower of the choice's, and its
  // objective is no higher unless the choice's objective lies more than 3%
  // below what it simulates at (a plan whose stages wait on one another).
  for (Job &job : jobs) {
    if (!job.error.empty())
      return makeError(job.error);
    MixedPipeCandidate &cand = job.cand;
    bool paired = cand.pairedRuns;
    result.times.coarsenSec += cand.times.coarsenSec;
    result.times.assignSec += cand.times.assignSec;
    result.times.refineSec += cand.times.refineSec;
    if (!job.plan) {
      result.candidates.push_back(std::move(cand));
      continue;
    }
    std::optional<Plan> &plan = job.plan;
    double simEps = 1e-9 * std::max(cand.simulatedMs, result.simulatedMs);
    double objEps =
        1e-9 * std::max(cand.refinedMs, result.metrics.asyncMsPerMicroBatch);
    bool simNoWorse = cand.simulatedMs <= result.simulatedMs + simEps;
    bool better;
    if (!found)
      better = true;
    else if (!paired)
      // The simulated time decides when there is one (equal to rounding:
      // the objective decides), else the objective.
      better =
          cand.simulatedMs < result.simulatedMs - simEps ||
          (simNoWorse && cand.refinedMs < result.metrics.asyncMsPerMicroBatch);
    else {
      // The slower of the two figures decides, then the objective; a
      // higher objective only replaces one that lies more than
      // kCredibleObjectiveGap below its own simulated time.
      double objective = result.metrics.asyncMsPerMicroBatch;
      double worst = std::max(cand.refinedMs, cand.simulatedMs);
      double incumbent = std::max(objective, result.simulatedMs);
      double eps = 1e-9 * std::max(worst, incumbent);
      bool credible =
          objective * (1 + kCredibleObjectiveGap) >= result.simulatedMs;
      better =
          (worst < incumbent - eps ||
           (worst <= incumbent + eps && cand.refinedMs < objective - objEps)) &&
          (cand.refinedMs <= objective + objEps || !credible);
    }
    // A synchronous step to run decides first.
    if (found && config.syncSchedule)
      if (int step = compareSteps(cand.stepMs, result.stepMs))
        better = step < 0;
    if (better) {
      Expected<PlanMetrics> metrics =
          evaluatePlan(graph, hw, *plan, config.objective);
      if (!metrics)
        return metrics.takeError();
      result.plan = std::move(*plan);
      result.metrics = std::move(*metrics);
      result.simulatedMs = cand.simulatedMs;
      result.stepMs = cand.stepMs;
      result.numBlocks = cand.numBlocks;
      result.pairedRuns = paired;
      found = true;
    }
    result.candidates.push_back(std::move(cand));
  }
  if (!found) {
    std::string why;
    for (const MixedPipeCandidate &c : result.candidates)
      if (!c.pairedRuns)
        why += llvm::formatv("; L = {0}: {1}", c.numBlocks, c.failure).str();
    uint64_t budget = 0;
    for (const Device &d : hw.devices())
      budget += d.memoryBytes;
    double stateGiB = double(graph.totalParamBytes()) *
                      (2 + optimizerStateFactor(config.objective.optimizer)) /
                      double(1ull << 30);
    double budgetGiB = double(budget) / double(1ull << 30);
    std::string what =
        stateGiB > budgetGiB
            ? llvm::formatv("weights, gradients and optimizer state alone "
                            "need {0:F2} GiB but the {1} devices have {2:F2} "
                            "GiB",
                            stateGiB, P, budgetGiB)
                  .str()
            : llvm::formatv("weights, gradients and optimizer state take "
                            "{0:F2} GiB of the {2:F2} GiB on the {1} "
                            "devices, and activations of the micro-batches "
                            "in flight (and stashed weights) need more than "
                            "the rest",
                            stateGiB, P, budgetGiB)
                  .str();
    // One line (diagnostics quote it): the cause, each L's first failure,
    // then what would help.
    return makeError(llvm::formatv(
        "mixed-pipe found no plan that fits in memory: {0}{1}; more devices, "
        "recomputation, a smaller micro-batch or a lighter optimizer may help",
        what, why));
  }
  if (Error err = polishChoice(graph, hw, config, result))
    return std::move(err);
  return result;
}
