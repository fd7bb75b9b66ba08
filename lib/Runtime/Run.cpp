//===- Run.cpp - A training run: model, setup, schedule, inputs -----------===//
//
// Everything before the devices start (Run.h): the model, the setup settled
// against the manifest, the schedule, the weights, the data set and the
// checkpoint to resume. Every check happens here, before anything is
// written; RunDevices.cpp runs what this prepared.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/Run.h"

#include "FTPipe/Runtime/CompiledModel.h"
#include "FTPipe/Runtime/DataValues.h"
#include "FTPipe/Runtime/RunLimits.h"
#include "FTPipe/Runtime/RunSchedule.h"
#include "FTPipe/Runtime/Safetensors.h"
#include "FTPipe/Runtime/SetupCheck.h"
#include "FTPipe/Support/BoundedInput.h"
#include "FTPipe/Support/OutputFiles.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"

using namespace ftpipe;
using namespace ftpipe::runtime;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// `error` with `context: ` before its message.
static llvm::Error prefixed(const llvm::Twine &context, llvm::Error error) {
  if (!error)
    return llvm::Error::success();
  return fail(context + ": " + llvm::toString(std::move(error)));
}

/// The tiny MLP's shape as `options` give it, for a model of `stages`.
static TinyMlpShape tinyMlpShape(const ModelOptions &options, int64_t stages) {
  TinyMlpShape shape;
  shape.stages = stages;
  shape.hidden = options.hidden.value_or(shape.hidden);
  shape.features = options.features.value_or(shape.features);
  shape.microBatchSize = options.microBatchSize.value_or(shape.microBatchSize);
  return shape;
}

llvm::Expected<std::unique_ptr<PipelineModel>>
ftpipe::runtime::openModel(const ModelOptions &options) {
  if (!options.artifacts.empty()) {
    if (!options.builtin.empty())
      return fail("give an artifact directory or --model, not both");
    std::pair<bool, const char *> tinyMlpOptions[] = {
        {options.placement.has_value(), "placement"},
        {options.hidden.has_value(), "hidden"},
        {options.features.has_value(), "features"},
        {options.microBatchSize.has_value(), "micro-batch-size"}};
    for (auto [given, flag] : tinyMlpOptions)
      if (given)
        return fail(llvm::Twine("--") + flag +
                    " is an option of --model tiny-mlp; compiled artifacts "
                    "bring their own plan and shapes");
    auto model = CompiledModel::open(options.artifacts);
    if (!model)
      return model.takeError();
    return std::unique_ptr<PipelineModel>(std::move(*model));
  }
  if (options.builtin != "tiny-mlp")
    return fail("give the directory that ftpipe-compile wrote, or --model "
                "tiny-mlp (the built-in model)");
  TinyMlpShape sizes = tinyMlpShape(options, 0);
  std::pair<int64_t, const char *> sizeOptions[] = {
      {sizes.hidden, "--hidden"},
      {sizes.features, "--features"},
      {sizes.microBatchSize, "--micro-batch-size"},
      {options.samples, "--samples"}};
  for (auto [value, flag] : sizeOptions)
    if (llvm::Error error = checkSizeOption(value, kMaxTinyMlpSize, flag))
      return std::move(error);
  std::vector<int64_t> placement;
  llvm::SmallVector<llvm::StringRef> parts;
  std::string placementText = options.placement.value_or("0,1,2,3");
  llvm::StringRef(placementText).split(parts, ',');
  for (llvm::StringRef part : parts) {
    int64_t device = 0;
    if (part.trim().getAsInteger(10, device) || device < 0 ||
        device >= kMaxTinyMlpSize)
      return fail("--placement: '" + part + "' is not a device");
    placement.push_back(device);
  }
  TinyMlpShape shape = tinyMlpShape(options, placement.size());
  return createTinyMlpModel(shape, std::move(placement));
}

