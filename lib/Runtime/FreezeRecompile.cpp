//===- FreezeRecompile.cpp - Compiling again when a run freezes more ------===//
//
// FreezeRecompile.h: device 0 compiles the running model again with the
// policy's frozen set in a child process (PlanCompile) and proposes the
// migration to the new plan when the compile is done.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Runtime/FreezeRecompile.h"

#include "FTPipe/Runtime/CompiledModel.h"
#include "FTPipe/Runtime/Migration.h"
#include "FTPipe/Runtime/SkippedBackwards.h"
#include "FTPipe/Support/OutputFiles.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>

using namespace ftpipe;
using namespace ftpipe::runtime;

ManifestCompile ftpipe::runtime::freezeCommand(const ManifestCompile &command,
                                               llvm::StringRef namesFile,
                                               llvm::StringRef extra,
                                               bool repack) {
  ManifestCompile frozen;
  frozen.model = command.model;
  const std::vector<std::string> &args = command.arguments;
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef arg = args[i];
    if (arg.starts_with("-") && arg.ltrim('-').split('=').first == "freeze") {
      if (!arg.contains('='))
        ++i;
      continue;
    }
    frozen.arguments.push_back(args[i]);
  }
  frozen.arguments.push_back("--freeze=@" + namesFile.str());
  if (repack)
    frozen.arguments.push_back("--replicas=auto");
  llvm::SmallVector<llvm::StringRef> added;
  extra.split(added, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef arg : added)
    frozen.arguments.push_back(arg.str());
  return frozen;
}

static double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string FreezeRecompiler::prefix() const {
  return "freeze re-compile " + std::to_string(compiles);
}

/// The parameters `model`'s manifest freezes (none without a manifest).
static size_t manifestFrozen(const PipelineModel &model) {
  auto *compiled = dynamic_cast<const CompiledModel *>(&model);
  if (!compiled)
    return 0;
  return llvm::count_if(compiled->manifest().parameters,
                        [](const auto &entry) { return entry.second.frozen; });
}

/// The processes each device of `model` runs as: its manifest's replicas.
static schedule::ReplicaLayout replicasOf(const PipelineModel &model) {
  auto *compiled = dynamic_cast<const CompiledModel *>(&model);
  return compiled && compiled->manifest().replicas
             ? *compiled->manifest().replicas
             : schedule::ReplicaLayout::none(model.stageGraph().devices);
}

/// "predicted step X ms, ops per device A/B/C" for a compiled plan run as
/// `replicas` ("replicas 2,2, ops per device A/B": the prediction is the
/// unreplicated pipeline's, so it is left out).
static std::string describePlan(const PipelineModel &model,
                                const schedule::ReplicaLayout &replicas,
                                const ExecutorConfig &config) {
  std::string text = "ops per device " + opsPerDevice(model);
  auto *compiled = dynamic_cast<const CompiledModel *>(&model);
  if (replicas.replicated())
    return "replicas " + replicas.str() + ", " + text;
  if (!compiled)
    return text;
  auto predicted =
      predictPlanned(model.stageGraph(), config.schedule, compiled->manifest());
  if (!predicted) {
    llvm::consumeError(predicted.takeError());
    return text;
  }
  return llvm::formatv("predicted step {0:f3} ms, {1}", predicted->stepMs, text)
      .str();
}

RecompilePrice ftpipe::runtime::priceFreezeRecompile(
    const ArtifactManifest &manifest, const schedule::ScheduleConfig &config,
    const std::set<std::string> &frozen, int64_t remainingSteps,
    std::optional<double> compileCpuSeconds, int64_t processes, int64_t cores) {
  RecompilePrice price;
  if (!compileCpuSeconds) {
    price.why = "no compile measured yet";
    return price;
  }
  std::set<int64_t> skipped = frozenClosure(manifest, frozen);
  std::vector<double> forwardMs, backwardMs;
  double workMs = 0;
  for (const ManifestStage &stage : manifest.stages) {
    if (!stage.forwardMs || !stage.backwardMs) {
      price.why = "the plan records no stage times";
      return price;
    }
    forwardMs.push_back(*stage.forwardMs);
    backwardMs.push_back(skipped.count(stage.id) ? 0.0 : *stage.backwardMs);
    workMs += forwardMs.back() + backwardMs.back();
  }
  schedule::StageGraph graph = manifest.stageGraph();
  auto current = predictStep(graph, config, forwardMs, backwardMs, &manifest);
  if (!current) {
    price.why = llvm::toString(current.takeError());
    return price;
  }
  workMs *= config.microBatches;
  int64_t devices = graph.devices;
  double bound = cores < processes ? workMs / std::max<int64_t>(1, cores) : 0;
  double now = std::max(current->stepMs, bound);
  double best = std::max(workMs / devices, bound);
  double savedSeconds = (now - best) / 1000 * remainingSteps;
  price.pays = savedSeconds > *compileCpuSeconds;
  price.why = llvm::formatv(
      "{0}: the plan with the frozen backwards skipped runs {1:f3} ms a step, "
      "a re-compile at best {2:f3} ms ({3:f3} ms of work over {4} {5}): at "
      "most {6:f2} s saved over the {7} steps left, against {8:f2} s of CPU "
      "for the last compile",
      price.pays ? "pays" : "does not pay", now, best, workMs,
      cores < processes ? cores : devices,
      cores < processes ? "cores" : "devices", savedSeconds, remainingSteps,
      *compileCpuSeconds);
  return price;
}

