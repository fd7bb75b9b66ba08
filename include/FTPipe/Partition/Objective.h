//===- Objective.h - Steady-state cost and memory of a plan -----*- C++ -*-===//
//
// The one objective every partitioning algorithm optimises, computed from
// scratch: per stage compute and communication, FTPipe's CCO rule for how
// much communication compute cannot hide, per device load and memory, the
// async steady-state time per micro-batch (the largest device load), the
// lower bound and the imbalance. Incremental code elsewhere must agree with
// evaluatePlan; verifyPlan (Verify.h) checks plans independently.
//
// Model (FTPipe, Eliad et al., ATC'21, Sec. 4; see docs/Partition.md):
//  - C_s = sum over nodes of f + b (+ f again under recomputation), scaled by
//    the speed of the stage's device relative to device 0;
//  - every value crossing into another stage costs bytes / bandwidth +
//    latency on the link between the two devices, once per destination
//    stage; comm_fwd(s) = activations received + activations sent,
//    comm_bwd(s) = gradients received + gradients sent (values that need a
//    gradient only); stages on the same device exchange for free;
//  - cost_s = C_s + max(0, comm_fwd(s) - C_s) + max(0, comm_bwd(s) - C_s);
//  - load(device) = sum of cost_s over its stages; the async steady-state
//    time per micro-batch is the largest load.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_OBJECTIVE_H
#define FTPIPE_PARTITION_OBJECTIVE_H

#include "FTPipe/Partition/Graph.h"
#include "FTPipe/Partition/Hardware.h"
#include "FTPipe/Partition/Plan.h"
#include "FTPipe/Schedule/Memory.h"
#include "FTPipe/Schedule/Simulator.h"
#include "FTPipe/Schedule/TrainingSetup.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace ftpipe {
namespace partition {

using schedule::Kind;
using schedule::Optimizer;
using schedule::WeightVersions;

using schedule::optimizerStateFactor;

/// Everything the objective and memory model depend on besides graph,
/// hardware and plan. Defaults: FTPipe's fine-tuning setup (async with weight
/// stashing, Adam, no recomputation, 8 micro-batches per mini-batch).
struct ObjectiveConfig {
  Kind schedule = Kind::Async;
  /// The schedule whose micro-batches in flight and weight versions memory
  /// is checked under, when it is not `schedule`: a plan made for a
  /// synchronous step (sync-schedule) is checked for what that schedule
  /// keeps (memoryScheduleFor), while its objective stays the async time.
  std::optional<Kind> memorySchedule;
  Optimizer optimizer = Optimizer::Adam;
  WeightVersions versioning = WeightVersions::Stash;
  /// Keep only stage inputs in forward and recompute the stage's forward
  /// just before its backward: for every stage of a plan without a
  /// per-stage choice (Plan::stageRecompute empty).
  bool recompute = false;
  /// Micro-batches per mini-batch (M), for GPipe and 1F1B (and to express
  /// async time per mini-batch).
  uint32_t microBatches = 8;
  /// Bytes kept free on every device (CUDA context, workspace).
  uint64_t reservedBytesPerDevice = 0;
  /// Scale node times by tflops(device 0) / tflops(stage's device), for
  /// heterogeneous clusters; node costs are taken to be measured on device 0.
  bool scaleComputeByDevice = true;

  /// Fails when microBatches is 0.
  llvm::Error validate() const;

