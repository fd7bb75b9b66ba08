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

#include "FTPipe/Runtime/ActivationCache.h"
#include "FTPipe/Runtime/CompiledModel.h"
#include "FTPipe/Runtime/FailureDetector.h"
#include "FTPipe/Runtime/FreezeRecompile.h"
#include "FTPipe/Runtime/Gather.h"
#include "FTPipe/Runtime/MeasuredProfile.h"
#include "FTPipe/Runtime/MemoryStats.h"
#include "FTPipe/Runtime/MpiCommunicator.h"
#include "FTPipe/Runtime/Replicas.h"
#include "FTPipe/Runtime/Safetensors.h"
#include "FTPipe/Schedule/MemoryReplay.h"
#include "FTPipe/Support/OutputFiles.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <list>
#include <mutex>
#include <thread>
#include <unistd.h>

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
  /// With --replan, per process the plans it moved to and their stages, the
  /// last one the run's final plan (each device's thread writes its own; a
  /// list, so that the executor's pointers into them stay valid).
  struct Replanned {
    PlannedMigration migration;
    std::vector<std::unique_ptr<StageProgram>> stages;
  };
  std::vector<std::list<Replanned>> replanned;
  /// With --freeze, per process the policy's depth from its next step on
  /// (each device's thread writes its own).
  std::vector<uint32_t> freezeDepth;

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
/// A process's end of the run as a device of the plan it runs now: the
/// process's communicator, seen through a ReplicaCommunicator while that
/// plan is replicated. A migration to another layout adds a view; earlier
/// views stay alive, as executors made before it refer to them.
class PlanEndpoint {
public:
  PlanEndpoint(Communicator &processes, const schedule::ReplicaLayout &layout)
      : processes(processes) {
    use(layout);
  }
  /// The plan's device this process runs (its replica's view).
  Communicator &device() { return *current; }
  /// The run's communicator, one end per process.
  Communicator &process() { return processes; }
  /// This process's replica of its device (0 unreplicated).
  int64_t replica() const { return replicated ? replicated->replica() : 0; }
  /// From now on the process runs under `layout`.
  void use(const schedule::ReplicaLayout &layout) {
    replicated = nullptr;
    current = &processes;
    if (!layout.replicated())
      return;
    replicated = &views.emplace_back(processes, layout);
    current = replicated;
  }

private:
  Communicator &processes;
  std::list<ReplicaCommunicator> views;
  ReplicaCommunicator *replicated = nullptr;
  Communicator *current = nullptr;
};
} // namespace

/// Whether the run keeps every process's timeline (for --trace,
/// --compare-simulator, --profile-out or --replan).
static bool recordsTimelines(const RunOptions &options) {
  return !options.tracePath.empty() || options.compareSimulator ||
         !options.profilePath.empty() || options.replan.enabled();
}

/// The parameters device `d` owns, as its executor holds them now.
static TensorMap ownedWeights(const DeviceExecutor &executor,
                              const ParameterPlacement &placement, int64_t d) {
  TensorMap owned;
  for (const auto &[name, holders] : placement)
    if (holders.front() == d)
      owned[name] = executor.weights().at(name);
  return owned;
}

static double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// `config` for process `process`: slowed down when --debug-slow names it.
static ExecutorConfig processConfig(ExecutorConfig config,
                                    const RunOptions &options,
                                    int64_t process) {
  if (process == options.debugSlowProcess)
    config.slowdown = options.debugSlowFactor;
  return config;
}

/// The generations of the run's barriers (Communicator::barrier): the start
/// and the end of an MPI run are 0 and 1.
static constexpr int64_t kMigrationBarrier = 2;

/// The placement process `p` ends the run with: the next plan's when it
/// migrated.
static const ParameterPlacement &finalPlacement(const Devices &shared,
                                                int64_t p) {
  if (p < int64_t(shared.replanned.size()) && !shared.replanned[p].empty())
    return shared.replanned[p].back().migration.model->placement();
  return shared.run.migration ? shared.run.migration->model->placement()
                              : shared.run.model->placement();
}

