//===- ftpipe-run.cpp - Fine-tune a pipeline: the launcher ----------------===//
//
// Runs training steps of a pipeline model with a schedule, an optimizer and
// a communicator: one device per MPI process when started by mpirun (or
// with --np P, which starts mpirun itself), or all devices as threads of
// this process (--devices P, the in-process communicator). The model is a
// directory of `ftpipe-compile` artifacts (lib/Runtime/CompiledModel.cpp)
// or the hand-written tiny MLP (--model tiny-mlp, lib/Runtime/TinyMlp.cpp).
// The run itself is lib/Runtime's (Run.h); this tool turns flags into its
// options and prints what it reports. Checkpoints, resume and failure
// detection: docs/FailuresAndRecovery.md.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/MemoryStats.h"
#include "FTPipe/Runtime/Run.h"
#include "FTPipe/Schedule/TorchCsv.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace ftpipe;
using namespace ftpipe::runtime;
namespace cl = llvm::cl;

// Flags that map onto a field are stored in it (cl::location), so its
// initial value is the flag's default.
static ModelOptions modelOptions;
static RunOptions options;
template <typename T> using field = cl::opt<T, /*ExternalStorage=*/true>;

static field<std::string> artifacts(cl::Positional, cl::desc("[artifacts dir]"),
                                    cl::location(modelOptions.artifacts));
static field<std::string> model("model", cl::desc("built-in model: tiny-mlp"),
                                cl::location(modelOptions.builtin));
// The tiny MLP's flags: a flag not given leaves the shape's default.
static cl::opt<std::string> placementText(
    "placement",
    cl::desc("tiny-mlp: device of each stage, e.g. 0,1,2,0 (Mixed-Pipe)"));
static cl::opt<int64_t> hidden("hidden", cl::desc("tiny-mlp hidden width"));
static cl::opt<int64_t> features("features", cl::desc("tiny-mlp features"));
static cl::opt<int64_t> microBatchSize("micro-batch-size",
                                       cl::desc("samples per micro-batch"));
static field<int64_t>
    samples("samples", cl::desc("tiny-mlp without --data: synthetic samples"),
            cl::location(modelOptions.samples));
static field<std::string> dataPath("data", cl::desc("data set (safetensors)"),
                                   cl::location(options.dataPath));
static field<std::string>
    weightsPath("weights",
                cl::desc("initial weights: a safetensors file or a Hugging "
                         "Face checkpoint directory (sharded, bf16/f16/f32)"),
                cl::location(options.weightsPath));
static field<uint64_t> seed("seed", cl::desc("seed of the random init"),
                            cl::location(options.seed));
static field<std::string> savePath("save",
                                   cl::desc("write the final weights here"),
                                   cl::location(options.savePath));
static field<std::string> saveFormat(
    "save-format",
    cl::desc("file (one safetensors file), hf (a checkpoint directory that "
             "from_pretrained loads) or auto (hf when --weights is a "
             "directory)"),
    cl::location(options.saveFormat));
static field<std::string>
    saveDtype("save-dtype",
              cl::desc("hf: bf16, f16 or f32 (default: the checkpoint's)"),
              cl::location(options.saveDtype));
static field<std::string>
    saveShardSize("save-shard-size",
                  cl::desc("hf: largest shard, e.g. 5GB (the default)"),
                  cl::location(options.saveShardSize));
// The setup flags default to the setup the manifest records (ftpipe-compile's
// --schedule, --microbatches, --stashing, --optimizer), else to
// kDefaultRunSetup's.
static cl::opt<std::string>
    scheduleName("schedule", cl::desc("gpipe, 1f1b, async, zb-h1 or zb-auto"));
static cl::opt<std::string> stashingName("stashing",
                                         cl::desc("none, stash or 2bw"));
static cl::opt<std::string>
    optimizerName("optimizer", cl::desc("sgd, adam, adamw or adafactor"));
static cl::opt<int64_t> microBatches("micro-batches",
                                     cl::desc("micro-batches per step"));
static field<double> lr("lr", cl::desc("learning rate"),
                        cl::location(options.lr));
static field<int64_t> warmup("warmup", cl::desc("warm-up updates"),
                             cl::location(options.warmup));
static field<double> weightDecay("weight-decay",
                                 cl::location(options.weightDecay));
static field<int64_t> steps("steps", cl::desc("optimizer steps"),
                            cl::location(options.steps));
static field<int64_t>
    devices("devices", cl::desc("run all devices as threads of this process"),
            cl::location(options.threads));
static cl::opt<int64_t>
    np("np", cl::desc("start mpirun -np P with this command"), cl::init(0));
static field<double>
    timeoutSeconds("timeout", cl::desc("seconds a device waits for a message"),
                   cl::location(options.timeout));
static field<std::string>
    evalDataPath("eval-data",
                 cl::desc("held-out data set (safetensors): its loss before "
                          "training and every --eval-every steps"),
                 cl::location(options.evalDataPath));
static field<int64_t> evalEvery("eval-every",
                                cl::desc("evaluate every N steps"),
                                cl::location(options.evalEvery));
static field<std::string>
    evalCsvPath("eval-csv",
                cl::desc("write the evaluations as CSV (step, seconds, "
                         "samples, loss, perplexity)"),
                cl::location(options.evalCsvPath));
static field<std::string> tracePath(
    "trace",
    cl::desc("write the measured timeline as a Chrome / Perfetto trace"),
    cl::location(options.tracePath));
static field<std::string>
    checkpointDir("checkpoint-dir",
                  cl::desc("write checkpoints into this directory"),
                  cl::location(options.checkpointDir));
