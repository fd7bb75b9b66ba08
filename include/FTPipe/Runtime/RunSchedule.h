//===- RunSchedule.h - The action lists a run executes ----------*- C++ -*-===//
//
// What ftpipe-run executes: schedule::generate's lists, and for zb-auto
// (which needs stage costs) generateZeroBubbleAuto's. Zero-bubble kinds split
// the backwards of the stages whose programs have input and weight parts
// (contract version 2); the others keep their whole backward.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_RUNSCHEDULE_H
#define FTPIPE_RUNTIME_RUNSCHEDULE_H

#include "FTPipe/Runtime/ArtifactManifest.h"
#include "FTPipe/Schedule/Schedule.h"

namespace ftpipe {
namespace runtime {

/// Per stage, whether the manifest lists a split backward for it.
std::vector<bool> splitStages(const ArtifactManifest &manifest);

/// The lists of `config` on `graph`. zb-auto schedules equal stage costs
/// (F = I = W = 1, a whole backward 2) over free transfers: the runtime has
/// no per-stage profile of a compiled model yet.
llvm::Expected<schedule::Schedule>
generateRunSchedule(const schedule::StageGraph &graph,
                    const schedule::ScheduleConfig &config);

/// Lists read from torch.distributed.pipelining's CSV (TorchCsv.h: one step,
/// rank r as device r, torch's stage index as ours), repeated for each of
/// `config.steps` steps with their micro-batches and updates renumbered. The
/// caller dry-runs them against `config` (its kind and split stages).
llvm::Expected<schedule::Schedule>
scheduleFromTorchCsv(llvm::StringRef text,
                     const schedule::ScheduleConfig &config);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_RUNSCHEDULE_H
