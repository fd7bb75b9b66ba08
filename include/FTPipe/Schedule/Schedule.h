//===- Schedule.h - Pipeline schedules as plain data ------------*- C++ -*-===//
//
// A schedule is, per device, the list of actions it runs in order: a stage's
// forward or backward of one micro-batch (a split backward: its input part I
// and its weight part W), or the device's optimizer update. Generators build
// the lists of GPipe, 1F1B with flush, asynchronous 1F1B (FTPipe's depth
// rule) and zero-bubble ZB-H1 for any stage graph and placement, several
// stages per device included (Mixed-Pipe); zb-auto's list scheduler, which
// needs stage costs, is in ZeroBubble.h. dryRun executes all devices' lists
// against the stage graph's dependencies and reports a deadlock. No MLIR
// here.
//
// Text form of an action: "<stage>F<mb>", "<stage>B<mb>", "<stage>I<mb>",
// "<stage>W<mb>" (as torch.distributed.pipelining writes them), "U<k>" (the
// device's k-th update). A schedule prints as one line per device:
// "device 0: 0F0 0F1 0B0 ...".
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_SCHEDULE_SCHEDULE_H
#define FTPIPE_SCHEDULE_SCHEDULE_H

#include "FTPipe/Schedule/TrainingSetup.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ftpipe {
namespace schedule {

enum class ActionKind : uint8_t {
  Forward,
  /// The whole backward of a stage that does not split.
  Backward,
  /// A split backward's input part: the gradients of the stage's inputs
  /// (what its producers wait for) and the values its weight part needs.
  InputBackward,
  /// A split backward's weight part: the parameter gradients.
  WeightBackward,
  Update,
};

/// One step of a device's list.
struct Action {
  ActionKind kind = ActionKind::Forward;
  /// Forward/backwards: the stage (unused for Update).
  int64_t stage = 0;
  /// Forward/backwards: the micro-batch (counted over the whole run);
  /// Update: the update's index k (0, 1, ...).
  int64_t index = 0;

  static Action forward(int64_t stage, int64_t mb) {
    return {ActionKind::Forward, stage, mb};
  }
  static Action backward(int64_t stage, int64_t mb) {
    return {ActionKind::Backward, stage, mb};
  }
  static Action input(int64_t stage, int64_t mb) {
    return {ActionKind::InputBackward, stage, mb};
  }
  static Action weight(int64_t stage, int64_t mb) {
    return {ActionKind::WeightBackward, stage, mb};
  }
  static Action update(int64_t k) { return {ActionKind::Update, 0, k}; }
  bool operator==(const Action &other) const {
    return kind == other.kind && stage == other.stage && index == other.index;
  }
  std::string str() const;
};

/// Parses "2F0", "1B3", "1I3", "1W3", "U0".
llvm::Expected<Action> parseAction(llvm::StringRef text);

/// The stages, how data flows between them and where they run.
struct StageGraph {
  /// producers[s]: the stages whose forward sends to s (empty for a stage
  /// that reads only data inputs). The graph must be acyclic.
  std::vector<std::vector<int64_t>> producers;
  /// device[s]: the device that runs stage s.
  std::vector<int64_t> device;
  /// Number of devices (every device holds at least one stage).
  int64_t devices = 0;
  /// Groups of devices that hold copies of one parameter (tied weights):
  /// their updates exchange gradients, so update k runs on all devices of a
  /// group (and of groups that share a device with it) at once.
  std::vector<std::vector<int64_t>> tiedDevices;

  int64_t stages() const { return static_cast<int64_t>(device.size()); }
  /// A chain 0 -> 1 -> ... -> stages-1, stage s on device placement[s].
  static StageGraph chain(std::vector<int64_t> placement);
  /// Stage s's consumers (the inverse of producers).
  std::vector<std::vector<int64_t>> consumers() const;
  /// Longest path, in stages, from s to a stage without consumers.
  std::vector<int64_t> heights() const;
  llvm::Error validate() const;
};

struct ScheduleConfig {
  Kind kind = Kind::OneFOneB;
  /// Micro-batches per optimizer step (gradient accumulation).
  int64_t microBatches = 4;
  /// Optimizer steps in the run (each device updates once per step).
  int64_t steps = 1;
  /// Zero-bubble kinds: split[s] says whether stage s's backward runs as I
  /// and W (a stage that does not split keeps its full B); empty: every
  /// stage splits. Other kinds: must be empty.
  std::vector<bool> split;
  /// Per device, the processes that run it (ReplicaLayout's factors; empty:
  /// one each). A synchronous 1F1B stage then starts as many micro-batches
  /// before its first backward as there are processes on its longest path
  /// to the end (its own device's included), not stages: PipeDream's NOAM,
  /// so that each replica, which keeps every r-th micro-batch of its
  /// device's list (replicateSchedule), still has its pipeline full. Without
  /// replicas that is the stage's height + 1, as before. Async keeps the
  /// stage count (its staleness is the stage's depth).
  std::vector<int64_t> replicas;

