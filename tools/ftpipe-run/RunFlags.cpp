//===- RunFlags.cpp - ftpipe-run's flags, by area
//---------------------------===//
//
// Every flag of ftpipe-run, one llvm::cl::OptionCategory per area (the
// model, the training setup, weights and data, processes, checkpoints, the
// schedule and its timing). A flag that maps onto a field of RunFlags is
// stored in it (cl::location), so the field's initial value is the flag's
// default; a flag whose field is optional, or whose value names an enum, is
// read after parsing (parseRunFlags).
//
//===----------------------------------------------------------------------===//

#include "RunFlags.h"

#include "llvm/Support/CommandLine.h"

using namespace ftpipe;
using namespace ftpipe::runtime;
namespace cl = llvm::cl;

static RunFlags parsed;
template <typename T> using field = cl::opt<T, /*ExternalStorage=*/true>;

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

static cl::OptionCategory modelCategory("Model");
static field<std::string> artifacts(cl::Positional, cl::desc("[artifacts dir]"),
                                    cl::location(parsed.model.artifacts),
                                    cl::cat(modelCategory));
static field<std::string> model("model", cl::desc("built-in model: tiny-mlp"),
                                cl::location(parsed.model.builtin),
                                cl::cat(modelCategory));
// The tiny MLP's flags: a flag not given leaves the shape's default.
static cl::opt<std::string> placement(
    "placement",
    cl::desc("tiny-mlp: device of each stage, e.g. 0,1,2,0 (Mixed-Pipe)"),
    cl::cat(modelCategory));
static cl::opt<int64_t> hidden("hidden", cl::desc("tiny-mlp hidden width"),
                               cl::cat(modelCategory));
static cl::opt<int64_t> features("features", cl::desc("tiny-mlp features"),
                                 cl::cat(modelCategory));
static cl::opt<int64_t> microBatchSize("micro-batch-size",
                                       cl::desc("samples per micro-batch"),
                                       cl::cat(modelCategory));
static field<int64_t>
    samples("samples", cl::desc("tiny-mlp without --data: synthetic samples"),
            cl::location(parsed.model.samples), cl::cat(modelCategory));

//===----------------------------------------------------------------------===//
// The training setup: its flags default to the setup the manifest records
// (ftpipe-compile's --schedule, --microbatches, --stashing, --optimizer),
// else to kDefaultRunSetup's.
//===----------------------------------------------------------------------===//

static cl::OptionCategory setupCategory("Training setup");
static cl::opt<std::string>
    scheduleName("schedule", cl::desc("gpipe, 1f1b, async, zb-h1 or zb-auto"),
                 cl::cat(setupCategory));
static cl::opt<int64_t> microBatches("micro-batches",
                                     cl::desc("micro-batches per step"),
                                     cl::cat(setupCategory));
static cl::opt<std::string> stashingName("stashing",
                                         cl::desc("none, stash or 2bw"),
                                         cl::cat(setupCategory));
static cl::opt<std::string>
    optimizerName("optimizer", cl::desc("sgd, adam, adamw or adafactor"),
                  cl::cat(setupCategory));
static field<double> lr("lr", cl::desc("learning rate"),
                        cl::location(parsed.run.lr), cl::cat(setupCategory));
static field<int64_t> warmup("warmup", cl::desc("warm-up updates"),
                             cl::location(parsed.run.warmup),
                             cl::cat(setupCategory));
static field<double> weightDecay("weight-decay", cl::desc("weight decay"),
                                 cl::location(parsed.run.weightDecay),
                                 cl::cat(setupCategory));
static field<int64_t> steps("steps", cl::desc("optimizer steps"),
                            cl::location(parsed.run.steps),
                            cl::cat(setupCategory));
static field<bool> allowOverBudget(
    "allow-over-budget",
    cl::desc("run a setup that needs more memory than a device's budget "
             "by the plan's memory model"),
    cl::location(parsed.run.allowOverBudget), cl::cat(setupCategory));
static field<std::string> freeze(
    "freeze",
    cl::desc("freeze a growing prefix of the model's layers during the run: "
             "alpha=X (PipeTransformer's schedule, per epoch), "
             "gradient-norm[,threshold=X][,every=N] (a layer freezes when "
             "its accumulated gradient norm settles) or schedule=FILE "
             "('STEP DEPTH' lines); docs/Freezing.md"),
    cl::location(parsed.run.freeze), cl::cat(setupCategory));
static field<bool> freezeRecompile(
    "freeze-recompile",
    cl::desc("when --freeze freezes more, compile the model again with "
             "them frozen in the background (in --replan-dir) and migrate "
             "to it, so their backward is gone"),
    cl::location(parsed.run.freezeRecompile), cl::cat(setupCategory));
