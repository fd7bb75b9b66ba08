//===- MemoryNeeds.h - What compiled stages need in memory ------*- C++ -*-===//
//
// A stage's memory needs (StageMemory) from its entry points in the manifest
// and the peaks ftpipe-record-peak-memory recorded for them, and what they
// fix about each device's memory in the planner's terms
// (schedule::DeviceMemoryInputs), so that the plan's figure in the manifest
// counts what the runtime keeps (DeviceExecutor::predictMemory replays the
// same needs action by action; the plan's figure bounds that replay for any
// schedule). Part of the manifest's library (FTPipeManifestSchema), which
// ftpipe-compile links instead of the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_MEMORYNEEDS_H
#define FTPIPE_RUNTIME_MEMORYNEEDS_H

#include "FTPipe/Runtime/ManifestSchema.h"
#include "FTPipe/Schedule/Schedule.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <vector>

namespace ftpipe {
namespace runtime {

struct ArtifactManifest;

/// What a stage's code needs in memory, as the compiler recorded it
/// (MemoryPrediction.h predicts a device's memory from it).
struct StageMemory {
  /// Bytes of the values one micro-batch's forward saves for its backward.
  int64_t savedBytes = 0;
  /// The most bytes of buffers the forward and the backward allocate at
  /// once, their results included (ftpipe-record-peak-memory).
  int64_t forwardPeakBytes = 0, backwardPeakBytes = 0;
  /// Bytes the forward and the backward send per micro-batch.
  int64_t forwardSendBytes = 0, backwardSendBytes = 0;
  /// The largest message the forward and the backward (its input part
  /// too) receive: the communicator holds it (MpiCommunicator: the message
  /// with its 8-byte header) beside the buffer the generated code receives
  /// it into until it is delivered.
  int64_t forwardReceiveBytes = 0, backwardReceiveBytes = 0;
  /// Bytes of one micro-batch's slices of the data inputs.
  int64_t dataBytes = 0;
  /// A split backward (StageProgram::splitsBackward()): the bytes kept from
  /// its input part to its weight part per micro-batch (what the input part
  /// returns for it and the saved values it reads itself), and the parts'
  /// recorded peaks.
  int64_t weightSavedBytes = 0;
  int64_t inputPeakBytes = 0, weightPeakBytes = 0;
  /// Whether the runtime keeps the saved values and W buffers in the
  /// buffers the generated code returned them in (adopted,
  /// HostAllocator.h), not in copies.
  bool adopted = false;

  /// The recorded peak of the entry point a task of `kind` calls (none for
  /// an update): what the generated code's buffers and the allocator's
  /// cache may hold during the task (DeviceExecutor limits the cache to it,
  /// HostAllocator.h), its results included.
  int64_t peakOf(schedule::ActionKind kind) const;
};

/// The recorded peak heap bytes of an entry point by name; none where the
/// artifact has no record of it.
using PeakLookup =
    llvm::function_ref<std::optional<int64_t>(const std::string &entry)>;

/// A stage's memory needs from its forward and backward entry points; none
/// when a peak is not recorded.
std::optional<StageMemory> stageMemory(const EntryPoint &forward,
                                       const EntryPoint &backward,
                                       PeakLookup peakOf);

/// `memory` with a split backward's needs: the bytes its input part returns
/// for its weight part and the parts' recorded peaks; none when a peak is not
/// recorded.
std::optional<StageMemory> splitMemory(StageMemory memory,
                                       const EntryPoint &input,
                                       const EntryPoint &weight,
                                       PeakLookup peakOf);

/// Replaces, in `inputs` (one per device, stages in increasing stage id as
/// the plan lists them), each stage's kept bytes per micro-batch by what the
/// runtime keeps per micro-batch in flight (the forward's saved values and
/// the messages it sends, which may wait for their receiver), and what each
/// task of the stage adds while it runs by its own entry point's recorded
/// peak (the runtime bounds the allocator's cache by it) with the
/// micro-batch's data slices: a forward's (`forwardWorkingBytes`, its saved
/// values among its results), a B's or I's (`recomputePeakBytes`, the
/// larger, the I's less the W buffer it returns, with the backward's
/// messages) and a W's (`weightWorkingBytes`); records those messages
/// (`forwardMessageBytes`, `backwardMessageBytes`: the replay of the lists
/// counts them while the sends may wait) and a split stage's W buffer (what
/// its input part returns for its weight part); and per device what an
/// update adds beside the cache the task before it left (the largest tied
/// parameter it owns) and its largest trained parameter. Fails naming what
/// does not match the manifest or lacks a peak.
llvm::Error
compiledMemoryInputs(const ArtifactManifest &manifest, PeakLookup peakOf,
                     std::vector<schedule::DeviceMemoryInputs> &inputs);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_MEMORYNEEDS_H
