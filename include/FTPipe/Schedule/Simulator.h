//===- Simulator.h - Timed simulation of a pipeline schedule ----*- C++ -*-===//
//
// Runs a stage graph with per-stage costs and per-edge bytes through time:
// every device executes one task (a stage's forward or backward for one
// micro-batch) at a time; every transfer between stages on different devices
// occupies the directed link between the two devices for bytes / bandwidth +
// latency per tensor, one transfer at a time per link, in the order they
// become ready, overlapping with compute. Stages on one device exchange data
// for free.
//
// Each stage walks its own order of forwards and backwards, the one
// stageOrders (Schedule.h) gives for the schedule kind: GPipe, 1F1B with
// flush, or async (the same 1F1B order with w = height + 1, no flush, over a
// long stream of micro-batches; the reported time per micro-batch is the
// steady-state period). A device with several stages runs whichever stage's
// next task is ready at that instant, backward before forward, then the
// older micro-batch, then the earlier stage. Or, given a Schedule (the
// per-device lists that generate() builds and the runtime executes), each
// device runs exactly its list (updates take no time, or each device's
// SimulatorConfig::updateMs).
// A split backward (zero-bubble kinds, or lists with I and W) runs as I,
// which sends the gradients, and W, which waits for its I, each with its
// own cost. zb-h1 is simulated on the lists generate() builds, zb-auto on
// those generateZeroBubbleAuto builds from the stages' costs (no memory
// budget) unless lists are given. Recomputation lengthens every backward (B or
// I). The optimizer step is not modelled. With replicas (Replicas.h) and the
// lists of replicateSchedule, micro-batch m of a stage runs on its device's
// replica m mod r, each stage's gradient all-reduce (ringAllReduceMs) starts
// when its last backward of the step has ended on every replica, overlapping
// the rest of the backward, and each update of a replicated device waits for
// its all-reduces. With shared cores (SharedCores: CPU processes of one node
// on fewer cores than processes), a node's tasks that run at once share its
// cores (processor sharing). No MLIR here: the planner (lib/Partition) and
// the runtime use it.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_SCHEDULE_SIMULATOR_H
#define FTPIPE_SCHEDULE_SIMULATOR_H

#include "FTPipe/Schedule/Replicas.h"
#include "FTPipe/Schedule/Schedule.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace ftpipe {
namespace schedule {

/// Traffic from one stage to another, for one micro-batch. Each crossing
/// value is one tensor (one message and one latency).
struct StageEdge {
  uint32_t src = 0;
  uint32_t dst = 0;
  /// Activations src -> dst in the forward.
  uint64_t fwdBytes = 0;
  uint32_t fwdTensors = 0;
  /// Gradients dst -> src in the backward (values that need a gradient).
  uint64_t bwdBytes = 0;
  uint32_t bwdTensors = 0;
  /// Of the activations, the forwarded values that src received and passes
  /// on: src sends them when its forward starts, not when it ends.
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

/// Time to move `bytes` in `tensors` messages over a link of `GBps` and
/// `latencyUs` per message, in ms (0 for no message). The one transfer
/// formula of the planner's objective and of the simulator.
inline double linkTransferMs(uint64_t bytes, uint32_t tensors, double GBps,
                             double latencyUs) {
  if (tensors == 0)
    return 0.0;
  return double(bytes) / (GBps * 1e6) + tensors * latencyUs * 1e-3;
}

/// Bandwidth and latency of every directed link between `devices` devices.
struct Links {
  size_t devices = 0;
  /// Dense devices x devices tables, [from * devices + to].
  std::vector<double> GBps, latencyUs;

