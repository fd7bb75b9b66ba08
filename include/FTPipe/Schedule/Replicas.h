//===- Replicas.h - Data-parallel replicas of a plan's devices --*- C++ -*-===//
//
// A plan may run each of its devices (the stages it holds) on r_d processes
// at once, PipeDream's per-stage replication; 2BW's w identical pipelines
// are the case r_d = w for every device. The replicas of a device split each
// step's micro-batches round-robin (micro-batch m runs on replica m mod r_d,
// and a producer's replica m mod r sends to the consumer's replica
// m mod r'), and sum their gradients before every update, so a replicated
// run trains as the plan's run with the same global batch does.
//
// Processes are numbered device by device: device d's replica j is process
// offset(d) + j, offset(d) = r_0 + ... + r_{d-1}; the run has sum r_d
// processes. A replicated process runs its device's list of the plan's
// schedule, keeping the forwards and backwards of its micro-batches and
// every update (replicateSchedule). No MLIR here.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_SCHEDULE_REPLICAS_H
#define FTPIPE_SCHEDULE_REPLICAS_H

#include "FTPipe/Schedule/Schedule.h"

#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ftpipe {
namespace schedule {

/// Per device of a plan, how many processes run it.
struct ReplicaLayout {
  /// The most replicas of a device: a bound that keeps the process count far
  /// from overflowing (and far beyond any cluster).
  static constexpr int64_t kMaxReplicas = 1 << 16;
  /// 1 <= replicas[d] <= kMaxReplicas for every device d of the plan.
  std::vector<int64_t> replicas;

  /// Every device once (an unreplicated plan).
  static ReplicaLayout none(int64_t devices);
  /// Every device `width` times (2BW's w pipelines).
  static ReplicaLayout uniform(int64_t devices, int64_t width);

  int64_t devices() const { return static_cast<int64_t>(replicas.size()); }
  /// The processes of the run: the sum of the replicas.
  int64_t processes() const;
  /// Whether some device has more than one replica.
  bool replicated() const;
  /// The process of device `device`'s replica `replica`.
  int64_t process(int64_t device, int64_t replica) const;
  /// The device and replica that process `process` runs.
  std::pair<int64_t, int64_t> replicaOf(int64_t process) const;
  /// The replica of `device` that runs micro-batch `microbatch`.
  int64_t replicaFor(int64_t device, int64_t microbatch) const {
    return microbatch % replicas[device];
  }
  /// The processes of device `device`, ascending (its all-reduce group).
  std::vector<int64_t> group(int64_t device) const;
  /// "2,1,2": the factors, device by device.
  std::string str() const;
  /// Refuses a layout that does not fit a plan of `devices` devices run on
  /// `processes` processes: another device count, a factor below 1, or
  /// processes that do not add up.
  llvm::Error verify(int64_t devices, int64_t processes) const;
};

/// Parses "2,1,2" (one factor per device of a plan of `devices` devices),
/// "none" (every factor 1) or a single "W" (every device W times); the
/// message names what is wrong.
llvm::Expected<ReplicaLayout> parseReplicas(llvm::StringRef text,
                                            int64_t devices);

/// The lists of a replicated run, one per process: process p, device d's
/// replica j, runs d's list in `schedule` keeping the forwards and backwards
/// (B, I, W) of the micro-batches m with m mod r_d = j, and every update.
/// Each process keeps the order of its device's list, so a schedule that
/// the dry run accepts for the plan cannot deadlock replicated (a replica
/// waits only for what its device waited for in the plan's run).
Schedule replicateSchedule(const Schedule &schedule,
                           const ReplicaLayout &layout);

/// Executes replicated lists (one per process) at once in unit-time rounds,
/// as dryRun does the plan's: F(s, m) after the F(p, m) of its producers, B
/// or I(s, m) after F(s, m) and its consumers' B or I of m, W after I, and
/// U(k) on every process of a device and of the devices tied to it at once
/// (the gradient all-reduce and the tied exchange). Fails naming each stuck
/// process and the action it waits at.
llvm::Error dryRunReplicated(const StageGraph &graph,
                             const ReplicaLayout &layout,
                             const Schedule &lists);

/// `[2, 1, 2]`: the factors (the manifest's `replicas`).
llvm::json::Value toJSON(const ReplicaLayout &layout);
bool fromJSON(const llvm::json::Value &value, ReplicaLayout &layout,
              llvm::json::Path path);

} // namespace schedule
} // namespace ftpipe

#endif // FTPIPE_SCHEDULE_REPLICAS_H
