//===- Checkpoint.h - Atomic checkpoints and exact resume -------*- C++ -*-===//
//
// A checkpoint of a pipeline run after k updates is a directory
// `steps-<k>` under the run's checkpoint directory:
//  - per device d, `weights-device-<d>.safetensors` (the parameters d owns,
//    Hugging Face names, `format: pt`) and `optimizer-device-<d>.safetensors`
//    (their optimizer state, Optimizer::saveState's names), each with the
//    updates, data position, seed and device in its metadata;
//  - `manifest.json`, written last: updates done, the next micro-batch (the
//    data position), the random state, the identity of the model, plan and
//    training setup (RunIdentity), and every file's size and checksum.
// Every device writes its files into `.partial-steps-<k>` (each through a
// temporary name, fsync, rename); device 0 gathers their sizes and
// checksums over the communicator, writes the manifest the same way, then
// renames the directory to `steps-<k>` and removes the older checkpoints.
// A checkpoint is therefore complete (`steps-<k>` with its manifest) or
// absent; a writer killed half-way leaves a `.partial-` directory that
// loading ignores and the next commit of that step replaces.
// Files are created without following links and renamed by descriptor; a
// checkpoint directory holds a marker file, and rotation deletes only
// directories with it, and in them only files a checkpoint writes
// (lib/Support/OutputFiles.cpp): a link or a foreign file planted in the
// checkpoint directory is refused, never followed or deleted.
//
// Loading checks everything before a run starts: the manifest, each file's
// size and checksum, and the identity (another model, plan or training
// setup is refused with what differs).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_CHECKPOINT_H
#define FTPIPE_RUNTIME_CHECKPOINT_H

#include "FTPipe/Runtime/PipelineModel.h"

#include "llvm/Support/JSON.h"

namespace ftpipe {
namespace runtime {

/// What a checkpoint must agree on with the run that resumes it.
struct RunIdentity {
  /// Every parameter: name -> {dtype, shape}.
  llvm::json::Object model;
  /// Devices, each stage's device and producers, each parameter's holders.
  llvm::json::Object plan;
  /// Optimizer kind, micro-batches per step, micro-batch size, the data
  /// set's tensor names, shapes and checksum (the data position counts
  /// micro-batches of this set), and the frozen parameters' names (`frozen`,
  /// only when some are).
  llvm::json::Object training;
};

RunIdentity identifyRun(const PipelineModel &model,
                        const ExecutorConfig &config, const TensorMap &data);

/// Where and how often a run writes checkpoints.
struct CheckpointSetup {
  std::string directory;
  RunIdentity identity;
  /// The seed of the initial weights (the runtime draws no random numbers
  /// after initialisation; recorded as the random state).
  uint64_t seed = 0;
  /// For tests: every device sleeps this long in the checkpoint after
  /// `pauseAtUpdates` updates, between writing its temporary files and
  /// renaming them (a kill then lands in the middle of a write).
  int64_t pauseAtUpdates = -1;
  double pauseSeconds = 0;
};

/// The file that marks a checkpoint directory (`steps-<k>`, `.partial-...`)
/// as FTPipe's: rotation deletes only directories that hold it.
inline constexpr const char *kCheckpointMarker = ".ftpipe-checkpoint";

/// Refuses, before a run writes anything, a checkpoint directory holding a
/// `steps-<k>` or `.partial-steps-<k>` entry that checkpoints would replace
/// or delete but that is not FTPipe's (a link, another user's directory, a
/// directory without the marker).
llvm::Error checkCheckpointDirectory(llvm::StringRef path);

/// Device `communicator.device()`'s part of the checkpoint after `updates`
/// updates: writes its files, and on device 0 gathers every device's file
/// records and commits the checkpoint. Every device calls it at the same
/// update. `freezePolicy`, when not null, is the state of the run's freeze
/// policy (the same on every device; device 0's is written, as the
/// manifest's `freeze_policy`).
llvm::Error saveCheckpoint(Communicator &communicator,
                           const CheckpointSetup &setup, int64_t updates,
                           const TensorMap &ownedWeights,
                           const TensorMap &optimizerState,
                           const llvm::json::Value &freezePolicy = nullptr);

/// A verified checkpoint.
struct LoadedCheckpoint {
  std::string directory;
  /// Updates done; the run continues with update `updates`, micro-batch
  /// `updates * M`.
  int64_t updates = 0;
  /// Every parameter of the model.
  TensorMap weights;
  /// Per device, the optimizer state of the parameters it owns.
  std::vector<TensorMap> optimizerState;
  /// The freeze policy's state (`freeze_policy`; null: none recorded).
  llvm::json::Value freezePolicy = nullptr;
};

/// The checkpoint at `path`: a `steps-<k>` directory, or a checkpoint
/// directory holding them (the newest complete one is taken; `.partial-`
/// ones are ignored). Verifies sizes, checksums and `expected`; reads
/// nothing else and writes nothing.
llvm::Expected<LoadedCheckpoint> loadCheckpoint(llvm::StringRef path,
                                                const RunIdentity &expected);

/// The actions of a run resumed after `updates` updates: the schedule of
/// the remaining steps with its micro-batches and updates counted from the
/// start of the run (micro-batch m becomes m + updates * M, update k
/// becomes k + updates). With GPipe and 1F1B (a flush at every step) this is
/// exactly the rest of the uninterrupted run's lists; an async schedule
/// refills the pipeline here, which the uninterrupted run did not.
void shiftSchedule(schedule::Schedule &schedule, int64_t updates,
                   int64_t microBatches);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_CHECKPOINT_H
