//===- Forwarding.cpp - Values passed along the stages that read them ----===//
//
// forwardableNodes finds the nodes whose readers already run one after the
// other; forwardSharedValues forwards their results where the busiest
// sender gains and the plan loses no time, by the objective and the
// simulator. buildStageGraph (Objective.cpp) routes forwarded values.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Forwarding.h"
#include "FTPipe/Partition/Simulator.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace ftpipe::partition;
using llvm::Expected;

Expected<std::vector<bool>>
ftpipe::partition::forwardableNodes(const Graph &graph, const Hardware &hw,
                                    const Plan &plan,
                                    const ObjectiveConfig &config) {
  Plan star = plan;
  star.nodeForwarded.clear();
  Expected<StageGraph> sg = buildStageGraph(graph, hw, star, config);
  if (!sg)
    return sg.takeError();
  std::vector<llvm::BitVector> reach = sg->reachability();
  std::vector<uint32_t> position(sg->numStages(), 0);
  for (auto [i, s] : llvm::enumerate(sg->topoOrder))
    position[s] = uint32_t(i);

  std::vector<bool> result(graph.numNodes(), false);
  std::vector<StageId> readers;
  for (NodeId n = 0; n < graph.numNodes(); ++n) {
    if (plan.replicated(n))
      continue;
    StageId src = plan.nodeStage[n];
    bool worth = false, chained = true;
    for (ValueId v : graph.outputs(n)) {
      readers.clear();
      for (NodeId c : graph.consumers(v))
        if (plan.nodeStage[c] != src)
          readers.push_back(plan.nodeStage[c]);
      llvm::sort(readers, [&](StageId a, StageId b) {
        return position[a] < position[b];
      });
      readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
      size_t elsewhere = llvm::count_if(
          readers, [&](StageId s) { return sg->device[s] != sg->device[src]; });
      worth |= elsewhere >= 2 && graph.valueBytes(v) > 0;
      for (size_t i = 1; i < readers.size(); ++i)
        chained &= reach[readers[i - 1]].test(readers[i]);
    }
    result[n] = worth && chained;
  }
  return std::move(result);
}

namespace {
/// What forwarding is judged by.
struct Score {
  double objectiveMs = 0.0;
  uint64_t busiestSenderBytes = 0;
};
} // namespace

static Expected<Score> score(const Graph &graph, const Hardware &hw,
                             const Plan &plan, const ObjectiveConfig &config) {
  Expected<PlanMetrics> m = evaluatePlan(graph, hw, plan, config);
  if (!m)
    return m.takeError();
  Score s;
  s.objectiveMs = m->asyncMsPerMicroBatch;
  s.busiestSenderBytes = m->busiestSentBytes();
  return s;
}

/// Whether `candidate` sends less from its busiest sender than `base` and is
/// no slower by the objective.
static bool gains(const Score &candidate, const Score &base) {
  double eps = 1e-9 * std::max(1.0, base.objectiveMs);
  return candidate.busiestSenderBytes < base.busiestSenderBytes &&
         candidate.objectiveMs <= base.objectiveMs + eps;
}

Expected<Plan>
ftpipe::partition::forwardSharedValues(const Graph &graph, const Hardware &hw,
                                       Plan plan,
                                       const ObjectiveConfig &config) {
  plan.nodeForwarded.clear();
  Expected<std::vector<bool>> candidates =
      forwardableNodes(graph, hw, plan, config);
  if (!candidates)
    return candidates.takeError();
  if (llvm::none_of(*candidates, [](bool c) { return c; }))
    return std::move(plan);
  Expected<Score> base = score(graph, hw, plan, config);
  if (!base)
    return base.takeError();

  // All candidates together, else one at a time, largest results first.
  Plan best = plan;
  best.nodeForwarded = *candidates;
  Expected<Score> all = score(graph, hw, best, config);
  if (!all)
    return all.takeError();
  if (!gains(*all, *base)) {
    std::vector<std::pair<uint64_t, NodeId>> order;
    for (NodeId n = 0; n < graph.numNodes(); ++n)
      if ((*candidates)[n]) {
        uint64_t bytes = 0;
        for (ValueId v : graph.outputs(n))
          bytes += graph.valueBytes(v);
        order.push_back({bytes, n});
      }
    llvm::sort(order, [](auto &a, auto &b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    best = plan;
    best.nodeForwarded.assign(graph.numNodes(), false);
    Score current = *base;
    for (auto [bytes, n] : order) {
      best.nodeForwarded[n] = true;
      Expected<Score> s = score(graph, hw, best, config);
      if (!s)
        return s.takeError();
      if (gains(*s, current))
        current = *s;
      else
        best.nodeForwarded[n] = false;
    }
    if (llvm::none_of(best.nodeForwarded, [](bool f) { return f; }))
      return std::move(plan);
  }

  // Not slower in the simulator either.
  Expected<PlanFigures> before = measurePlan(graph, hw, plan, config);
  Expected<PlanFigures> after = measurePlan(graph, hw, best, config);
  if (!before || !after)
    return llvm::joinErrors(before.takeError(), after.takeError());
  if (!after->noSlowerThan(*before))
    return std::move(plan);
  return std::move(best);
}
