//===- ReplicaSearch.h - Pipeline depth x replicas --------------*- C++ -*-===//
//
// `replicas=auto`: for a cluster of P devices, every pipeline depth d from P
// down to 1, each plan device run on r_i processes with r_0 + ... + r_{d-1}
// = P (schedule::ReplicaLayout numbers them device by device). For each depth
// the caller's partitioner plans the pipeline once, on the devices that run
// replica 0 of each plan device when the P processes are spread evenly
// (evenLayout: PipeDream-2BW's w identical pipelines where d divides P), and
// two layouts are tried: that even one, and PipeDream's per-stage
// replication, where each process beyond the d goes to the device whose
// time per micro-batch it lowers most (spreadByLoad). Each option is priced by
// the objective (the busiest device's load per micro-batch over its
// replicas plus, once per mini-batch of M micro-batches, what its stages'
// ring all-reduces of gradients over them leave exposed when each starts as
// the stage's last backward ends: schedule::exposedAllReduceMs) and by the
// simulator (the plan's lists, replicated round-robin, each stage's
// all-reduce from its last backward on every replica), and the feasible
// option with the shortest simulated mini-batch wins (ties: the deeper, then
// the even layout; with the synchronous schedule the plan will run under,
// the shortest step under it). A layout whose replicated devices each hold
// one stage and pay for an all-reduce is also tried with those stages cut in
// 2 and 4 on their devices (cutForOverlap): a one-stage device's all-reduce
// starts only when its whole backward has ended, a cut one's first part
// while the rest of the backward runs; where that leaves a replicated device
// of several stages uncut, its stage whose backward ends last is cut too, as
// a further option. Each replicated layout of 2 or more devices is
// also planned uneven (shareWeightedHardware, at each of kUnevenStrengths): a
// replica pipeline with few micro-batches gains from longer first stages. No
// option simulates below the step bound (ReplicaBound.h), which the result
// carries with the chain bound. Memory is checked per replica as for the
// plan's device, again on a replay of the replica's own list (made for the
// layout, it may keep more micro-batches in flight), and with the buffer of
// its gradient all-reduce beside its weights' state
// (schedule::replicatedBytes, ftpipe-run's check too).
// No MLIR here.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_REPLICASEARCH_H
#define FTPIPE_PARTITION_REPLICASEARCH_H

#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Partition/ReplicaBound.h"
#include "FTPipe/Partition/Simulator.h"
#include "FTPipe/Schedule/Memory.h"
#include "FTPipe/Schedule/Replicas.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>
#include <vector>