static field<std::string> freezeRecompileArgs(
    "freeze-recompile-args",
    cl::desc("ftpipe-compile arguments (separated by spaces) added to every "
             "freeze re-compile's command; under MPI a re-compile already "
             "asks --replicas=auto where ftpipe-compile partitioned the "
             "model (the planner may give the devices the frozen prefix "
             "frees to replicas): --replicas=none here keeps one pipeline"),
    cl::location(parsed.run.freezeRecompileArgs), cl::cat(setupCategory));
static field<int64_t> activationCache(
    "activation-cache",
    cl::desc("replay the outputs of stages with only frozen parameters "
             "(compiled frozen) for samples seen before, keeping up to this "
             "many MiB per device in memory and the rest in a file; "
             "docs/Freezing.md"),
    cl::value_desc("MiB"), cl::location(parsed.run.activationCacheMiB),
    cl::cat(setupCategory));
static field<std::string> activationCacheDir(
    "activation-cache-dir",
    cl::desc("where --activation-cache keeps what does not fit in memory "
             "(default: the system's temporary directory)"),
    cl::value_desc("dir"), cl::location(parsed.run.activationCacheDir),
    cl::cat(setupCategory));

//===----------------------------------------------------------------------===//
// Weights and data
//===----------------------------------------------------------------------===//

static cl::OptionCategory dataCategory("Weights and data");
static field<std::string> dataPath("data", cl::desc("data set (safetensors)"),
                                   cl::location(parsed.run.dataPath),
                                   cl::cat(dataCategory));
static field<std::string>
    weightsPath("weights",
                cl::desc("initial weights: a safetensors file or a Hugging "
                         "Face checkpoint directory (sharded, bf16/f16/f32)"),
                cl::location(parsed.run.weightsPath), cl::cat(dataCategory));
static field<uint64_t> seed("seed", cl::desc("seed of the random init"),
                            cl::location(parsed.run.seed),
                            cl::cat(dataCategory));
static field<std::string> savePath("save",
                                   cl::desc("write the final weights here"),
                                   cl::location(parsed.run.savePath),
                                   cl::cat(dataCategory));
static field<std::string> saveFormat(
    "save-format",
    cl::desc("file (one safetensors file), hf (a checkpoint directory that "
             "from_pretrained loads) or auto (hf when --weights is a "
             "directory)"),
    cl::location(parsed.run.saveFormat), cl::cat(dataCategory));
static field<std::string>
    saveDtype("save-dtype",
              cl::desc("hf: bf16, f16 or f32 (default: the checkpoint's)"),
              cl::location(parsed.run.saveDtype), cl::cat(dataCategory));
static field<std::string> saveShardSize(
    "save-shard-size", cl::desc("hf: largest shard, e.g. 5GB (the default)"),
    cl::location(parsed.run.saveShardSize), cl::cat(dataCategory));
static field<std::string>
    evalDataPath("eval-data",
                 cl::desc("held-out data set (safetensors): its loss before "
                          "training and every --eval-every steps"),
                 cl::location(parsed.run.evalDataPath), cl::cat(dataCategory));
static field<int64_t> evalEvery("eval-every",
                                cl::desc("evaluate every N steps"),
                                cl::location(parsed.run.evalEvery),
                                cl::cat(dataCategory));
static field<std::string>
    evalCsvPath("eval-csv",
                cl::desc("write the evaluations as CSV (step, seconds, "
                         "samples, loss, perplexity)"),
                cl::location(parsed.run.evalCsvPath), cl::cat(dataCategory));

//===----------------------------------------------------------------------===//
// Processes: threads, MPI, replicas and how long a device waits
//===----------------------------------------------------------------------===//

static cl::OptionCategory processCategory("Processes");
static field<int64_t>
    devices("devices", cl::desc("run all devices as threads of this process"),
            cl::location(parsed.run.threads), cl::cat(processCategory));
static field<int64_t> np("np", cl::desc("start mpirun -np P with this command"),
                         cl::location(parsed.np), cl::cat(processCategory));
static field<std::string> replicas(
    "replicas",
    cl::desc("processes per device of the plan, e.g. 2,1,2, or W for every "
             "device (default: the manifest's replicas, else 1 each)"),
    cl::location(parsed.run.replicas), cl::cat(processCategory));
static field<double>
    timeoutSeconds("timeout", cl::desc("seconds a device waits for a message"),
                   cl::location(parsed.run.timeout), cl::cat(processCategory));
static field<double> failureTimeout(
    "failure-timeout",
    cl::desc("MPI: seconds without a heartbeat after which a process is "
             "taken for failed"),
    cl::location(parsed.run.failureTimeout), cl::cat(processCategory));

//===----------------------------------------------------------------------===//
// Checkpoints
//===----------------------------------------------------------------------===//

