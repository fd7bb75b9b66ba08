//===- SimulatedPolish.cpp - Single-op moves judged by the simulator ----===//
//
// Refinement optimises the objective, a load per device; stages that share
// devices can still wait on one another, which only the simulator sees.
// polishBySimulation moves single ops to a neighbouring stage when that
// keeps the objective and memory and lowers the simulated time.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Refinement.h"
#include "FTPipe/Partition/Simulator.h"

#include "llvm/ADT/STLExtras.h"

#include <set>

using namespace ftpipe::partition;
using llvm::Error;
using llvm::Expected;

Expected<size_t> ftpipe::partition::polishBySimulation(
    const Graph &graph, const Hardware &hw, Plan &plan,
    const ObjectiveConfig &objective, uint32_t maxSimulations) {
  if (maxSimulations == 0 || plan.numStages() < 2)
    return 0;
  Expected<PlanFigures> best = measurePlan(graph, hw, plan, objective);
  if (!best)
    return best.takeError();
  std::vector<uint32_t> stageSize(plan.numStages(), 0);
  for (StageId s : plan.nodeStage)
    ++stageSize[s];
  size_t moved = 0;
  uint32_t simulations = 0;
  bool improved = true;
  while (improved && simulations < maxSimulations) {
    improved = false;
    for (NodeId n = 0; n < graph.numNodes() && simulations < maxSimulations;
         ++n) {
      StageId home = plan.nodeStage[n];
      if (plan.replicated(n) || plan.forwarded(n) || stageSize[home] == 1)
        continue;
      std::set<StageId> targets;
      for (llvm::ArrayRef<NodeId> neighbours : {graph.preds(n), graph.succs(n)})
        for (NodeId m : neighbours)
          if (plan.nodeStage[m] != home && !plan.replicated(m))
            targets.insert(plan.nodeStage[m]);
      for (StageId to : targets) {
        if (simulations == maxSimulations)
          break;
        plan.nodeStage[n] = to;
        // A move that closes a cycle between stages fails to evaluate: it
        // is skipped. Only moves that keep the objective are simulated.
        Expected<std::optional<PlanFigures>> figures =
            measurePlanIfObjectiveHolds(graph, hw, plan, objective, *best);
        if (!figures)
          llvm::consumeError(figures.takeError());
        else if (*figures)
          ++simulations;
        if (figures && *figures && (*figures)->noSlowerThan(*best) &&
            (*figures)->fasterThan(*best)) {
          best = **figures;
          --stageSize[home];
          ++stageSize[to];
          ++moved;
          improved = true;
          break;
        }
        plan.nodeStage[n] = home;
      }
    }
  }
  return moved;
}
