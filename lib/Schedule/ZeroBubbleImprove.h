//===- ZeroBubbleImprove.h - zb-auto: improving lists -----------*- C++ -*-===//
//
// Private to lib/Schedule. What zb-auto (ZeroBubble.cpp) does with its
// shortest greedy lists: forward-backward justification in a model of the
// step (each device serial, messages their link time, no contention), a
// tabu search of the devices' orders in that model, and the repair that
// brings improved lists back within each device's memory budget.
// ZeroBubble.cpp scores what comes out with the simulator.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_LIB_SCHEDULE_ZEROBUBBLEIMPROVE_H
#define FTPIPE_LIB_SCHEDULE_ZEROBUBBLEIMPROVE_H

#include "FTPipe/Schedule/ZeroBubble.h"

#include <optional>
#include <utility>
#include <vector>

namespace ftpipe {
namespace schedule {
namespace detail {

/// The parts of a stage's work for one micro-batch: F, I (or B for a stage
/// that does not split) and W.
enum Part : uint8_t { kForward = 0, kBackward = 1, kWeight = 2 };

/// The tasks of one step (F, I or B, W per stage and micro-batch) with the
/// least start-to-start lags between them (EdgeLags; an I after its F, a W
/// after its I), each device serial, messages without contention. Lists
/// are improved by forward-backward justification: a schedule is pushed as
/// late as the step's end allows (tasks by decreasing end, each into the
/// latest gap of its device), then as early as possible (by increasing
/// start of that, each into the earliest gap), which never lengthens the
/// step in this model and moves tasks into the idle gaps other tasks left.
class Justifier {
public:
  Justifier(const StageGraph &graph, const TimedStageGraph &sg,
            const Links &links, const ScheduleConfig &config);

  /// Up to `rounds` justifications of `lists` (one step, then U0), each
  /// kept while it shortens the step in this model; nullopt when none did.
  std::optional<Schedule> improve(const Schedule &lists, int rounds) const;
  /// Tabu search over the devices' orders of `lists` (one step, then U0),
  /// as job-shop scheduling does it (the N5 neighbourhood): on the longest
  /// path of the step in this model, only swapping the first two or the
  /// last two tasks of a block (consecutive tasks of one device, each
  /// starting when the one before it ends) can shorten it. Each of
  /// `iterations` makes the swap that gives the shortest step (also one
  /// that lengthens it, to leave a local optimum), never one that undoes a
  /// swap of the last kTabuTenure unless that beats the best step seen, and
  /// never one that deadlocks; it stops early after `patience` iterations
  /// without a shorter step. The shortest lists seen; nullopt when none is
  /// shorter than `lists`.
  std::optional<Schedule> searchOrders(const Schedule &lists, int iterations,
                                       int patience) const;
  /// `lists` changed so that each device stays within its budget (bytes
  /// counted as the dry run does, actionBytes): walking each device's list,
  /// where an action would lift it above, a W whose I already ran is moved
  /// before it (it frees its buffer), else a forward is moved after the
  /// next action that is not one. nullopt when neither helps or the lists
  /// then deadlock; `lists` as they are when they fit.
  std::optional<Schedule> withinMemory(Schedule lists,
                                       const ZeroBubbleLimits &limits) const;

private:
  int64_t id(int64_t s, int64_t m, Part part) const {
    return (s * M + m) * 3 + part;
  }
  int64_t deviceOf(int64_t task) const { return graph.device[task / 3 / M]; }
  /// Start times of `lists` run in order in this model; empty when they
  /// deadlock.
  std::vector<double> timesOf(const Schedule &lists) const;
  /// Per device, its tasks in the order of `lists` (U0 left out).
  std::vector<std::vector<int64_t>> ordersOf(const Schedule &lists) const;
  /// The step of `orders` run in this model (infinity when they deadlock),
  /// each task's start in `start`, and in `after` the task before it on its
  /// device when that one's end set its start (else -1).
  double run(const std::vector<std::vector<int64_t>> &orders,
             std::vector<double> &start, std::vector<int64_t> &after) const;
  /// A serial schedule: tasks taken by `priority` (least first) once their
  /// predecessors (`late`: successors) are placed, each into the earliest
  /// (latest) gap of its device after (before) them.
  /// `sequence` (when given): per task, when it was placed (a topological
  /// order, which breaks ties between equal starts).
  std::vector<double> place(const std::vector<double> &priority, bool late,
                            double end,
                            std::vector<int64_t> *sequence = nullptr) const;
  double endOf(const std::vector<double> &start) const {
    double end = 0.0;
    for (size_t task = 0; task < start.size(); ++task)
      if (exists[task])
        end = std::max(end, start[task] + length[task]);
    return end;
  }
  /// `orders` as lists, then U0.
  Schedule listsOf(const std::vector<std::vector<int64_t>> &orders) const;
  /// Each device's tasks by start (equal starts: by `sequence`), then U0.
  Schedule listsOf(const std::vector<double> &start,
                   const std::vector<int64_t> &sequence) const;

  const StageGraph &graph;
  const ScheduleConfig &config;
  int64_t M;
  std::vector<double> length;
  std::vector<bool> exists;
  std::vector<std::vector<std::pair<int64_t, double>>> preds, succs;
};

} // namespace detail
} // namespace schedule
} // namespace ftpipe

#endif // FTPIPE_LIB_SCHEDULE_ZEROBUBBLEIMPROVE_H
