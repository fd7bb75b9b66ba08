//===- Migration.h - Moving a running pipeline to another plan --*- C++ -*-===//
//
// Live migration: at a step boundary, with nothing in flight (a schedule
// that flushes at every step, or the drain at the end of an asynchronous
// run's lists), a run moves from one plan of a model to another plan of the
// same model without a restart and without a file on disk. Every process
// hands over what it holds, by Hugging Face name: each parameter's value
// goes from its old owner to every device whose new stages read it, its
// optimizer state to its new owner; when a plan's devices run replicated
// (schedule::ReplicaLayout), every replica of a receiving device gets its
// own identical copy, and one replica of the old owner sends (the process's
// own copy is kept where it has one). Nothing else is live at a step
// boundary: gradient sums are consumed by the update, and stashed weight
// versions (weight stashing, 2BW's previous version) are dropped once the
// drain has run the last backward that read them.
//
// The calls, in the order a device makes them:
//  1. planMigration (before the run, on every process): opens the next plan,
//     checks that it is a plan of the same model for the same run, and
//     generates the rest of the run's lists under it;
//  2. captureState (after the step boundary's update);
//  3. migrateState (every process at the same boundary): the exchange over
//     the communicator (tags RuntimeTag::MigrationHeader, MigrationTensor);
//  4. a DeviceExecutor over the next plan's stages (over a
//     ReplicaCommunicator of the next layout when it is replicated), given
//     the returned state with setWeights and resume, runs the rest.
// lib/Runtime/RunDevices.cpp makes these calls for `ftpipe-run --migrate-at
// --migrate-to`; docs/Migration.md says what is guaranteed.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_MIGRATION_H
#define FTPIPE_RUNTIME_MIGRATION_H

#include "FTPipe/Runtime/Checkpoint.h"
#include "FTPipe/Runtime/Communicator.h"
#include "FTPipe/Runtime/Executor.h"
#include "FTPipe/Runtime/PipelineModel.h"
#include "FTPipe/Schedule/Replicas.h"

#include <functional>
#include <memory>
#include <optional>
#include <set>

namespace ftpipe {
namespace runtime {

/// One device's training state at a step boundary, by Hugging Face name:
/// what moves when the run changes plans.
struct DeviceState {
  /// Updates done: the weights' version and the optimizer's count.
  int64_t updates = 0;
  /// The current value of every parameter this device's stages read.
  TensorMap weights;
  /// The optimizer state of the parameters this device owns, as
  /// Optimizer::saveState names it ("<parameter>.<slot>").
  TensorMap optimizerState;
};

/// Where a plan's state lives among the run's processes: the plan devices
/// that hold each parameter (the first owns it) and the processes each
/// device runs as (unreplicated: device d is process d).
struct ProcessPlacement {
  const ParameterPlacement &parameters;
  const schedule::ReplicaLayout &replicas;
};

/// What one process sent to and received from the others in a migration
/// (tensors kept by the process are counted as neither).
struct MigrationTraffic {
  int64_t tensorsSent = 0, bytesSent = 0;
  int64_t tensorsReceived = 0, bytesReceived = 0;
};

/// The state `executor` holds now. Call it only at a step boundary with
/// nothing in flight (after run() returned).
DeviceState captureState(const DeviceExecutor &executor);

/// Per destination process, what process `self` hands over when the run
/// moves from `from` to `to` (same parameters, as many processes): each
/// parameter's value goes to every replica of each of its holders under
/// `to`, and its optimizer state to every replica of the first of them (the
/// new owner). A destination that runs a replica of the parameter's old
/// owner keeps its own copy; any other gets it from the old owner's replica
/// (destination mod its replicas), so replicas share the sending. `self`
/// itself is one of the destinations when it keeps something. Refuses
/// state of a parameter `self` does not own and a parameter missing from
/// either placement, by name.
llvm::Expected<std::map<int64_t, DeviceState>>
partitionState(int64_t self, ProcessPlacement from, ProcessPlacement to,
               DeviceState current);

/// Moves the run's state from `from` to `to`: every process of
/// `communicator` (one end per process, not a ReplicaCommunicator) calls it
/// at the same step boundary with its current state, and gets back its
/// state under `to` (the weights of the parameters its new stages read, the
/// optimizer state of those its device now owns). Sends
/// one message per tensor (a safetensors image), so a tensor is bounded by
/// the communicator's message size, not the device's whole share. Waits
/// end as the communicator's do (timeout, abort: the failure handler). For
/// tests, `afterSending` runs once this device has sent everything and
/// before it receives. `traffic`, when given, receives the counts.
llvm::Expected<DeviceState>
migrateState(Communicator &communicator, ProcessPlacement from,
             ProcessPlacement to, DeviceState current,
             MigrationTraffic *traffic = nullptr,
             const std::function<void()> &afterSending = {});

/// A plan the run moves to after a given step, and the run's rest under it.
struct PlannedMigration {
  /// The next plan (its artifacts directory) and why the run moves; for a
  /// re-plan, on device 0, the decision with its prediction (the trace's).
  std::string directory, reason, decision;
  std::unique_ptr<PipelineModel> model;
  /// The run moves after this many updates (1 <= atStep < steps).
  int64_t atStep = 0;
  /// The run's settings under the next plan (its zero-bubble split; its
  /// frozen parameters: the current plan's and the next manifest's).
  ExecutorConfig config;
  /// The processes each of the next plan's devices runs as: its manifest's
  /// `replicas` (none: every device once).
  schedule::ReplicaLayout replicas;
  /// Every process's list of the rest of the run under the next plan
  /// (replicateSchedule; unreplicated, every device's), counted from the
  /// start of the run (shiftSchedule).
  schedule::Schedule rest;
  /// Per device, the next plan's memory for the run's setup (empty: none
  /// recorded).
  std::vector<int64_t> planBytes;
};

/// Prepares the move to `next` (named `name` in messages and the progress
/// line) after `atStep` updates of a run of `current` as `replicas` with
/// `config` (whose schedule covers the whole run): `next` must be a plan of
/// the same model (the same parameters, data inputs and micro-batch size)
/// that runs as as many processes (its devices times their replicas), and a
/// compiled plan's memory must fit the run's setup unless `allowOverBudget`.
/// A move to or from replicas runs with GPipe and 1F1B only. Refuses with a
/// message that names --migrate-at or --migrate-to.
llvm::Expected<PlannedMigration>
planMigration(const PipelineModel &current,
              const schedule::ReplicaLayout &replicas,
              const ExecutorConfig &config, std::unique_ptr<PipelineModel> next,
              llvm::StringRef name, int64_t atStep, bool allowOverBudget);

/// Checks that the run trains no parameter `migration`'s plan freezes (its
/// `config.frozen`: the current plan's frozen parameters and the next
/// manifest's) once it moves: `frozen` is what the run freezes from the
/// step after the boundary on (ftpipe-run --freeze's set at that step).
/// Frozen parameters move by value only, as they have no optimizer state.
llvm::Error checkFrozenAtMigration(const PlannedMigration &migration,
                                   const std::set<std::string> &frozen);

/// The same for the plan that ftpipe-compile wrote to `directory`.
llvm::Expected<PlannedMigration>
planMigration(const PipelineModel &current,
              const schedule::ReplicaLayout &replicas,
              const ExecutorConfig &config, llvm::StringRef directory,
              int64_t atStep, bool allowOverBudget);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_MIGRATION_H
