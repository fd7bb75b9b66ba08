//===- MemoryNeeds.h - What compiled stages need in memory ------*- C++ -*-===//
//
// A stage's memory needs (StageMemory) from its entry points in the manifest
// and the peaks ftpipe-record-peak-memory recorded for them, and what they
// fix about each device's memory in the planner's terms
// (schedule::DeviceMemoryInputs), so that the plan's figure in the manifest
// counts what the runtime keeps (DeviceExecutor::predictMemory replays the
// same needs action by action; the plan's figure bounds that replay for any
// schedule).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_MEMORYNEEDS_H
#define FTPIPE_RUNTIME_MEMORYNEEDS_H

#include "FTPipe/Runtime/ArtifactManifest.h"
#include "FTPipe/Runtime/StageProgram.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <vector>

namespace ftpipe {
namespace runtime {

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
/// the messages it sends, which may wait for their receiver) and its
/// working bytes (`recomputePeakBytes`) by what one task of the stage adds
/// while it runs (the generated code's largest peak on the device, with the
/// allocator's cache, the micro-batch's data slices and the backward's
/// messages; a split backward's parts' peaks included), and sets a split
/// stage's W buffer (what its input part returns for its weight part). Fails
/// naming what does not match the manifest or lacks a peak.
llvm::Error
compiledMemoryInputs(const ArtifactManifest &manifest, PeakLookup peakOf,
                     std::vector<schedule::DeviceMemoryInputs> &inputs);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_MEMORYNEEDS_H
