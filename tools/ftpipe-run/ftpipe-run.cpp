//===- ftpipe-run.cpp - Fine-tune a pipeline: the launcher ----------------===//
//
// Runs training steps of a pipeline model with a schedule, an optimizer and
// a communicator: one device per MPI process when started by mpirun (or
// with --np P, which starts mpirun itself), or all devices as threads of
// this process (--devices P, the in-process communicator). The model is a
// directory of `ftpipe-compile` artifacts (lib/Runtime/CompiledModel.cpp)
// or the hand-written tiny MLP (--model tiny-mlp, lib/Runtime/TinyMlp.cpp).
// Checkpoints, resume and failure detection: docs/FailuresAndRecovery.md.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Checkpoint.h"
#include "FTPipe/Runtime/Communicator.h"
#include "FTPipe/Runtime/CompiledModel.h"
#include "FTPipe/Runtime/DataValues.h"
#include "FTPipe/Runtime/Evaluation.h"
#include "FTPipe/Runtime/Executor.h"
#include "FTPipe/Runtime/FailureDetector.h"
#include "FTPipe/Runtime/HFCheckpoint.h"
#include "FTPipe/Runtime/MpiCommunicator.h"
#include "FTPipe/Runtime/RunLimits.h"
#include "FTPipe/Runtime/RunTiming.h"
#include "FTPipe/Runtime/Safetensors.h"
#include "FTPipe/Runtime/SetupCheck.h"
#include "FTPipe/Runtime/TinyMlp.h"
#include "FTPipe/Support/OutputFiles.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

using namespace ftpipe;
using namespace ftpipe::runtime;
namespace cl = llvm::cl;

static cl::opt<std::string>
    artifacts(cl::Positional, cl::desc("[artifacts dir]"), cl::init(""));
static cl::opt<std::string> model("model", cl::desc("built-in model: tiny-mlp"),
                                  cl::init(""));
static cl::opt<std::string> placementText(
    "placement",
    cl::desc("tiny-mlp: device of each stage, e.g. 0,1,2,0 (Mixed-Pipe)"),
    cl::init("0,1,2,3"));
static cl::opt<int64_t> hidden("hidden", cl::desc("tiny-mlp hidden width"),
                               cl::init(8));
static cl::opt<int64_t> features("features", cl::desc("tiny-mlp features"),
                                 cl::init(4));
static cl::opt<int64_t> microBatchSize("micro-batch-size",
                                       cl::desc("samples per micro-batch"),
                                       cl::init(2));
static cl::opt<std::string> dataPath("data", cl::desc("data set (safetensors)"),
                                     cl::init(""));
static cl::opt<int64_t>
    samples("samples", cl::desc("tiny-mlp without --data: synthetic samples"),
            cl::init(64));
static cl::opt<std::string>
    weightsPath("weights",
                cl::desc("initial weights: a safetensors file or a Hugging "
                         "Face checkpoint directory (sharded, bf16/f16/f32)"),
                cl::init(""));
static cl::opt<uint64_t> seed("seed", cl::desc("seed of the random init"),
                              cl::init(1));
static cl::opt<std::string>
    savePath("save", cl::desc("write the final weights here"), cl::init(""));
static cl::opt<std::string> saveFormat(
    "save-format",
    cl::desc("file (one safetensors file), hf (a checkpoint directory that "
             "from_pretrained loads) or auto (hf when --weights is a "
             "directory)"),
    cl::init("auto"));
static cl::opt<std::string>
    saveDtype("save-dtype",
              cl::desc("hf: bf16, f16 or f32 (default: the checkpoint's)"),
              cl::init(""));
static cl::opt<std::string>
    saveShardSize("save-shard-size",
                  cl::desc("hf: largest shard, e.g. 5GB (the default)"),
                  cl::init("5GB"));
// The setup flags default to the setup the manifest records (ftpipe-compile's
// --schedule, --microbatches, --stashing, --optimizer), else to these.
static cl::opt<std::string> scheduleName(
    "schedule", cl::desc("gpipe, 1f1b or async (zb-h1: --print-schedule only)"),
    cl::init("1f1b"));
