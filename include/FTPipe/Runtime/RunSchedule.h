//===- RunSchedule.h - The action lists a run executes ----------*- C++ -*-===//
//
// What ftpipe-run executes: schedule::generate's lists, and for zb-auto
// (which needs stage costs) generateZeroBubbleAuto's. Zero-bubble kinds split
// the backwards of the stages whose programs have input and weight parts
// (contract version 2); the others keep their whole backward. runSchedule is
// the one maker of a run's lists for a plan (its manifest's costs and bytes).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_RUNSCHEDULE_H
#define FTPIPE_RUNTIME_RUNSCHEDULE_H

#include "FTPipe/Runtime/ArtifactManifest.h"
#include "FTPipe/Schedule/Schedule.h"
#include "FTPipe/Schedule/ZeroBubble.h"

namespace ftpipe {
namespace runtime {

class PipelineModel;

/// Per stage, whether the manifest lists a split backward for it.
std::vector<bool> splitStages(const ArtifactManifest &manifest);

/// Per stage, the times (ms on the stage's device) zb-auto plans with: the
/// forward, and the backward's input and weight parts (a stage that does
/// not split runs them as one backward).
struct StageCosts {
  std::vector<double> forwardMs, inputMs, weightMs;
};

/// The planner's stage times the manifest records (`forward_ms`,
/// `backward_ms`, `backward_weight_ms`; ftpipe-compile writes them), when
/// every stage has them.
std::optional<StageCosts> plannedCosts(const ArtifactManifest &manifest);

/// The lists of `config` on `graph`. zb-auto schedules `costs` over free
/// transfers (the manifest records no message times), or equal costs
/// (F = I = W = 1) without them, each device within `limits` (none: no
/// bound); zb-h1 keeps each device within its 1F1B peak when `limits` gives
/// the stages' bytes (schedule::generate).
llvm::Expected<schedule::Schedule>
generateRunSchedule(const schedule::StageGraph &graph,
                    const schedule::ScheduleConfig &config,
                    const std::optional<StageCosts> &costs = std::nullopt,
                    const schedule::ZeroBubbleLimits &limits = {});

/// The lists a run of `config` executes on a plan: its stage `graph` and,
/// for a compiled plan, its `manifest` (nullptr: none). The one maker of
/// them: ftpipe-run's start, --resume, a migration's lists before and after
/// its step, a re-plan's predictions. generateRunSchedule with the
/// manifest's planned costs and, where it records its `device_memory`, the
/// stages' bytes (schedule::zeroBubbleLimits): zb-h1 keeps each device
/// within its 1F1B peak; zb-auto keeps each device within its budget under
/// `*budget` (ftpipe-run's start without --allow-over-budget), and without
/// `budget` schedules over unbounded memory.
llvm::Expected<schedule::Schedule>
runSchedule(const schedule::StageGraph &graph, const ArtifactManifest *manifest,
            const schedule::ScheduleConfig &config,
            const schedule::TrainingSetup *budget = nullptr);

/// runSchedule on `model`'s stage graph and, when it is compiled, its
/// manifest.
llvm::Expected<schedule::Schedule>
runSchedule(const PipelineModel &model, const schedule::ScheduleConfig &config,
            const schedule::TrainingSetup *budget = nullptr);

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