/// Moves this process from `from` to `migration`'s plan at the step
/// boundary where `executor` stopped (Migration.h): `endpoint` then runs
/// under the next plan's replicas, and the executor returned over
/// `nextStages` has the state handed over; process 0 says what moved and
/// how long it took.
static std::unique_ptr<DeviceExecutor>
migrateDevice(Devices &shared, PlanEndpoint &endpoint,
              const DeviceExecutor &executor, ProcessPlacement from,
              const PlannedMigration &migration,
              std::vector<StageProgram *> nextStages) {
  TrainingRun &run = shared.run;
  Communicator &communicator = endpoint.process();
  int64_t d = communicator.device();
  double start = now();
  MigrationTraffic traffic;
  auto pause = [&] {
    shared.call(shared.hooks.onNote,
                "device " + std::to_string(d) + ": migrating after step " +
                    std::to_string(migration.atStep) + ", paused");
    std::this_thread::sleep_for(std::chrono::seconds(60));
  };
  auto moved = migrateState(
      communicator, from, {migration.model->placement(), migration.replicas},
      captureState(executor), &traffic,
      shared.options.debugMigrationPause ? std::function<void()>(pause)
                                         : std::function<void()>());
  if (!moved) {
    std::string message = llvm::toString(moved.takeError());
    communicator.abort("device " + std::to_string(d) + " failed: " + message);
    shared.fatal("device " + std::to_string(d) + ": migration: " + message);
  }
  // What the run froze so far stays frozen under the next plan (its weights
  // moved, it has no optimizer state).
  ExecutorConfig config = processConfig(migration.config, shared.options, d);
  config.frozen.insert(executor.frozen().begin(), executor.frozen().end());
  config.gradientSquares = shared.run.config.gradientSquares;
  endpoint.use(migration.replicas);
  auto next = std::make_unique<DeviceExecutor>(
      endpoint.device(), std::move(nextStages), migration.model->placement(),
      std::move(config));
  if (llvm::Error error = next->setWeights(std::move(moved->weights)))
    shared.fatal("device " + std::to_string(d) +
                 ": migration: " + llvm::toString(std::move(error)));
  if (llvm::Error error = next->resume(moved->updates, moved->optimizerState))
    shared.fatal("device " + std::to_string(d) +
                 ": migration: " + llvm::toString(std::move(error)));
  if (llvm::Error error = next->setData(run.data))
    shared.fatal(llvm::toString(std::move(error)));
  // The migration ends when every device has its share (and, in-process,
  // no message of it is left in the mailbox); device 0 speaks for the run.
  communicator.barrier(kMigrationBarrier);
  if (d == 0)
    shared.call(shared.hooks.onNote,
                llvm::formatv(
                    "migrated to {0} after step {1} ({2}): {3:f3} s, "
                    "device 0 sent {4} tensors ({5:f1} MB) and "
                    "received {6} ({7:f1} MB)",
                    migration.directory, migration.atStep, migration.reason,
                    now() - start, traffic.tensorsSent, traffic.bytesSent / 1e6,
                    traffic.tensorsReceived, traffic.bytesReceived / 1e6)
                    .str());
  return next;
}