static cl::opt<std::string>
    stashingName("stashing", cl::desc("none, stash or 2bw"), cl::init("none"));
static cl::opt<std::string>
    optimizerName("optimizer", cl::desc("sgd, adam, adamw or adafactor"),
                  cl::init("adamw"));
static cl::opt<double> lr("lr", cl::desc("learning rate"), cl::init(1e-3));
static cl::opt<int64_t> warmup("warmup", cl::desc("warm-up updates"),
                               cl::init(0));
static cl::opt<double> weightDecay("weight-decay", cl::init(0.0));
static cl::opt<int64_t> steps("steps", cl::desc("optimizer steps"),
                              cl::init(10));
static cl::opt<int64_t> microBatches("micro-batches",
                                     cl::desc("micro-batches per step"),
                                     cl::init(4));
static cl::opt<int64_t>
    devicesOption("devices",
                  cl::desc("run all devices as threads of this process"),
                  cl::init(0));
static cl::opt<int64_t>
    np("np", cl::desc("start mpirun -np P with this command"), cl::init(0));
static cl::opt<double>
    timeoutSeconds("timeout", cl::desc("seconds a device waits for a message"),
                   cl::init(60));
static cl::opt<std::string>
    evalDataPath("eval-data",
                 cl::desc("held-out data set (safetensors): its loss before "
                          "training and every --eval-every steps"),
                 cl::init(""));
static cl::opt<int64_t>
    evalEvery("eval-every", cl::desc("evaluate every N steps"), cl::init(1));
static cl::opt<std::string>
    evalCsvPath("eval-csv",
                cl::desc("write the evaluations as CSV (step, seconds, "
                         "samples, loss, perplexity)"),
                cl::init(""));
static cl::opt<std::string> tracePath(
    "trace",
    cl::desc("write the measured timeline as a Chrome / Perfetto trace"),
    cl::init(""));
static cl::opt<std::string>
    checkpointDir("checkpoint-dir",
                  cl::desc("write checkpoints into this directory"),
                  cl::init(""));
static cl::opt<int64_t>
    checkpointEvery("checkpoint-every",
                    cl::desc("write a checkpoint every N steps"), cl::init(0));
static cl::opt<std::string> resumePath(
    "resume",
    cl::desc("continue from a checkpoint (a steps-<k> directory, or a "
             "checkpoint directory: its newest complete checkpoint)"),
    cl::init(""));
static cl::opt<double> failureTimeout(
    "failure-timeout",
    cl::desc("MPI: seconds without a heartbeat after which a process is "
             "taken for failed"),
    cl::init(10));
static cl::opt<int64_t> debugCheckpointPause(
    "debug-pause-in-checkpoint", cl::Hidden,
    cl::desc("tests: pause 60 s inside the checkpoint after N steps"),
    cl::init(-1));
static cl::opt<bool> allowOverBudget(
    "allow-over-budget",
    cl::desc("run a setup that needs more memory than a device's budget "
             "by the plan's memory model"),
    cl::init(false));
static cl::opt<bool> compareSimulator(
    "compare-simulator",
    cl::desc("after the run, print the measured time per micro-batch and "
             "idle share against lib/Partition's simulator for the same "
             "lists and per-stage costs measured in the run, and the "
             "runtime's overhead"));
static cl::opt<bool>
    printSchedule("print-schedule",
                  cl::desc("print the devices' action lists and exit"));

/// The largest --hidden, --features, --micro-batch-size, --samples and
/// device number of the tiny MLP.
static constexpr int64_t kMaxTinyMlpSize = 1 << 16;

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

