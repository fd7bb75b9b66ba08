//===- SyncRefinement.cpp - Stage boundaries moved for a synchronous step -===//
//
// Refinement balances each device's load, the async time; a synchronous step
// also pays for the stages on its critical path (a stage whose backward is
// much longer than the others' holds up every micro-batch behind it), which
// no load sees. refineForSyncStep moves the boundary between two adjacent
// stages on different devices (a re-cut of their ops in topological order)
// and keeps a move when the simulated step under the schedule gets shorter:
// candidate re-cuts are ranked by the step's lower bound, the best of each
// stage pair simulated, first with zb-auto's unsearched lists (cheap), then
// with the searched ones the plan will run.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Refinement.h"
#include "FTPipe/Partition/Simulator.h"
#include "FTPipe/Schedule/StepBound.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <set>

using namespace ftpipe::partition;
using llvm::Error;
using llvm::Expected;

Error SyncRefinementConfig::validate() const {
  if (!(maxShiftFraction > 0.0 && maxShiftFraction <= 1.0))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "sync refinement: maxShiftFraction must lie in (0, 1]");
  return Error::success();
}

/// Share of the smaller stage's compute by which two cuts kept must differ
/// in what they move.
static constexpr double kCutGrain = 0.01;

namespace {
/// A re-cut of two adjacent stages: the first `cut` ops of their union (in
/// node order) go to `from`, the rest to `to`.
struct Recut {
  StageId from = 0, to = 0;
  size_t cut = 0;
  double boundMs = 0.0;
};
} // namespace

/// Whether node `n` may change stage here (replicated nodes follow their
/// readers, forwarded ones their forwarding; neither is moved).
static bool movable(const Plan &plan, NodeId n) {
  return !plan.replicated(n) && !plan.forwarded(n);
}

/// The movable ops of stages `from` and `to`, ascending (a topological
/// order: node ids are one).
static std::vector<NodeId> unionOf(const Graph &graph, const Plan &plan,
                                   StageId from, StageId to) {
  std::vector<NodeId> nodes;
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    if (movable(plan, n) &&
        (plan.nodeStage[n] == from || plan.nodeStage[n] == to))
      nodes.push_back(n);
  return nodes;
}

/// `plan` with the first `cut` of `nodes` in `from` and the rest in `to`.
static Plan applyRecut(const Plan &plan, llvm::ArrayRef<NodeId> nodes,
                       StageId from, StageId to, size_t cut) {
  Plan out = plan;
  for (auto [i, n] : llvm::enumerate(nodes))
    out.nodeStage[n] = i < cut ? from : to;
  return out;
}

/// The re-cuts of `from` -> `to` worth bounding: ones that move at most
/// `maxShift` of the smaller stage's compute, cut no more bytes than the
/// boundary does today (a cut inside a wide layer sends, and keeps under
/// recomputation, far more than one between layers), and move some op.
static std::vector<size_t> candidateCuts(const Graph &graph, const Plan &plan,
                                         llvm::ArrayRef<NodeId> nodes,
                                         StageId from, double maxShift) {
  size_t n = nodes.size();
  std::vector<int64_t> position(graph.numNodes(), -1);
  for (auto [i, node] : llvm::enumerate(nodes))
    position[node] = int64_t(i);
  // Bytes live across each position (values made before it and read at or
  // after it, within the union), and across today's boundary.
  std::vector<double> delta(n + 1, 0.0);
  double crossing = 0.0;
  double fromMs = 0.0, toMs = 0.0;
  for (auto [i, node] : llvm::enumerate(nodes)) {
    const NodeCost &c = graph.cost(node);
    (plan.nodeStage[node] == from ? fromMs : toMs) += c.fwdMs + c.bwdMs;
    for (ValueId v : graph.outputs(node)) {
      int64_t last = -1;
      bool crosses = false;
      for (NodeId reader : graph.consumers(v)) {
        last = std::max(last, position[reader]);
        crosses |= position[reader] >= 0 &&
                   plan.nodeStage[reader] != plan.nodeStage[node];
      }
      double bytes = double(graph.valueBytes(v));
      if (last > int64_t(i)) {
        delta[i + 1] += bytes;
        delta[last + 1] -= bytes;
      }
      if (crosses)
        crossing += bytes;
    }
  }
  double limit = maxShift * std::min(fromMs, toMs);
  // The compute and the ops that cut p moves: the ops before it now in
  // `to`, those from it on now in `from`.
  double moved = fromMs;
  size_t changed = 0;
  for (NodeId node : nodes)
    changed += plan.nodeStage[node] == from;
  double live = delta[0];
  // Cuts that move within `grain` of the last one kept add nothing.
  double grain = kCutGrain * std::min(fromMs, toMs), lastMoved = -1.0;
  std::vector<size_t> cuts;
  for (size_t p = 1; p < n; ++p) {
    live += delta[p];
    NodeId crossed = nodes[p - 1];
    const NodeCost &c = graph.cost(crossed);
    bool wasFrom = plan.nodeStage[crossed] == from;
    moved += (wasFrom ? -1.0 : 1.0) * (c.fwdMs + c.bwdMs);
    changed = wasFrom ? changed - 1 : changed + 1;
    if (changed == 0 || moved > limit || live > crossing ||
        std::fabs(moved - lastMoved) < grain)
      continue;
    lastMoved = moved;
    cuts.push_back(p);
  }
  return cuts;
}

namespace {
/// What the rounds of moves share.
struct RoundContext {
  const Graph &graph;
  const Hardware &hw;
  const ObjectiveConfig &objective;
  ftpipe::schedule::Kind kind;
  double maxShiftFraction;
  /// Whether the plan fitted in memory (then every move must fit).
  bool fitted;
  ftpipe::schedule::Links links;
};
} // namespace