  /// Whether stage s runs I and W rather than B.
  bool splits(int64_t stage) const {
    return isZeroBubble(kind) && (split.empty() || split[stage]);
  }
};

/// Per stage, the bytes a device keeps for one micro-batch: its activations
/// from the forward until the backward (B, or I when it splits), and the
/// values a split backward's I passes to its W (until the W); and the bytes
/// one task of the stage adds only while it runs (its working set): a
/// forward, B or I (workingBytes: under recomputation the activations it
/// rebuilds, once compiled the generated code's peak), and a W
/// (weightWorkingBytes: W reads its buffer and rebuilds nothing). Empty
/// lists count 0.
struct StageMemory {
  std::vector<uint64_t> activationBytes, weightBufferBytes;
  std::vector<uint64_t> workingBytes, weightWorkingBytes;
};

/// What an action does to its device's bytes, as the dry run counts them:
/// `peak`, the most it holds on top of what it held before while the action
/// runs (the values it makes for later and its working set), and `held`,
/// how many more (negative: fewer) it holds after.
struct ActionBytes {
  int64_t peak = 0, held = 0;
};

/// The bytes of `action` (not an update) under `memory`.
ActionBytes actionBytes(const Action &action, const StageMemory &memory);

/// Per device, its actions in order.
struct Schedule {
  std::vector<std::vector<Action>> devices;
  /// "device 0: 0F0 0F1 ...\n" per device.
  std::string str() const;
};

/// Parses the text form printed by Schedule::str.
llvm::Expected<Schedule> parseSchedule(llvm::StringRef text);

/// Builds the lists. Per stage the order of its forwards and backwards is
///  - GPipe: per step F of all M micro-batches, then their B;
///  - 1F1B with flush: per step w = min(M, height + 1) forwards, then one B
///    and one F alternately, then the remaining Bs;
///  - Async: the same 1F1B order over the whole run's micro-batches with
///    w = height + 1 (FTPipe's depth rule) and no flush;
///  - ZB-H1: each device's 1F1B list with I for B on stages that split;
///    each W runs in a round in which the list's next action may not (its
///    device's first idle slot; the oldest W first), before the update.
///    The forwards and backwards keep 1F1B's order, so each device holds
///    the activations 1F1B holds. With `memory`, no device holds more bytes
///    at once than under 1F1B with flush (the dry run's count): where a
///    device's I and W buffers would lift it above that, its split stages,
///    those with the largest W buffer first, run their backward whole (B).
///    Under recomputation a W buffer (each weight op's input and output
///    gradient) is larger than a micro-batch in flight (the stage's
///    inputs), so few stages keep I and W there.
/// zb-auto needs stage costs: generateZeroBubbleAuto (ZeroBubble.h); here
/// it is refused.
/// A device's update k follows the backwards of step k of all its stages;
/// with GPipe and 1F1B no forward of step k + 1 starts before it. A device
/// with several stages interleaves their orders as a unit-time list
/// schedule would: of its stages' next actions that are ready, a backward
/// before a forward, then the older micro-batch, then the lower stage.
llvm::Expected<Schedule> generate(const StageGraph &graph,
                                  const ScheduleConfig &config,
                                  const StageMemory *memory = nullptr);

/// Per stage, its own order of forwards and backwards (the per-stage orders
/// that `generate` interleaves per device; the simulator walks them too).
/// Under zb-h1 and zb-auto a split stage lists I for B and no W (W goes
/// where its device is idle). `graph` must be valid.
std::vector<std::vector<Action>> stageOrders(const StageGraph &graph,
                                             const ScheduleConfig &config);

/// What a dry run found.
struct DryRunResult {
  /// Rounds of the unit-time execution until all lists were done.
  int64_t rounds = 0;
  /// Per device, the most micro-batches whose forward ran and whose
  /// backward (B or I) did not yet (the activations it keeps at once).
  std::vector<int64_t> peakInFlight;
  /// Per device, the most micro-batches whose I ran and whose W did not yet.
  std::vector<int64_t> peakWaitingWeight;
  /// Per device, the most bytes it kept at once (activations in flight,
  /// values waiting for their W, and the running task's working set), when
  /// the dry run was given StageMemory.
  std::vector<uint64_t> peakBytes;
};

/// Executes all lists at once, one action per device per round, an action
/// waiting until its dependencies ran: F(s, m) after F(p, m) of each
/// producer p (and, with every kind but async, after the device's update of
/// the previous step); B(s, m) or I(s, m) after F(s, m) and the B or I of
/// (c, m) of each consumer c; W(s, m) after I(s, m); U(k) after the
/// device's B, I and W of step k, together with the updates k of its tied
/// devices. Fails when some list is stuck (a deadlock: names each device's
/// waiting action and what it waits for), or when the lists miss, repeat or
/// misplace an action of the run that `config` describes: I or W on a stage
/// that does not split, a W before its I or after its step's update, a
/// stage run both whole (B) and split (a stage that splits may run whole in
/// every micro-batch: zb-h1 within 1F1B's memory). With `memory`, reports
/// peak bytes per device.
llvm::Expected<DryRunResult> dryRun(const StageGraph &graph,
                                    const ScheduleConfig &config,
                                    const Schedule &schedule,
                                    const StageMemory *memory = nullptr);

} // namespace schedule
} // namespace ftpipe

#endif // FTPIPE_SCHEDULE_SCHEDULE_H