/// --np P: runs mpirun -np P with this command line minus --np (as root,
/// OpenMPI wants OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1).
static int startMpirun(int argc, char **argv) {
  llvm::ErrorOr<std::string> mpirun = llvm::sys::findProgramByName("mpirun");
  if (!mpirun)
    die("--np needs mpirun on the PATH");
  std::string self =
      llvm::sys::fs::getMainExecutable(argv[0], (void *)&startMpirun);
  std::vector<std::string> args = {*mpirun, "-np", std::to_string(np),
                                   "--oversubscribe", self};
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "--np" || arg == "-np") {
      ++i;
      continue;
    }
    if (arg.starts_with("--np=") || arg.starts_with("-np="))
      continue;
    args.push_back(arg.str());
  }
  std::vector<llvm::StringRef> refs(args.begin(), args.end());
  return llvm::sys::ExecuteAndWait(*mpirun, refs);
}

static bool underMpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE");
}

namespace {
/// What every device's thread or process shares.
struct Run {
  std::unique_ptr<PipelineModel> model;
  schedule::Schedule schedule;
  ExecutorConfig config;
  TensorMap weights, data;
  std::optional<CheckpointSetup> checkpoint;
  std::optional<LoadedCheckpoint> resumed;
  std::optional<EvaluationSetup> evaluation;
  FailureDetector *detector = nullptr;
  std::mutex printMutex;
};
} // namespace

/// Runs device `d`'s part with its stage programs; returns its owned final
/// weights and, with --trace, its timeline.
static TensorMap runDevice(Run &run, Communicator &communicator,
                           std::vector<std::unique_ptr<StageProgram>> stages,
                           std::vector<TraceEvent> &trace) {
  int64_t d = communicator.device();
  std::vector<StageProgram *> pointers;
  for (auto &stage : stages)
    pointers.push_back(stage.get());
  const ParameterPlacement &placement = run.model->placement();
  DeviceExecutor executor(communicator, pointers, placement, run.config);
  int64_t overhead = residentOverheadBytes();
  // A process of its own keeps only its device's weights.
  bool alone = communicator.devices() == 1 || (underMpi() && !devicesOption);
  TensorMap mine;
  for (const ParameterInfo &param : executor.parameters())
    mine[param.name] = alone ? std::move(run.weights.at(param.name))
                             : run.weights.at(param.name);
  if (alone)
    run.weights.clear();
  if (llvm::Error error = executor.setWeights(std::move(mine)))
    die(llvm::toString(std::move(error)));
  if (run.resumed)
    if (llvm::Error error = executor.resume(run.resumed->updates,
                                            run.resumed->optimizerState[d]))
      die(run.resumed->directory + ": " + llvm::toString(std::move(error)));
  if (run.resumed && d == 0) {
    std::lock_guard<std::mutex> lock(run.printMutex);
    llvm::errs() << "resuming " << run.resumed->directory << " after "
                 << run.resumed->updates << " steps\n";
  }
  if (llvm::Error error = executor.setData(run.data))
    die(llvm::toString(std::move(error)));
  std::optional<Evaluator> evaluator;
  if (run.evaluation) {
    evaluator.emplace(*run.evaluation, d, run.printMutex);
    if (llvm::Error error =
            evaluator->afterUpdates(executor, executor.updates()))
      die("device " + llvm::Twine(d) + ": " + llvm::toString(std::move(error)));
  }
  executor.recordTrace(!tracePath.empty() || compareSimulator);
  int64_t samplesPerStep =
      run.config.schedule.microBatches * run.model->microBatchSize();
  double totalSeconds = 0, totalCompute = 0;
  llvm::Error error =
      executor.run(run.schedule.devices[d], [&](const StepReport &report) {
        totalSeconds += report.seconds;
        totalCompute += report.computeSeconds;
        if (run.detector)
          run.detector->setCompletedStep(report.step);
        if (run.checkpoint && (report.step + 1) % checkpointEvery == 0) {
          TensorMap owned;
          for (const auto &[name, holders] : placement)
            if (holders.front() == d)
              owned[name] = executor.weights().at(name);
          if (llvm::Error error = saveCheckpoint(communicator, *run.checkpoint,
                                                 executor.updates(), owned,
                                                 executor.optimizerState()))
            die("device " + llvm::Twine(d) +
                ": checkpoint: " + llvm::toString(std::move(error)));
        }
        if (report.loss) {
          std::lock_guard<std::mutex> lock(run.printMutex);
          llvm::outs() << llvm::format(
              "step %lld loss %.6f samples/s %.1f idle(device %lld) %.3f\n",
              static_cast<long long>(report.step), *report.loss,
              samplesPerStep / std::max(report.seconds, 1e-9),
              static_cast<long long>(d),
              1.0 - report.computeSeconds / std::max(report.seconds, 1e-9));
          llvm::outs().flush();
        }
        if (evaluator)
          if (llvm::Error error =
                  evaluator->afterUpdates(executor, report.step + 1))
            die("device " + llvm::Twine(d) +
                ": evaluation: " + llvm::toString(std::move(error)));
      });
  if (error) {
    std::string message = llvm::toString(std::move(error));
    communicator.abort("device " + std::to_string(d) + " failed: " + message);
    die("device " + llvm::Twine(d) + ": " + message);
  }
  {
    std::lock_guard<std::mutex> lock(run.printMutex);
    llvm::errs() << llvm::format(
        "device %lld: %.3f s, computing %.3f s (idle %.1f%%)\n",
        static_cast<long long>(d), totalSeconds, totalCompute,
        100.0 * (1.0 - totalCompute / std::max(totalSeconds, 1e-9)));
    llvm::errs() << formatDeviceMemory(
                        d, executor.memory(),
                        executor.predictMemory(run.schedule.devices[d]),
                        readResidentMemory(), overhead)
                 << "\n";
  }
  trace = executor.trace();
  TensorMap owned;
  for (const auto &[name, holders] : placement)
    if (holders.front() == d)
      owned[name] = executor.weights().at(name);
  return owned;
}