/// --migrate-at and --migrate-to: the next plan and the rest of the run
/// under it (Migration.h); the run's own lists then end where it moves.
static llvm::Error prepareMigration(TrainingRun &run,
                                    const RunOptions &options) {
  if (options.migrateTo.empty() != (options.migrateAt < 0))
    return fail("give --migrate-at and --migrate-to together");
  if (options.migrateTo.empty())
    return llvm::Error::success();
  std::pair<bool, const char *> refused[] = {
      {!options.resumePath.empty(),
       "--resume (resume with the next plan's artifacts instead)"},
      {!options.scheduleFile.empty(), "--schedule-file"},
      {options.compareSimulator, "--compare-simulator"},
      {!options.profilePath.empty(), "--profile-out"},
      {!options.evalDataPath.empty(), "--eval-data"}};
  for (auto [given, what] : refused)
    if (given)
      return fail(llvm::Twine("--migrate-to does not run with ") + what +
                  " yet");
  auto planned =
      planMigration(*run.model, run.replicas, run.config, options.migrateTo,
                    options.migrateAt, options.allowOverBudget);
  if (!planned)
    return planned.takeError();
  run.migration = std::move(*planned);
  run.migration->reason = "--migrate-at " + std::to_string(options.migrateAt);
  schedule::ScheduleConfig before = run.config.schedule;
  before.steps = options.migrateAt;
  auto lists = runSchedule(*run.model, before,
                           run.listsBudget ? &*run.listsBudget : nullptr);
  if (!lists)
    return lists.takeError();
  if (auto checked = schedule::dryRun(run.model->stageGraph(), before, *lists);
      !checked)
    return checked.takeError();
  run.schedule = std::move(*lists);
  return llvm::Error::success();
}

/// --replan and --freeze-recompile (`flag`): refuses what a run that
/// compiles its model again and migrates cannot do yet, and a plan whose
/// manifest does not say how it was compiled.
static llvm::Error checkRecompiling(const TrainingRun &run,
                                    const RunOptions &options,
                                    llvm::StringRef flag) {
  std::pair<bool, const char *> refused[] = {
      {!options.migrateTo.empty(), "--migrate-to"},
      {!options.resumePath.empty(), "--resume"},
      {!options.scheduleFile.empty(), "--schedule-file"},
      {options.compareSimulator, "--compare-simulator"},
      {!options.profilePath.empty(), "--profile-out"},
      {!options.evalDataPath.empty(), "--eval-data"},
      {run.replicas.replicated(), "replicas"},
      {run.config.schedule.kind == schedule::Kind::Async,
       "the async schedule (it migrates only after a drain)"}};
  for (auto [given, what] : refused)
    if (given)
      return fail(flag + " does not run with " + what + " yet");
  auto *compiled = dynamic_cast<const CompiledModel *>(run.model.get());
  if (!compiled || !compiled->manifest().compile)
    return fail(flag +
                " compiles the model again: it needs a plan whose "
                "manifest.json records its `compile` command (compile it "
                "with this version of ftpipe-compile)");
  return llvm::Error::success();
}

/// --replan and --freeze-recompile: each alone, and what both refuse.
static llvm::Error checkReplan(const TrainingRun &run,
                               const RunOptions &options) {
  if (!options.freezeRecompileArgs.empty() && !options.freezeRecompile)
    return fail("--freeze-recompile-args needs --freeze-recompile");
  if (options.freezeRecompile) {
    if (options.freeze.empty())
      return fail("--freeze-recompile needs a --freeze policy");
    if (options.replan.enabled())
      return fail("give --replan or --freeze-recompile, not both");
    return checkRecompiling(run, options, "--freeze-recompile");
  }
  if (!options.replan.enabled())
    return llvm::Error::success();
  return checkRecompiling(run, options, "--replan");
}