  /// Every pair joined alike.
  static Links uniform(size_t devices, double GBps, double latencyUs);
  /// Time to move `bytes` in `tensors` messages from device `from` to `to`
  /// (0 on one device).
  double transferMs(uint64_t bytes, uint32_t tensors, size_t from,
                    size_t to) const {
    if (from == to)
      return 0.0;
    size_t i = from * devices + to;
    return linkTransferMs(bytes, tensors, GBps[i], latencyUs[i]);
  }
};

/// The ring all-reduce of `bytes` among the devices of `group` (in ring
/// order): 2 (r - 1) steps, each moving bytes / r over every link of the
/// ring at once, so 2 (r - 1) / r x bytes over the slowest link plus
/// 2 (r - 1) latencies; 0 for a group of one.
double ringAllReduceMs(uint64_t bytes, llvm::ArrayRef<int64_t> group,
                       const Links &links);

/// The all-reduce time a device's replicas wait for at the update when each
/// stage's all-reduce starts as its last backward ends (as the simulator
/// runs them): the device's stages in the order their last backwards run,
/// each `lastBackwardMs` long back to back, the all-reduce of
/// `gradientBytes[i]` (ringAllReduceMs over `group`) starting when the i-th
/// ends and the one before it is done. Returns the time from the end of the
/// last backward to the end of the last all-reduce: the whole all-reduce
/// for one stage, less what the later stages' backwards hide for several.
double exposedAllReduceMs(llvm::ArrayRef<double> lastBackwardMs,
                          llvm::ArrayRef<uint64_t> gradientBytes,
                          llvm::ArrayRef<int64_t> group, const Links &links);

/// Stages with their costs and the traffic between them: what the simulator
/// runs. Times are on the stage's own device.
struct TimedStageGraph {
  /// Per stage: device, forward, backward and recompute time (ms).
  std::vector<uint32_t> device;
  std::vector<double> fwdMs, bwdMs, recomputeMs;
  /// Per stage, the parts of its backward when it splits: I (input
  /// gradients, plus recomputeMs) and W (weight gradients); empty when no
  /// stage can split.
  std::vector<double> inputMs, weightMs;
  /// Edges, sorted by (src, dst), at most one per ordered pair.
  std::vector<StageEdge> edges;
  /// Stages in a topological order of the edges.
  std::vector<uint32_t> topoOrder;
  /// Longest path (in edges) from each stage to a stage without successors:
  /// FTPipe's / PipeDream's depth rule gives height + 1 micro-batches in
  /// flight under 1F1B.
  std::vector<uint32_t> height;

  /// Number of stages.
  size_t numStages() const { return device.size(); }
  /// The edges out of stage s (a slice of `edges`).
  llvm::ArrayRef<StageEdge> outEdges(uint32_t s) const;
  /// The stages, their producers and devices, as the schedule generators
  /// take them (`devices` devices).
  StageGraph topology(int64_t devices) const;
  /// `graph`'s stages with per-stage costs (a profile, or a test's): each
  /// stage's backward is input + weight, no recomputation, and every edge
  /// one tensor of `edgeBytes` each way. `graph` must be valid.
  static TimedStageGraph withCosts(const StageGraph &graph,
                                   std::vector<double> fwdMs,
                                   std::vector<double> inputMs,
                                   std::vector<double> weightMs,
                                   uint64_t edgeBytes);
};

/// Devices that compute on a node's shared processor cores (MPI processes or
/// threads on one CPU). The operating system shares a node's C cores out
/// among the tasks that run on it: while k of its devices compute at once,
/// each task progresses at min(1, C / k) of its own speed (processor
/// sharing), so a task's cost is its work on a core of its own. A node with
/// at least as many cores as devices runs as without it.
struct SharedCores {
  /// Per device (process, with replicas) its node; empty: every device
  /// computes on its own.
  std::vector<uint32_t> node;
  /// Per node its cores (at least 1).
  std::vector<uint32_t> cores;

  bool empty() const { return node.empty(); }
  /// Whether some node has fewer cores than devices.
  bool shares() const;
  /// "4 devices on 2 cores" per node, joined by "; " ("" when empty).
  std::string str() const;
};

/// Options of the simulator.
struct SimulatorConfig {
  Kind kind = Kind::Async;
  /// Micro-batches per mini-batch (M) for GPipe and 1F1B.
  uint32_t microBatches = 8;
  /// Micro-batches streamed through the async pipeline; 0 picks
  /// max(64, 8 x stages), doubled (up to 4096) until a repeating pattern
  /// shows. The steady-state period is measured over whole repetitions of
  /// that pattern in the middle half of the run.
  uint32_t asyncMicroBatches = 0;
  /// Zero-bubble kinds without lists: which stages split (as
  /// ScheduleConfig::split; empty: all).
  std::vector<bool> split;
  /// Record the event list (the timeline); off saves memory on big runs.
  bool recordEvents = true;
  /// When it has lists: per device, the exact order of its actions (as
  /// generate() builds them; updates are skipped), replacing the per-stage
  /// orders; a device waits for its next action to be ready. The run then
  /// has the micro-batches the lists name (0 .. K-1, each stage's forward
  /// and backward of each exactly once, on the stage's device); `kind` only
  /// says how to report it (Async: the steady-state period).
  Schedule orders;
  /// With orders: the stage graph's devices replicated (empty: not). The
  /// links and the orders are then per process (replicateSchedule's
  /// lists), stage s's task of micro-batch m is on process
  /// replicas.process(device[s], m mod r). A replicated device's gradients
  /// are all-reduced stage by stage, overlapped with the rest of the
  /// backward: stage s's all-reduce for update U(k) (ringAllReduceMs of
  /// stageGradientBytes[s] over the group) starts once every replica has
  /// ended its last backward of s (B, or W when split) before U(k) in its
  /// order, and after the group's previous all-reduce (one at a time on the
  /// group's ring); U(k) waits, on every replica, for all of its device's.
  ReplicaLayout replicas;
  /// Per stage, the bytes of the gradients its all-reduce carries: each
  /// trained parameter once per device, with the reader stage there whose
  /// backward completes it (empty: the all-reduces take no time, they only
  /// synchronize).
  std::vector<uint64_t> stageGradientBytes;
  /// With orders: per device (process), the time each of its updates holds
  /// it, after a replicated device's all-reduces (empty: updates take no
  /// time). Not counted as busy (not a stage's compute); on shared cores it
  /// takes no share of them.
  std::vector<double> updateMs;
  /// Devices sharing a node's cores (empty: each its own). A task's time
  /// on the timeline and in the device's busy time is then from its start
  /// to its end, however slowly it progressed.
  SharedCores sharedCores;

