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

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace ftpipe {
namespace partition {

/// Optimizer, for its state: bytes of state per byte of parameter.
enum class Optimizer {
  /// Plain SGD: no state.
  SGD,
  /// SGD with momentum: one buffer (1x).
  Momentum,
  /// Adam / AdamW: first and second moments (2x).
  Adam,
  /// Adafactor without momentum (T5's recipe, and FTPipe's for T5-3B): its
  /// second moments are factored into a row and a column vector per matrix,
  /// about 0.1% of the weights of a transformer, counted as no state.
  Adafactor,
};

/// How the pipeline is run. Determines micro-batches in flight per stage
/// (activation memory), weight versions, and what the simulator executes.
enum class Schedule {
  /// PipeDream-style asynchronous 1F1B without flushes (FTPipe's default).
  Async,
  /// GPipe: all forwards of a mini-batch, then all backwards, then flush.
  GPipe,
  /// 1F1B with a flush at the end of every mini-batch (PipeDream-Flush).
  OneFOneB,
};

/// Weight versions kept under the async schedule.
enum class WeightVersioning {
  /// PipeDream weight stashing: one version per micro-batch in flight.
  Stash,
  /// PipeDream-2BW: at most two versions.
  DoubleBuffered,
  /// A single version (weight prediction, or staleness accepted).
  None,
};

/// Bytes of optimizer state per byte of parameter (0, 1 or 2).
unsigned optimizerStateFactor(Optimizer optimizer);

/// Everything the objective and memory model depend on besides graph,
/// hardware and plan. Defaults: FTPipe's fine-tuning setup (async with weight
/// stashing, Adam, no recomputation, 8 micro-batches per mini-batch).
struct ObjectiveConfig {
  Schedule schedule = Schedule::Async;
  Optimizer optimizer = Optimizer::Adam;
  WeightVersioning versioning = WeightVersioning::Stash;
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

/// Traffic from one stage to another, for one micro-batch. Each crossing
/// value is one tensor (one message and one latency).
struct StageEdge {
  StageId src = 0;
  StageId dst = 0;
  /// Activations src -> dst in the forward.
  uint64_t fwdBytes = 0;
  uint32_t fwdTensors = 0;
  /// Gradients dst -> src in the backward (values that need a gradient).
  uint64_t bwdBytes = 0;
  uint32_t bwdTensors = 0;
  /// Of the activations, the forwarded values that src received and passes
  /// on (Plan::nodeForwarded): src sends them when its forward starts, not
  /// when it ends.
  uint64_t passBytes = 0;
  uint32_t passTensors = 0;
  /// Of the gradients, those of forwarded values: dst sends them once its
  /// backward has ended and the gradients it passes back have arrived (it
  /// adds its own to them). Those of values src passes on (pass*) do not
  /// hold up src's backward (src adds them after it); those of values src
  /// makes (firstHop*) do.
  uint64_t passGradBytes = 0, firstHopGradBytes = 0;
  uint32_t passGradTensors = 0, firstHopGradTensors = 0;
};

/// A plan collapsed to stages: what the simulator runs and the objective
/// scores. Times are on the stage's own device.
struct StageGraph {
  /// Per stage: device, forward, backward and recompute time (ms).
  std::vector<DeviceId> device;
  std::vector<double> fwdMs, bwdMs, recomputeMs;
  /// Per stage: bytes of activations kept per micro-batch in flight (all
  /// nodes' actBytes, or only the stage inputs under recomputation) and, under
  /// recomputation, the bytes of one micro-batch rebuilt during backward.
  std::vector<uint64_t> keptBytesPerMicroBatch, recomputePeakBytes;
  /// Edges, sorted by (src, dst), at most one per ordered pair.
  std::vector<StageEdge> edges;
  /// Stages in a topological order of the edges.
  std::vector<StageId> topoOrder;
  /// Longest path (in edges) from each stage to a stage without successors:
  /// FTPipe's / PipeDream's depth rule gives height + 1 micro-batches in
  /// flight under 1F1B.
  std::vector<uint32_t> height;

  /// Number of stages.
  size_t numStages() const { return device.size(); }

  /// The edges out of stage s (a slice of `edges`).
  llvm::ArrayRef<StageEdge> outEdges(StageId s) const;

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

/// Micro-batches in flight on a stage of the given height under `config`:
/// async and 1F1B keep height + 1 (1F1B at most M), GPipe keeps M.
uint32_t microBatchesInFlight(uint32_t height, const ObjectiveConfig &config);

/// Weight versions a stage keeps beyond the live one.
uint32_t extraWeightVersions(uint32_t inFlight, const ObjectiveConfig &config);

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
