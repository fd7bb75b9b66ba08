//===- SeqPipe.h - Contiguous pipelines: exact DP and greedy ----*- C++ -*-===//
//
// FTPipe's Seq-Pipe baselines (Eliad et al., ATC'21, Sec. 5): the nodes, in
// their topological order (node ids), are cut into S <= P contiguous stages,
// one stage per device. Stage s of S runs on device P - S + s, so the last
// stage is always on the last device (with identical devices and links the
// choice does not matter; on mixed hardware it fixes the order).
//
// The objective is evaluatePlan's: the largest stage cost, FTPipe's CCO rule
// with every value that crosses a cut priced once per destination stage on
// the link between the two devices, under every device's memory limit with
// the exact in-flight depth of each stage. Both methods then shift their
// cuts while the simulated time drops and the objective does not rise
// (polishCutsBySimulation): among plans of the same objective, the
// simulator prefers some.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_SEQPIPE_H
#define FTPIPE_PARTITION_SEQPIPE_H

#include "FTPipe/Partition/Graph.h"
#include "FTPipe/Partition/Hardware.h"
#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Partition/Plan.h"

#include "llvm/Support/Error.h"

namespace ftpipe {
namespace partition {

/// Options of both Seq-Pipe methods.
struct SeqPipeConfig {
  ObjectiveConfig objective;
  /// At most this many stages (0: one per device of the hardware).
  uint32_t maxStages = 0;
  /// The exact DP gives up (with an error) after creating this many states
  /// or taking 64 times as many steps (a node step counts one plus the
  /// consumers and pending nodes it visits); graphs whose values live across
  /// many cuts, with traffic that compute cannot hide, need many states.
  uint64_t maxStates = 1'000'000;
  /// Bound the DP by the greedy result (prunes most states; off only to
  /// test the DP alone).
  bool greedyBound = true;
  /// Simulations polishCutsBySimulation may run on the method's plan (0: the
  /// plan is returned as the method found it).
  uint32_t polishSimulations = 128;

  /// Fails on a bad objective config.
  llvm::Error validate() const;
};

/// A Seq-Pipe plan and its score.
struct SeqPipeResult {
  Plan plan;
  /// evaluatePlan's async time per micro-batch of `plan`.
  double objectiveMs = 0.0;
  /// DP: steps taken (the measure of its work); greedy: targets
  /// tried.
  uint64_t work = 0;
};

/// Exact Seq-Pipe: the contiguous plan (S <= maxStages stages, stage s on
/// device P - S + s) with the smallest objective among those that fit in
/// memory. A dynamic program over cuts from the last node backwards; a state
/// is a cut, the stages formed to its right that still wait for a value from
/// its left (which of their nodes wait), and their partial traffic; states
/// that another state with the same key beats for every possible future are
/// dropped, so the search is exact. The greedy result bounds it from above,
/// and a stage never starts at a cut whose prefix needs more stages than are
/// left (by compute at that bound, or packed greedily under it and the
/// largest device memory), which never drops a state that could complete.
/// For graphs whose values are read close to where they are made (chains,
/// transformer layers) the states per cut stay few, so the work is about
/// N x (N / P) x P; values read far away multiply the states. Fails when no
/// contiguous plan fits (naming the smallest memory shortfall it met and what
/// would help) or when its budget (maxStates) is exceeded. The plan found
/// then goes through polishCutsBySimulation (config.polishSimulations), which
/// keeps its objective.
llvm::Expected<SeqPipeResult> seqPipeDP(const Graph &graph, const Hardware &hw,
                                        const SeqPipeConfig &config);

/// Greedy Seq-Pipe: binary search on a target stage time; for each target,
/// cut left to right, closing a stage when its compute plus exposed
/// incoming traffic would pass the target or its memory (with the deepest
/// in-flight count it could need) would not fit. Every candidate plan is
/// scored with evaluatePlan and the best feasible one returned. O(N log)
/// per target, about 60 targets, then polishCutsBySimulation
/// (config.polishSimulations). Fails when no target gives a feasible plan.
llvm::Expected<SeqPipeResult> seqPipeGreedy(const Graph &graph,
                                            const Hardware &hw,
                                            const SeqPipeConfig &config);

/// Shifts the cuts of `result`'s contiguous plan (a plan of either method)
/// one at a time, each by +-1, 2, 4, ... nodes within its neighbours, and
/// takes a cut's best shift when the plan still fits in memory, its
/// objective does not rise and its simulated time per micro-batch (under
/// the objective's schedule) drops (PlanFigures::noSlowerThan and
/// fasterThan); rounds over all cuts repeat until none improves or
/// `maxSimulations` simulations have run. Only shifts that pass the
/// objective are simulated. The DP's plan is the best by the objective, but
/// plans of equal objective can differ in the simulator by a few percent
/// (how transfers line up with the 1F1B order). Updates result.objectiveMs;
/// fails when the plan is not contiguous or a plan cannot be evaluated or
/// simulated.
llvm::Error polishCutsBySimulation(const Graph &graph, const Hardware &hw,
                                   const ObjectiveConfig &objective,
                                   uint32_t maxSimulations,
                                   SeqPipeResult &result);

/// The plan that cuts the nodes before each id in `cuts` (ascending, each in
/// 1..N-1), with the Seq-Pipe device rule; for tests and tools.
Plan contiguousPlan(size_t numNodes, llvm::ArrayRef<uint32_t> cuts,
                    size_t numDevices);

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_SEQPIPE_H