/// Runs device `d`'s list with --replan or --freeze-recompile: step by step,
/// and after each step the control exchange (Replan.h) with device 0, which
/// measures the window (or follows the freeze policy, FreezeRecompile.h),
/// compiles a new plan in the background and decides; a Measure
/// gathers every device's timeline to device 0, a Migrate moves every
/// device to the plan named (`moveTo`).
static void runReplanning(
    Devices &shared, PlanEndpoint &endpoint,
    llvm::function_ref<void(llvm::ArrayRef<schedule::Action>)> runPart,
    llvm::function_ref<void(const PlannedMigration &,
                            std::vector<std::unique_ptr<StageProgram>> &)>
        moveTo,
    const std::vector<schedule::Action> *&list,
    const std::vector<TraceEvent> &trace) {
  TrainingRun &run = shared.run;
  const RunOptions &options = shared.options;
  // The control exchange is the processes': every replica takes part.
  Communicator &communicator = endpoint.process();
  int64_t d = communicator.device();
  const PipelineModel *model = run.model.get();
  const schedule::ReplicaLayout *replicas = &run.replicas;
  ExecutorConfig config = run.config;
  std::optional<ReplanCoordinator> coordinator;
  std::optional<FreezeRecompiler> freezer;
  std::string compiler = options.replanCompiler;
  if (d == 0 && compiler.empty()) {
    std::string self =
        llvm::sys::fs::getMainExecutable(nullptr, (void *)&launchedByMpirun);
    llvm::SmallString<256> beside(llvm::sys::path::parent_path(self));
    llvm::sys::path::append(beside, "ftpipe-compile");
    auto found = llvm::sys::findProgramByName("ftpipe-compile");
    compiler = llvm::sys::fs::can_execute(beside) || !found ? beside.str().str()
                                                            : *found;
  }
  auto note = [&shared](const std::string &line) {
    shared.call(shared.hooks.onNote, line);
  };
  if (d == 0 && options.freezeRecompile) {
    FreezeRecompiler::Setup setup;
    setup.directory = options.replanDir;
    setup.compiler = compiler;
    setup.allowOverBudget = options.allowOverBudget;
    setup.waitForCompile = options.debugReplanWait;
    setup.extraArguments = options.freezeRecompileArgs;
    setup.replicasAllowed = shared.processes;
    schedule::Kind kind = config.schedule.kind;
    setup.repack = shared.processes && (kind == schedule::Kind::GPipe ||
                                        kind == schedule::Kind::OneFOneB);
    setup.processes = communicator.devices();
    setup.cores = std::max(1u, std::thread::hardware_concurrency());
    setup.note = note;
    freezer.emplace(std::move(setup));
  } else if (d == 0) {
    ReplanCoordinator::Setup setup;
    setup.policy = options.replan;
    setup.directory = options.replanDir;
    setup.compiler = compiler;
    if (options.debugSlowProcess >= 0)
      setup.slowdowns[options.debugSlowProcess] = options.debugSlowFactor;
    setup.allowOverBudget = options.allowOverBudget;
    setup.waitForCompile = options.debugReplanWait;
    setup.note = note;
    coordinator.emplace(std::move(setup));
  }
  int64_t steps = config.schedule.steps;
  size_t position = 0;
  for (int64_t updates = 1; position < list->size(); ++updates) {
    // One step: up to and with this device's update.
    size_t end = position;
    while (end < list->size() &&
           (*list)[end].kind != schedule::ActionKind::Update)
      ++end;
    end = std::min(end + 1, list->size());
    size_t before = trace.size();
    runPart(llvm::ArrayRef(*list).slice(position, end - position));
    position = end;
    if (updates >= steps)
      break;
    double compute = 0;
    for (size_t e = before; e < trace.size(); ++e)
      compute += trace[e].computeSeconds;
    ReplanControl control = exchangeReplanControl(
        communicator, updates, compute, [&](std::vector<double> all) {
          if (freezer)
            return freezer->afterStep(
                updates,
                run.freezing->frozenWith(shared.freezeDepth[d], config.frozen),
                shared.freezeDepth[d], run.freezing->layers.size(), *model,
                *replicas, config);
          return coordinator->afterStep(updates, all, *model, config);
        });
    if (control.action == ReplanControl::Action::Measure) {
      auto traces = gatherTraces(communicator, trace);
      if (coordinator)
        coordinator->measured(updates, traces, *model, config);
      continue;
    }
    if (control.action != ReplanControl::Action::Migrate)
      continue;
    // Device 0 opened and checked the plan: a failure here is this
    // device's.
    auto failed = [&](llvm::Error error) {
      std::string message = "device " + std::to_string(d) +
                            ": re-plan: " + llvm::toString(std::move(error));
      communicator.abort(message);
      shared.fatal(message);
    };
    auto planned = planMigration(*model, *replicas, config, control.directory,
                                 updates, options.allowOverBudget);
    if (!planned)
      failed(planned.takeError());
    planned->reason = options.freezeRecompile ? "--freeze" : "--replan";
    planned->decision = control.reason;
    if (run.freezing)
      if (llvm::Error error = checkFrozenAtMigration(
              *planned,
              run.freezing->frozenWith(shared.freezeDepth[d], config.frozen)))
        failed(std::move(error));
    auto stages =
        planned->model->loadStages(planned->replicas.replicaOf(d).first);
    if (!stages)
      failed(stages.takeError());
    auto &moved = shared.replanned[d];
    moved.push_back({std::move(*planned), std::move(*stages)});
    moveTo(moved.back().migration, moved.back().stages);
    model = moved.back().migration.model.get();
    replicas = &moved.back().migration.replicas;
    config = moved.back().migration.config;
    position = 0;
    if (coordinator)
      coordinator->migrated(updates);
    if (freezer)
      freezer->migrated(updates);
  }
}

