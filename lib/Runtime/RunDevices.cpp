//===- RunDevices.cpp - A training run's devices, threads or MPI ----------===//
//
// runTraining (Run.h): every device of a prepared run, as threads of this
// process over the in-process communicator or as this process's one device
// of an MPI run (with heartbeat failure detection; a replica of its device
// when the run is replicated, over a ReplicaCommunicator), each with its
// step and checkpoint hooks; then the weights and timelines gathered to
// device 0 (Gather.h). Also the `--np` relaunch under mpirun.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Run.h"

#include "FTPipe/Runtime/FailureDetector.h"
#include "FTPipe/Runtime/Gather.h"
#include "FTPipe/Runtime/MemoryStats.h"
#include "FTPipe/Runtime/MpiCommunicator.h"
#include "FTPipe/Runtime/Replicas.h"
#include "FTPipe/Runtime/Safetensors.h"
#include "FTPipe/Support/OutputFiles.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <mutex>
#include <thread>

using namespace ftpipe;
using namespace ftpipe::runtime;

namespace {
/// What every device's thread or process of a run shares.
struct Devices {
  TrainingRun &run;
  const RunOptions &options;
  const RunHooks &hooks;
  /// Each device a process of its own: it keeps only its weights.
  bool processes = false;
  FailureDetector *detector = nullptr;
  /// Held while a hook runs.
  std::mutex hookMutex;

  /// Ends the process through the hooks (peers wait for this device).
  [[noreturn]] void fatal(const std::string &message) {
    {
      std::lock_guard<std::mutex> lock(hookMutex);
      if (hooks.fatal)
        hooks.fatal(message);
    }
    llvm::errs() << ("ftpipe: " + message + "\n");
    std::exit(1);
  }
  template <typename Hook, typename... Args>
  void call(const Hook &hook, const Args &...args) {
    if (!hook)
      return;
    std::lock_guard<std::mutex> lock(hookMutex);
    hook(args...);
  }
};
} // namespace

/// The parameters device `d` owns, as its executor holds them now.
static TensorMap ownedWeights(const DeviceExecutor &executor,
                              const ParameterPlacement &placement, int64_t d) {
  TensorMap owned;
  for (const auto &[name, holders] : placement)
    if (holders.front() == d)
      owned[name] = executor.weights().at(name);
  return owned;
}

/// Runs device `d`'s part with its stage programs (over a
/// ReplicaCommunicator, one replica's part); returns its owned final weights
/// and, when recording, its timeline.
static TensorMap runDevice(Devices &shared, Communicator &communicator,
                           std::vector<std::unique_ptr<StageProgram>> stages,
                           std::vector<TraceEvent> &trace) {
  TrainingRun &run = shared.run;
  const RunOptions &options = shared.options;
  int64_t d = communicator.device();
  auto *replicated = dynamic_cast<ReplicaCommunicator *>(&communicator);
  int64_t process = replicated ? replicated->perProcess().device() : d;
  const std::vector<schedule::Action> &list = run.processLists.devices[process];
  // Replicas 0 write the checkpoints (replicas hold the same weights).
  bool writer = !replicated || replicated->replica() == 0;
  std::vector<StageProgram *> pointers;
  for (auto &stage : stages)
    pointers.push_back(stage.get());
  const ParameterPlacement &placement = run.model->placement();
  // The policy's frozen set (--freeze) at the first step this run does.
  ExecutorConfig config = run.config;
  int64_t firstStep = run.resumed ? run.resumed->updates : 0;
  if (run.freezing)
    config.frozen = run.freezing->frozenAt(firstStep, run.config.frozen);
  DeviceExecutor executor(communicator, pointers, placement, config);
  int64_t overhead = residentOverheadBytes();
  bool alone = communicator.devices() == 1 || shared.processes;
  TensorMap mine;
  for (const ParameterInfo &param : executor.parameters())
    mine[param.name] = alone ? std::move(run.weights.at(param.name))
                             : run.weights.at(param.name);
  if (alone)
    run.weights.clear();
  if (llvm::Error error = executor.setWeights(std::move(mine)))
    shared.fatal(llvm::toString(std::move(error)));
  if (run.resumed)
    if (llvm::Error error = executor.resume(run.resumed->updates,
                                            run.resumed->optimizerState[d]))
      shared.fatal(run.resumed->directory + ": " +
                   llvm::toString(std::move(error)));
  if (run.resumed && process == 0)
    shared.call(shared.hooks.onNote,
                "resuming " + run.resumed->directory + " after " +
                    std::to_string(run.resumed->updates) + " steps");
  if (llvm::Error error = executor.setData(run.data))
    shared.fatal(llvm::toString(std::move(error)));
  std::optional<Evaluator> evaluator;
  auto evaluate = [&](int64_t updates) {
    auto report = evaluator->afterUpdates(executor, updates);
    if (!report)
      shared.fatal("device " + std::to_string(d) +
                   ": evaluation: " + llvm::toString(report.takeError()));
    if (*report)
      shared.call(shared.hooks.onEvaluation, d, **report);
  };
  if (run.evaluation) {
    evaluator.emplace(*run.evaluation, d);
    evaluate(executor.updates());
  }
  executor.recordTrace(!options.tracePath.empty() || options.compareSimulator);
  DeviceSummary summary;
  summary.device = process;
  llvm::Error error = executor.run(list, [&](const StepReport &report) {
    summary.seconds += report.seconds;
    summary.computeSeconds += report.computeSeconds;
    if (shared.detector)
      shared.detector->setCompletedStep(report.step);
    if (run.checkpoint && writer &&
        (report.step + 1) % *options.checkpointEvery == 0)
      if (llvm::Error error = saveCheckpoint(
              communicator, *run.checkpoint, executor.updates(),
              ownedWeights(executor, placement, d), executor.optimizerState()))
        shared.fatal("device " + std::to_string(d) +
                     ": checkpoint: " + llvm::toString(std::move(error)));
    shared.call(shared.hooks.onStep, d, report);
    if (run.freezing) {
      // From the next step on: the decision at the step boundary.
      std::set<std::string> frozen =
          run.freezing->frozenAt(report.step + 1, run.config.frozen);
      if (frozen.size() != executor.frozen().size()) {
        if (process == 0)
          shared.call(shared.hooks.onNote,
                      "freeze: from step " + std::to_string(report.step + 1) +
                          ", " +
                          std::to_string(
                              run.freezing->depths.depthAt(report.step + 1)) +
                          " of " + std::to_string(run.freezing->layers.size()) +
                          " layers frozen (" + std::to_string(frozen.size()) +
                          " parameters)");
        executor.setFrozen(std::move(frozen));
      }
    }
    if (evaluator)
      evaluate(report.step + 1);
  });
  if (error) {
    std::string message = llvm::toString(std::move(error));
    communicator.abort("device " + std::to_string(d) + " failed: " + message);
    shared.fatal("device " + std::to_string(d) + ": " + message);
  }
  summary.memory = formatDeviceMemory(
      process, executor.memory(), executor.predictMemory(list),
      readResidentMemory(), overhead,
      d < int64_t(run.planBytes.size())
          ? std::optional<int64_t>(run.planBytes[d])
          : std::nullopt);
  shared.call(shared.hooks.onDeviceDone, summary);
  trace = executor.trace();
  return ownedWeights(executor, placement, d);
}

