//===- MemoryReplay.h - A device's memory over its action list --*- C++ -*-===//
//
// The one replay of what a device holds action by action: weights, one set
// of gradient sums per step whose backwards began and whose update has not
// run, the optimizer's state, a whole copy of the trained weights per older
// version a micro-batch in flight still reads (stashing and 2BW), each
// micro-batch's kept bytes from its F to its B or I and its W buffer from
// its I to its W, what the running action adds, and the messages its earlier
// actions sent that their receiver may not have taken yet (sendsHeldUntil,
// from all devices' lists at once). The runtime replays it
// with the compiled stages' needs (DeviceExecutor::predictMemory), the plan
// with what it fixes (replayedMemory: the manifest's figure and ftpipe-run's
// over-budget refusal). No MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_SCHEDULE_MEMORYREPLAY_H
#define FTPIPE_SCHEDULE_MEMORYREPLAY_H

#include "FTPipe/Schedule/Memory.h"
#include "FTPipe/Schedule/Schedule.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace ftpipe {
namespace schedule {

/// What one stage of a device holds and adds, in bytes.
struct ReplayStage {
  /// Kept per micro-batch from its F until its B or I (saved values), and
  /// from its I until its W (the W buffer).
  int64_t kept = 0, weightBuffer = 0;
  /// Added only while the action runs (working set, data slices, copies of
  /// what it keeps), beside the messages it sends.
  int64_t forward = 0, backward = 0, input = 0, weight = 0;
  int64_t forwardMessages = 0, backwardMessages = 0;
  /// Of what a task adds, the part that goes as it ends (data slices); the
  /// rest is the generated code's buffers, which the allocator's cache may
  /// keep after it until the next task bounds it (HostAllocator.h).
  int64_t transient = 0;
  /// Whether the kept bytes and W buffers are the generated code's buffers,
  /// adopted: a task's own leave the cache with it, and those it frees
  /// may stay in the cache.
  bool adopted = false;
};

/// What a device's replay starts from.
struct ReplayDevice {
  /// By stage id, the stages the device runs.
  std::map<int64_t, ReplayStage> stages;
  /// All weights held, the trained ones (a gradient set or a stashed copy
  /// each), and the optimizer's state.
  int64_t weights = 0, trained = 0, optimizer = 0;
  /// Added while an update runs (its scratch), beside the generated code's
  /// cache that the task before it left, which the replay counts.
  int64_t update = 0;
  int64_t microBatches = 1;
  WeightVersions versions = WeightVersions::None;
  /// The weight version the list starts at, and whether the optimizer's
  /// state exists before the first update (the runtime allocates it there).
  int64_t firstVersion = 0;
  bool stateAllocated = true;
};

/// What a device holds between actions.
struct ReplayHeld {
  int64_t weights = 0, gradients = 0, optimizer = 0, stash = 0;
  /// Kept bytes of micro-batches between F and B or I, and how many.
  int64_t kept = 0, keptMicroBatches = 0;
  /// W buffers of micro-batches between I and W, and how many.
  int64_t weightBuffers = 0, weightBufferMicroBatches = 0;
  int64_t total() const {
    return weights + gradients + optimizer + stash + kept + weightBuffers;
  }
};

/// The most bytes a device holds at once over its list.
struct ReplayPeak {
  int64_t bytes = 0;
  /// The action during which the peak falls (its index in the list) and
  /// what was held when it began; what the action adds and sends, and the
  /// messages of earlier actions still held.
  size_t action = 0;
  ReplayHeld held;
  int64_t running = 0, messages = 0, pending = 0;
  /// Of `running`, at an update: what the task before it left in the
  /// generated code's cache.
  int64_t carried = 0;
};

/// Per process of `lists` (one list per process, as replicateSchedule makes
/// them) and per action of its list, the index of the first later action of
/// that list that no longer holds the messages the action sent (one walk
/// for every process): a send's
/// buffer stays until its receive has happened and the sender has then
/// called its communicator (MpiCommunicator frees completed sends at each
/// send and before and after each receive). The lists are walked together in an
/// order their messages allow, with a vector clock per action: an F of
/// stage s sends to the F of each of s's consumers for the same
/// micro-batch, a B or I to the B or I of each producer, wherever those run
/// (on this process too). The sender knows a receive happened once a
/// message it received since was sent after it, directly or through other
/// processes, which it learns at a receive: the call after that receive
/// frees them, before the action's work. Where that never happens in the
/// lists (no
/// receiver in them, the lists cannot run, updates' exchanges: not
/// counted) a send is held to the end, the size of its list. An action
/// that sends nothing gets its own index + 1.
std::vector<std::vector<size_t>> sendsHeldUntil(const Schedule &lists,
                                                const StageGraph &graph);

/// Replays `actions` of one device: each action counts what is held when it
/// begins, what it adds, the messages it sends and
/// those of earlier actions before `sendsHeldUntil[i]` (one per action,
/// from sendsHeldUntil; an action i whose entry is i + 1 frees its sends
/// as it ends); then
/// F keeps its stage's bytes, B or I releases them (I keeps the W buffer),
/// W releases the W buffer, B and W open their step's gradient set, an
/// update (counting the allocator's cache the task before it left: what it
/// added beyond its transient bytes, less the adopted bytes it kept and
/// plus those it released) closes it and, when a micro-batch in flight read the
/// version it replaces and versions are kept, stashes a copy, which goes with
/// the last backward that reads it. None for an empty list or a
/// `sendsHeldUntil` of another length.
std::optional<ReplayPeak> replayMemory(llvm::ArrayRef<Action> actions,
                                       llvm::ArrayRef<size_t> sendsHeldUntil,
                                       const ReplayDevice &device);

/// Per device, runtimeMemory's parts at the peak of a replay of the lists
/// `generate` builds for `setup` on `graph` (enough steps for the async
/// stream to reach its steady state), with each stage's kept bytes, W
/// buffer and working bytes from `inputs` (stages in increasing stage id)
/// and an update adding the largest working set and its scratch
/// (DeviceMemoryInputs::largestParamBytes; twice under Adafactor). The
/// activations part holds the kept bytes, W buffers, the running task's and
/// the messages held (the stages' message bytes counted from their task for
/// as long as sendsHeldUntil says).
/// Where the lists cannot be built here (zb-auto, built from costs within
/// budgets) it is runtimeMemory's bound for any list of the kind. With
/// `replicas` (per device, as ReplicaLayout; empty: none) the lists are made
/// for the layout and each device's figure is its busiest replica's.
std::vector<DeviceMemory> replayedMemory(
    const StageGraph &graph, llvm::ArrayRef<DeviceMemoryInputs> inputs,
    const TrainingSetup &setup, llvm::ArrayRef<int64_t> replicas = {});

} // namespace schedule
} // namespace ftpipe

#endif // FTPIPE_SCHEDULE_MEMORYREPLAY_H