  /// The schedule memory is checked under: memorySchedule, else schedule.
  Kind memoryKind() const { return memorySchedule.value_or(schedule); }
};

/// Whether stage `s` of `plan` recomputes its forward: the plan's own
/// choice when it has one, else `config.recompute`.
inline bool stageRecomputes(const Plan &plan, const ObjectiveConfig &config,
                            StageId s) {
  return plan.stageRecompute.empty() ? config.recompute
                                     : bool(plan.stageRecompute[s]);
}

//===----------------------------------------------------------------------===//
// Stage graph
//===----------------------------------------------------------------------===//

/// Where the replicated nodes of `plan` (Plan::nodeReplicated) are computed:
/// result[n], for a replicated node n, lists (ascending) the stages holding a
/// non-replicated node that reads one of n's results, directly or through
/// other replicated nodes; empty for other nodes, and all empty when the
/// plan replicates nothing. Fails when the list has the wrong length or a
/// replicated node reads a value made by a node that is not replicated.
llvm::Expected<std::vector<std::vector<StageId>>>
replicaStages(const Graph &graph, const Plan &plan);

using schedule::StageEdge;

/// A plan collapsed to stages: what the simulator runs (its costs and
/// traffic, schedule::TimedStageGraph) and what the objective scores, with
/// the activation memory of each stage.
struct StageGraph : schedule::TimedStageGraph {
  /// Per stage: bytes of activations kept per micro-batch in flight (all
  /// nodes' actBytes, or only the stage inputs under recomputation) and, under
  /// recomputation, the bytes of one micro-batch rebuilt during backward.
  std::vector<uint64_t> keptBytesPerMicroBatch, recomputePeakBytes;
  /// Per stage, the bytes a split backward's input part keeps for its weight
  /// part per micro-batch (the cost model's estimate: for each op with a
  /// weight part, its saved activations and its result's gradient); its
  /// input and weight parts' times are inputMs and weightMs (bwdMs split by
  /// the ops' NodeCost::bwdWeightMs).
  std::vector<uint64_t> weightBufferBytesPerMicroBatch;
  /// Which stages a zero-bubble schedule splits: those whose weight part
  /// has work (as ftpipe-differentiate splits them).
  std::vector<bool> splitStages() const;

  /// Per stage, the stages reachable from it along edges (itself not
  /// included).
  std::vector<llvm::BitVector> reachability() const;

