//===- Replan.h - Re-planning a running pipeline from measurements -*- C++
//-*-===//
//
// `ftpipe-run --replan auto|every=N`: after a warm-up, the run's measured
// stage times become a profile (MeasuredProfile.h), device 0 compiles the
// same model with it in a child process (`ftpipe-compile --profile`, the
// command the manifest records in `compile`) while training goes on, and
// when the new plan is predicted faster than the current one by more than a
// threshold, and fits, every device migrates to it at a step boundary
// (Migration.h). This file holds the parts that are not the devices' loop
// (lib/Runtime/RunDevices.cpp): the policy and when a re-plan is due, the
// prediction of both plans' step time under the same measured costs, the
// decision, the compile child process, and the per-step control exchange.
// docs/Migration.md says when a re-plan happens and what is guaranteed.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_REPLAN_H
#define FTPIPE_RUNTIME_REPLAN_H

#include "FTPipe/Runtime/ArtifactManifest.h"
#include "FTPipe/Runtime/Communicator.h"
#include "FTPipe/Runtime/CompiledModel.h"
#include "FTPipe/Runtime/Executor.h"
#include "FTPipe/Runtime/PipelineModel.h"
#include "FTPipe/Runtime/ProfileSchema.h"
#include "FTPipe/Schedule/Schedule.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/Program.h"

#include <optional>
#include <string>
#include <vector>

namespace ftpipe {
namespace runtime {

/// The most steps a plan's measurements span: the last ones after its
/// warm-up (a drift shows in recent steps; older ones need not be kept).
inline constexpr int64_t kReplanWindowSteps = 32;

/// When a run re-plans (--replan, --replan-threshold, --replan-warmup).
struct ReplanPolicy {
  enum class Mode { Off, Auto, Every };
  Mode mode = Mode::Off;
  /// Mode::Every: a re-plan every this many steps.
  int64_t every = 0;
  /// A new plan is taken when predicted faster by more than this share of
  /// the current plan's step time; Mode::Auto also re-plans again when the
  /// measured busiest / mean drifts above the plan's by more than it.
  double threshold = 0.05;
  /// Steps of each plan left out of its measurements (the first steps
  /// after the start or a migration).
  int64_t warmup = 2;
  bool enabled() const { return mode != Mode::Off; }
};

/// The policy of `--replan MODE` ("auto", "every=N" or "off"), with the
/// threshold (a share, 0 .. 1) and warm-up (steps, at least 0). Messages
/// name the flags.
llvm::Expected<ReplanPolicy>
parseReplanPolicy(llvm::StringRef mode, double threshold, int64_t warmup);

/// Largest over mean of `values` (1 when empty or all zero).
double busiestOverMean(llvm::ArrayRef<double> values);

/// The measured steps auto needs before it compares a plan's balance with
/// its baseline (fewer are too noisy to call a drift).
inline constexpr int64_t kReplanDriftSteps = 8;

/// Where device 0's re-planning stands.
struct ReplanState {
  /// Steps done when the running plan started (0, or a migration's step).
  int64_t planStart = 0;
  bool compiling = false;
  /// Whether the run re-planned before (auto's first re-plan is made).
  bool replanned = false;
  /// The busiest / mean the plan's drift is measured from (auto): the
  /// plan's own first full window after a migration, the one measured when
  /// a new plan was not taken; unset until known.
  std::optional<double> baseline;
};

/// Whether device 0 starts a re-plan after `updates` steps: the running
/// plan's window (its steps after the warm-up) is not empty, no compile is
/// running, and every=N: `updates` is a multiple of N; auto: the run has
/// not re-planned yet, or the window has kReplanDriftSteps steps and its
/// `measuredBalance` (busiest / mean of the processes' median compute)
/// exceeds the baseline by more than the threshold.
bool replanDue(const ReplanPolicy &policy, int64_t updates,
               const ReplanState &state, double measuredBalance);

/// A plan's predicted step: the time of one step of its schedule and the
/// busiest / mean of its devices' compute.
struct PlanPrediction {
  double stepMs = 0, balance = 1;
  std::vector<double> deviceMs;
};

/// Simulates one step of `config`'s schedule over `graph` with per-stage
/// forward and backward times (ms per micro-batch; free transfers, as
/// --compare-simulator does): the lists the run executes on the plan
/// (runSchedule, with the plan's `manifest` when it is compiled).
llvm::Expected<PlanPrediction>
predictStep(const schedule::StageGraph &graph,
            const schedule::ScheduleConfig &config,
            llvm::ArrayRef<double> forwardMs, llvm::ArrayRef<double> backwardMs,
            const ArtifactManifest *manifest = nullptr);

/// The running plan priced with what it measured (`profile`'s stages; their
/// CPU times where the cost model prices with those, pricesCpuTime);
/// `manifest` as predictStep's.
llvm::Expected<PlanPrediction> predictMeasured(
    const schedule::StageGraph &graph, const schedule::ScheduleConfig &config,
    const MeasuredProfile &profile, const ArtifactManifest *manifest = nullptr);

/// A compiled plan priced with its manifest's stage times (`forward_ms`,
/// `backward_ms`: the planner's, from the measured profile it was compiled
/// with); refuses a manifest that records none.
llvm::Expected<PlanPrediction>
predictPlanned(const schedule::StageGraph &graph,
               const schedule::ScheduleConfig &config,
               const ArtifactManifest &manifest);

/// Whether to move to the next plan, and why (one line for a person).
struct ReplanDecision {
  bool migrate = false;
  /// Predicted gain: 1 - next / current step time.
  double gain = 0;
  std::string reason;
};

/// Migrate when the next plan is usable (`unusable` empty: it fits memory
/// and is a plan of the running model) and predicted faster than the
/// current one by more than `threshold`.
ReplanDecision decideReplan(const PlanPrediction &current,
                            const PlanPrediction &next, double threshold,
                            llvm::StringRef unusable = {});

/// `ftpipe-compile` re-planning the running model in a child process, its
/// output in a log file. Training goes on while it runs.
class PlanCompile {
public:
  /// Starts `compiler` with the recorded `command` plus `--profile profile`
  /// (unless empty) and `-o directory`, its output to `log`.
  static llvm::Expected<PlanCompile> start(llvm::StringRef compiler,
                                           const ManifestCompile &command,
                                           llvm::StringRef profile,
                                           llvm::StringRef directory,
                                           llvm::StringRef log);
  /// Unset while it runs (`wait`: waits for its end); then success, or
  /// why it failed (its exit status and the last lines of its log).
  std::optional<llvm::Error> poll(bool wait = false);
  /// A finished compile's plan, opened, with where it is and how long the
  /// compile took.
  struct Plan {
    std::unique_ptr<CompiledModel> model;
    std::string directory;
    double seconds = 0;
    /// The compile's CPU time (user + system; unset where the system does
    /// not say).
    std::optional<double> cpuSeconds;
  };
  /// `poll`, then the plan opened: unset while the compile runs; why it
  /// failed, or why its plan does not open.
  std::optional<llvm::Expected<Plan>> finish(bool wait = false);
  /// Ends it (SIGTERM) and waits for it: a run that ends does not wait for
  /// a plan it can no longer use.
  void stop();

private:
  llvm::sys::ProcessInfo process;
  std::string outputDirectory, logPath;
  double startSeconds = 0;
  std::optional<double> cpuSeconds;
};

/// Per device, the ops of `model`'s stages on it ("12/30"; "?" for a model
/// without a manifest).
std::string opsPerDevice(const PipelineModel &model);

/// Device 0's word to every device at a step boundary.
struct ReplanControl {
  enum class Action : int64_t { Continue, Measure, Migrate };
  Action action = Action::Continue;
  /// Migrate: the next plan's directory.
  std::string directory;
  /// Migrate, on device 0 only (not sent): the decision, with the predicted
  /// gain ("taken: predicted step ...").
  std::string reason;
};

/// The exchange every device makes after each update of a re-planning run:
/// each sends device 0 its step's compute seconds; device 0 calls `decide`
/// with them (indexed by device) and sends every device its answer, which
/// all return. Waits end as the communicator's do. `step` tells the
/// messages apart.
ReplanControl exchangeReplanControl(
    Communicator &communicator, int64_t step, double computeSeconds,
    const std::function<ReplanControl(std::vector<double>)> &decide);

/// Device 0's side of re-planning: what it measured of the running plan,
/// the compile in flight, and its decisions, said in lines for a person
/// (`note`). Every call comes at a step boundary, after `updates` steps.
class ReplanCoordinator {
public:
  struct Setup {
    ReplanPolicy policy;
    /// Where profiles and plans go (created when first needed; empty: a
    /// new temporary directory) and the compiler to start.
    std::string directory, compiler;
    /// Processes slowed on purpose (--debug-slow), for the profiles.
    std::map<int64_t, double> slowdowns;
    bool allowOverBudget = false;
    /// Tests: wait for a compile at the step after it started, so that the
    /// decision's step does not depend on the machine's speed.
    bool waitForCompile = false;
    std::function<void(const std::string &)> note;
  };
  explicit ReplanCoordinator(Setup setup) : setup(std::move(setup)) {}
  ~ReplanCoordinator() { finish(); }

