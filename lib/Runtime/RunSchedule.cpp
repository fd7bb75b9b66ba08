//===- RunSchedule.cpp - The action lists a run executes ------------------===//

#include "FTPipe/Runtime/RunSchedule.h"
#include "FTPipe/Schedule/TorchCsv.h"
#include "FTPipe/Schedule/ZeroBubble.h"

using namespace ftpipe;
using namespace ftpipe::runtime;

std::vector<bool> runtime::splitStages(const ArtifactManifest &manifest) {
  std::vector<bool> split;
  for (const ManifestStage &stage : manifest.stages)
    split.push_back(stage.splits());
  return split;
}

llvm::Expected<schedule::Schedule>
runtime::generateRunSchedule(const schedule::StageGraph &graph,
                             const schedule::ScheduleConfig &config) {
  if (config.kind != schedule::Kind::ZeroBubbleAuto)
    return schedule::generate(graph, config);
  if (llvm::Error error = graph.validate())
    return std::move(error);
  size_t stages = graph.stages();
  schedule::TimedStageGraph timed = schedule::TimedStageGraph::withCosts(
      graph, std::vector<double>(stages, 1.0), std::vector<double>(stages, 1.0),
      std::vector<double>(stages, 1.0),
      /*edgeBytes=*/0);
  return schedule::generateZeroBubbleAuto(
      graph, timed, schedule::Links::uniform(graph.devices, 1.0, 0.0), config);
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