  /// Time to move an edge's forward (or backward) traffic over its link.
  double fwdTransferMs(const StageEdge &e, const Hardware &hw) const;
  double bwdTransferMs(const StageEdge &e, const Hardware &hw) const;
  /// Time to move `bytes` in `tensors` messages from stage `from`'s device
  /// to stage `to`'s (0 on one device).
  double transferMs(uint64_t bytes, uint32_t tensors, StageId from, StageId to,
                    const Hardware &hw) const;
};

/// Where each reader of a forwarded value receives it from, given the
/// devices of the stages reading it (the producer's stage excluded) in the
/// order the stages run: result[i] is the index of an earlier reader, the
/// latest one on reader i's own device if there is one (a hand-off on the
/// device, no transfer), else reader i - 1; result[0] is ~0 (the first
/// reader receives it from the producer).
std::vector<size_t> forwardingSources(llvm::ArrayRef<DeviceId> readerDevices);

/// Collapses `plan` into its stage graph. A replicated node counts in every
/// stage it is computed in (replicaStages) and its results never cross. A
/// forwarded node's results (Plan::nodeForwarded) cross from its stage to
/// the first stage reading them and to every later reader from an earlier
/// one (forwardingSources, readers in topological order); each reader must
/// be reachable from the one before it without that value's edges, so
/// forwarding never changes which stages depend on which, nor their heights.
/// Fails when the plan does not match the graph or hardware (sizes, ids, a
/// recompute, replication or forwarding list of the wrong length, a
/// replicated node reading a value that is sent, a forwarded value whose
/// readers do not depend on one another) or when the stage graph has a cycle
/// (naming the stages on it). Empty stages are allowed here (verifyPlan rejects
/// them).
llvm::Expected<StageGraph> buildStageGraph(const Graph &graph,
                                           const Hardware &hw, const Plan &plan,
                                           const ObjectiveConfig &config);

//===----------------------------------------------------------------------===//
// Metrics
//===----------------------------------------------------------------------===//

/// Micro-batches in flight on a stage of the given height under `config`'s
/// memory schedule (schedule::microBatchesInFlight).
inline uint32_t microBatchesInFlight(uint32_t height,
                                     const ObjectiveConfig &config) {
  return schedule::microBatchesInFlight(height, config.memoryKind(),
                                        config.microBatches);
}

/// Weight versions a stage keeps beyond the live one
/// (schedule::extraWeightVersions).
inline uint32_t extraWeightVersions(uint32_t inFlight,
                                    const ObjectiveConfig &config) {
  return schedule::extraWeightVersions(inFlight, config.memoryKind(),
                                       config.versioning);
}

/// The schedule whose memory a plan for synchronous `schedule` is checked
/// under (ObjectiveConfig::memorySchedule): the schedule itself, but zb-h1's
/// (1F1B's micro-batches in flight) for zb-auto, whose lists adapt to the
/// memory and include zb-h1's and 1F1B's, which fit within that.
inline Kind memoryScheduleFor(Kind schedule) {
  return schedule == Kind::ZeroBubbleAuto ? Kind::ZeroBubbleH1 : schedule;
}

/// The training setup `config` checks memory for (its memory schedule;
/// recomputation as the config says it, without a plan's per-stage choice).
schedule::TrainingSetup trainingSetupOf(const ObjectiveConfig &config);

/// The objective configuration of `setup` (zb-auto's memory checked under
/// memoryScheduleFor, zb-h1's counts). Under recompute=auto plans are
/// first solved with recomputation everywhere (and a plan carries its own
/// choice per stage, which overrides this).
ObjectiveConfig objectiveConfigOf(const schedule::TrainingSetup &setup);

/// Per-stage figures of evaluatePlan, for one micro-batch.
struct StageMetrics {
  DeviceId device = 0;
  /// f + b (+ recompute) on the stage's device.
  double computeMs = 0.0;
  double commFwdMs = 0.0, commBwdMs = 0.0;
  /// max(0, commFwd - compute) + max(0, commBwd - compute).
  double exposedCommMs = 0.0;
  /// compute + exposed communication.
  double loadMs = 0.0;
  /// Bytes sent and received per micro-batch, forward and backward together,
  /// to and from stages on other devices.
  uint64_t sentBytes = 0, receivedBytes = 0;
  uint32_t inFlight = 0;
  uint64_t activationBytes = 0;
  /// Gradients of the trained parameters whose tallest reader on the
  /// device is this stage (each parameter once per device): what a
  /// replicated device all-reduces when the stage's last backward ends.
  uint64_t gradBytes = 0;
  /// Whether the stage recomputes its forward before its backward.
  bool recompute = false;
};

/// Per-device figures of evaluatePlan: sums over the device's stages, and
/// its memory.
struct DeviceMetrics {
  double computeMs = 0.0, exposedCommMs = 0.0, loadMs = 0.0;
  uint32_t numStages = 0;
  /// Distinct parameters read by nodes on the device (tied ones once).
  uint64_t paramBytes = 0;
  uint64_t gradBytes = 0, optimizerBytes = 0, stashBytes = 0;
  uint64_t activationBytes = 0;
  /// Sum of the above plus the reserve.
  uint64_t memoryBytes = 0;
  uint64_t budgetBytes = 0;
  uint64_t sentBytes = 0, receivedBytes = 0;
};

/// Everything evaluatePlan computes for a plan.
struct PlanMetrics {
  std::vector<StageMetrics> stages;
  std::vector<DeviceMetrics> devices;
  /// Largest device load: the async steady-state time per micro-batch.
  double asyncMsPerMicroBatch = 0.0;
  /// max(total compute / P, largest node), P = devices in the hardware
  /// (with heterogeneous devices: total / sum of relative speeds, largest /
  /// fastest speed). Recomputation counts only when every stage recomputes
  /// by the config (a plan choosing per stage is bounded without it).
  double lowerBoundMs = 0.0;
  /// Busiest device load / mean load over all P devices (1 when all zero).
  double imbalance = 1.0;
  /// Sum over nodes of f + b (+ f where its stage recomputes; a replicated
  /// node once per stage it is computed in), as on
  /// device 0.
  double totalComputeMs = 0.0;
  /// The device with the largest load (the lowest id among equals).
  DeviceId bottleneckDevice = 0;
  /// Every device's memory fits its budget.
  bool memoryFits = true;
  /// Per device, what the plan fixes about its memory: the inputs of
  /// schedule::deviceMemory, which gave the devices' memory figures here
  /// (and which the manifest records, so the runtime can recompute them for
  /// the setup it runs).
  std::vector<schedule::DeviceMemoryInputs> memoryInputs;

  /// The largest bytes one device sends per micro-batch.
  uint64_t busiestSentBytes() const {
    uint64_t sent = 0;
    for (const DeviceMetrics &d : devices)
      sent = std::max(sent, d.sentBytes);
    return sent;
  }
};

/// Scores `plan` from scratch. O(nodes + values x consumers + params x
/// readers + stages + devices). Fails as buildStageGraph does.
llvm::Expected<PlanMetrics> evaluatePlan(const Graph &graph, const Hardware &hw,
                                         const Plan &plan,
                                         const ObjectiveConfig &config);

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_OBJECTIVE_H