  /// After each step of `current` (run with `config`): the processes'
  /// compute seconds in it. Polls the compile in flight and decides on its
  /// plan when it finished; else says whether to measure now.
  ReplanControl afterStep(int64_t updates, llvm::ArrayRef<double> compute,
                          const PipelineModel &current,
                          const ExecutorConfig &config);
  /// After a Measure: every process's timeline (gatherTraces) becomes a
  /// profile of the window, and the compile starts (a failure to start is
  /// said, and the run goes on).
  void measured(int64_t updates,
                const std::vector<std::vector<TraceEvent>> &traces,
                const PipelineModel &current, const ExecutorConfig &config);
  /// After a Migrate: the run took the plan `afterStep` proposed.
  void migrated(int64_t updates);
  /// Stops a compile still running (the end of the run).
  void finish();

private:
  Setup setup;
  int64_t replans = 0;
  ReplanState state;
  /// Per step of the current plan's warm-up and window, the processes'
  /// compute seconds.
  std::vector<std::vector<double>> computes;
  std::optional<PlanCompile> compile;
  MeasuredProfile profile;
  double measuredBalance = 1, decidedAt = 0;
  /// Busiest / mean of the processes' median compute over the window.
  double windowBalance() const;
  /// The first step of the window after `updates` steps.
  int64_t windowStart(int64_t updates) const;
  std::string prefix() const;
};

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_REPLAN_H