/// Runs this process's part with its device's stage programs (over a
/// ReplicaCommunicator, one replica's part), and when the run migrates, the
/// rest with `nextStages` (as the device and replica the next plan gives
/// the process: `endpoint` follows); returns its device's owned final
/// weights and, when recording, its timeline.
static TensorMap
runDevice(Devices &shared, PlanEndpoint &endpoint,
          std::vector<std::unique_ptr<StageProgram>> stages,
          std::vector<std::unique_ptr<StageProgram>> nextStages,
          std::vector<TraceEvent> &trace) {
  TrainingRun &run = shared.run;
  const RunOptions &options = shared.options;
  // The plan device this process runs: another after a migration to
  // another replica layout.
  int64_t d = endpoint.device().device();
  int64_t process = endpoint.process().device();
  const std::vector<schedule::Action> *list =
      &run.processLists.devices[process];
  // The lists `list` is one of, and their stages (the prediction's sends
  // wait for receivers in them).
  const schedule::Schedule *lists = &run.processLists;
  const schedule::StageGraph *graph = &run.model->stageGraph();
  auto pointers = [](std::vector<std::unique_ptr<StageProgram>> &programs) {
    std::vector<StageProgram *> result;
    for (auto &program : programs)
      result.push_back(program.get());
    return result;
  };
  const ParameterPlacement *placement = &run.model->placement();
  const schedule::ReplicaLayout *replicas = &run.replicas;
  // The policy's frozen set (--freeze) at the first step this run does.
  ExecutorConfig config = processConfig(run.config, options, process);
  int64_t firstStep = run.resumed ? run.resumed->updates : 0;
  // The plan's own frozen parameters, which the policy's prefix joins: the
  // next plan's after a migration.
  const std::set<std::string> *planFrozen = &run.config.frozen;
  std::optional<GradientNormFreezer> gradientNorm;
  if (run.freezing) {
    uint32_t depth = run.freezing->depths.depthAt(firstStep);
    if (run.freezing->gradientNorm) {
      // Resumed: the rule goes on from the checkpoint's state (planTraining
      // checked it).
      gradientNorm.emplace(*run.freezing);
      if (run.resumed)
        if (llvm::Error error =
                gradientNorm->restore(run.resumed->freezePolicy))
          shared.fatal(llvm::toString(std::move(error)));
      depth = gradientNorm->depth();
    }
    config.frozen = run.freezing->frozenWith(depth, *planFrozen);
    shared.freezeDepth[process] = depth;
  }
  auto executor = std::make_unique<DeviceExecutor>(
      endpoint.device(), pointers(stages), *placement, config);
  FixedOverhead overhead;
  overhead.beforeBytes = residentOverheadBytes();
  bool alone = endpoint.process().devices() == 1 || shared.processes;
  TensorMap mine;
  for (const ParameterInfo &param : executor->parameters())
    mine[param.name] = alone ? std::move(run.weights.at(param.name))
                             : run.weights.at(param.name);
  if (alone)
    run.weights.clear();
  if (llvm::Error error = executor->setWeights(std::move(mine)))
    shared.fatal(llvm::toString(std::move(error)));
  if (run.resumed) {
    // A checkpoint written at the step a policy froze more still holds the
    // optimizer state of what it froze, which is never used again.
    TensorMap state;
    for (const auto &[name, tensor] : run.resumed->optimizerState[d])
      if (!executor->frozen().count(
              llvm::StringRef(name).rsplit('.').first.str()))
        state.emplace(name, tensor);
    if (llvm::Error error = executor->resume(run.resumed->updates, state))
      shared.fatal(run.resumed->directory + ": " +
                   llvm::toString(std::move(error)));
  }
  if (run.resumed && process == 0)
    shared.call(shared.hooks.onNote,
                "resuming " + run.resumed->directory + " after " +
                    std::to_string(run.resumed->updates) + " steps");
  if (llvm::Error error = executor->setData(run.data))
    shared.fatal(llvm::toString(std::move(error)));
  std::optional<Evaluator> evaluator;
  auto evaluate = [&](int64_t updates) {
    auto report = evaluator->afterUpdates(*executor, updates);
    if (!report)
      shared.fatal("device " + std::to_string(d) +
                   ": evaluation: " + llvm::toString(report.takeError()));
    if (*report)
      shared.call(shared.hooks.onEvaluation, d, **report);
  };
  if (run.evaluation) {
    evaluator.emplace(*run.evaluation, d);
    evaluate(executor->updates());
  }
  // --activation-cache: planned for the plan and the frozen set in force,
  // emptied when the stages it covers change (ActivationCache.h).
  std::optional<ActivationCache> activationCache;
  if (options.activationCacheMiB >= 0)
    activationCache.emplace(options.activationCacheMiB << 20,
                            options.activationCacheDir, process);
  const PipelineModel *cacheModel = run.model.get();
  bool cacheStopped = false;
  std::optional<std::map<int64_t, std::set<SendKey>>> cacheCovers;
  std::map<int64_t, int64_t> cacheSince;
  auto planCache = [&](const PipelineModel &model) {
    int64_t updates = executor->updates(), steps = run.config.schedule.steps;
    if (!activationCache || updates >= steps)
      return;
    // A plan with replicas (a re-packing move): replicas of a producer and
    // its consumer would decide hits alone, so the cache stops.
    if (replicas->replicated()) {
      if (process == 0 && !cacheStopped)
        shared.call(shared.hooks.onNote,
                    "activation cache: off from here on (the plan has "
                    "replicas " +
                        replicas->str() + ")");
      cacheStopped = true;
      activationCache->clear();
      executor->setActivationCache(ActivationCacheUse());
      return;
    }
    // A plan --freeze-recompile replaces empties the cache.
    const schedule::FreezeSchedule *moves =
        options.freezeRecompile && !run.freezing->gradientNorm
            ? &run.freezing->depths
            : nullptr;
    ActivationCachePlan plan = planActivationCache(
        model, executor->frozen(), run.data, updates,
        cacheHorizon(moves, updates, steps), run.config.schedule.microBatches);
    // Under the same plan the cache goes on as the frozen set grows, unless
    // the run compiles again as it freezes more (the next plan empties it).
    bool samePlan = &model == cacheModel,
         changed = !samePlan || plan.covered() != cacheCovers;
    bool kept = samePlan && (!changed || !options.freezeRecompile) &&
                keepAcrossFreeze(plan, cacheSince);
    if (changed && !kept)
      activationCache->clear();
    if (changed && process == 0)
      shared.call(shared.hooks.onNote,
                  plan.describe() + (kept && !cacheSince.empty()
                                         ? "; keeps what it holds"
                                         : ""));
    cacheModel = &model;
    cacheCovers = plan.covered();
    cacheSince = plan.since;
    ActivationCacheUse use = useOn(plan, d, &*activationCache);
    // A re-compile with more frozen is under way: its plan will empty the
    // cache, so replay what it holds but store nothing more.
    if (options.freezeRecompile && executor->frozen() != *planFrozen)
      use.end = 0;
    executor->setActivationCache(std::move(use));
  };
  // The backwards a frozen prefix does not need (SkippedBackwards.h), and
  // the cache of those stages: for the plan and the frozen set in force.
  const PipelineModel *runningModel = run.model.get();
  std::set<int64_t> skippedStages;
  auto planFrozenWork = [&](const PipelineModel &model) {
    runningModel = &model;
    auto *compiled = dynamic_cast<const CompiledModel *>(&model);
    if (compiled && !options.keepFrozenBackwards &&
        executor->updates() < run.config.schedule.steps) {
      SkippedBackwards skip = planSkippedBackwards(
          compiled->manifest(), executor->frozen(),
          executor->updates() * run.config.schedule.microBatches);
      if (process == 0 && skip.stages != skippedStages)
        shared.call(shared.hooks.onNote, skip.describe(executor->updates()));
      skippedStages = skip.stages;
      executor->setSkippedBackwards(std::move(skip));
    }
    planCache(model);
  };
  planFrozenWork(*run.model);
  bool tracing = recordsTimelines(options);
  executor->recordTrace(tracing);
  // Checkpoints name the plan they were written under.
  std::optional<CheckpointSetup> checkpoint = run.checkpoint;
  DeviceSummary summary;
  summary.device = process;
  auto onStep = [&](const StepReport &report) {
    overhead.afterStepsBytes =
        std::max(overhead.afterStepsBytes.value_or(0), residentOverheadBytes());
    summary.seconds += report.seconds;
    summary.computeSeconds += report.computeSeconds;
    if (shared.detector)
      shared.detector->setCompletedStep(report.step);
    // The gradient-norm rule sees this step's gradients (a collective of
    // all processes; a device's replicas hold the same sums, its first
    // gives them) before the checkpoint, which records its state.
    std::optional<uint32_t> normDepth;
    if (gradientNorm)
      normDepth = gradientNorm->afterStep(
          endpoint.process(), report.step,
          endpoint.replica() == 0 ? report.gradientSquares
                                  : std::map<std::string, double>());
    // Replicas 0 write the checkpoints (replicas hold the same weights).
    if (checkpoint && endpoint.replica() == 0 &&
        (report.step + 1) % *options.checkpointEvery == 0)
      if (llvm::Error error = saveCheckpoint(
              endpoint.device(), *checkpoint, executor->updates(),
              ownedWeights(*executor, *placement, d),
              executor->optimizerState(),
              gradientNorm ? gradientNorm->state() : nullptr))
        shared.fatal("device " + std::to_string(d) +
                     ": checkpoint: " + llvm::toString(std::move(error)));
    shared.call(shared.hooks.onStep, d, report);
    if (run.freezing) {
      // From the next step on: the decision at the step boundary.
      uint32_t &depth = shared.freezeDepth[process];
      depth = normDepth ? *normDepth
                        : run.freezing->depths.depthAt(report.step + 1);
      if (gradientNorm && process == 0 && !gradientNorm->evaluation().empty())
        shared.call(shared.hooks.onNote, gradientNorm->evaluation());
      std::set<std::string> frozen =
          run.freezing->frozenWith(depth, *planFrozen);
      frozen.insert(executor->frozen().begin(), executor->frozen().end());
      if (frozen.size() != executor->frozen().size()) {
        if (process == 0)
          shared.call(shared.hooks.onNote,
                      "freeze: from step " + std::to_string(report.step + 1) +
                          ", " + std::to_string(depth) + " of " +
                          std::to_string(run.freezing->layers.size()) +
                          " layers frozen (" + std::to_string(frozen.size()) +
                          " parameters)");
        executor->setFrozen(std::move(frozen));
        planFrozenWork(*runningModel);
      }
    }
    if (evaluator)
      evaluate(report.step + 1);
  };
  // The prediction of the device's memory over `list`; the allocator's
  // cache keeps what its peak leaves room for (DeviceExecutor::boundCaches).
  auto predictMemory = [&] {
    std::vector<std::vector<size_t>> held =
        schedule::sendsHeldUntil(*lists, *graph);
    return executor->predictMemory(*list, size_t(process) < held.size()
                                              ? llvm::ArrayRef(held[process])
                                              : llvm::ArrayRef<size_t>());
  };
  auto boundCaches = [&] {
    if (std::optional<MemoryPrediction> predicted = predictMemory())
      executor->boundCaches(*list, predicted->cacheBounds);
  };
  boundCaches();
  double runStart = now();
  // Runs `actions` (a part of the list) and appends their timeline.
  auto runPart = [&](llvm::ArrayRef<schedule::Action> actions) {
    double partStart = now();
    if (llvm::Error error = executor->run(actions, onStep)) {
      std::string message = llvm::toString(std::move(error));
      endpoint.process().abort("device " + std::to_string(d) +
                               " failed: " + message);
      shared.fatal("device " + std::to_string(d) + ": " + message);
    }
    for (TraceEvent event : executor->trace()) {
      event.startSeconds += partStart - runStart;
      event.endSeconds += partStart - runStart;
      trace.push_back(event);
    }
  };
  // Moves to `migration`'s plan (its stages `next`) where the executor
  // stopped; the list becomes the rest under it.
  const PlannedMigration *current = nullptr;
  auto moveTo = [&](const PlannedMigration &migration,
                    std::vector<std::unique_ptr<StageProgram>> &next) {
    double migrationStart = now();
    // What arrives is the device's under the next plan (run() charges the
    // same way).
    d = migration.replicas.replicaOf(process).first;
    int32_t chargedBefore = ftpipe_mem_thread_device();
    ftpipe_mem_set_thread_device(static_cast<int32_t>(d));
    executor =
        migrateDevice(shared, endpoint, *executor, {*placement, *replicas},
                      migration, pointers(next));
    ftpipe_mem_set_thread_device(chargedBefore);
    // The memory line is the next plan's: its peak from here on (the
    // migration itself held the device's share twice for a moment).
    ftpipe_mem_reset_peak(static_cast<int32_t>(d));
    placement = &migration.model->placement();
    replicas = &migration.replicas;
    planFrozen = &migration.config.frozen;
    list = &migration.rest.devices[process];
    lists = &migration.rest;
    graph = &migration.model->stageGraph();
    current = &migration;
    if (checkpoint)
      checkpoint->identity =
          identifyRun(*migration.model, migration.config, run.data);
    executor->recordTrace(tracing);
    planFrozenWork(*migration.model);
    boundCaches();
    TraceEvent moved;
    moved.action = schedule::Action::update(migration.atStep - 1);
    moved.migration = true;
    moved.startSeconds = migrationStart - runStart;
    moved.endSeconds = now() - runStart;
    if (tracing)
      trace.push_back(moved);
  };
  if (options.replan.enabled() || options.freezeRecompile) {
    runReplanning(shared, endpoint, runPart, moveTo, list, trace);
  } else {
    runPart(*list);
    if (run.migration) {
      moveTo(*run.migration, nextStages);
      runPart(*list);
    }
  }
  std::optional<int64_t> planned;
  const std::vector<int64_t> &planBytes =
      current ? current->planBytes : run.planBytes;
  if (d < int64_t(planBytes.size()))
    planned = planBytes[d];
  summary.memory =
      formatDeviceMemory(process, executor->memory(), predictMemory(),
                         readResidentMemory(), overhead, planned);
  if (activationCache &&
      activationCache->stats().stored + activationCache->stats().replayed > 0)
    summary.memory += "\ndevice " + std::to_string(process) + " " +
                      activationCache->stats().describe();
  shared.call(shared.hooks.onDeviceDone, summary);
  return ownedWeights(*executor, *placement, d);
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
  PlanEndpoint endpoint(*communicator, replicas);
  int64_t process = communicator->device();
  auto stages = run.model->loadStages(endpoint.device().device());
  if (!stages)
    shared.fatal(llvm::toString(stages.takeError()));
  std::vector<std::unique_ptr<StageProgram>> nextStages;
  if (run.migration) {
    auto loaded = run.migration->model->loadStages(
        run.migration->replicas.replicaOf(process).first);
    if (!loaded)
      shared.fatal(llvm::toString(loaded.takeError()));
    nextStages = std::move(*loaded);
  }
  // Start together, so the processes' timelines line up.
  communicator->barrier(0);
  std::vector<TraceEvent> trace;
  TensorMap owned = runDevice(shared, endpoint, std::move(*stages),
                              std::move(nextStages), trace);
  TrainingResult result;
  if (recordsTimelines(options))
    result.traces = gatherTraces(*communicator, std::move(trace));
  else
    result.traces.assign(1, {});
  if (options.compareSimulator)
    result.cpus = gatherCpus(*communicator);
  // Replicas 0 (of the plan the run ended under) gather the weights: the
  // others hold the same.
  if (endpoint.replica() == 0)
    result.weights = gatherWeights(endpoint.device(), run.model->parameters(),
                                   finalPlacement(shared, process), owned);
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
  for (const schedule::ReplicaLayout *layout :
       {&run.replicas, run.migration ? &run.migration->replicas : nullptr})
    if (layout && layout->replicated())
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "replicas " + layout->str() +
              " run as MPI processes: start with --np " +
              std::to_string(layout->processes()));
  int64_t devices = shared.options.threads ? shared.options.threads : planned;
  if (devices != planned)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the plan has %lld devices, --devices %lld",
                                   static_cast<long long>(planned),
                                   static_cast<long long>(devices));
  // Loaded here, not in the threads: a model opens each artifact once.
  std::vector<std::vector<std::unique_ptr<StageProgram>>> stages(devices),
      nextStages(devices);
  for (int64_t d = 0; d < devices; ++d) {
    auto loaded = run.model->loadStages(d);
    if (!loaded)
      return loaded.takeError();
    stages[d] = std::move(*loaded);
    if (!run.migration)
      continue;
    auto next = run.migration->model->loadStages(d);
    if (!next)
      return next.takeError();
    nextStages[d] = std::move(*next);
  }
  LocalMailbox mailbox(devices, shared.options.timeout);
  std::vector<TensorMap> owned(devices);
  TrainingResult result;
  result.traces.assign(devices, {});
  if (shared.options.compareSimulator)
    result.cpus.assign(devices, ProcessCpus::current());
  std::vector<std::thread> threads;
  for (int64_t d = 0; d < devices; ++d)
    threads.emplace_back([&, d] {
      PlanEndpoint endpoint(mailbox.endpoint(d), run.replicas);
      owned[d] = runDevice(shared, endpoint, std::move(stages[d]),
                           std::move(nextStages[d]), result.traces[d]);
    });
  for (std::thread &thread : threads)
    thread.join();
  for (TensorMap &part : owned)
    result.weights.merge(part);
  result.gathered = true;
  return std::move(result);
}