ReplanControl FreezeRecompiler::afterStep(
    int64_t updates, const std::set<std::string> &frozen, uint32_t depth,
    size_t layers, const PipelineModel &current,
    const schedule::ReplicaLayout &replicas, const ExecutorConfig &config) {
  ReplanControl control;
  auto say = [&](const std::string &what) {
    setup.note(prefix() + " after step " + std::to_string(updates) + ": " +
               what);
  };
  if (!compile) {
    if (frozen.size() <= std::max(manifestFrozen(current), compiledFrozen))
      return control;
    auto *compiled = dynamic_cast<const CompiledModel *>(&current);
    if (!compiled || !compiled->manifest().compile)
      return control;
    RecompilePrice price =
        priceFreezeRecompile(compiled->manifest(), config.schedule, frozen,
                             config.schedule.steps - updates, compileCpuSeconds,
                             setup.processes, setup.cores);
    compiledFrozen = frozen.size();
    if (!price.pays) {
      setup.note(llvm::formatv("freeze: not compiling again after step {0} "
                               "with {1} of {2} layers frozen: {3}",
                               updates, depth, layers, price.why)
                     .str());
      return control;
    }
    ++compiles;
    if (setup.directory.empty()) {
      llvm::SmallString<128> made;
      if (std::error_code ec =
              llvm::sys::fs::createUniqueDirectory("ftpipe-freeze", made)) {
        say("no work directory: " + ec.message());
        return control;
      }
      setup.directory = made.str().str();
    } else if (std::error_code ec =
                   llvm::sys::fs::create_directories(setup.directory)) {
      say(setup.directory + ": " + ec.message());
      return control;
    }
    std::string base = setup.directory + "/freeze" + std::to_string(compiles);
    std::string names = "# frozen by ftpipe-run --freeze after step " +
                        std::to_string(updates) + "\n";
    for (const std::string &name : frozen)
      names += name + "\n";
    if (llvm::Error error =
            support::writeFileAtomically(base + ".frozen", names)) {
      say(base + ".frozen: " + llvm::toString(std::move(error)));
      return control;
    }
    auto started = PlanCompile::start(
        setup.compiler,
        freezeCommand(*compiled->manifest().compile, base + ".frozen",
                      setup.extraArguments,
                      setup.repack &&
                          compiled->manifest().compile->plansReplicas),
        /*profile=*/"", base, base + "-compile.log");
    if (!started) {
      say(llvm::toString(started.takeError()) +
          "; the run goes on under the current plan");
      return control;
    }
    compile = std::move(*started);
    say(llvm::formatv("{0} of {1} layers frozen ({2} parameters); compiling "
                      "{3} with them frozen in the background ({4})",
                      depth, layers, frozen.size(), base, price.why)
            .str());
    return control;
  }
  auto finished = compile->finish(setup.waitForCompile);
  if (!finished)
    return control;
  compile.reset();
  auto goOn = [&](const std::string &why) {
    say(why + "; the run goes on under the current plan");
    return control;
  };
  if (!*finished)
    return goOn(llvm::toString(finished->takeError()));
  std::string directory = (*finished)->directory;
  double seconds = (*finished)->seconds;
  if ((*finished)->cpuSeconds)
    compileCpuSeconds = (*finished)->cpuSeconds;
  std::unique_ptr<CompiledModel> &next = (*finished)->model;
  schedule::ReplicaLayout nextReplicas = replicasOf(*next);
  if (nextReplicas.replicated() && !setup.replicasAllowed)
    return goOn("the plan has replicas " + nextReplicas.str() +
                ", which this run cannot move to (replicas run as MPI "
                "processes)");
  std::string after = describePlan(*next, nextReplicas, config);
  auto planned = planMigration(current, replicas, config, std::move(next),
                               directory, updates, setup.allowOverBudget);
  if (!planned)
    return goOn(llvm::toString(planned.takeError()));
  if (llvm::Error error = checkFrozenAtMigration(*planned, frozen))
    return goOn(llvm::toString(std::move(error)));
  std::string taken = llvm::formatv(
      "taken: {0} -> {1}", describePlan(current, replicas, config), after);
  say(llvm::formatv("plan {0} (compiled in {1:f1} s, {2} parameters frozen) "
                    "{3}",
                    directory, seconds, planned->config.frozen.size(), taken)
          .str());
  decidedAt = now();
  control.action = ReplanControl::Action::Migrate;
  control.directory = directory;
  control.reason = llvm::formatv("{0} parameters frozen, {1}",
                                 planned->config.frozen.size(), taken);
  return control;
}

void FreezeRecompiler::migrated(int64_t updates) {
  setup.note(llvm::formatv("{0}: running on the new plan after step {1}, "
                           "{2:f3} s after the decision",
                           prefix(), updates, now() - decidedAt)
                 .str());
}

void FreezeRecompiler::finish() {
  if (compile) {
    compile->stop();
    setup.note(prefix() + ": the run ended before its compile; stopped it");
  }
  compile.reset();
}