static cl::opt<int64_t>
    checkpointEvery("checkpoint-every",
                    cl::desc("write a checkpoint every N steps"));
static field<std::string> resumePath(
    "resume",
    cl::desc("continue from a checkpoint (a steps-<k> directory, or a "
             "checkpoint directory: its newest complete checkpoint)"),
    cl::location(options.resumePath));
static field<double> failureTimeout(
    "failure-timeout",
    cl::desc("MPI: seconds without a heartbeat after which a process is "
             "taken for failed"),
    cl::location(options.failureTimeout));
static field<int64_t> debugCheckpointPause(
    "debug-pause-in-checkpoint", cl::Hidden,
    cl::desc("tests: pause 60 s inside the checkpoint after N steps"),
    cl::location(options.debugCheckpointPause));
static field<bool> allowOverBudget(
    "allow-over-budget",
    cl::desc("run a setup that needs more memory than a device's budget "
             "by the plan's memory model"),
    cl::location(options.allowOverBudget));
static field<bool> compareSimulator(
    "compare-simulator",
    cl::desc("after the run, print the measured time per micro-batch and "
             "idle share against lib/Partition's simulator for the same "
             "lists and per-stage costs measured in the run, and the "
             "runtime's overhead"),
    cl::location(options.compareSimulator));
static field<std::string> replicas(
    "replicas",
    cl::desc("processes per device of the plan, e.g. 2,1,2, or W for every "
             "device (default: the manifest's replicas, else 1 each)"),
    cl::location(options.replicas));
static field<std::string> freeze(
    "freeze",
    cl::desc("freeze a growing prefix of the model's layers during the run: "
             "alpha=X (PipeTransformer's schedule, per epoch) or "
             "schedule=FILE ('STEP DEPTH' lines); docs/Freezing.md"),
    cl::location(options.freeze));
static cl::opt<bool>
    printSchedule("print-schedule",
                  cl::desc("print the devices' action lists and exit"));
static cl::opt<std::string> scheduleFormat(
    "format",
    cl::desc("--print-schedule's form: text, or csv "
             "(torch.distributed.pipelining's compute_only, one step)"),
    cl::init("text"));
static field<std::string> scheduleFile(
    "schedule-file",
    cl::desc("run these action lists (torch.distributed.pipelining's CSV of "
             "one step, repeated each step) instead of --schedule's; they "
             "are checked against --schedule's kind"),
    cl::value_desc("file"), cl::location(options.scheduleFile));

[[noreturn]] static void die(const llvm::Twine &message) {
  // In one write: every process of an MPI run may refuse the same input at
  // once, and mpirun interleaves their output at the writes' granularity.
  llvm::errs() << ("ftpipe-run: " + message + "\n").str();
  std::exit(1);
}

template <typename T> static T orDie(llvm::Expected<T> value) {
  if (!value)
    die(llvm::toString(value.takeError()));
  return std::move(*value);
}

/// The flag's value if it was given.
template <typename T> static std::optional<T> given(const cl::opt<T> &flag) {
  return flag.getNumOccurrences() ? std::optional<T>(flag) : std::nullopt;
}

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "FTPipe pipeline runtime\n");
  if (np > 0)
    return orDie(relaunchUnderMpirun(argc, argv, np));
  // One BLAS thread per device unless told otherwise: the devices of a run
  // share the machine's cores (set before any artifact loads OpenBLAS).
  setenv("OPENBLAS_NUM_THREADS", "1", /*overwrite=*/0);
  returnLargeBlocksToSystem();

  modelOptions.placement = given(placementText);
  modelOptions.hidden = given(hidden);
  modelOptions.features = given(features);
  modelOptions.microBatchSize = given(microBatchSize);
  if (scheduleName.getNumOccurrences())
    options.schedule = orDie(schedule::parseKind(scheduleName));
  options.microBatches = given(microBatches);
  if (stashingName.getNumOccurrences())
    options.weightVersions = orDie(schedule::parseWeightVersions(stashingName));
  if (optimizerName.getNumOccurrences())
    options.optimizer = orDie(schedule::parseOptimizer(optimizerName));
  options.checkpointEvery = given(checkpointEvery);

  if (scheduleFormat != "text" && scheduleFormat != "csv")
    die("--format must be text or csv, not '" + scheduleFormat + "'");
  TrainingRun run = orDie(planTraining(modelOptions, options));
  if (printSchedule) {
    llvm::outs() << (scheduleFormat == "csv"
                         ? orDie(schedule::toTorchCsv(run.schedule))
                         : run.schedule.str());
    return 0;
  }
  if (llvm::Error error = loadTraining(run, modelOptions, options))
    die(llvm::toString(std::move(error)));
  RunHooks hooks;
  hooks.onStep = [&](int64_t device, const StepReport &report) {
    if (report.loss)
      (llvm::outs() << formatStep(run, device, report)).flush();
  };
  hooks.onEvaluation = [](int64_t, const EvaluationReport &report) {
    (llvm::outs() << formatEvaluation(report)).flush();
  };
  hooks.onDeviceDone = [](const DeviceSummary &device) {
    llvm::errs() << formatDeviceSummary(device);
  };
  hooks.onNote = [](const std::string &line) { llvm::errs() << line << "\n"; };
  hooks.fatal = [](const std::string &message) { die(message); };
  TrainingResult result = orDie(runTraining(run, options, hooks, &argc, &argv));
  if (result.timing)
    llvm::outs() << formatRunTiming(*result.timing);
  return 0;
}
