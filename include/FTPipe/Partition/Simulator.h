//===- Simulator.h - Discrete-event pipeline simulator ----------*- C++ -*-===//
//
// Runs a plan's stage graph through time: every device executes one task
// (a stage's forward or backward for one micro-batch) at a time; every
// transfer between stages on different devices occupies the directed link
// between the two devices for bytes / bandwidth + latency per tensor, one
// transfer at a time per link, in the order they become ready, overlapping
// with compute. Stages on one device exchange data for free.
//
// Schedules (each stage follows a fixed order of its own tasks; a device
// with several stages runs whichever stage's next task is ready, backward
// before forward, then the older micro-batch, then the earlier stage):
//  - GPipe: F(0..M-1), then B(0..M-1); the mini-batch ends when all are done.
//  - 1F1B with flush: w = min(M, height + 1) forwards, then alternate one
//    backward and one forward, then the remaining backwards.
//  - Async (PipeDream): the same 1F1B order with w = height + 1 (FTPipe's
//    depth rule) and no flush, over a long stream of micro-batches; the
//    reported time per micro-batch is the steady-state period.
// Or, given per-device orders (SimulatorConfig::deviceOrders, e.g. the lists
// of lib/Schedule that the runtime executes), each device runs exactly its
// order.
// Recomputation, when the stage graph carries it, lengthens every backward.
// The optimizer step is not modelled.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_SIMULATOR_H
#define FTPIPE_PARTITION_SIMULATOR_H

#include "FTPipe/Partition/Objective.h"

#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace ftpipe {
namespace partition {

/// One task of a device's given order: a stage's forward or backward of a
/// micro-batch.
struct SimTask {
  StageId stage = 0;
  uint32_t microBatch = 0;
  bool backward = false;
};

/// Options of the simulator.
struct SimulatorConfig {
  Schedule schedule = Schedule::Async;
  /// Micro-batches per mini-batch (M) for GPipe and 1F1B.
  uint32_t microBatches = 8;
  /// Micro-batches streamed through the async pipeline; 0 picks
  /// max(64, 8 x stages), doubled (up to 4096) until a repeating pattern
  /// shows. The steady-state period is measured over whole repetitions of
  /// that pattern in the middle half of the run.
  uint32_t asyncMicroBatches = 0;
  /// Record the event list (the timeline); off saves memory on big runs.
  bool recordEvents = true;
  /// When not empty: per device, the exact order of its tasks (for example
  /// lib/Schedule's lists without the updates), replacing the built-in
  /// choice; a device waits for its next task to be ready. The run then has
  /// the micro-batches the orders name (0 .. K-1, each stage's forward and
  /// backward of each exactly once, on the stage's device); `schedule` only
  /// says how to report it (Async: the steady-state period).
  std::vector<std::vector<SimTask>> deviceOrders;

  llvm::Error validate() const;
};

/// One interval on a device or link track.
struct SimEvent {
  enum class Kind : uint8_t { Forward, Backward, Transfer };
  Kind kind = Kind::Forward;
  /// For Transfer: true for gradients flowing backward.
  bool backward = false;
  /// For Forward/Backward: the stage; for Transfer: the sending stage.
  StageId stage = 0;
  /// For Transfer: the receiving stage.
  StageId peer = 0;
  uint32_t microBatch = 0;
  /// Device that computes (Forward/Backward) or the link's ends (Transfer).
  DeviceId device = 0, toDevice = 0;
  double startMs = 0.0, endMs = 0.0;

  /// Whether the event is on a link track (a transfer) rather than a device.
  bool onLink() const { return kind == Kind::Transfer; }
  /// Short label for a trace, e.g. "F s3 mb5", "B s0 mb1", "act s1->s2 mb0".
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

/// Simulates `stages` (built by buildStageGraph for the same hardware).
/// Fails on an invalid config or a stage graph whose devices do not exist.
llvm::Expected<SimResult> simulate(const StageGraph &stages, const Hardware &hw,
                                   const SimulatorConfig &config);

/// Convenience: builds the stage graph of `plan` and simulates it with the
/// schedule and micro-batches of `objective`.
llvm::Expected<SimResult> simulatePlan(const Graph &graph, const Hardware &hw,
                                       const Plan &plan,
                                       const ObjectiveConfig &objective,
                                       bool recordEvents = true);

/// What a pass that changes a plan (gluing weight ops, attaching free ops)
/// judges the change by: the objective, the simulated time under the
/// objective's schedule, the busiest sender and whether memory fits.
struct PlanFigures {
  double objectiveMs = 0.0;
  double simulatedMs = 0.0;
  uint64_t busiestSentBytes = 0;
  bool memoryFits = false;

  /// Whether these figures are no slower than `base` by the objective and
  /// the simulator (up to rounding) and fit wherever `base` fits.
  bool noSlowerThan(const PlanFigures &base) const;
  /// Whether these figures are faster than `base` by the objective or the
  /// simulator (beyond rounding).
  bool fasterThan(const PlanFigures &base) const;
};

/// evaluatePlan and simulatePlan of `plan`, summed up.
llvm::Expected<PlanFigures> measurePlan(const Graph &graph, const Hardware &hw,
                                        const Plan &plan,
                                        const ObjectiveConfig &objective);

/// measurePlan of `plan` when its objective and memory are no worse than
/// `base`'s (PlanFigures::noSlowerThan with the simulated time left out);
/// std::nullopt, without simulating, when they are. For searches that judge
/// many trial plans by the simulator, whose runs cost the most.
llvm::Expected<std::optional<PlanFigures>>
measurePlanIfObjectiveHolds(const Graph &graph, const Hardware &hw,
                            const Plan &plan, const ObjectiveConfig &objective,
                            const PlanFigures &base);

/// The recorded timeline as a Chrome / Perfetto trace (`{"traceEvents":
/// [...]}`, times in microseconds): one named track per device ("device 0
/// (RTX2080Ti:0)") and per directed link that carried traffic ("link 0->1"),
/// a complete ("X") event per task and transfer with its stage and
/// micro-batch in `args`.
llvm::json::Value simulationToChromeTrace(const SimResult &result,
                                          const Hardware &hw);

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_SIMULATOR_H
