//===- ReplicaSearch.h - Pipeline depth x replicas --------------*- C++ -*-===//
//
// `replicas=auto`: for a cluster of P devices, every way to run w identical
// pipelines of depth d = P / w (PipeDream-2BW's w x d, each plan device
// replicated w times; schedule::ReplicaLayout::uniform). For each width the
// caller's partitioner plans the pipeline on d devices: plan device i runs on
// hardware device i x w, its replicas on the next w - 1 devices (as
// ReplicaLayout numbers processes). Each option is priced by the objective
// (the pipeline's async time per micro-batch over w, plus its slowest ring
// all-reduce of a device's gradients over its replicas' links, once per
// mini-batch of M micro-batches) and by the simulator (the plan's lists,
// replicated round-robin, the all-reduce at the update), and the feasible
// option with the shortest simulated mini-batch wins (ties: the narrower).
// Memory is checked per replica as for the plan's device (a replica holds
// no more). No MLIR here.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_REPLICASEARCH_H
#define FTPIPE_PARTITION_REPLICASEARCH_H

#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Partition/Simulator.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>
#include <vector>

namespace ftpipe {
namespace partition {

/// One (depth, width) tried.
struct ReplicaOption {
  uint32_t depth = 0, width = 0;
  /// The pipeline was planned, fits in memory and simulated.
  bool feasible = false;
  /// Why not, when infeasible.
  std::string failure;
  /// The plan on the pipeline's d devices (pipelineHardware).
  Plan plan;
  /// Objective per micro-batch: the plan's async time / width plus the
  /// slowest device's gradient all-reduce / M.
  double objectiveMs = 0.0;
  /// The slowest device's ring all-reduce of its gradients (0 for width 1).
  double allReduceMs = 0.0;
  /// Simulated mini-batch of M micro-batches with the replicas, and the
  /// processes' idle share.
  double simulatedMsPerMiniBatch = 0.0, idleFraction = 0.0;
  /// Per plan device, its memory under the schedule (every replica's).
  std::vector<uint64_t> memoryBytes;
};

/// Every option tried, in increasing width, and the chosen one.
struct ReplicaSearchResult {
  std::vector<ReplicaOption> options;
  /// Index of the best feasible option in `options`.
  size_t best = 0;
  const ReplicaOption &chosen() const { return options[best]; }
};

/// Plans a pipeline on the given hardware (its devices all used or not).
using ReplicaPartitioner =
    llvm::function_ref<llvm::Expected<Plan>(const Hardware &pipeline)>;

/// The devices that run replica 0 of each plan device when `hw`'s devices
/// run `width` identical pipelines: 0, w, 2w, ... Fails when width does not
/// divide the device count, or when a replica's device differs from its
/// replica 0's (speed, bandwidth, launch time or memory): replicas must
/// compute alike.
llvm::Expected<Hardware> pipelineHardware(const Hardware &hw, uint32_t width);

/// Scores `plan`, made on pipelineHardware(hw, width), run `width` times on
/// all of `hw` under `config` (its schedule and M; the async schedule is
/// simulated over 4 steps). Fails as buildStageGraph and the simulator do.
llvm::Expected<ReplicaOption> scoreReplicated(const Graph &graph,
                                              const Hardware &hw,
                                              const Plan &plan, uint32_t width,
                                              const ObjectiveConfig &config);

/// Tries every width w that divides `hw`'s device count (at most
/// `maxWidth`, 0: any), planning each pipeline with `partitioner`; an
/// option whose pipeline cannot be planned, does not fit or runs on unlike
/// replicas is kept as infeasible with the reason. Fails when no option is
/// feasible (naming each reason).
llvm::Expected<ReplicaSearchResult>
searchReplicas(const Graph &graph, const Hardware &hw,
               const ObjectiveConfig &config, ReplicaPartitioner partitioner,
               uint32_t maxWidth = 0);

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_REPLICASEARCH_H
