//===- ProfileSchema.h - Measured profiles, object by object ----*- C++ -*-===//
//
// The contract between the runtime, which measures a run (`ftpipe-run
// --profile-out`, MeasuredProfile.h), and the cost model, which prices ops
// with what was measured (`ftpipe-annotate-costs profile=`, `ftpipe-compile
// --profile`): one struct per object of the profile's JSON, each with its
// toJSON and fromJSON side by side (docs/CostModel.md, "Measured profiles").
// A reader refuses a missing or mistyped field naming its path
// ("profile.stages[1].fwd_ms: expected number"). The profile of an older
// form, a bare object from op scope to {"fwd_ms", "bwd_ms"}, reads as a
// profile with only `ops`. MLIR-free: both halves link it
// (FTPipeProfileSchema).
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_PROFILESCHEMA_H
#define FTPIPE_RUNTIME_PROFILESCHEMA_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ftpipe {
namespace runtime {

/// The format and the version a profile names (`format`, `version`).
inline constexpr const char *kProfileFormat = "ftpipe-profile";
inline constexpr int64_t kProfileVersion = 1;
/// The largest time a profile may give (ms), the partitioner's bound on one
/// op's time (partition::kMaxOpMs).
inline constexpr double kMaxProfileMs = 1e9;

/// Where the figures come from (`source`): the run's artifacts, machine and
/// setup, and how the per-action times were summarised.
struct ProfileSource {
  /// The artifact directory run, its target and the host it ran on.
  std::string artifacts, target, host;
  /// Processes of the run (MPI processes or threads), and its schedule.
  int64_t processes = 0;
  std::string schedule;
  /// Micro-batches per step; steps left out as warm-up, and measured.
  int64_t microBatches = 0, warmupSteps = 0, steps = 0;
  /// How a stage's per-micro-batch times become one figure ("median").
  std::string statistic = "median";
  /// Processes slowed down on purpose (`ftpipe-run --debug-slow`): process
  /// -> factor; their times include the slowdown.
  std::map<int64_t, double> slowdowns;
};

/// One stage (`stages[i]`): what its code took per micro-batch, waits for
/// messages excluded, and what it waited.
struct ProfileStage {
  int64_t id = 0, device = 0;
  /// The positions of its ops in the model function (the manifest's `ops`);
  /// empty: the stage cannot be priced by op (the profile still says how
  /// long it took).
  std::vector<int64_t> ops;
  /// Whether the stage's backward recomputed its forward first (the
  /// manifest's `recomputes`; not recorded: unknown, taken as no).
  /// backwardMs includes the recomputation, as measured; the cost model
  /// prices the backward proper (backwardOnlyMs).
  std::optional<bool> recomputes;
  double forwardMs = 0, backwardMs = 0;
  /// A split backward's input and weight parts (zero-bubble schedules);
  /// backwardMs is their sum.
  std::optional<double> inputMs, weightMs;
  /// Time the stage's calls waited for messages (its receives).
  double forwardWaitMs = 0, backwardWaitMs = 0;
  /// Micro-batches measured (per direction).
  int64_t samples = 0;
  /// The same forward and backward (its parts together) as the CPU time of
  /// the process's device thread (TraceEvent::cpuSeconds), medians: on the
  /// CPU target the compute itself, which unlike the wall times above leaves
  /// out the time the process waited for a core. Absent in profiles written
  /// before they were measured.
  std::optional<double> forwardCpuMs, backwardCpuMs;

  /// The forward and backward as measured: the wall times, or with
  /// `cpuTime` the CPU times (MeasuredProfile::pricesCpuTime).
  double measuredForwardMs(bool cpuTime) const {
    return cpuTime ? *forwardCpuMs : forwardMs;
  }
  double measuredBackwardMs(bool cpuTime) const {
    return cpuTime ? *backwardCpuMs : backwardMs;
  }
  /// The backward without the recomputed forward (the cost model's
  /// `bwd_ms`): the backward less the forward when the stage recomputes.
  double backwardOnlyMs(bool cpuTime = false) const {
    double forward = measuredForwardMs(cpuTime);
    double backward = measuredBackwardMs(cpuTime);
    return recomputes.value_or(false) ? std::max(0.0, backward - forward)
                                      : backward;
  }
};

/// One process (`processes[i]`): per measured step, medians.
struct ProfileProcess {
  int64_t process = 0, device = 0;
  /// First action's start to last action's end of the step.
  double stepMs = 0;
  /// In stage code, waiting for messages, in the optimizer update.
  double computeMs = 0, waitMs = 0, updateMs = 0;
  /// The CPU time of the process's device thread in the step's actions
  /// (TraceEvent::cpuSeconds): what the process computed, not counting the
  /// time it waited for a core on a loaded machine. Absent in profiles
  /// written before it was measured.
  std::optional<double> cpuMs;
};

/// Measured times of one op scope (`ops[scope]`, the older profile's
/// entries): they replace a stage's share for the ops of the scope.
struct ProfileTimes {
  double forwardMs = 0, backwardMs = 0;
};

struct MeasuredProfile {
  ProfileSource source;
  std::vector<ProfileStage> stages;
  std::vector<ProfileProcess> processes;
  std::map<std::string, ProfileTimes> ops;

  /// Whether the stages' CPU times are the ones to price with (the cost
  /// model, a re-plan's decision): a profile of the CPU target whose stages
  /// all have them. There the CPU time is the compute; wall times grow with
  /// the machine's load.
  bool pricesCpuTime() const {
    return source.target == "cpu" && !stages.empty() &&
           std::all_of(stages.begin(), stages.end(), [](const auto &stage) {
             return stage.forwardCpuMs.has_value();
           });
  }
};

llvm::json::Value toJSON(const ProfileSource &source);
bool fromJSON(const llvm::json::Value &value, ProfileSource &source,
              llvm::json::Path path);
llvm::json::Value toJSON(const ProfileStage &stage);
bool fromJSON(const llvm::json::Value &value, ProfileStage &stage,
              llvm::json::Path path);
llvm::json::Value toJSON(const ProfileProcess &process);
bool fromJSON(const llvm::json::Value &value, ProfileProcess &process,
              llvm::json::Path path);
llvm::json::Value toJSON(const ProfileTimes &times);
bool fromJSON(const llvm::json::Value &value, ProfileTimes &times,
              llvm::json::Path path);
/// Writes `format` and `version` too. fromJSON refuses another format or
/// version, stage ids that are not 0..S-1 in order, and a op listed in two
/// stages; a value without `format` is read as the older form (ops only).
llvm::json::Value toJSON(const MeasuredProfile &profile);
bool fromJSON(const llvm::json::Value &value, MeasuredProfile &profile,
              llvm::json::Path path);

/// Reads the profile at `path` (bounded like every input file); errors name
/// the file and the field.
llvm::Expected<MeasuredProfile> readProfile(llvm::StringRef path);
/// Writes `profile` to `path` (atomically).
llvm::Error writeProfile(llvm::StringRef path, const MeasuredProfile &profile);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_PROFILESCHEMA_H