/// Writes the run's measured profile to --profile-out.
static llvm::Error
writeRunProfile(const TrainingRun &run, const RunOptions &options,
                const std::vector<std::vector<TraceEvent>> &traces) {
  ProfileSource source;
  source.schedule = schedule::nameOf(run.config.schedule.kind).str();
  source.warmupSteps = options.profileWarmup;
  if (options.debugSlowProcess >= 0)
    source.slowdowns[options.debugSlowProcess] = options.debugSlowFactor;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0)
    source.host = host;
  std::vector<ManifestStage> planned;
  if (auto *compiled = dynamic_cast<const CompiledModel *>(run.model.get())) {
    const ArtifactManifest &manifest = compiled->manifest();
    source.artifacts = manifest.directory;
    source.target = manifest.target;
    planned = manifest.stages;
  } else {
    source.target = "cpu";
  }
  auto profile =
      measureProfile(run.model->stageGraph(), run.config.schedule, traces,
                     run.replicas, planned, std::move(source));
  if (!profile)
    return profile.takeError();
  if (llvm::Error error = writeProfile(options.profilePath, *profile))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   options.profilePath + ": " +
                                       llvm::toString(std::move(error)));
  return llvm::Error::success();
}

/// Why device 0 moved to another plan, per move in order.
static std::vector<std::string> migrationReasons(const Devices &shared) {
  std::vector<std::string> reasons;
  if (shared.run.migration)
    reasons.push_back(shared.run.migration->reason);
  if (!shared.replanned.empty())
    for (const Devices::Replanned &moved : shared.replanned[0])
      reasons.push_back(moved.migration.decision.empty()
                            ? moved.migration.reason
                            : moved.migration.reason + ", " +
                                  moved.migration.decision);
  return reasons;
}