/// The model: compiled artifacts or the built-in tiny MLP.
static std::unique_ptr<PipelineModel> openModel() {
  if (!artifacts.empty()) {
    if (!model.empty())
      die("give an artifact directory or --model, not both");
    for (const cl::Option *option :
         {static_cast<cl::Option *>(&placementText),
          static_cast<cl::Option *>(&hidden),
          static_cast<cl::Option *>(&features),
          static_cast<cl::Option *>(&microBatchSize)})
      if (option->getNumOccurrences())
        die("--" + option->ArgStr +
            " is an option of --model tiny-mlp; compiled artifacts bring "
            "their own plan and shapes");
    return orDie(CompiledModel::open(artifacts));
  }
  if (model != "tiny-mlp")
    die("give the directory that ftpipe-compile wrote, or --model tiny-mlp "
        "(the built-in model)");
  for (cl::opt<int64_t> *size : {&hidden, &features, &microBatchSize, &samples})
    if (llvm::Error error = checkSizeOption(*size, kMaxTinyMlpSize,
                                            ("--" + size->ArgStr).str()))
      die(llvm::toString(std::move(error)));
  std::vector<int64_t> placement;
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(placementText).split(parts, ',');
  for (llvm::StringRef part : parts) {
    int64_t device = 0;
    if (part.trim().getAsInteger(10, device) || device < 0 ||
        device >= kMaxTinyMlpSize)
      die("--placement: '" + part + "' is not a device");
    placement.push_back(device);
  }
  TinyMlpShape shape{static_cast<int64_t>(placement.size()), hidden, features,
                     microBatchSize};
  return createTinyMlpModel(shape, std::move(placement));
}