llvm::Expected<TrainingRun>
ftpipe::runtime::planTraining(const ModelOptions &modelOptions,
                              const RunOptions &options) {
  TrainingRun run;
  auto model = openModel(modelOptions);
  if (!model)
    return model.takeError();
  run.model = std::move(*model);
  const schedule::StageGraph &graph = run.model->stageGraph();
  // The training setup: a field not given takes the value the plan was made
  // for (manifest.json's `training`), else the default.
  const ArtifactManifest *manifest = nullptr;
  if (auto *compiled = dynamic_cast<CompiledModel *>(run.model.get()))
    manifest = &compiled->manifest();
  schedule::TrainingSetup fallback =
      manifest && manifest->training ? *manifest->training : kDefaultRunSetup;
  schedule::TrainingSetup setup = kDefaultRunSetup;
  setup.schedule = options.schedule.value_or(fallback.schedule);
  // Checked before the narrowing below; checkRunSettings bounds the whole
  // schedule once the setup is known.
  if (llvm::Error error = checkSizeOption(
          options.microBatches.value_or(kDefaultRunSetup.microBatches),
          kMaxScheduleActions / (2 * std::max<int64_t>(graph.stages(), 1)),
          "--micro-batches"))
    return std::move(error);
  setup.microBatches = options.microBatches ? uint32_t(*options.microBatches)
                                            : fallback.microBatches;
  setup.weightVersions =
      options.weightVersions.value_or(fallback.weightVersions);
  setup.optimizer = options.optimizer.value_or(fallback.optimizer);
  if (llvm::Error error = checkImplemented(setup.optimizer))
    return std::move(error);
  // The processes per device (checked for memory below).
  if (!options.replicas.empty()) {
    auto layout = schedule::parseReplicas(options.replicas, graph.devices);
    if (!layout)
      return layout.takeError();
    run.replicas = std::move(*layout);
  } else {
    run.replicas = manifest && manifest->replicas
                       ? *manifest->replicas
                       : schedule::ReplicaLayout::none(graph.devices);
  }
  // zb-auto's lists are built within each device's budget instead (below):
  // the formula bounds every list of the kind, most of which do not fit.
  bool boundedLists = manifest && !options.allowOverBudget &&
                      setup.schedule == schedule::Kind::ZeroBubbleAuto &&
                      options.scheduleFile.empty();
  if (manifest && !options.allowOverBudget && !boundedLists)
    if (llvm::Error error = checkRunMemory(*manifest, setup, run.replicas))
      return std::move(error);
  if (manifest)
    for (const schedule::DeviceMemory &memory :
         plannedMemory(*manifest, setup, run.replicas))
      run.planBytes.push_back(int64_t(memory.totalBytes()));
  run.config.schedule = {setup.schedule, setup.microBatches, options.steps};
  // Zero-bubble: I and W where the compiled stage splits (the tiny MLP's
  // stages all do).
  if (schedule::isZeroBubble(setup.schedule) && manifest)
    run.config.schedule.split = splitStages(*manifest);
  run.config.stashing = setup.weightVersions;
  if (manifest)
    for (const auto &[name, parameter] : manifest->parameters)
      if (parameter.frozen)
        run.config.frozen.insert(name);
  run.config.optimizer.kind = setup.optimizer;
  run.config.optimizer.lr = options.lr;
  run.config.optimizer.warmupSteps = options.warmup;
  run.config.optimizer.weightDecay = options.weightDecay;
  if (llvm::Error error = checkRunSettings(run.config, graph.stages()))
    return std::move(error);
  std::pair<double, const char *> timeouts[] = {
      {options.timeout, "--timeout"},
      {options.failureTimeout, "--failure-timeout"}};
  for (auto [seconds, flag] : timeouts)
    if (llvm::Error error = checkTimeout(seconds, flag))
      return std::move(error);
  // A replicated device's 1F1B keeps its replicas' pipelines full
  // (ScheduleConfig::replicas).
  if (run.replicas.replicated())
    run.config.schedule.replicas = run.replicas.replicas;
  // The schedule's own lists, or those of --schedule-file.
  auto lists = [&]() -> llvm::Expected<schedule::Schedule> {
    if (boundedLists) {
      run.listsBudget = setup;
      auto bounded = runSchedule(graph, manifest, run.config.schedule, &setup);
      if (!bounded)
        return llvm::createStringError(
            llvm::toString(bounded.takeError()) +
            " (--allow-over-budget runs the fastest lists regardless)");
      return bounded;
    }
    if (options.scheduleFile.empty())
      return runSchedule(graph, manifest, run.config.schedule);
    auto text = support::readBoundedFile(options.scheduleFile, "schedule file");
    if (!text)
      return text.takeError();
    return scheduleFromTorchCsv((*text)->getBuffer(), run.config.schedule);
  }();
  if (!lists)
    return lists.takeError();
  run.schedule = std::move(*lists);
  if (auto checked = schedule::dryRun(graph, run.config.schedule, run.schedule);
      !checked)
    return checked.takeError();
  if (llvm::Error error = prepareMigration(run, options))
    return std::move(error);
  if (llvm::Error error = checkReplan(run, options))
    return std::move(error);
  if (options.allReduceGBps != 0 &&
      (!(options.allReduceGBps > 0) || !options.compareSimulator))
    return fail("--allreduce-gbps prices --compare-simulator's all-reduces: "
                "give a positive rate, with --compare-simulator");
  return std::move(run);
}

/// Checks a set of tensors read from `origin` (a file, or what made them).
static llvm::Error checkTensors(llvm::Error valid, const TensorMap &tensors,
                                llvm::StringRef origin) {
  if (valid)
    return prefixed(origin, std::move(valid));
  return prefixed(origin, checkFinite(tensors));
}