static cl::OptionCategory checkpointCategory("Checkpoints");
static field<std::string> checkpointDir(
    "checkpoint-dir", cl::desc("write checkpoints into this directory"),
    cl::location(parsed.run.checkpointDir), cl::cat(checkpointCategory));
static cl::opt<int64_t>
    checkpointEvery("checkpoint-every",
                    cl::desc("write a checkpoint every N steps"),
                    cl::cat(checkpointCategory));
static field<std::string> resumePath(
    "resume",
    cl::desc("continue from a checkpoint (a steps-<k> directory, or a "
             "checkpoint directory: its newest complete checkpoint)"),
    cl::location(parsed.run.resumePath), cl::cat(checkpointCategory));
static field<int64_t> debugCheckpointPause(
    "debug-pause-in-checkpoint", cl::Hidden,
    cl::desc("tests: pause 60 s inside the checkpoint after N steps"),
    cl::location(parsed.run.debugCheckpointPause), cl::cat(checkpointCategory));

//===----------------------------------------------------------------------===//
// The schedule's lists and the measured timeline
//===----------------------------------------------------------------------===//

static cl::OptionCategory timelineCategory("Schedule lists and timeline");
static field<bool> printSchedule(
    "print-schedule", cl::desc("print the devices' action lists and exit"),
    cl::location(parsed.printSchedule), cl::cat(timelineCategory));
static cl::opt<std::string> scheduleFormat(
    "format",
    cl::desc("--print-schedule's form: text, or csv "
             "(torch.distributed.pipelining's compute_only, one step)"),
    cl::init("text"), cl::cat(timelineCategory));
static field<std::string> scheduleFile(
    "schedule-file",
    cl::desc("run these action lists (torch.distributed.pipelining's CSV of "
             "one step, repeated each step) instead of --schedule's; they "
             "are checked against --schedule's kind"),
    cl::value_desc("file"), cl::location(parsed.run.scheduleFile),
    cl::cat(timelineCategory));
static field<std::string> tracePath(
    "trace",
    cl::desc("write the measured timeline as a Chrome / Perfetto trace"),
    cl::location(parsed.run.tracePath), cl::cat(timelineCategory));
static field<bool> compareSimulator(
    "compare-simulator",
    cl::desc("after the run, print the measured time per micro-batch and "
             "idle share against lib/Partition's simulator for the same "
             "lists and per-stage costs measured in the run, and the "
             "runtime's overhead"),
    cl::location(parsed.run.compareSimulator), cl::cat(timelineCategory));
static field<double> allReduceGBps(
    "allreduce-gbps",
    cl::desc("--compare-simulator on replicas: price the gradient "
             "all-reduces at this ring link rate in GB/s "
             "(ftpipe-bench-allreduce measures it; default 0: free)"),
    cl::location(parsed.run.allReduceGBps), cl::cat(timelineCategory));

// Measured profiles, injected slowdowns and moves between plans
// (docs/CostModel.md "Measured profiles", docs/Migration.md).
static cl::OptionCategory measureCategory("Profiles and migration");
static field<std::string> profileOut(
    "profile-out",
    cl::desc("write the run's measured profile (per stage and direction, per "
             "process; medians after --profile-warmup steps) for "
             "ftpipe-compile --profile"),
    cl::value_desc("file"), cl::location(parsed.run.profilePath),
    cl::cat(measureCategory));
static field<int64_t> profileWarmup(
    "profile-warmup",
    cl::desc("steps --profile-out leaves out (at most steps - 1)"),
    cl::location(parsed.run.profileWarmup), cl::cat(measureCategory));
static cl::opt<std::string> debugSlow(
    "debug-slow", cl::value_desc("R:F"),
    cl::desc("tests and demonstrations: process R's stage calls take F "
             "times as long (it sleeps for F - 1 times each call's time)"),
    cl::cat(measureCategory));
static field<int64_t> migrateAt(
    "migrate-at",
    cl::desc("tests and demonstrations: after N steps, move the running "
             "pipeline to the plan of --migrate-to (docs/Migration.md)"),
    cl::location(parsed.run.migrateAt), cl::cat(measureCategory));
static field<std::string> migrateTo(
    "migrate-to",
    cl::desc("the artifacts of another plan of the same model, on as many "
             "devices"),
    cl::value_desc("dir"), cl::location(parsed.run.migrateTo),
    cl::cat(measureCategory));
static field<bool> debugMigrationPause(
    "debug-pause-in-migration", cl::Hidden,
    cl::desc("tests: every device pauses 60 s in the migration after "
             "sending its share"),
    cl::location(parsed.run.debugMigrationPause), cl::cat(measureCategory));

