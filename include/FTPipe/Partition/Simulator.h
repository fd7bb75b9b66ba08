//===- Simulator.h - A plan through the pipeline simulator ------*- C++ -*-===//
//
// The planner's use of lib/Schedule's simulator (FTPipe/Schedule/Simulator.h):
// a plan's stage graph run under the objective's schedule, the hardware's
// links as the simulator's link table, and the figures by which passes that
// change a plan judge a change.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_SIMULATOR_H
#define FTPIPE_PARTITION_SIMULATOR_H

#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Schedule/Simulator.h"
#include "FTPipe/Schedule/ZeroBubble.h"

#include <optional>
#include <string>
#include <vector>

namespace ftpipe {
namespace partition {

using schedule::SimEvent;
using schedule::SimResult;
using schedule::SimulatorConfig;

/// The links of `hw` as the simulator's table.
schedule::Links linksOf(const Hardware &hw);

/// The names of `hw`'s devices, for schedule::simulationToChromeTrace.
std::vector<std::string> deviceNames(const Hardware &hw);

/// The devices of `hw` that share a node's cores (`node_cores`), as the
/// simulator takes them: per device its node, per node its cores (a node
/// without `node_cores`: one per device). Empty when no node has any.
schedule::SharedCores sharedCoresOf(const Hardware &hw);

/// schedule::simulate of `stages` on `hw`'s links, its devices sharing
/// their nodes' cores where `hw` has `node_cores` (sharedCoresOf; unless
/// `config` places them itself or has replicas).
llvm::Expected<SimResult> simulate(const StageGraph &stages, const Hardware &hw,
                                   const SimulatorConfig &config);

/// Convenience: builds the stage graph of `plan` and simulates it with the
/// schedule and micro-batches of `objective`.
llvm::Expected<SimResult> simulatePlan(const Graph &graph, const Hardware &hw,
                                       const Plan &plan,
                                       const ObjectiveConfig &objective,
                                       bool recordEvents = true);

/// The step of `plan` under the synchronous schedule `kind` as ftpipe-run
/// runs it, simulated with the schedule and micro-batches of `objective`
/// otherwise: zb-auto's lists within each device's memory under
/// `objective`'s setup (zeroBubbleAutoLists), zb-h1's within 1F1B's peak
/// (zeroBubbleH1Lists), GPipe's and 1F1B's from schedule::generate; on a
/// plan that leaves a device without a stage, the simulator's own orders.
/// The figure ftpipe-report prints for `kind` (with the default `search`;
/// searches that judge many plans may search zb-auto's lists less). Fails
/// for async (no step), when no zb-auto list fits, and as the simulator
/// does.
llvm::Expected<SimResult>
simulateSynchronousStep(const Graph &graph, const Hardware &hw,
                        const Plan &plan, const ObjectiveConfig &objective,
                        schedule::Kind kind,
                        const schedule::ZeroBubbleSearch &search = {});

/// simulateSynchronousStep's step in ms per mini-batch, or infinity when
/// the plan cannot run `kind` (no zb-auto list fits its memory) or be
/// simulated, so that such a plan ranks after every one that can: how
/// planners compare candidates by a synchronous step.
double synchronousStepMs(const Graph &graph, const Hardware &hw,
                         const Plan &plan, const ObjectiveConfig &objective,
                         schedule::Kind kind,
                         const schedule::ZeroBubbleSearch &search = {});

/// What a pass that changes a plan (gluing weight ops, attaching free ops)
/// judges the change by: the objective, the simulated time under the
/// objective's schedule, the busiest sender and whether memory fits.
struct PlanFigures {
  double objectiveMs = 0.0;
  double simulatedMs = 0.0;
  uint64_t busiestSentBytes = 0;
  bool memoryFits = false;

  /// Whether these figures are no slower than `base` by the objective and
  /// the simulator (up to rounding) and fit wherever `base` fits.
  bool noSlowerThan(const PlanFigures &base) const;
  /// Whether these figures are faster than `base` by the objective or the
  /// simulator (beyond rounding).
  bool fasterThan(const PlanFigures &base) const;
};

/// evaluatePlan and simulatePlan of `plan`, summed up.
llvm::Expected<PlanFigures> measurePlan(const Graph &graph, const Hardware &hw,
                                        const Plan &plan,
                                        const ObjectiveConfig &objective);

/// measurePlan of `plan` when its objective and memory are no worse than
/// `base`'s (PlanFigures::noSlowerThan with the simulated time left out);
/// std::nullopt, without simulating, when they are. For searches that judge
/// many trial plans by the simulator, whose runs cost the most.
llvm::Expected<std::optional<PlanFigures>>
measurePlanIfObjectiveHolds(const Graph &graph, const Hardware &hw,
                            const Plan &plan, const ObjectiveConfig &objective,
                            const PlanFigures &base);

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_SIMULATOR_H
