//===- Recomputation.cpp - Per-stage choice of recomputation ------------===//
//
// chooseRecomputation scores every stage twice (keeping, recomputing) with
// evaluatePlan and then solves one small problem per device; the wrapper
// solveWithRecomputation runs a partitioner under the passes' `recompute`
// option.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Recomputation.h"
#include "FTPipe/Partition/Simulator.h"

#include <algorithm>
#include <limits>

using namespace ftpipe::partition;
using llvm::Error;
using llvm::Expected;

namespace {
/// What one stage costs either way, on its own device.
struct StageChoiceCost {
  StageId stage = 0;
  double loadKeep = 0.0, loadRecompute = 0.0;
  /// Activation bytes when keeping (all micro-batches in flight).
  uint64_t keepBytes = 0;
  /// When recomputing: stage inputs of all micro-batches in flight, and the
  /// one micro-batch rebuilt during the backward (the device's peak).
  uint64_t inputBytes = 0, peakBytes = 0;
};

/// One choice for a device's stages: bit i set = stage i keeps.
struct DeviceChoice {
  double load = 0.0;
  uint64_t memory = 0;
  unsigned kept = 0;
};
} // namespace

static DeviceChoice scoreChoice(llvm::ArrayRef<StageChoiceCost> stages,
                                const std::vector<bool> &keep, uint64_t base) {
  DeviceChoice c;
  c.memory = base;
  uint64_t peak = 0;
  for (size_t i = 0; i < stages.size(); ++i) {
    const StageChoiceCost &s = stages[i];
    if (keep[i]) {
      c.load += s.loadKeep;
      c.memory += s.keepBytes;
      ++c.kept;
    } else {
      c.load += s.loadRecompute;
      c.memory += s.inputBytes;
      peak = std::max(peak, s.peakBytes);
    }
  }
  c.memory += peak;
  return c;
}

/// Whether `a` beats `b`: lower load (beyond rounding), then fewer kept
/// stages, then less memory.
static bool betterChoice(const DeviceChoice &a, const DeviceChoice &b) {
  double eps = 1e-9 * std::max({1.0, a.load, b.load});
  if (a.load < b.load - eps)
    return true;
  if (a.load > b.load + eps)
    return false;
  if (a.kept != b.kept)
    return a.kept < b.kept;
  return a.memory < b.memory;
}

/// The best choice for one device's stages under `budget`, starting from
/// `keep` (the current choice, updated in place).
static void chooseForDevice(llvm::ArrayRef<StageChoiceCost> stages,
                            std::vector<bool> &keep, uint64_t base,
                            uint64_t budget) {
  constexpr size_t kExhaustiveLimit = 12;
  DeviceChoice best = scoreChoice(stages, keep, base);
  bool bestFits = best.memory <= budget;
  auto consider = [&](const std::vector<bool> &candidate) {
    DeviceChoice c = scoreChoice(stages, candidate, base);
    if (c.memory > budget)
      return false;
    if (bestFits && !betterChoice(c, best))
      return false;
    best = c;
    bestFits = true;
    keep = candidate;
    return true;
  };
  size_t k = stages.size();
  if (k <= kExhaustiveLimit) {
    std::vector<bool> candidate(k);
    for (uint32_t mask = 0; mask < (1u << k); ++mask) {
      for (size_t i = 0; i < k; ++i)
        candidate[i] = (mask >> i) & 1;
      consider(candidate);
    }
    return;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < k; ++i) {
      std::vector<bool> candidate = keep;
      candidate[i] = !candidate[i];
      changed |= consider(candidate);
    }
  }
}

Error ftpipe::partition::chooseRecomputation(const Graph &graph,
                                             const Hardware &hw, Plan &plan,
                                             const ObjectiveConfig &config) {
  size_t numStages = plan.numStages();
  std::vector<bool> current(numStages);
  for (StageId s = 0; s < numStages; ++s)
    current[s] = stageRecomputes(plan, config, s);
  Plan keepAll = plan, recomputeAll = plan;
  keepAll.stageRecompute.assign(numStages, false);
  recomputeAll.stageRecompute.assign(numStages, true);
  Expected<PlanMetrics> keepM = evaluatePlan(graph, hw, keepAll, config);
  if (!keepM)
    return keepM.takeError();
  Expected<PlanMetrics> rcM = evaluatePlan(graph, hw, recomputeAll, config);
  if (!rcM)
    return rcM.takeError();

  std::vector<std::vector<StageChoiceCost>> perDevice(hw.numDevices());
  std::vector<uint64_t> peakRc(hw.numDevices(), 0);
  for (StageId s = 0; s < numStages; ++s) {
    const StageMetrics &k = keepM->stages[s], &r = rcM->stages[s];
    StageChoiceCost c;
    c.stage = s;
    c.loadKeep = k.loadMs;
    c.loadRecompute = r.loadMs;
    c.keepBytes = k.activationBytes;
    c.peakBytes = k.inFlight ? k.activationBytes / k.inFlight : 0;
    c.inputBytes = r.activationBytes - c.peakBytes;
    perDevice[k.device].push_back(c);
    peakRc[k.device] = std::max(peakRc[k.device], c.peakBytes);
  }
  plan.stageRecompute.assign(numStages, true);
  for (DeviceId d = 0; d < hw.numDevices(); ++d) {
    const DeviceMetrics &dm = rcM->devices[d];
    // Everything but activations: parameters, state, stashes, the reserve.
    uint64_t base = dm.memoryBytes - dm.activationBytes;
    std::vector<bool> keep;
    for (const StageChoiceCost &c : perDevice[d])
      keep.push_back(!current[c.stage]);
    chooseForDevice(perDevice[d], keep, base, dm.budgetBytes);
    for (size_t i = 0; i < keep.size(); ++i)
      plan.stageRecompute[perDevice[d][i].stage] = !keep[i];
  }
  return Error::success();
}

