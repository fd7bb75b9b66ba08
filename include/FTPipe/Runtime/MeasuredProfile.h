//===- MeasuredProfile.h - A run's timelines as a profile -------*- C++ -*-===//
//
// What `ftpipe-run --profile-out FILE` writes: the run's timelines (every
// process's TraceEvents) summarised per stage and direction and per process
// in ProfileSchema.h's format, for the cost model to price ops with
// (`ftpipe-compile --profile FILE`). Steps after a warm-up count; a
// stage's figure is the median over those steps' micro-batches of the time
// spent in its code (waits for messages excluded, as RunTiming.h counts),
// a process's the median over the steps of its per-step totals.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_MEASUREDPROFILE_H
#define FTPIPE_RUNTIME_MEASUREDPROFILE_H

#include "FTPipe/Runtime/Executor.h"
#include "FTPipe/Runtime/ManifestSchema.h"
#include "FTPipe/Runtime/ProfileSchema.h"
#include "FTPipe/Schedule/Replicas.h"

namespace ftpipe {
namespace runtime {

/// The profile of the run described by `graph` and `config` (its steps and
/// micro-batches per step) from its per-process `traces` (`replicas` maps
/// processes to devices). `planned[s]`, the manifest's stage s (none for a
/// model without a manifest), gives the stage's `ops` and `recomputes`.
/// `source` says where the run came from; its `warmupSteps` (at most
/// steps - 1) are left out, and measureProfile sets `processes`,
/// `microBatches` and `steps` (the steps measured).
llvm::Expected<MeasuredProfile>
measureProfile(const schedule::StageGraph &graph,
               const schedule::ScheduleConfig &config,
               const std::vector<std::vector<TraceEvent>> &traces,
               const schedule::ReplicaLayout &replicas,
               const std::vector<ManifestStage> &planned, ProfileSource source);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_MEASUREDPROFILE_H
