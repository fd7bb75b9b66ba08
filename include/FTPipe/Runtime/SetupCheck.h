//===- SetupCheck.h - A run's setup against the plan's memory ---*- C++ -*-===//
//
// The manifest records the training setup a plan was made for and what the
// plan fixes about each device's memory. A run may use another setup (more
// micro-batches in flight, more weight versions, an optimizer with more
// state); before it starts, the runtime counts each device's memory for the
// run's setup by replaying the plan's lists for it (schedule::replayedMemory)
// and refuses a setup that does not fit by the planner's rule
// (schedule::checkMemory). No MLIR here.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_SETUPCHECK_H
#define FTPIPE_RUNTIME_SETUPCHECK_H

#include "FTPipe/Runtime/ArtifactManifest.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace ftpipe {
namespace runtime {

/// "schedule=async microbatches=8 optimizer=adam stashing=none".
std::string describeSetup(const schedule::TrainingSetup &setup);

/// Per device, what the plan counts for `run` on `replicas` (the run's
/// layout, which --replicas may make differ from the manifest's):
/// schedule::replayedMemory of the manifest's stages and `device_memory`;
/// empty when not recorded.
std::vector<schedule::DeviceMemory>
plannedMemory(const ArtifactManifest &manifest,
              const schedule::TrainingSetup &run,
              const schedule::ReplicaLayout &replicas);

/// Fails when a device does not fit in memory under `run` on `replicas` by
/// the planner's rule (schedule::checkMemory: its busiest replica's list
/// replayed, with replicas also while its all-reduce's buffer is held):
/// "SETUP does not fit in memory[ as replicas L]: device D needs ... ; the
/// plan was made for SETUP (--allow-over-budget runs it anyway)". Succeeds
/// when the manifest records no memory (artifacts of an older
/// ftpipe-compile, or a forward-only build).
llvm::Error checkRunMemory(const ArtifactManifest &manifest,
                           const schedule::TrainingSetup &run,
                           const schedule::ReplicaLayout &replicas);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_SETUPCHECK_H