namespace ftpipe {
namespace partition {

/// One layout tried.
struct ReplicaOption {
  /// The plan's devices and each one's replicas.
  schedule::ReplicaLayout layout;
  /// The plan is on `layout`'s devices: depth() of them.
  uint32_t depth() const { return uint32_t(layout.devices()); }
  /// The pipeline was planned, fits in memory and simulated.
  bool feasible = false;
  /// Why not, when infeasible.
  std::string failure;
  /// The plan on the pipeline's devices (pipelineHardware).
  Plan plan;
  /// Objective per micro-batch: the largest of each device's load over its
  /// replicas plus its exposed gradient all-reduce / M.
  double objectiveMs = 0.0;
  /// The slowest device's ring all-reduce of its gradients (0 without
  /// replicas).
  double allReduceMs = 0.0;
  /// Simulated mini-batch of M micro-batches with the replicas, and the
  /// processes' idle share. The mini-batch is at least `sharedCoresMs`.
  double simulatedMsPerMiniBatch = 0.0, idleFraction = 0.0;
  /// With searchReplicas' `syncSchedule` (the synchronous schedule the plan
  /// will run under): the same plan and layout's simulated mini-batch under
  /// it (scoreReplicated with that schedule; infinite where it cannot be
  /// simulated); 0 without one.
  double syncStepMs = 0.0;
  /// What options compete by: the step under the sync schedule where there
  /// is one, else the simulated mini-batch under the config's schedule.
  double rankMs() const {
    return syncStepMs > 0.0 ? syncStepMs : simulatedMsPerMiniBatch;
  }
  /// Where a node has fewer cores than processes (HardwareSpec::nodeCores),
  /// the largest node's work per mini-batch over its cores: its processes'
  /// simulated compute plus, per replica, its device's gradient all-reduces
  /// (a CPU's cores run them too); 0 elsewhere. The simulator runs every
  /// process at full speed at once; shared cores cannot.
  double sharedCoresMs = 0.0;
  /// No list of this plan run as `layout` simulates a shorter synchronous
  /// mini-batch (schedule::stepLowerBound with the layout: each device's
  /// replica 0 with its micro-batches, the fill before them and the drain
  /// after them that the stage DAG forces; transfers and all-reduces
  /// free); 0 under async. `boundDevice` is the plan device that sets it,
  /// `boundBusyMs` that device's replica 0's work within it.
  double boundMs = 0.0, boundBusyMs = 0.0;
  uint32_t boundDevice = 0;
  /// Per plan device, its memory under the schedule (every replica's): with
  /// replicas the largest of the plan device's, its busiest replica's list
  /// replayed and its weights' state with its all-reduce's buffer.
  std::vector<uint64_t> memoryBytes;
  /// Into how many stages each replicated device of one stage (or its last
  /// stage, with cutEveryDevice) was cut (cutForOverlap; 0: the
  /// partitioner's plan as it is).
  uint32_t cutParts = 0;
  /// The cut took each replicated device's stage whose backward ends last,
  /// on devices of several stages too (cutForOverlap's `everyDevice`).
  bool cutEveryDevice = false;
  /// The pipeline was planned on shareWeightedHardware at this strength
  /// (kUnevenStrengths): cut towards the chain bound's shares rather than
  /// balanced; 0: balanced.
  double uneven = 0.0;
};

/// Every option tried, deepest first, and the chosen one.
struct ReplicaSearchResult {
  std::vector<ReplicaOption> options;
  /// Index of the best feasible option in `options`.
  size_t best = 0;
  const ReplicaOption &chosen() const { return options[best]; }
  /// The model's compute per micro-batch (f + b of every node, + f when the
  /// config recomputes every stage and no plan chose per stage) and the fewest
  /// devices whose memory its weights, gradients and optimizer state need
  /// (ReplicaBound.h).
  double computeMs = 0.0;
  uint32_t minDepth = 1;
  /// The most of computeMs one device can hold with its weights' state
  /// (memoryCapMs); infinite when the whole model's fits.
  double capMs = 0.0;
  /// The chain bound over every replicated layout (lowestChainBound, each
  /// device's compute at most capMs), and over the pure pipeline of every
  /// device (cappedChainBoundMs); `replicatedBound` is infinite when no
  /// layout with a replica has minDepth devices.
  ChainBound replicatedBound;
  double pureBoundMs = 0.0;
  /// The step bound (ReplicaBound.h's stepBoundMs, true of every plan) at
  /// its lowest over the layouts with a replica on at least minDepth
  /// devices: no replicated option can simulate faster. Infinite when no
  /// such layout exists.
  ChainBound stepBound;
  /// One micro-batch's longest path (StepBoundFigures::pathMs[0]; 0 under
  /// async).
  double pathMs = 0.0;
  /// The highest step bound (stepBoundMs) of a replicated layout the search
  /// tried: where it is below the chosen option's simulated mini-batch, the
  /// step bound cannot show of any layout tried that it could not be
  /// chosen, so it cannot leave out a layout's planning, in any order of
  /// the layouts (0 when none was tried).
  double highestLayoutBoundMs = 0.0;
  /// The model's gradient bytes (every parameter's) and their ring
  /// all-reduce over 2 processes (0 and 1) on the hardware's links: what
  /// replicating it costs against computeMs x M.
  uint64_t gradientBytes = 0;
  double allReduceTwoMs = 0.0;
};

/// A plan device's gradients as its replicas all-reduce them: per stage on
/// the device, in the order their last backwards end (lowest height first),
/// that backward's time (with recomputation) and the stage's gradient bytes
/// (StageMetrics::gradBytes).
struct DeviceGradients {
  std::vector<double> lastBackwardMs;
  std::vector<uint64_t> bytes;
};

/// Per device of `metrics` (evaluatePlan of the plan `sg` was built from).
std::vector<DeviceGradients> deviceGradients(const StageGraph &sg,
                                             const PlanMetrics &metrics);

/// The most compute per micro-batch (f + b of each node, + f when
/// `recomputes`) that one device of `memoryBytes` can hold with the state of
/// the weights its nodes read (weights, gradients and optimizer state; a
/// frozen weight alone; a weight read by several nodes counted with its
/// first reader only), by the fractional knapsack, which is no less than
/// any set of whole nodes: a bound on what a device's share of the model can
/// compute whatever its activations. Infinite when every node fits.
double memoryCapMs(const Graph &graph, const ObjectiveConfig &config,
                   uint64_t memoryBytes, bool recomputes);

/// Plans a pipeline on the given hardware (its devices all used or not).
using ReplicaPartitioner =
    llvm::function_ref<llvm::Expected<Plan>(const Hardware &pipeline)>;

/// `processes` over `depth` plan devices as evenly as possible, the first
/// devices taking one more: 8 over 3 is 3,3,2; 8 over 4 is 2,2,2,2.
schedule::ReplicaLayout evenLayout(uint32_t depth, uint32_t processes);

/// "W" when every device has W replicas, else the factors ("3,3,2").
std::string describeLayout(const schedule::ReplicaLayout &layout);
/// The option's layout (describeLayout), " uneven" when its pipeline was
/// cut towards the chain bound's shares at the square root (" uneven 1/4"
/// at the fourth root, " uneven 1/8" at the eighth; ReplicaOption::uneven),
/// and " (cut in
/// N)" when its one-stage replicated devices were cut
/// (ReplicaOption::cutParts; " (cut in N, every device)" when devices of
/// several stages were cut too).
std::string describeOption(const ReplicaOption &option);

/// The devices that run replica 0 of each plan device when `hw`'s first
/// layout.processes() devices run `layout`: 0, r_0, r_0 + r_1, ... Fails
/// when `hw` has fewer devices, or when a replica's device differs from its
/// replica 0's (speed, bandwidth, launch time or memory): replicas must
/// compute alike.
llvm::Expected<Hardware>
pipelineHardware(const Hardware &hw, const schedule::ReplicaLayout &layout);

/// `pipeline` (pipelineHardware's devices of `layout`) with each device's
/// speed multiplied by the square root of its share of the chain bound
/// (chainSharesMs under `layout` and M) over the first device's: a
/// partitioner that balances load over speed
/// (ObjectiveConfig::scaleComputeByDevice) then gives the devices that wait
/// for fewer forwards more of the model, whose work fills the bubbles that a
/// replica's few micro-batches leave the later devices. Half-way, since the
/// bound's shares themselves overshoot under 1F1B, whose last devices
/// interleave forwards and backwards (two devices of 4 replicas at M = 8:
/// the bound's 2/3 and 1/3 simulate slower than 7/12 and 5/12; on a chain
/// of 96 layers, depth 2-8, 2-4 replicas, M = 8 and 16, the square root
/// came within -2 % to +6 % of the balanced cut, the full shares -26 % to
/// +4 %). The search keeps it only where it simulates faster. Memory,
/// launches and
/// links are the pipeline's; no speed falls below a tenth of the first
/// device's.
llvm::Expected<Hardware>
shareWeightedHardware(const Hardware &pipeline,
                      const schedule::ReplicaLayout &layout,
                      uint32_t microBatches, double strength = 0.5);

/// The strengths (powers of the shares' ratios) at which searchReplicas
/// plans each replicated layout uneven: the square, fourth and eighth root
/// (replaying 1F1B on an ideal chain, one stage a device, free transfers, a
/// third of the compute forward, at depth d with m micro-batches a replica,
/// (d, m) = (8, 4), (7, 3), (6, 3), (8, 3) and (4, 2), the fourth root came
/// 1.5-4 % below the balanced cut and the square root 1-7 % above it; the
/// models' plans are no ideal chains and Mixed-Pipe's plan moves with its
/// devices' speeds, so each is tried: on T5-3B on 8 V100s the eighth root
/// gave 1.15x where the others gave at most 1.02x).
inline constexpr double kUnevenStrengths[] = {0.5, 0.25, 0.125};

/// PipeDream's per-stage replication of a plan whose devices have the
/// given loads (ms per micro-batch) and gradients: starting from one
/// process each, every further process up to `processes` goes to the device
/// where one more replica leaves the smallest busiest time, a device's time
/// being its load over its replicas plus its exposed all-reduce over them
/// (exposedAllReduceMs on `links`, processes numbered as ReplicaLayout does)
/// over M.
schedule::ReplicaLayout spreadByLoad(llvm::ArrayRef<double> loadMs,
                                     llvm::ArrayRef<DeviceGradients> gradients,
                                     const schedule::Links &links,
                                     uint32_t processes, uint32_t microBatches);

/// `plan` with each device that `layout` replicates and that holds one stage
/// cut into `parts` stages on that device, along the nodes' topological
/// order at about equal shares of its backward time (the later nodes in the
/// new, higher-numbered stages), so that the replicas' all-reduce of a later
/// part's gradients overlaps the earlier parts' backwards. With
/// `everyDevice`, a replicated device of several stages has the one whose
/// backward ends last (that of its earliest node) cut the same way: its
/// all-reduce is the one left exposed. Replicated nodes
/// (Plan::nodeReplicated) stay where they are and count in no part. Returns
/// `plan` unchanged when no device can be cut (no replicated device of one
/// stage, or fewer nodes than parts).
Plan cutForOverlap(const Graph &graph, const Plan &plan,
                   const schedule::ReplicaLayout &layout, uint32_t parts,
                   bool everyDevice = false);

/// Scores `plan`, made on pipelineHardware(hw, layout), run as `layout` on
/// `hw` under `config` (its schedule and M; the async schedule is simulated
/// over 4 steps; ReplicaOption::sharedCoresMs where `hw`'s nodes share
/// cores). Fails as buildStageGraph and the simulator do.
llvm::Expected<ReplicaOption>
scoreReplicated(const Graph &graph, const Hardware &hw, const Plan &plan,
                const schedule::ReplicaLayout &layout,
                const ObjectiveConfig &config);

/// The least gain (as a share of the pure pipeline's simulated step) for
/// which searchReplicas chooses a layout with replicas over the pure pipeline
/// of every device: a replicated plan keeps a second copy of its stages'
/// weights, gradients and optimizer state and adds an all-reduce whose rate
/// and overlap the simulator only models, so a gain of a few percent (T5-3B
/// on 8 x RTX 2080 Ti: 1.048x) does not pay for them.
constexpr double kReplicaMinGain = 0.05;

/// The one layout that `replicas` asks of `devices` devices (processes), as
/// the passes' `replicas` spells it: a single W is W identical pipelines of
/// depth devices / W (PipeDream-2BW's; refused where W does not divide the
/// devices), several factors are one per plan device (refused where they
/// do not add up to the devices). `replicas` is not empty.
llvm::Expected<schedule::ReplicaLayout>
requestedLayout(llvm::ArrayRef<int64_t> replicas, uint32_t devices);

/// Tries every depth from `hw`'s device count P down to 1, planning each
/// pipeline with `partitioner`; with `replicas` (the passes' `replicas=W`
/// or `replicas=r0,r1,...`), only requestedLayout's one layout (its
/// pipeline, its cuts and its uneven plans; no other depth, no per-stage
/// spread). An option whose
/// pipeline cannot be planned, does not fit or runs on unlike replicas is
/// kept as infeasible with the reason. The fastest feasible option
/// (ReplicaOption::rankMs) is chosen, except that the pure pipeline stays
/// where no option with replicas beats it by kReplicaMinGain. With a
/// `syncSchedule` (a synchronous kind the plan will run under, the passes'
/// `sync-schedule`) options compete by their step under it (syncStepMs);
/// memory is still checked under `config`'s memory schedule. Fails when
/// requestedLayout refuses `replicas`, and when no option is feasible
/// (naming each reason).
llvm::Expected<ReplicaSearchResult>
searchReplicas(const Graph &graph, const Hardware &hw,
               const ObjectiveConfig &config, ReplicaPartitioner partitioner,
               llvm::ArrayRef<int64_t> replicas = {},
               std::optional<schedule::Kind> syncSchedule = std::nullopt);

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_REPLICASEARCH_H
