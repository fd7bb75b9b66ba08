//===- RunSchedule.cpp - The action lists a run executes ------------------===//

#include "FTPipe/Runtime/RunSchedule.h"
#include "FTPipe/Runtime/CompiledModel.h"
#include "FTPipe/Schedule/TorchCsv.h"

using namespace ftpipe;
using namespace ftpipe::runtime;

std::vector<bool> runtime::splitStages(const ArtifactManifest &manifest) {
  std::vector<bool> split;
  for (const ManifestStage &stage : manifest.stages)
    split.push_back(stage.splits());
  return split;
}

std::optional<StageCosts>
runtime::plannedCosts(const ArtifactManifest &manifest) {
  StageCosts costs;
  for (const ManifestStage &stage : manifest.stages) {
    if (!stage.forwardMs || !stage.backwardMs || !stage.weightMs)
      return std::nullopt;
    // The manifest's reader checked 0 <= weight <= backward.
    costs.forwardMs.push_back(*stage.forwardMs);
    costs.inputMs.push_back(*stage.backwardMs - *stage.weightMs);
    costs.weightMs.push_back(*stage.weightMs);
  }
  return costs;
}

llvm::Expected<schedule::Schedule>
runtime::generateRunSchedule(const schedule::StageGraph &graph,
                             const schedule::ScheduleConfig &config,
                             const std::optional<StageCosts> &costs,
                             const schedule::ZeroBubbleLimits &limits) {
  // zb-h1 keeps each device within 1F1B's peak when the stages' bytes are
  // known (the manifest's device memory).
  if (config.kind == schedule::Kind::ZeroBubbleH1 &&
      !limits.memory.activationBytes.empty())
    return schedule::generate(graph, config, &limits.memory);
  if (config.kind != schedule::Kind::ZeroBubbleAuto)
    return schedule::generate(graph, config);
  if (llvm::Error error = graph.validate())
    return std::move(error);
  size_t stages = graph.stages();
  if (costs &&
      (costs->forwardMs.size() != stages || costs->inputMs.size() != stages ||
       costs->weightMs.size() != stages))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "zb-auto: %zu stages but costs for %zu",
                                   stages, costs->forwardMs.size());
  std::vector<double> ones(stages, 1.0);
  schedule::TimedStageGraph timed = schedule::TimedStageGraph::withCosts(
      graph, costs ? costs->forwardMs : ones, costs ? costs->inputMs : ones,
      costs ? costs->weightMs : ones, /*edgeBytes=*/0);
  return schedule::generateZeroBubbleAuto(
      graph, timed, schedule::Links::uniform(graph.devices, 1.0, 0.0), config,
      limits);
}

llvm::Expected<schedule::Schedule>
runtime::runSchedule(const schedule::StageGraph &graph,
                     const ArtifactManifest *manifest,
                     const schedule::ScheduleConfig &config,
                     const schedule::TrainingSetup *budget) {
  std::optional<StageCosts> costs;
  schedule::ZeroBubbleLimits limits;
  if (manifest) {
    costs = plannedCosts(*manifest);
    bool bounded = config.kind == schedule::Kind::ZeroBubbleH1 ||
                   (config.kind == schedule::Kind::ZeroBubbleAuto && budget);
    if (bounded && !manifest->deviceMemory.empty()) {
      // The stages' bytes do not depend on the setup; the budgets do.
      schedule::TrainingSetup setup;
      if (budget)
        setup = *budget;
      setup.schedule = config.kind;
      setup.microBatches = config.microBatches;
      auto found =
          schedule::zeroBubbleLimits(graph, manifest->deviceMemory, setup);
      if (!found)
        return found.takeError();
      limits = std::move(*found);
    }
  }
  return generateRunSchedule(graph, config, costs, limits);
}

llvm::Expected<schedule::Schedule>
runtime::runSchedule(const PipelineModel &model,
                     const schedule::ScheduleConfig &config,
                     const schedule::TrainingSetup *budget) {
  auto *compiled = dynamic_cast<const CompiledModel *>(&model);
  return runSchedule(model.stageGraph(),
                     compiled ? &compiled->manifest() : nullptr, config,
                     budget);
}

llvm::Expected<schedule::Schedule>
runtime::scheduleFromTorchCsv(llvm::StringRef text,
                              const schedule::ScheduleConfig &config) {
  llvm::Expected<schedule::Schedule> step = schedule::parseTorchCsv(text);
  if (!step)
    return step.takeError();
  schedule::Schedule run;
  run.devices.resize(step->devices.size());
  for (int64_t k = 0; k < config.steps; ++k)
    for (auto [device, actions] : llvm::enumerate(step->devices))
      for (schedule::Action action : actions) {
        action.index = action.kind == schedule::ActionKind::Update
                           ? k
                           : action.index + k * config.microBatches;
        run.devices[device].push_back(action);
      }
  return run;
}