/// Device 0's outputs of a finished run.
static llvm::Error writeOutputs(const Devices &shared, TrainingResult &result) {
  const TrainingRun &run = shared.run;
  const RunOptions &options = shared.options;
  if (!options.savePath.empty())
    if (llvm::Error error =
            run.saveHF ? writeHFCheckpoint(options.savePath, result.weights,
                                           *run.saveHF)
                       : writeSafetensors(options.savePath, result.weights,
                                          {{"format", "pt"}}))
      return error;
  if (options.compareSimulator) {
    const schedule::StageGraph &graph = run.model->stageGraph();
    auto timing =
        compareWithSimulator(graph, run.config.schedule, run.processLists,
                             result.traces, run.replicas,
                             stageGradientBytes(graph, run.model->placement(),
                                                run.model->parameters()),
                             options.allReduceGBps, sharedCoresOf(result.cpus));
    if (!timing)
      return timing.takeError();
    result.timing = std::move(*timing);
  }
  if (!options.profilePath.empty())
    if (llvm::Error error = writeRunProfile(run, options, result.traces))
      return error;
  // The measured trace, and the simulated one of the same lists beside it.
  std::vector<std::pair<std::string, llvm::json::Value>> traces;
  if (!options.tracePath.empty())
    traces.emplace_back(options.tracePath,
                        traceToChrome(result.traces, migrationReasons(shared)));
  if (!options.tracePath.empty() && result.timing)
    traces.emplace_back(options.tracePath + ".simulated.json",
                        simulatedTrace(*result.timing));
  for (auto &[path, trace] : traces)
    if (llvm::Error error = support::writeFileAtomically(
            path, llvm::formatv("{0:2}\n", trace).str()))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     path + ": " +
                                         llvm::toString(std::move(error)));
  return llvm::Error::success();
}