/// --checkpoint-dir and --resume: checks them and, when resuming, loads and
/// verifies the checkpoint and replaces the weights and the schedule with
/// the rest of the run. Writes nothing.
static void prepareCheckpoints(Run &run) {
  if (checkpointDir.empty() != (checkpointEvery.getNumOccurrences() == 0))
    die("give --checkpoint-dir and --checkpoint-every together");
  if (!checkpointDir.empty() && checkpointEvery < 1)
    die("--checkpoint-every must be at least 1");
  if (!checkpointDir.empty())
    if (llvm::Error error = checkCheckpointDirectory(checkpointDir))
      die("--checkpoint-dir: " + llvm::toString(std::move(error)));
  if (checkpointDir.empty() && resumePath.empty())
    return;
  RunIdentity identity = identifyRun(*run.model, run.config, run.data);
  if (!resumePath.empty()) {
    if (!weightsPath.empty())
      die("--resume continues from the checkpoint's weights; leave out "
          "--weights");
    if (compareSimulator)
      die("--compare-simulator compares whole runs; leave out --resume");
    run.resumed = orDie(loadCheckpoint(resumePath, identity));
    if (llvm::Error error =
            validateWeights(run.model->parameters(), run.resumed->weights))
      die(run.resumed->directory + ": " + llvm::toString(std::move(error)));
    llvm::Error finite = checkFinite(run.resumed->weights);
    for (const TensorMap &state : run.resumed->optimizerState)
      finite = llvm::joinErrors(std::move(finite), checkFinite(state));
    if (finite)
      die(run.resumed->directory + ": " + llvm::toString(std::move(finite)));
    int64_t done = run.resumed->updates;
    if (done >= steps)
      die(run.resumed->directory + " is after " + llvm::Twine(done) +
          " steps, --steps " + llvm::Twine(steps.getValue()) +
          ": nothing left to run");
    run.weights = run.resumed->weights;
    const schedule::StageGraph &graph = run.model->stageGraph();
    schedule::ScheduleConfig rest = run.config.schedule;
    rest.steps = steps - done;
    run.schedule = orDie(schedule::generate(graph, rest));
    orDie(schedule::dryRun(graph, rest, run.schedule));
    shiftSchedule(run.schedule, done, rest.microBatches);
  }
  if (!checkpointDir.empty())
    run.checkpoint = CheckpointSetup{checkpointDir, std::move(identity), seed,
                                     debugCheckpointPause, 60.0};
}

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "FTPipe pipeline runtime\n");
  if (np > 0)
    return startMpirun(argc, argv);
  // One BLAS thread per device unless told otherwise: the devices of a run
  // share the machine's cores (set before any artifact loads OpenBLAS).
  setenv("OPENBLAS_NUM_THREADS", "1", /*overwrite=*/0);
  returnLargeBlocksToSystem();

  Run run;
  run.model = openModel();
  const schedule::StageGraph &graph = run.model->stageGraph();
  // The training setup: a flag not given takes the value the plan was made
  // for (manifest.json's `training`), else its own default.
  const ArtifactManifest *manifest = nullptr;
  if (auto *compiled = dynamic_cast<CompiledModel *>(run.model.get()))
    manifest = &compiled->manifest();
  std::optional<schedule::TrainingSetup> planned;
  if (manifest)
    planned = manifest->training;
  auto fromPlan = [&](const cl::Option &flag) {
    return planned && flag.getNumOccurrences() == 0;
  };
  schedule::TrainingSetup setup;
  setup.schedule = fromPlan(scheduleName)
                       ? planned->schedule
                       : orDie(schedule::parseKind(scheduleName));
  // Checked before the narrowing below; checkRunSettings bounds the whole
  // schedule once the setup is known.
  if (llvm::Error error = checkSizeOption(
          microBatches,
          kMaxScheduleActions / (2 * std::max<int64_t>(graph.stages(), 1)),
          "--micro-batches"))
    die(llvm::toString(std::move(error)));
  setup.microBatches =
      fromPlan(microBatches) ? planned->microBatches : uint32_t(microBatches);
  setup.weightVersions =
      fromPlan(stashingName)
          ? planned->weightVersions
          : orDie(schedule::parseWeightVersions(stashingName));
  setup.optimizer = fromPlan(optimizerName)
                        ? planned->optimizer
                        : orDie(schedule::parseOptimizer(optimizerName));
  if (llvm::Error error = checkImplemented(setup.optimizer))
    die(llvm::toString(std::move(error)));
  if (manifest && !allowOverBudget)
    if (llvm::Error error = checkRunMemory(*manifest, setup))
      die(llvm::toString(std::move(error)));
  run.config.schedule = {setup.schedule, setup.microBatches, steps};
  run.config.stashing = setup.weightVersions;
  run.config.optimizer.kind = setup.optimizer;
  run.config.optimizer.lr = lr;
  run.config.optimizer.warmupSteps = warmup;
  run.config.optimizer.weightDecay = weightDecay;
  if (llvm::Error error = checkRunSettings(run.config, graph.stages()))
    die(llvm::toString(std::move(error)));
  for (cl::opt<double> *timeout : {&timeoutSeconds, &failureTimeout})
    if (llvm::Error error =
            checkTimeout(*timeout, ("--" + timeout->ArgStr).str()))
      die(llvm::toString(std::move(error)));
  run.schedule = orDie(schedule::generate(graph, run.config.schedule));
  orDie(schedule::dryRun(graph, run.config.schedule, run.schedule));
  if (printSchedule) {
    llvm::outs() << run.schedule.str();
    return 0;
  }
  if (schedule::isZeroBubble(run.config.schedule.kind))
    die("cannot run schedule '" + scheduleName +
        "' yet: it needs split backwards (stage programs of contract "
        "version 2); --print-schedule prints its lists");

  LoadedWeights loaded =
      weightsPath.empty()
          ? LoadedWeights{run.model->randomWeights(seed), "", DType::F32}
          : orDie(readCheckpointWeights(weightsPath, run.model->parameters()));
  run.weights = std::move(loaded.weights);
  if (llvm::Error error = validateWeights(run.model->parameters(), run.weights))
    die((weightsPath.empty() ? "random init" : weightsPath.getValue()) + ": " +
        llvm::toString(std::move(error)));
  if (llvm::Error error = checkFinite(run.weights))
    die((weightsPath.empty() ? "random init" : weightsPath.getValue()) + ": " +
        llvm::toString(std::move(error)));
  if (dataPath.empty() && model != "tiny-mlp")
    die("--data: give the data set (safetensors, one tensor per data input)");
  run.data =
      dataPath.empty()
          ? tinyMlpData({graph.stages(), hidden, features, microBatchSize},
                        samples, seed + 1)
          : orDie(readSafetensors(dataPath)).tensors;
  if (llvm::Error error = validateDataset(run.model->dataInputs(), run.data))
    die((dataPath.empty() ? "synthetic data" : dataPath.getValue()) + ": " +
        llvm::toString(std::move(error)));
  if (llvm::Error error = checkFinite(run.data))
    die((dataPath.empty() ? "synthetic data" : dataPath.getValue()) + ": " +
        llvm::toString(std::move(error)));
  prepareCheckpoints(run);
  if (!evalDataPath.empty())
    run.evaluation = orDie(prepareEvaluation(
        evalDataPath, evalEvery, evalCsvPath, *run.model, run.config));
  // Outputs are checked before training, not found unwritable after it.
  std::optional<HFSaveOptions> saveHF =
      savePath.empty() ? std::nullopt
                       : orDie(chooseSaveOptions(saveFormat, saveDtype,
                                                 saveShardSize, loaded));
  if (saveHF)
    if (llvm::Error error = checkHFSaveDirectory(savePath))
      die(llvm::toString(std::move(error)));
  for (cl::opt<std::string> *output : {&savePath, &tracePath})
    if (!output->empty() && !(output == &savePath && saveHF))
      if (llvm::Error error =
              support::checkOutputPath(*output, ("--" + output->ArgStr).str()))
        die(llvm::toString(std::move(error)));

  const ParameterPlacement &placement = run.model->placement();
  TensorMap final;
  std::vector<std::vector<TraceEvent>> traces(1);
  if (underMpi() && devicesOption == 0) {
    std::unique_ptr<Communicator> communicator =
        orDie(createMpiCommunicator(&argc, &argv));
    if (communicator->devices() != graph.devices)
      die("the plan has " + llvm::Twine(graph.devices) +
          " devices, mpirun started " + llvm::Twine(communicator->devices()) +
          " processes");
    communicator->setTimeout(timeoutSeconds);
    std::unique_ptr<FailureDetector> detector;
    if (communicator->devices() > 1) {
      detector = orDie(FailureDetector::start(*communicator, failureTimeout));
      run.detector = detector.get();
      if (run.resumed)
        detector->setCompletedStep(run.resumed->updates - 1);
    }
    auto stages = orDie(run.model->loadStages(communicator->device()));
    // Start together, so the processes' timelines line up.
    communicator->barrier(0);
    TensorMap owned =
        runDevice(run, *communicator, std::move(stages), traces[0]);
    if (!tracePath.empty() || compareSimulator) {
      // Device 0 gathers the timelines.
      int64_t self = communicator->device();
      if (self != 0) {
        int64_t count = traces[0].size();
        communicator->send(0, kRuntimeTagBase + 9, 0, &count, sizeof(count));
        communicator->send(0, kRuntimeTagBase + 10, 0, traces[0].data(),
                           count * sizeof(TraceEvent));
      } else {
        std::vector<TraceEvent> mine = std::move(traces[0]);
        traces.assign(graph.devices, {});
        traces[0] = std::move(mine);
        for (int64_t d = 1; d < graph.devices; ++d) {
          int64_t count = 0;
          communicator->recv(d, kRuntimeTagBase + 9, 0, &count, sizeof(count));
          traces[d].resize(count);
          communicator->recv(d, kRuntimeTagBase + 10, 0, traces[d].data(),
                             count * sizeof(TraceEvent));
        }
      }
    }
    // Device 0 gathers every owner's parameters to save them.
    int64_t tag = kRuntimeTagBase + 8, index = 0;
    std::map<std::string, ParameterInfo> parameterTypes;
    for (const ParameterInfo &param : run.model->parameters())
      parameterTypes[param.name] = param;
    for (const auto &[name, holders] : placement) {
      int64_t owner = holders.front();
      Tensor value(parameterTypes.at(name).type, parameterTypes.at(name).shape);
      if (communicator->device() == owner)
        value = owned.at(name);
      if (owner != 0 && communicator->device() == owner)
        communicator->send(0, tag, index, value.bytes.data(),
                           value.bytes.size());
      if (owner != 0 && communicator->device() == 0)
        communicator->recv(owner, tag, index, value.bytes.data(),
                           value.bytes.size());
      final[name] = std::move(value);
      ++index;
    }
    communicator->barrier(1);
    if (detector)
      detector->finish();
    if (communicator->device() != 0)
      return 0;
  } else {
    int64_t devices = devicesOption ? devicesOption.getValue() : graph.devices;
    if (devices != graph.devices)
      die("the plan has " + llvm::Twine(graph.devices) +
          " devices, --devices " + llvm::Twine(devices));
    std::vector<std::vector<std::unique_ptr<StageProgram>>> stages;
    for (int64_t d = 0; d < devices; ++d)
      stages.push_back(orDie(run.model->loadStages(d)));
    LocalMailbox mailbox(devices, timeoutSeconds);
    std::vector<TensorMap> owned(devices);
    std::vector<std::thread> threads;
    traces.assign(devices, {});
    for (int64_t d = 0; d < devices; ++d)
      threads.emplace_back([&, d] {
        owned[d] = runDevice(run, mailbox.endpoint(d), std::move(stages[d]),
                             traces[d]);
      });
    for (std::thread &thread : threads)
      thread.join();
    for (TensorMap &part : owned)
      final.merge(part);
  }
  if (!savePath.empty())
    if (llvm::Error error =
            saveHF ? writeHFCheckpoint(savePath, final, *saveHF)
                   : writeSafetensors(savePath, final, {{"format", "pt"}}))
      die(llvm::toString(std::move(error)));
  if (compareSimulator)
    llvm::outs() << formatRunTiming(orDie(compareWithSimulator(
        graph, run.config.schedule, run.schedule, traces)));
  if (!tracePath.empty())
    if (llvm::Error error = support::writeFileAtomically(
            tracePath, llvm::formatv("{0:2}\n", traceToChrome(traces)).str()))
      die(tracePath + ": " + llvm::toString(std::move(error)));
  return 0;
}