/// --checkpoint-dir and --resume: checks them and, when resuming, loads and
/// verifies the checkpoint and replaces the weights and the schedule with
/// the rest of the run. Writes nothing.
static llvm::Error prepareCheckpoints(TrainingRun &run,
                                      const RunOptions &options) {
  bool writes = !options.checkpointDir.empty();
  if (writes != options.checkpointEvery.has_value())
    return fail("give --checkpoint-dir and --checkpoint-every together");
  if (writes && *options.checkpointEvery < 1)
    return fail("--checkpoint-every must be at least 1");
  if (writes)
    if (llvm::Error error = checkCheckpointDirectory(options.checkpointDir))
      return prefixed("--checkpoint-dir", std::move(error));
  if (!writes && options.resumePath.empty())
    return llvm::Error::success();
  RunIdentity identity = identifyRun(*run.model, run.config, run.data);
  if (!options.resumePath.empty()) {
    if (!options.weightsPath.empty())
      return fail("--resume continues from the checkpoint's weights; leave "
                  "out --weights");
    if (options.compareSimulator)
      return fail("--compare-simulator compares whole runs; leave out "
                  "--resume");
    if (!options.profilePath.empty())
      return fail("--profile-out measures whole runs; leave out --resume");
    if (!options.scheduleFile.empty())
      return fail("--schedule-file gives a whole run's lists; leave out "
                  "--resume");
    auto loaded = loadCheckpoint(options.resumePath, identity);
    if (!loaded)
      return loaded.takeError();
    run.resumed = std::move(*loaded);
    const LoadedCheckpoint &resumed = *run.resumed;
    if (llvm::Error error =
            validateWeights(run.model->parameters(), resumed.weights))
      return prefixed(resumed.directory, std::move(error));
    llvm::Error finite = checkFinite(resumed.weights);
    for (const TensorMap &state : resumed.optimizerState)
      finite = llvm::joinErrors(std::move(finite), checkFinite(state));
    if (finite)
      return prefixed(resumed.directory, std::move(finite));
    int64_t done = resumed.updates;
    if (done >= options.steps)
      return fail(resumed.directory + " is after " + llvm::Twine(done) +
                  " steps, --steps " + llvm::Twine(options.steps) +
                  ": nothing left to run");
    run.weights = resumed.weights;
    const schedule::StageGraph &graph = run.model->stageGraph();
    schedule::ScheduleConfig rest = run.config.schedule;
    rest.steps = options.steps - done;
    auto lists = runSchedule(*run.model, rest,
                             run.listsBudget ? &*run.listsBudget : nullptr);
    if (!lists)
      return lists.takeError();
    if (auto checked = schedule::dryRun(graph, rest, *lists); !checked)
      return checked.takeError();
    run.schedule = std::move(*lists);
    shiftSchedule(run.schedule, done, rest.microBatches);
  }
  if (writes)
    run.checkpoint =
        CheckpointSetup{options.checkpointDir, std::move(identity),
                        options.seed, options.debugCheckpointPause, 60.0};
  return llvm::Error::success();
}

/// --activation-cache and --activation-cache-dir (ActivationCache.h).
static llvm::Error checkActivationCache(const TrainingRun &run,
                                        const RunOptions &options) {
  if (options.activationCacheMiB < -1)
    return fail("--activation-cache " +
                llvm::Twine(options.activationCacheMiB) +
                ": give the MiB of host memory, 0 or more");
  if (options.activationCacheMiB < 0) {
    if (!options.activationCacheDir.empty())
      return fail("--activation-cache-dir needs --activation-cache");
    return llvm::Error::success();
  }
  // A replica's producer and consumer would each decide hits alone.
  if (run.replicas.replicated())
    return fail("--activation-cache does not run with replicas yet");
  // Cached stages keep nothing for a backward: theirs must be skipped.
  if (options.keepFrozenBackwards)
    return fail("--activation-cache needs the frozen stages' backwards "
                "skipped (without --debug-keep-frozen-backwards)");
  if (!options.activationCacheDir.empty() &&
      !llvm::sys::fs::is_directory(options.activationCacheDir))
    return fail("--activation-cache-dir " + options.activationCacheDir +
                ": not a directory");
  return llvm::Error::success();
}