llvm::Expected<TrainingResult>
ftpipe::runtime::runTraining(TrainingRun &run, const RunOptions &options,
                             const RunHooks &hooks, int *argc, char ***argv) {
  Devices shared{run, options, hooks};
  shared.processes = launchedByMpirun() && options.threads == 0;
  shared.replanned.resize(run.replicas.processes());
  shared.freezeDepth.resize(run.replicas.processes());
  auto result =
      shared.processes ? runProcess(shared, argc, argv) : runThreads(shared);
  if (result && result->gathered)
    if (llvm::Error error = writeOutputs(shared, *result))
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

  // OpenMPI 4 creates its session directory under $TMPDIR with a check
  // and a mkdir that race: two mpiruns starting at once on one machine can
  // both see it missing, and the loser aborts ("A call to mkdir was unable
  // to create the desired directory ... File exists", open-mpi/ompi#8510).
  // Unless the user chose a base, this mpirun gets a directory of its own,
  // removed when it ends.
  static constexpr const char *kSessionBase = "OMPI_MCA_orte_tmpdir_base";
  if (std::getenv(kSessionBase))
    return llvm::sys::ExecuteAndWait(*mpirun, refs);
  llvm::SmallString<128> sessionBase;
  if (std::error_code error =
          llvm::sys::fs::createUniqueDirectory("ftpipe-mpirun", sessionBase))
    return llvm::createStringError(error, "--np: cannot create a directory "
                                          "for mpirun's session: " +
                                              error.message());
  std::vector<std::string> environment;
  for (char **entry = environ; *entry; ++entry)
    environment.emplace_back(*entry);
  environment.push_back(std::string(kSessionBase) + "=" +
                        sessionBase.str().str());
  std::vector<llvm::StringRef> environmentRefs(environment.begin(),
                                               environment.end());
  int status = llvm::sys::ExecuteAndWait(*mpirun, refs, environmentRefs);
  llvm::sys::fs::remove_directories(sessionBase);
  return status;
}
