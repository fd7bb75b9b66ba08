//===- StepBound.h - A lower bound on a synchronous step --------*- C++ -*-===//
//
// How short one synchronous step (M micro-batches, then the update) can be
// on a stage graph, whatever the lists: per device, its M micro-batches of
// work with the fill before it and the drain after it that the stage DAG
// forces (each task's earliest start and least remaining time after it,
// from the dependencies alone), relaxed to a preemptive one-device problem
// that Jackson's rule solves exactly. Memory is unbounded and each message
// takes its link time without contention (or nothing, without links), so
// the simulator's step of any list is at least this long. No MLIR here.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_SCHEDULE_STEPBOUND_H
#define FTPIPE_SCHEDULE_STEPBOUND_H

#include "FTPipe/Schedule/Simulator.h"

#include <optional>

namespace ftpipe {
namespace schedule {

struct StepLowerBound {
  /// The device whose bound is the largest.
  uint32_t device = 0;
  /// No synchronous step of these costs is shorter (ms).
  double msPerMiniBatch = 0.0;
  /// That device's work in the step (M times, or its replica 0's
  /// micro-batches times, its stages' F, I or B with recomputation, and W):
  /// the rest of the bound is fill and drain it cannot avoid.
  double busyMs = 0.0;
};

/// Per stage, from the dependencies alone (the same for every micro-batch,
/// memory unbounded, each message its link time): the earliest start of its
/// forward and of its input part (or whole backward), and the least time
/// the step still needs once each ends (a W's is 0). The bound's heads and
/// tails; zb-auto's list scheduler ranks tasks by the tails.
struct StagePaths {
  std::vector<double> forwardHeadMs, backwardHeadMs;
  std::vector<double> forwardTailMs, backwardTailMs;
};

/// Per edge of `stages` (in its order), as the simulator runs the messages:
/// the least time from the start of the producer's forward to the start of
/// the consumer's, and from the start of the consumer's input part (or
/// whole backward) to the start of the producer's (nullopt: the producer's
/// does not wait for it; only gradients it passes on come back).
struct EdgeLags {
  std::vector<double> forwardMs;
  std::vector<std::optional<double>> backwardMs;
};

/// The lags of `stages` (`split` and `links` as for stepLowerBound).
EdgeLags edgeLags(const TimedStageGraph &stages, const std::vector<bool> &split,
                  const Links *links = nullptr);

/// The paths of `stages` (`split` and `links` as for stepLowerBound).
StagePaths stagePaths(const TimedStageGraph &stages,
                      const std::vector<bool> &split,
                      const Links *links = nullptr);

/// The bound for `stages` (its costs and edges; `split` says which stages
/// split, as ScheduleConfig::split, empty: all that have I and W costs),
/// M = `microBatches` and messages over `links` (null: free). With
/// `replicas` (one factor per device, as ReplicaLayout), the bound of the
/// layout's run: device d's replica 0 runs ceil(M / r_d) of the M
/// micro-batches (m mod r_d = 0), each task with the same head and tail;
/// `links` are then the plan devices', so pass null unless every replica's
/// links are its replica 0's.
StepLowerBound stepLowerBound(const TimedStageGraph &stages,
                              const std::vector<bool> &split,
                              uint32_t microBatches,
                              const Links *links = nullptr,
                              llvm::ArrayRef<int64_t> replicas = {});

} // namespace schedule
} // namespace ftpipe

#endif // FTPIPE_SCHEDULE_STEPBOUND_H