/// This process's device (or replica) of an MPI run: device 0 returns the
/// result.
static llvm::Expected<TrainingResult> runProcess(Devices &shared, int *argc,
                                                 char ***argv) {
  TrainingRun &run = shared.run;
  const RunOptions &options = shared.options;
  int64_t planned = run.model->stageGraph().devices;
  const schedule::ReplicaLayout &replicas = run.replicas;
  auto created = createMpiCommunicator(argc, argv);
  if (!created)
    return created.takeError();
  // From here on every error ends the process: returning would finalize
  // MPI while the other processes wait for this one.
  std::unique_ptr<Communicator> communicator = std::move(*created);
  if (communicator->devices() != replicas.processes())
    shared.fatal("the plan has " + std::to_string(planned) + " devices" +
                 (replicas.replicated()
                      ? " run as " + std::to_string(replicas.processes()) +
                            " processes (replicas " + replicas.str() + ")"
                      : "") +
                 ", mpirun started " + std::to_string(communicator->devices()) +
                 " processes");
  communicator->setTimeout(options.timeout);
  std::unique_ptr<FailureDetector> detector;
  if (communicator->devices() > 1) {
    auto started =
        FailureDetector::start(*communicator, options.failureTimeout);
    if (!started)
      shared.fatal(llvm::toString(started.takeError()));
    detector = std::move(*started);
    shared.detector = detector.get();
    if (run.resumed)
      detector->setCompletedStep(run.resumed->updates - 1);
  }
  // A replica runs as its plan device; the barrier, the failure detector
  // and the timelines stay per process.
  std::optional<ReplicaCommunicator> replicated;
  if (replicas.replicated())
    replicated.emplace(*communicator, replicas);
  Communicator &device =
      replicated ? static_cast<Communicator &>(*replicated) : *communicator;
  auto stages = run.model->loadStages(device.device());
  if (!stages)
    shared.fatal(llvm::toString(stages.takeError()));
  // Start together, so the processes' timelines line up.
  communicator->barrier(0);
  std::vector<TraceEvent> trace;
  TensorMap owned = runDevice(shared, device, std::move(*stages), trace);
  TrainingResult result;
  if (!options.tracePath.empty() || options.compareSimulator)
    result.traces = gatherTraces(*communicator, std::move(trace));
  else
    result.traces.assign(1, {});
  // Replicas 0 gather the weights: the others hold the same.
  if (!replicated || replicated->replica() == 0)
    result.weights = gatherWeights(device, run.model->parameters(),
                                   run.model->placement(), owned);
  communicator->barrier(1);
  if (detector)
    detector->finish();
  result.gathered = communicator->device() == 0;
  if (!result.gathered)
    result = TrainingResult();
  return std::move(result);
}

