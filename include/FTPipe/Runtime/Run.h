//===- Run.h - A training run, from options to gathered weights -*- C++ -*-===//
//
// The orchestration of a fine-tuning run, what `ftpipe-run` calls (the tool
// keeps its flags and its printing): open the model (compiled artifacts or
// the built-in tiny MLP), settle the training setup against the one the
// manifest records and the plan's memory, generate and dry-run the
// schedule, read and check weights and data, load a checkpoint to resume
// from, then run every device (threads of this process, or one MPI process
// each, or several: data-parallel replicas, Replicas.h) with step and
// checkpoint hooks, and gather the owners' weights and the timelines to
// device 0. Three calls, so a caller can stop between them: planTraining
// (up to the schedule: what --print-schedule prints), loadTraining
// (weights, data, checkpoints: nothing written yet) and runTraining.
//
// Errors before the run starts are returned. A device that fails during the
// run calls RunHooks::fatal, which must not return: its peers wait for its
// messages, and ending the process is what ends their waits.
//
// Messages name ftpipe-run's flags (the option a field comes from is in its
// comment), so the tool prints them as they are.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_RUNTIME_RUN_H
#define FTPIPE_RUNTIME_RUN_H

#include "FTPipe/Runtime/Checkpoint.h"
#include "FTPipe/Runtime/Evaluation.h"
#include "FTPipe/Runtime/HFCheckpoint.h"
#include "FTPipe/Runtime/Migration.h"
#include "FTPipe/Runtime/PipelineModel.h"
#include "FTPipe/Runtime/Replan.h"
#include "FTPipe/Runtime/RunFreezing.h"
#include "FTPipe/Runtime/RunTiming.h"
#include "FTPipe/Runtime/TinyMlp.h"
#include "FTPipe/Schedule/Replicas.h"
#include "FTPipe/Schedule/TrainingSetup.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace ftpipe {
namespace runtime {

/// Where the model comes from. A tiny-MLP field left unset takes the value
/// of a default TinyMlpShape; giving one together with `artifacts` is
/// refused.
struct ModelOptions {
  /// A directory that ftpipe-compile wrote (the positional argument).
  std::string artifacts;
  /// A built-in model (--model): "tiny-mlp".
  std::string builtin;
  /// The tiny MLP's stage devices (--placement, e.g. "0,1,2,0"), --hidden,
  /// --features and --micro-batch-size.
  std::optional<std::string> placement;
  std::optional<int64_t> hidden, features, microBatchSize;
  /// The tiny MLP's synthetic samples when no data set is given (--samples).
  int64_t samples = 64;
};

/// The training setup a run uses where neither the user nor the manifest
/// chose: 1F1B, 4 micro-batches, AdamW, one weight version.
inline constexpr schedule::TrainingSetup kDefaultRunSetup = {
    schedule::Kind::OneFOneB, 4, schedule::Optimizer::AdamW,
    schedule::WeightVersions::None, schedule::RecomputeMode::Always};

/// What a run is asked to do.
struct RunOptions {
  /// The training setup (--schedule, --micro-batches, --stashing,
  /// --optimizer): a field left unset takes the value the manifest records
  /// (the setup the plan was made for), else kDefaultRunSetup's.
  std::optional<schedule::Kind> schedule;
  std::optional<int64_t> microBatches;
  std::optional<schedule::WeightVersions> weightVersions;
  std::optional<schedule::Optimizer> optimizer;
  /// Run a setup that needs more memory than the plan's budget
  /// (--allow-over-budget).
  bool allowOverBudget = false;
  /// --lr, --warmup, --weight-decay, --steps.
  double lr = 1e-3;
  int64_t warmup = 0;
  double weightDecay = 0;
  int64_t steps = 10;
  /// Seed of the random init (and, plus one, of the tiny MLP's data).
  uint64_t seed = 1;
  /// Initial weights (--weights: a safetensors file or a Hugging Face
  /// checkpoint directory, HFCheckpoint.h); empty: the seeded init.
  std::string weightsPath;
  /// The data set (--data, safetensors); empty: the tiny MLP's synthetic
  /// data (refused for compiled artifacts).
  std::string dataPath;
  /// Devices as threads of this process (--devices); 0: one MPI process
  /// per device when started by mpirun, else threads, as many as the plan
  /// has.
  int64_t threads = 0;
  /// Seconds a device waits for a message (--timeout), and without a
  /// heartbeat before an MPI process is taken for failed
  /// (--failure-timeout).
  double timeout = 60, failureTimeout = 10;
  /// Checkpoints (--checkpoint-dir, --checkpoint-every: given together)
  /// and the checkpoint to continue from (--resume).
  std::string checkpointDir;
  std::optional<int64_t> checkpointEvery;
  std::string resumePath;
  /// Tests: pause 60 s inside the checkpoint after this many steps.
  int64_t debugCheckpointPause = -1;
  /// Where device 0 writes the final weights (--save: a safetensors file or a
  /// checkpoint directory) and every device's timeline (--trace, a Chrome /
  /// Perfetto trace); empty: nowhere. loadTraining checks that they can be
  /// written.
  std::string savePath, tracePath;
  /// Action lists to run instead of the schedule's own (--schedule-file:
  /// torch.distributed.pipelining's CSV of one step, repeated each step);
  /// empty: generated. Refused with --resume.
  std::string scheduleFile;
  /// How --save writes (--save-format file|hf|auto, --save-dtype,
  /// --save-shard-size: chooseSaveOptions).
  std::string saveFormat = "auto", saveDtype, saveShardSize = "5GB";
  /// A held-out data set (--eval-data, safetensors; empty: none), evaluated
  /// before training and every --eval-every updates, the evaluations
  /// written as CSV to --eval-csv (empty: nowhere). Evaluation.h.
  std::string evalDataPath;
  int64_t evalEvery = 1;
  std::string evalCsvPath;
  /// Compare the timelines with the simulator (--compare-simulator):
  /// records them, and refuses to resume.
  bool compareSimulator = false;
  /// With compareSimulator on a replicated run: the ring link rate in GB/s
  /// at which the simulator prices the gradient all-reduces
  /// (--allreduce-gbps; ftpipe-bench-allreduce measures it; 0: free).
  double allReduceGBps = 0;
  /// Write the run's measured profile here (--profile-out,
  /// MeasuredProfile.h; empty: nowhere), leaving out the first
  /// `profileWarmup` steps (--profile-warmup; at most steps - 1): records
  /// the timelines, and refuses to resume.
  std::string profilePath;
  int64_t profileWarmup = 1;
  /// Tests and demonstrations (--debug-slow=R:F): process R's stage calls
  /// take F times as long (ExecutorConfig::slowdown); -1: none.
  int64_t debugSlowProcess = -1;
  double debugSlowFactor = 1;
  /// Processes per device of the plan (--replicas: "2,1,2", "W" for every
  /// device, or "none"; schedule/Replicas.h); empty: the manifest's
  /// `replicas`, else one each. A replicated run needs MPI processes.
  std::string replicas;
  /// Tests and demonstrations of live migration (Migration.h): after
  /// --migrate-at steps the run moves to the plan in --migrate-to (another
  /// plan of the same model on as many devices); -1 and empty: never. For
  /// tests, every device pauses 60 s in the migration after sending its
  /// share (--debug-pause-in-migration).
  int64_t migrateAt = -1;
  std::string migrateTo;
  bool debugMigrationPause = false;
  /// Re-planning during the run (--replan, --replan-threshold,
  /// --replan-warmup; Replan.h): device 0 writes each measured profile and
  /// compiles each new plan under `replanDir` (--replan-dir; empty: a new
  /// directory under the system's temporary one) with `replanCompiler`
  /// (hidden --replan-compiler, for tests; empty: the ftpipe-compile
  /// beside this program, else the PATH's).
  ReplanPolicy replan;
  std::string replanDir, replanCompiler;
  /// Tests: device 0 waits for each compile at the step after it started
  /// (hidden --debug-replan-wait), so the decision's step is known.
  bool debugReplanWait = false;
  /// A freeze policy during the run (--freeze alpha=X|schedule=FILE,
  /// RunFreezing.h); empty: none.
  std::string freeze;
  /// --freeze-recompile (FreezeRecompile.h): when the policy freezes more,
  /// compile the model again with them frozen (in `replanDir`, with
  /// `replanCompiler`) and migrate to it.
  bool freezeRecompile = false;
  /// --freeze-recompile-args: ftpipe-compile arguments (separated by
  /// spaces) added after the recorded command of every freeze re-compile,
  /// e.g. "--replicas=auto" (a later flag wins over the recorded one).
  std::string freezeRecompileArgs;
  /// --activation-cache=MiB (ActivationCache.h): each device keeps the
  /// cached stages' outputs in up to this much host memory, the rest in a
  /// file under --activation-cache-dir (empty: the system's temporary
  /// directory); -1: no cache.
  int64_t activationCacheMiB = -1;
  std::string activationCacheDir;
  /// Tests (hidden --debug-keep-frozen-backwards): run the backwards of a
  /// frozen prefix's stages that SkippedBackwards.h skips (and no cache).
  bool keepFrozenBackwards = false;
};

/// A run: what every device's thread or process shares.
struct TrainingRun {
  std::unique_ptr<PipelineModel> model;
  /// The settled setup, learning rate and steps.
  ExecutorConfig config;
  /// The lists the devices run: the whole run, or its rest when resuming.
  schedule::Schedule schedule;
  /// zb-auto's lists kept within the devices' budgets under this setup
  /// (without --allow-over-budget; runSchedule): those of --resume and of
  /// the steps before a migration too.
  std::optional<schedule::TrainingSetup> listsBudget;
  /// Processes per device (RunOptions::replicas settled), and per process
  /// its list: `schedule` split among the replicas (replicateSchedule;
  /// loadTraining fills it, `schedule`'s lists when nothing is replicated).
  schedule::ReplicaLayout replicas;
  schedule::Schedule processLists;
  TensorMap weights, data;
  std::optional<CheckpointSetup> checkpoint;
  std::optional<LoadedCheckpoint> resumed;
  /// Per device, the plan's memory for the settled setup
  /// (runtime::plannedMemory of the manifest's `device_memory`; empty:
  /// none recorded).
  std::vector<int64_t> planBytes;
  /// With RunOptions::evalDataPath: the held-out set and its lists.
  std::optional<EvaluationSetup> evaluation;
  /// --save as a checkpoint directory (else one safetensors file).
  std::optional<HFSaveOptions> saveHF;
  /// With RunOptions::migrateTo: the plan the run moves to and the rest of
  /// the run under it; `schedule` and `processLists` then end at the step
  /// boundary where it moves.
  std::optional<PlannedMigration> migration;
  /// With RunOptions::freeze: the frozen set per step.
  std::optional<RunFreezing> freezing;
};

/// What a device did in the whole run, for its closing lines.
struct DeviceSummary {
  /// The device (of a replicated run: the process).
  int64_t device = 0;
  /// Wall time of its steps and the part spent computing.
  double seconds = 0, computeSeconds = 0;
  /// Its memory line (formatDeviceMemory: measured, predicted, resident).
  std::string memory;
};

/// What the caller sees while the run goes. The library calls these under
/// one lock, so a caller may print from them without its own.
struct RunHooks {
  /// After each update of each device (step counted from the run's start).
  std::function<void(int64_t device, const StepReport &)> onStep;
  /// Once per device after its last step.
  std::function<void(const DeviceSummary &)> onDeviceDone;
  /// An evaluation of the held-out set, on the device that computes the
  /// loss (formatEvaluation gives its line).
  std::function<void(int64_t device, const EvaluationReport &)> onEvaluation;
  /// A line for a person (e.g. that the run resumes a checkpoint).
  std::function<void(const std::string &)> onNote;
  /// A device failed during the run (its peers are aborted first). Must not
  /// return. Unset: prints "ftpipe: <message>" and exits with status 1.
  std::function<void(const std::string &)> fatal;
};

/// What a run leaves on device 0 (or the only process).
struct TrainingResult {
  /// False on the other processes of an MPI run: they hold nothing.
  bool gathered = false;
  /// Every parameter's final value (its owner's).
  TensorMap weights;
  /// Per device its timeline (with RunOptions::tracePath or
  /// compareSimulator).
  std::vector<std::vector<TraceEvent>> traces;
  /// With RunOptions::compareSimulator: per process its host and CPUs
  /// (device threads: the process's, once per device), and the timelines
  /// against the simulator's for the same lists.
  std::vector<ProcessCpus> cpus;
  std::optional<RunTiming> timing;
};

/// "step 3 loss 0.123456 samples/s 812.0 idle(device 1) 0.250\n": a step's
/// line (samples per second of `run`'s micro-batches).
std::string formatStep(const TrainingRun &run, int64_t device,
                       const StepReport &report);

/// "device 1: 2.000 s, computing 1.500 s (idle 25.0%)\n" and the device's
/// memory line.
std::string formatDeviceSummary(const DeviceSummary &summary);

/// The largest --hidden, --features, --micro-batch-size, --samples and
/// device number of the tiny MLP.
inline constexpr int64_t kMaxTinyMlpSize = 1 << 16;

/// The model of `options`: compiled artifacts or the built-in tiny MLP.
llvm::Expected<std::unique_ptr<PipelineModel>>
openModel(const ModelOptions &options);

/// Opens the model, settles the setup (refusing one that exceeds the plan's
/// memory unless allowed), checks the run's limits and generates and
/// dry-runs the schedule. Reads no weights or data.
llvm::Expected<TrainingRun> planTraining(const ModelOptions &model,
                                         const RunOptions &options);

/// Refuses a schedule the executor cannot run yet, then reads and checks
/// the weights and the data set, when resuming loads and verifies the
/// checkpoint (whose weights and rest of the run replace the planned ones),
/// and checks the output paths. Writes nothing.
llvm::Error loadTraining(TrainingRun &run, const ModelOptions &model,
                         const RunOptions &options);

/// Runs every device of `run` (MPI processes when started by mpirun and no
/// threads are asked for, else threads) and gathers the result to device
/// 0, which writes the final weights, compares the timelines with the
/// simulator and writes them, in that order. `argc` and `argv` are main's,
/// for MPI_Init. Errors before any device exists are returned; in an MPI
/// process every error after MPI_Init goes to RunHooks::fatal (returning
/// would finalize MPI while the other processes wait for this one).
llvm::Expected<TrainingResult> runTraining(TrainingRun &run,
                                           const RunOptions &options,
                                           const RunHooks &hooks, int *argc,
                                           char ***argv);

/// Whether this process was started by mpirun (OpenMPI's or a PMI one).
bool launchedByMpirun();

/// Runs `mpirun -np processes --oversubscribe` with this program and its
/// command line minus `--np` (as root, OpenMPI also wants
/// OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1); returns its
/// exit status. Unless OMPI_MCA_orte_tmpdir_base is set, mpirun keeps its
/// session directory in a new temporary directory of its own, removed after
/// it (OpenMPI 4's shared one races between mpiruns started at once).
llvm::Expected<int> relaunchUnderMpirun(int argc, char **argv,
                                        int64_t processes);

} // namespace runtime
} // namespace ftpipe

#endif // FTPIPE_RUNTIME_RUN_H