  llvm::Error validate() const;
};

/// One interval on a device or link track.
struct SimEvent {
  enum class Kind : uint8_t {
    Forward,
    Backward,
    InputBackward,
    WeightBackward,
    Transfer,
    /// A replicated device's all-reduce of stage `stage`'s gradients for
    /// update `microBatch`, on each member process (`device`).
    AllReduce,
    /// Update `microBatch` of `device` when it takes time
    /// (SimulatorConfig::updateMs).
    Update
  };
  Kind kind = Kind::Forward;
  /// For Transfer: true for gradients flowing backward.
  bool backward = false;
  /// For compute: the stage; for Transfer: the sending stage.
  uint32_t stage = 0;
  /// For Transfer: the receiving stage.
  uint32_t peer = 0;
  uint32_t microBatch = 0;
  /// Device that computes, or the link's ends (Transfer).
  uint32_t device = 0, toDevice = 0;
  double startMs = 0.0, endMs = 0.0;

  /// Whether the event is on a link track (a transfer) rather than a device.
  bool onLink() const { return kind == Kind::Transfer; }
  /// Short label for a trace, e.g. "F s3 mb5", "B s0 mb1", "W s0 mb1",
  /// "act s1->s2 mb0", "U1".
  std::string label() const;
};

/// What a simulation measured.
struct SimResult {
  /// Time from the first task to the last one.
  double makespanMs = 0.0;
  /// GPipe / 1F1B: the makespan of one mini-batch of M micro-batches.
  /// Async: the steady-state period times M.
  double msPerMiniBatch = 0.0;
  /// GPipe / 1F1B: makespan / M. Async: the steady-state period.
  double msPerMicroBatch = 0.0;
  /// Per device: total time spent computing over the whole run.
  std::vector<double> deviceBusyMs;
  /// 1 - (mean device busy time / (devices x makespan)) over devices that
  /// hold a stage: the idle share, bubbles and exposed communication.
  double idleFraction = 0.0;
  /// Micro-batches simulated.
  uint32_t microBatches = 0;
  /// Async: length in micro-batches of the repeating pattern the steady
  /// state settled into (1 for a plain pipeline), or 0 when none was found
  /// within the run (the period is then an average and may be off by up to
  /// one pattern's jitter; stream more micro-batches).
  uint32_t asyncCycle = 0;
  /// The timeline, ordered by start time (when recorded).
  std::vector<SimEvent> events;
};

/// The simulator's limit on its work: an error (naming option
/// 'microbatches') when `stages` x `microBatches` make more tasks than it
/// runs (each takes a forward and a backward or more; beyond the limit a
/// simulation, or the lists it would check, take minutes and gigabytes).
llvm::Error checkTaskCount(uint64_t stages, uint64_t microBatches);

/// Simulates `stages` over `links`. Fails on an invalid config, a malformed
/// stage graph or one whose devices are not among the links' devices, and
/// on given lists that miss, repeat or misplace a task or deadlock.
llvm::Expected<SimResult> simulate(const TimedStageGraph &stages,
                                   const Links &links,
                                   const SimulatorConfig &config);

/// The recorded timeline as a Chrome / Perfetto trace (`{"traceEvents":
/// [...]}`, times in microseconds): one named track per device ("device 0
/// (RTX2080Ti:0)", the name from `deviceNames`) and per directed link that
/// carried traffic ("link 0->1"), a complete ("X") event per task and
/// transfer with its stage and micro-batch in `args`.
llvm::json::Value
simulationToChromeTrace(const SimResult &result,
                        llvm::ArrayRef<std::string> deviceNames);

} // namespace schedule
} // namespace ftpipe

#endif // FTPIPE_SCHEDULE_SIMULATOR_H