static cl::opt<std::string> replan(
    "replan", cl::value_desc("auto|every=N|off"),
    cl::desc("re-plan during the run from its measured stage times: "
             "compile the model again with them in the background and "
             "migrate when the new plan is predicted faster by more than "
             "--replan-threshold (auto: after the warm-up, then when the "
             "measured busiest / mean drifts; every=N: every N steps; "
             "docs/Migration.md)"),
    cl::init("off"), cl::cat(measureCategory));
static cl::opt<double> replanThreshold(
    "replan-threshold",
    cl::desc("the predicted gain a new plan needs (a share of the step "
             "time)"),
    cl::init(0.05), cl::cat(measureCategory));
static cl::opt<int64_t>
    replanWarmup("replan-warmup",
                 cl::desc("steps of each plan that its measurements leave out"),
                 cl::init(2), cl::cat(measureCategory));
static field<std::string> replanDir(
    "replan-dir",
    cl::desc("where device 0 writes the measured profiles and the new plans "
             "(default: a new temporary directory)"),
    cl::value_desc("dir"), cl::location(parsed.run.replanDir),
    cl::cat(measureCategory));
static field<std::string> replanCompiler(
    "replan-compiler", cl::Hidden,
    cl::desc("tests: the compiler --replan starts (default: the "
             "ftpipe-compile beside ftpipe-run, else the PATH's)"),
    cl::value_desc("path"), cl::location(parsed.run.replanCompiler),
    cl::cat(measureCategory));
static field<bool> debugReplanWait(
    "debug-replan-wait", cl::Hidden,
    cl::desc("tests: device 0 waits for each re-plan's compile at the step "
             "after it started"),
    cl::location(parsed.run.debugReplanWait), cl::cat(measureCategory));
static field<bool> keepFrozenBackwards(
    "debug-keep-frozen-backwards", cl::Hidden,
    cl::desc("tests: run the backwards of stages with only frozen "
             "parameters and frozen producers (skipped by default)"),
    cl::location(parsed.run.keepFrozenBackwards), cl::cat(measureCategory));

/// The flag's value if it was given.
template <typename T> static std::optional<T> given(const cl::opt<T> &flag) {
  return flag.getNumOccurrences() ? std::optional<T>(flag) : std::nullopt;
}

/// The flag's value read as a setup enum's spelling (TrainingSetup.h) into
/// `into`, if it was given.
template <typename Enum>
static llvm::Error parseGiven(const cl::opt<std::string> &flag,
                              std::optional<Enum> &into) {
  if (!flag.getNumOccurrences())
    return llvm::Error::success();
  llvm::Expected<Enum> value = schedule::parseName<Enum>(flag);
  if (!value)
    return value.takeError();
  into = *value;
  return llvm::Error::success();
}

llvm::Expected<RunFlags> ftpipe::parseRunFlags(int argc, char **argv) {
  cl::HideUnrelatedOptions({&modelCategory, &setupCategory, &dataCategory,
                            &processCategory, &checkpointCategory,
                            &timelineCategory, &measureCategory});
  cl::ParseCommandLineOptions(argc, argv, "FTPipe pipeline runtime\n");

  parsed.model.placement = given(placement);
  parsed.model.hidden = given(hidden);
  parsed.model.features = given(features);
  parsed.model.microBatchSize = given(microBatchSize);
  parsed.run.microBatches = given(microBatches);
  parsed.run.checkpointEvery = given(checkpointEvery);
  if (llvm::Error error = parseGiven(scheduleName, parsed.run.schedule))
    return std::move(error);
  if (llvm::Error error = parseGiven(stashingName, parsed.run.weightVersions))
    return std::move(error);
  if (llvm::Error error = parseGiven(optimizerName, parsed.run.optimizer))
    return std::move(error);
  if (debugSlow.getNumOccurrences()) {
    auto [process, factor] = llvm::StringRef(debugSlow).split(':');
    RunOptions &run = parsed.run;
    if (process.getAsInteger(10, run.debugSlowProcess) ||
        run.debugSlowProcess < 0 || factor.getAsDouble(run.debugSlowFactor) ||
        !(run.debugSlowFactor >= 1 && run.debugSlowFactor <= 1000))
      return llvm::createStringError(
          "--debug-slow takes R:F, a process and a factor in [1, 1000], not '" +
          debugSlow + "'");
  }
  llvm::Expected<ReplanPolicy> policy =
      parseReplanPolicy(replan, replanThreshold, replanWarmup);
  if (!policy)
    return policy.takeError();
  parsed.run.replan = *policy;
  if (scheduleFormat != "text" && scheduleFormat != "csv")
    return llvm::createStringError("--format must be text or csv, not '" +
                                   scheduleFormat + "'");
  parsed.csvSchedule = scheduleFormat == "csv";
  return parsed;
}