/// Up to `rounds` rounds of moves on `current`, whose step under `judge`'s
/// search of zb-auto's lists is `currentMs`: each bounds every re-cut,
/// simulates the lowest bound of each stage pair, lowest first, until
/// `simulations` have run, and keeps the shortest step when it beats
/// `currentMs`.
static Error moveBoundaries(const RoundContext &ctx,
                            const ftpipe::schedule::ZeroBubbleSearch &judge,
                            uint32_t rounds, uint32_t simulations,
                            Plan &current, double &currentMs,
                            SyncRefinementStats &stats) {
  const Graph &graph = ctx.graph;
  for (uint32_t round = 0; round < rounds; ++round) {
    // Stage pairs joined by an edge across devices.
    std::set<std::pair<StageId, StageId>> pairs;
    for (NodeId n = 0; n < graph.numNodes(); ++n) {
      if (!movable(current, n))
        continue;
      StageId from = current.nodeStage[n];
      for (NodeId m : graph.succs(n)) {
        StageId to = current.nodeStage[m];
        if (movable(current, m) && to != from &&
            current.stageDevice[to] != current.stageDevice[from])
          pairs.insert({from, to});
      }
    }
    // Every candidate bounded; those that cannot beat the step dropped.
    std::vector<Recut> recuts;
    for (auto [from, to] : pairs) {
      std::vector<NodeId> nodes = unionOf(graph, current, from, to);
      for (size_t cut :
           candidateCuts(graph, current, nodes, from, ctx.maxShiftFraction)) {
        Plan trial = applyRecut(current, nodes, from, to, cut);
        ++stats.recutsBounded;
        Expected<StageGraph> stages =
            buildStageGraph(graph, ctx.hw, trial, ctx.objective);
        if (!stages) { // a cycle between stages
          llvm::consumeError(stages.takeError());
          continue;
        }
        double bound = ftpipe::schedule::stepLowerBound(
                           *stages, stages->splitStages(),
                           ctx.objective.microBatches, &ctx.links)
                           .msPerMiniBatch;
        if (bound < currentMs)
          recuts.push_back({from, to, cut, bound});
      }
    }
    llvm::stable_sort(recuts, [](const Recut &a, const Recut &b) {
      return a.boundMs < b.boundMs;
    });
    // The lowest bound of each pair, lowest first, simulated when it fits.
    std::optional<Plan> best;
    double bestMs = currentMs;
    uint32_t simulated = 0;
    std::set<std::pair<StageId, StageId>> tried;
    for (const Recut &recut : recuts) {
      if (simulated == simulations)
        break;
      if (tried.count({recut.from, recut.to}))
        continue;
      Plan trial =
          applyRecut(current, unionOf(graph, current, recut.from, recut.to),
                     recut.from, recut.to, recut.cut);
      Expected<PlanMetrics> metrics =
          evaluatePlan(graph, ctx.hw, trial, ctx.objective);
      if (!metrics)
        return metrics.takeError();
      if (ctx.fitted && !metrics->memoryFits)
        continue;
      tried.insert({recut.from, recut.to});
      ++simulated;
      ++stats.simulations;
      double ms = synchronousStepMs(graph, ctx.hw, trial, ctx.objective,
                                    ctx.kind, judge);
      if (ms < bestMs * (1 - 1e-9)) {
        bestMs = ms;
        best = std::move(trial);
      }
    }
    if (!best)
      return Error::success();
    current = std::move(*best);
    currentMs = bestMs;
    ++stats.moves;
  }
  return Error::success();
}

Expected<SyncRefinementStats> ftpipe::partition::refineForSyncStep(
    const Graph &graph, const Hardware &hw, Plan &plan,
    const ObjectiveConfig &objective, schedule::Kind kind,
    const SyncRefinementConfig &config) {
  if (Error err = config.validate())
    return std::move(err);
  SyncRefinementStats stats;
  stats.initialStepMs = synchronousStepMs(graph, hw, plan, objective, kind);
  stats.finalStepMs = stats.initialStepMs;
  if (std::isinf(stats.initialStepMs) || plan.numStages() < 2)
    return stats;
  Expected<PlanMetrics> initial = evaluatePlan(graph, hw, plan, objective);
  if (!initial)
    return initial.takeError();
  RoundContext ctx{graph,
                   hw,
                   objective,
                   kind,
                   config.maxShiftFraction,
                   initial->memoryFits,
                   linksOf(hw)};

  // First judged by zb-auto's greedy and justified lists, without the
  // search of the device orders (about a quarter of its time), then by the
  // lists the plan will run, which decide.
  Plan current = plan;
  const schedule::ZeroBubbleSearch greedy{/*iterations=*/0, /*patience=*/0};
  double currentMs =
      synchronousStepMs(graph, hw, current, objective, kind, greedy);
  if (Error err =
          moveBoundaries(ctx, greedy, config.maxRounds,
                         config.simulationsPerRound, current, currentMs, stats))
    return std::move(err);
  currentMs = stats.moves
                  ? synchronousStepMs(graph, hw, current, objective, kind)
                  : stats.initialStepMs;
  if (Error err = moveBoundaries(ctx, {}, config.searchedRounds,
                                 config.searchedSimulationsPerRound, current,
                                 currentMs, stats))
    return std::move(err);
  if (currentMs < stats.initialStepMs * (1 - 1e-9)) {
    plan = std::move(current);
    stats.finalStepMs = currentMs;
  } else {
    stats.moves = 0;
  }
  return stats;
}