/// Every device as a thread of this process.
static llvm::Expected<TrainingResult> runThreads(Devices &shared) {
  TrainingRun &run = shared.run;
  int64_t planned = run.model->stageGraph().devices;
  if (run.replicas.replicated())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "replicas " + run.replicas.str() +
            " run as MPI processes: start with --np " +
            std::to_string(run.replicas.processes()));
  int64_t devices = shared.options.threads ? shared.options.threads : planned;
  if (devices != planned)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the plan has %lld devices, --devices %lld",
                                   static_cast<long long>(planned),
                                   static_cast<long long>(devices));
  std::vector<std::vector<std::unique_ptr<StageProgram>>> stages;
  for (int64_t d = 0; d < devices; ++d) {
    auto loaded = run.model->loadStages(d);
    if (!loaded)
      return loaded.takeError();
    stages.push_back(std::move(*loaded));
  }
  LocalMailbox mailbox(devices, shared.options.timeout);
  std::vector<TensorMap> owned(devices);
  TrainingResult result;
  result.traces.assign(devices, {});
  std::vector<std::thread> threads;
  for (int64_t d = 0; d < devices; ++d)
    threads.emplace_back([&, d] {
      owned[d] = runDevice(shared, mailbox.endpoint(d), std::move(stages[d]),
                           result.traces[d]);
    });
  for (std::thread &thread : threads)
    thread.join();
  for (TensorMap &part : owned)
    result.weights.merge(part);
  result.gathered = true;
  return std::move(result);
}

/// Device 0's outputs of a finished run.
static llvm::Error writeOutputs(const TrainingRun &run,
                                const RunOptions &options,
                                TrainingResult &result) {
  if (!options.savePath.empty())
    if (llvm::Error error =
            run.saveHF ? writeHFCheckpoint(options.savePath, result.weights,
                                           *run.saveHF)
                       : writeSafetensors(options.savePath, result.weights,
                                          {{"format", "pt"}}))
      return error;
  if (options.compareSimulator) {
    auto timing =
        compareWithSimulator(run.model->stageGraph(), run.config.schedule,
                             run.processLists, result.traces, run.replicas);
    if (!timing)
      return timing.takeError();
    result.timing = std::move(*timing);
  }
  if (!options.tracePath.empty())
    if (llvm::Error error = support::writeFileAtomically(
            options.tracePath,
            llvm::formatv("{0:2}\n", traceToChrome(result.traces)).str()))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     options.tracePath + ": " +
                                         llvm::toString(std::move(error)));
  return llvm::Error::success();
}

llvm::Expected<TrainingResult>
ftpipe::runtime::runTraining(TrainingRun &run, const RunOptions &options,
                             const RunHooks &hooks, int *argc, char ***argv) {
  Devices shared{run, options, hooks};
  shared.processes = launchedByMpirun() && options.threads == 0;
  auto result =
      shared.processes ? runProcess(shared, argc, argv) : runThreads(shared);
  if (result && result->gathered)
    if (llvm::Error error = writeOutputs(run, options, *result))
      return std::move(error);
  return result;
}

std::string ftpipe::runtime::formatStep(const TrainingRun &run, int64_t device,
                                        const StepReport &report) {
  int64_t samplesPerStep =
      run.config.schedule.microBatches * run.model->microBatchSize();
  std::string line;
  llvm::raw_string_ostream(line) << llvm::format(
      "step %lld loss %.6f samples/s %.1f idle(device %lld) %.3f\n",
      static_cast<long long>(report.step), report.loss.value_or(0.0),
      samplesPerStep / std::max(report.seconds, 1e-9),
      static_cast<long long>(device),
      1.0 - report.computeSeconds / std::max(report.seconds, 1e-9));
  return line;
}

std::string ftpipe::runtime::formatDeviceSummary(const DeviceSummary &summary) {
  std::string lines;
  llvm::raw_string_ostream(lines)
      << llvm::format("device %lld: %.3f s, computing %.3f s (idle %.1f%%)\n",
                      static_cast<long long>(summary.device), summary.seconds,
                      summary.computeSeconds,
                      100.0 * (1.0 - summary.computeSeconds /
                                         std::max(summary.seconds, 1e-9)))
      << summary.memory << "\n";
  return lines;
}

bool ftpipe::runtime::launchedByMpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE");
}

llvm::Expected<int> ftpipe::runtime::relaunchUnderMpirun(int argc, char **argv,
                                                         int64_t processes) {
  llvm::ErrorOr<std::string> mpirun = llvm::sys::findProgramByName("mpirun");
  if (!mpirun)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--np needs mpirun on the PATH");
  std::string self =
      llvm::sys::fs::getMainExecutable(argv[0], (void *)&launchedByMpirun);
  std::vector<std::string> args = {*mpirun, "-np", std::to_string(processes),
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
