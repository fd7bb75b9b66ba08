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

namespace ftpipe {
namespace schedule {

struct StepLowerBound {
  /// The device whose bound is the largest.
  uint32_t device = 0;
  /// No synchronous step of these costs is shorter (ms).
  double msPerMiniBatch = 0.0;
  /// That device's work in the step (M times its stages' F, I or B with
  /// recomputation, and W): the rest of the bound is fill and drain it
  /// cannot avoid.
  double busyMs = 0.0;
};

/// The bound for `stages` (its costs and edges; `split` says which stages
/// split, as ScheduleConfig::split, empty: all that have I and W costs),
/// M = `microBatches` and messages over `links` (null: free).
StepLowerBound stepLowerBound(const TimedStageGraph &stages,
                              const std::vector<bool> &split,
                              uint32_t microBatches,
                              const Links *links = nullptr);

} // namespace schedule
} // namespace ftpipe

#endif // FTPIPE_SCHEDULE_STEPBOUND_H