llvm::Error ftpipe::runtime::loadTraining(TrainingRun &run,
                                          const ModelOptions &model,
                                          const RunOptions &options) {
  if (llvm::Error error = run.model->checkRunnable())
    return error;
  std::string origin =
      options.weightsPath.empty() ? "random init" : options.weightsPath;
  LoadedWeights loaded;
  if (options.weightsPath.empty()) {
    run.weights = run.model->randomWeights(options.seed);
  } else {
    auto read =
        readCheckpointWeights(options.weightsPath, run.model->parameters());
    if (!read)
      return read.takeError();
    loaded = std::move(*read);
    run.weights = std::move(loaded.weights);
  }
  if (llvm::Error error =
          checkTensors(validateWeights(run.model->parameters(), run.weights),
                       run.weights, origin))
    return error;

  if (options.dataPath.empty() && model.builtin != "tiny-mlp")
    return fail(
        "--data: give the data set (safetensors, one tensor per data input)");
  origin = options.dataPath.empty() ? "synthetic data" : options.dataPath;
  if (options.dataPath.empty()) {
    run.data =
        tinyMlpData(tinyMlpShape(model, run.model->stageGraph().stages()),
                    model.samples, options.seed + 1);
  } else {
    auto file = readSafetensors(options.dataPath);
    if (!file)
      return file.takeError();
    run.data = std::move(file->tensors);
  }
  if (llvm::Error error = checkTensors(
          validateDataset(run.model->dataInputs(), run.data), run.data, origin))
    return error;
  if (llvm::Error error = prepareCheckpoints(run, options))
    return error;
  if (!options.freeze.empty()) {
    auto freezing =
        planFreezing(options.freeze, *run.model, run.data, options.steps,
                     run.config.schedule.microBatches);
    if (!freezing)
      return freezing.takeError();
    run.freezing = std::move(*freezing);
    if (run.freezing->gradientNorm) {
      // A resumed run continues the rule from the checkpoint's state.
      if (run.resumed) {
        if (run.resumed->freezePolicy.kind() == llvm::json::Value::Null)
          return fail(run.resumed->directory +
                      ": no gradient-norm state (written by a run without "
                      "--freeze gradient-norm); resume with --freeze "
                      "schedule=FILE at the depths its log shows");
        GradientNormFreezer freezer(*run.freezing);
        if (llvm::Error error = freezer.restore(run.resumed->freezePolicy))
          return prefixed(run.resumed->directory, std::move(error));
      }
      run.config.gradientSquares = true;
    }
  }
  if (llvm::Error error = checkActivationCache(run, options))
    return error;
  // The next plan may freeze only what the run freezes after the move.
  if (run.migration)
    if (llvm::Error error = checkFrozenAtMigration(
            *run.migration,
            run.freezing
                ? run.freezing->frozenAt(options.migrateAt, run.config.frozen)
                : run.config.frozen))
      return error;
  // Each process's list, of the run or of its rest when resuming.
  run.processLists = schedule::replicateSchedule(run.schedule, run.replicas);
  if (options.debugSlowProcess >= int64_t(run.processLists.devices.size()))
    return fail("--debug-slow: process " +
                llvm::Twine(options.debugSlowProcess) + " is not one of the " +
                llvm::Twine(run.processLists.devices.size()) +
                " processes of the run");
  if (run.replicas.replicated())
    if (llvm::Error error = schedule::dryRunReplicated(
            run.model->stageGraph(), run.replicas, run.processLists))
      return error;
  if (!options.evalDataPath.empty()) {
    if (run.replicas.replicated())
      return fail("--eval-data does not run with replicas yet");
    auto evaluation =
        prepareEvaluation(options.evalDataPath, options.evalEvery,
                          options.evalCsvPath, *run.model, run.config);
    if (!evaluation)
      return evaluation.takeError();
    run.evaluation = std::move(*evaluation);
  }
  // Outputs are checked before training, not found unwritable after it.
  if (!options.savePath.empty()) {
    auto saveHF = chooseSaveOptions(options.saveFormat, options.saveDtype,
                                    options.saveShardSize, loaded);
    if (!saveHF)
      return saveHF.takeError();
    run.saveHF = std::move(*saveHF);
    if (run.saveHF)
      if (llvm::Error error = checkHFSaveDirectory(options.savePath))
        return error;
  }
  for (auto [path, flag] : {std::pair{&options.savePath, "--save"},
                            std::pair{&options.tracePath, "--trace"},
                            std::pair{&options.profilePath, "--profile-out"}})
    if (!path->empty() && !(path == &options.savePath && run.saveHF))
      if (llvm::Error error = support::checkOutputPath(*path, flag))
        return error;
  return llvm::Error::success();
}