/// Simulated time per micro-batch of `plan` under `config`'s schedule.
static Expected<double> simulatedMs(const Graph &graph, const Hardware &hw,
                                    const Plan &plan,
                                    const ObjectiveConfig &config) {
  Expected<SimResult> sim =
      simulatePlan(graph, hw, plan, config, /*recordEvents=*/false);
  if (!sim)
    return sim.takeError();
  return sim->msPerMicroBatch;
}

Expected<Plan> ftpipe::partition::solveWithRecomputation(
    RecomputeMode mode, const Graph &graph, const Hardware &hw,
    ObjectiveConfig config, PlanSolver solve, bool tryKeeping) {
  config.recompute = mode != RecomputeMode::Never;
  Expected<Plan> everywhere = solve(config);
  if (!everywhere || mode != RecomputeMode::Auto)
    return everywhere;
  Plan chosen = *everywhere;
  if (Error err = chooseRecomputation(graph, hw, chosen, config))
    return std::move(err);
  Expected<PlanMetrics> chosenM = evaluatePlan(graph, hw, chosen, config);
  if (!chosenM)
    return chosenM.takeError();

  if (tryKeeping) {
    ObjectiveConfig keep = config;
    keep.recompute = false;
    Expected<Plan> kept = solve(keep);
    if (!kept) {
      // Keeping everything does not fit this partitioner's plans.
      llvm::consumeError(kept.takeError());
    } else {
      if (Error err = chooseRecomputation(graph, hw, *kept, keep))
        return std::move(err);
      Expected<PlanMetrics> keptM = evaluatePlan(graph, hw, *kept, config);
      if (!keptM)
        return keptM.takeError();
      if (keptM->memoryFits &&
          keptM->asyncMsPerMicroBatch < chosenM->asyncMsPerMicroBatch) {
        chosen = std::move(*kept);
        chosenM = std::move(keptM);
      }
    }
  }

  // The objective sums loads per device; with several stages per device the
  // simulator can disagree. Keep recomputation everywhere when the choice
  // would simulate slower.
  Expected<double> autoMs = simulatedMs(graph, hw, chosen, config);
  if (!autoMs)
    return autoMs.takeError();
  Expected<double> everywhereMs = simulatedMs(graph, hw, *everywhere, config);
  if (!everywhereMs)
    return everywhereMs.takeError();
  if (*autoMs > *everywhereMs) {
    everywhere->stageRecompute.assign(everywhere->numStages(), true);
    return everywhere;
  }
  return chosen;
}

double ftpipe::partition::memoryLowerBoundMs(const Graph &graph,
                                             const Hardware &hw,
                                             const ObjectiveConfig &config,
                                             RecomputeMode mode) {
  double speedSum = 0.0, speedMax = 0.0, memory = 0.0;
  for (DeviceId d = 0; d < hw.numDevices(); ++d) {
    double speed = config.scaleComputeByDevice
                       ? hw.device(d).tflops / hw.device(0).tflops
                       : 1.0;
    speedSum += speed;
    speedMax = std::max(speedMax, speed);
    memory += double(hw.device(d).memoryBytes) -
              double(config.reservedBytesPerDevice);
  }
  // Memory left for activations once every weight is held once.
  double free = memory - double(graph.totalParamBytes()) *
                             (2 + optimizerStateFactor(config.optimizer));
  double compute = 0.0, largest = 0.0, kept = 0.0;
  std::vector<std::pair<double, double>> recomputable; // (f per byte, bytes)
  for (NodeId n = 0; n < graph.numNodes(); ++n) {
    const NodeCost &c = graph.cost(n);
    bool recompute = mode == RecomputeMode::Always;
    double t = c.fwdMs + c.bwdMs + (recompute ? c.fwdMs : 0.0);
    compute += t;
    largest = std::max(largest, t);
    if (recompute || c.actBytes == 0)
      continue;
    kept += double(c.actBytes);
    if (mode == RecomputeMode::Auto)
      recomputable.push_back(
          {c.fwdMs / double(c.actBytes), double(c.actBytes)});
  }
  // Recompute the cheapest bytes first until the rest fits.
  double excess = kept - free;
  llvm::sort(recomputable);
  for (const auto &[msPerByte, bytes] : recomputable) {
    if (excess <= 0.0)
      break;
    double part = std::min(bytes, excess);
    compute += msPerByte * part;
    excess -= part;
  }
  if (free < 0.0 || excess > 0.0)
    return std::numeric_limits<double>::infinity();
  return std::max(compute / speedSum, largest / speedMax);
}
