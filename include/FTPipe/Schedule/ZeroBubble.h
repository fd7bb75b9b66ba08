//===- ZeroBubble.h - zb-auto: lists from stage costs -----------*- C++ -*-===//
//
// zb-auto builds per-device lists of F, I, W (and B for stages that do not
// split) for any stage graph and placement, several non-adjacent stages per
// device, tied device groups and messages between any pair of stages
// included. Greedy list schedulers over (stage x micro-batch x {F, I, W}),
// one task per device at a time, fed by the stages' F/I/W costs, the
// messages' transfer times and each device's memory budget (near it, a
// ready W goes first), ranking ready tasks by kind and micro-batch or by
// their critical path to the step's end, build several candidates; so do
// ZB-H1 and 1F1B (each W right after its I). Every candidate is dry-run
// against the budget and simulated (Simulator.h); the shortest few are
// improved by forward-backward justification (each task moved into the
// latest, then the earliest, idle gap its dependencies allow), brought back
// within the budget (a waiting W sooner, a forward later) and re-checked;
// the shortest then goes through a tabu search of the devices' orders
// (swaps of neighbours on the step's longest path, ZeroBubbleSearch). The
// shortest simulated step within memory wins. No MLIR here.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_SCHEDULE_ZEROBUBBLE_H
#define FTPIPE_SCHEDULE_ZEROBUBBLE_H

#include "FTPipe/Schedule/Memory.h"
#include "FTPipe/Schedule/Simulator.h"

namespace ftpipe {
namespace schedule {

/// What a device may keep while zb-auto schedules it.
struct ZeroBubbleLimits {
  /// Per stage, the bytes of one micro-batch's activations and W buffer and
  /// a task's working sets; empty lists: memory is not counted.
  StageMemory memory;
  /// Per device, the most bytes it may hold at once (activations in flight,
  /// values waiting for their W and the running task's working set, as
  /// dryRun counts them); empty: no limit.
  std::vector<uint64_t> deviceBudgetBytes;
};

/// How long zb-auto searches beyond its greedy and justified lists.
struct ZeroBubbleSearch {
  /// Iterations of the tabu search over the devices' orders of the
  /// shortest lists that fit (swaps of neighbours on the step's longest
  /// path); 0: none.
  int iterations = 1000;
  /// It stops after this many iterations without a shorter step.
  int patience = 300;
};

/// The limits of devices whose memory `inputs` gives (one per device of
/// `graph`, each listing its stages in increasing stage id) under `setup`:
/// each stage's bytes from its device's inputs, and each device's budget
/// less what does not depend on the lists (weights, gradients, optimizer
/// state, frozen and reserved bytes; deviceMemory). The one bound of
/// zb-auto's lists, for the planner's report (the cost model's inputs) and
/// for ftpipe-run (the manifest's compiled ones). Fails when the inputs do
/// not match the graph's devices and stages.
llvm::Expected<ZeroBubbleLimits>
zeroBubbleLimits(const StageGraph &graph,
                 llvm::ArrayRef<DeviceMemoryInputs> inputs,
                 const TrainingSetup &setup);

/// zb-auto's lists for `config` (kind zb-auto; `split` says which stages
/// split) on `graph` (stages, placement, tied device groups), whose costs
/// and messages `stages` gives (fwdMs; inputMs + recomputeMs and weightMs of
/// the stages that split, bwdMs + recomputeMs of the others) over `links`.
/// The shortest lists within memory are then searched further (`search`).
/// Fails when the graph, the costs or the config is invalid, or when no
/// candidate keeps every device within its budget (names the least peak).
llvm::Expected<Schedule>
generateZeroBubbleAuto(const StageGraph &graph, const TimedStageGraph &stages,
                       const Links &links, const ScheduleConfig &config,
                       const ZeroBubbleLimits &limits = {},
                       const ZeroBubbleSearch &search = {});

/// The ZB paper's step under ZB-H1 for a pipeline bound by its busiest
/// device: M (F + B + W) of work and (p - 1)(F + B - W) idle, with F, B and
/// W that device's per-micro-batch sums over its stages (B: the input
/// parts, with recomputation; a stage that does not split counts its whole
/// backward in B) and p the devices that hold a stage. On a chain of equal
/// stages it is ZB-H1's simulated step (ZeroBubbleH1.BubbleMatchesThePaper).
struct ZeroBubbleH1Bound {
  /// The busiest device and its F, B and W (ms per micro-batch).
  uint32_t device = 0;
  double forwardMs = 0.0, inputMs = 0.0, weightMs = 0.0;
  /// M (F + B + W) + (p - 1) max(0, F + B - W), and the idle share of it.
  double msPerMiniBatch = 0.0;
  double idleFraction = 0.0;
};

/// The bound for `stages` (its costs; `split` says which stages split, as
/// ScheduleConfig::split, empty: all) and M = `microBatches`.
ZeroBubbleH1Bound zeroBubbleH1Bound(const TimedStageGraph &stages,
                                    const std::vector<bool> &split,
                                    uint32_t microBatches);

} // namespace schedule
} // namespace ftpipe

#endif // FTPIPE_SCHEDULE_ZEROBUBBLE_H
