//===- MeasuredProfile.cpp - A run's timelines as a profile ---------------===//

#include "FTPipe/Runtime/MeasuredProfile.h"
#include "FTPipe/Runtime/RunTiming.h"

#include <algorithm>

using namespace ftpipe;
using namespace ftpipe::runtime;
using schedule::ActionKind;

llvm::Expected<MeasuredProfile> ftpipe::runtime::measureProfile(
    const schedule::StageGraph &graph, const schedule::ScheduleConfig &config,
    const std::vector<std::vector<TraceEvent>> &traces,
    const schedule::ReplicaLayout &replicas,
    const std::vector<ManifestStage> &planned, ProfileSource source) {
  int64_t processes =
      replicas.replicas.empty() ? graph.devices : replicas.processes();
  if (traces.size() != size_t(processes))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "profile: a timeline per process is needed");
  int64_t steps = std::max<int64_t>(1, config.steps);
  int64_t microBatches = std::max<int64_t>(1, config.microBatches);
  int64_t warmup = std::clamp<int64_t>(source.warmupSteps, 0, steps - 1);
  auto stepOf = [&](const schedule::Action &action) {
    return action.kind == ActionKind::Update ? action.index
                                             : action.index / microBatches;
  };

  int64_t stages = graph.stages();
  struct Samples {
    std::vector<double> forward, backward, input, weight, forwardWait,
        backwardWait, forwardCpu, backwardCpu, inputCpu, weightCpu;
  };
  std::vector<Samples> perStage(stages);
  MeasuredProfile profile;
  for (auto [process, events] : llvm::enumerate(traces)) {
    // Per measured step: first start, last end, and the totals.
    struct Step {
      double start = 1e300, end = -1e300, compute = 0, wait = 0, update = 0,
             cpu = 0;
    };
    std::vector<Step> perStep(steps - warmup);
    for (const TraceEvent &event : events) {
      int64_t step = stepOf(event.action);
      if (step < warmup || step >= steps)
        continue;
      Step &totals = perStep[step - warmup];
      totals.start = std::min(totals.start, event.startSeconds * 1e3);
      totals.end = std::max(totals.end, event.endSeconds * 1e3);
      totals.cpu += event.cpuSeconds * 1e3;
      if (event.action.kind == ActionKind::Update) {
        totals.update += (event.endSeconds - event.startSeconds) * 1e3;
        continue;
      }
      double compute = event.computeSeconds * 1e3;
      double wait = event.waitSeconds * 1e3;
      double cpu = event.cpuSeconds * 1e3;
      totals.compute += compute;
      totals.wait += wait;
      Samples &stage = perStage.at(event.action.stage);
      switch (event.action.kind) {
      case ActionKind::Forward:
        stage.forward.push_back(compute);
        stage.forwardWait.push_back(wait);
        stage.forwardCpu.push_back(cpu);
        break;
      case ActionKind::InputBackward:
        stage.input.push_back(compute);
        stage.backwardWait.push_back(wait);
        stage.inputCpu.push_back(cpu);
        break;
      case ActionKind::WeightBackward:
        stage.weight.push_back(compute);
        stage.weightCpu.push_back(cpu);
        break;
      default:
        stage.backward.push_back(compute);
        stage.backwardWait.push_back(wait);
        stage.backwardCpu.push_back(cpu);
        break;
      }
    }
    std::vector<double> span, compute, wait, update, cpu;
    for (const Step &step : perStep) {
      if (step.end < step.start)
        continue;
      span.push_back(step.end - step.start);
      compute.push_back(step.compute);
      wait.push_back(step.wait);
      update.push_back(step.update);
      cpu.push_back(step.cpu);
    }
    ProfileProcess summary;
    summary.process = int64_t(process);
    summary.device = replicas.replicas.empty()
                         ? int64_t(process)
                         : replicas.replicaOf(int64_t(process)).first;
    summary.stepMs = median(span);
    summary.computeMs = median(compute);
    summary.waitMs = median(wait);
    summary.updateMs = median(update);
    summary.cpuMs = median(cpu);
    profile.processes.push_back(summary);
  }

  for (int64_t s = 0; s < stages; ++s) {
    Samples &samples = perStage[s];
    ProfileStage stage;
    stage.id = s;
    stage.device = graph.device[s];
    if (s < int64_t(planned.size())) {
      stage.ops = planned[s].ops;
      stage.recomputes = planned[s].recomputes;
    }
    stage.forwardMs = median(samples.forward);
    stage.forwardWaitMs = median(samples.forwardWait);
    stage.backwardWaitMs = median(samples.backwardWait);
    stage.samples = int64_t(samples.forward.size());
    stage.forwardCpuMs = median(samples.forwardCpu);
    if (!samples.input.empty()) {
      stage.inputMs = median(samples.input);
      stage.weightMs = median(samples.weight);
      stage.backwardMs = *stage.inputMs + *stage.weightMs;
      stage.backwardCpuMs =
          median(samples.inputCpu) + median(samples.weightCpu);
    } else {
      stage.backwardMs = median(samples.backward);
      stage.backwardCpuMs = median(samples.backwardCpu);
    }
    profile.stages.push_back(std::move(stage));
  }
  source.processes = processes;
  source.microBatches = config.microBatches;
  source.warmupSteps = warmup;
  source.steps = steps - warmup;
  source.statistic = "median";
  profile.source = std::move(source);
  return profile;
}
