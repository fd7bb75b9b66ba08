//===- ReplicaSearch.cpp - Pipeline depth x data-parallel replicas --------===//
//
// Each width's pipeline is planned on its replica-0 devices, its lists are
// the schedule's for one step (four under async), replicated round-robin
// (schedule::replicateSchedule) and simulated on all the cluster's links.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/ReplicaSearch.h"
#include "FTPipe/Schedule/ZeroBubble.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace ftpipe::partition;
using llvm::Error;
using llvm::Expected;

static Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

Expected<Hardware> ftpipe::partition::pipelineHardware(const Hardware &hw,
                                                       uint32_t width) {
  size_t p = hw.numDevices();
  if (width == 0 || p % width != 0)
    return makeError(
        llvm::formatv("{0} replicas do not divide the {1} devices of '{2}'",
                      width, p, hw.name()));
  std::vector<DeviceId> first;
  for (size_t d = 0; d < p; d += width) {
    const Device &lead = hw.device(DeviceId(d));
    for (size_t j = 1; j < width; ++j) {
      const Device &other = hw.device(DeviceId(d + j));
      if (other.tflops != lead.tflops || other.memGBps != lead.memGBps ||
          other.launchUs != lead.launchUs ||
          other.memoryBytes != lead.memoryBytes)
        return makeError(llvm::formatv(
            "device {0} ({1}) would replicate device {2} ({3}): replicas "
            "must be alike",
            d + j, other.name, d, lead.name));
    }
    first.push_back(DeviceId(d));
  }
  return hw.selectDevices(first);
}

Expected<ReplicaOption>
ftpipe::partition::scoreReplicated(const Graph &graph, const Hardware &hw,
                                   const Plan &plan, uint32_t width,
                                   const ObjectiveConfig &config) {
  Expected<Hardware> pipeline = pipelineHardware(hw, width);
  if (!pipeline)
    return pipeline.takeError();
  Expected<PlanMetrics> metrics = evaluatePlan(graph, *pipeline, plan, config);
  if (!metrics)
    return metrics.takeError();
  Expected<StageGraph> sg = buildStageGraph(graph, *pipeline, plan, config);
  if (!sg)
    return sg.takeError();

  uint32_t depth = uint32_t(pipeline->numDevices());
  schedule::ReplicaLayout layout =
      schedule::ReplicaLayout::uniform(depth, width);
  schedule::Links links = linksOf(hw);
  ReplicaOption option;
  option.depth = depth;
  option.width = width;
  option.plan = plan;
  option.feasible = metrics->memoryFits;
  if (!option.feasible)
    option.failure = "does not fit in memory";
  std::vector<uint64_t> gradientBytes;
  for (const DeviceMetrics &device : metrics->devices) {
    gradientBytes.push_back(device.gradBytes);
    option.memoryBytes.push_back(device.memoryBytes);
  }
  for (uint32_t d = 0; d < depth; ++d)
    option.allReduceMs = std::max(
        option.allReduceMs,
        schedule::ringAllReduceMs(gradientBytes[d], layout.group(d), links));
  option.objectiveMs = metrics->asyncMsPerMicroBatch / width +
                       option.allReduceMs / config.microBatches;

  // The plan's lists for its pipeline, then one per process.
  schedule::StageGraph topology = sg->topology(depth);
  schedule::ScheduleConfig lists{config.schedule, config.microBatches,
                                 config.schedule == Kind::Async ? 4 : 1,
                                 schedule::isZeroBubble(config.schedule)
                                     ? sg->splitStages()
                                     : std::vector<bool>()};
  Expected<schedule::Schedule> steps =
      config.schedule == Kind::ZeroBubbleAuto
          ? schedule::generateZeroBubbleAuto(topology, *sg, linksOf(*pipeline),
                                             lists)
          : schedule::generate(topology, lists);
  if (!steps)
    return steps.takeError();
  SimulatorConfig sim;
  sim.kind = config.schedule;
  sim.microBatches = config.microBatches;
  sim.recordEvents = false;
  sim.orders = schedule::replicateSchedule(*steps, layout);
  sim.replicas = layout;
  sim.gradientBytes = std::move(gradientBytes);
  Expected<SimResult> result = schedule::simulate(*sg, links, sim);
  if (!result)
    return result.takeError();
  option.simulatedMsPerMiniBatch = result->msPerMiniBatch;
  option.idleFraction = result->idleFraction;
  return option;
}

Expected<ReplicaSearchResult> ftpipe::partition::searchReplicas(
    const Graph &graph, const Hardware &hw, const ObjectiveConfig &config,
    ReplicaPartitioner partitioner, uint32_t maxWidth) {
  ReplicaSearchResult search;
  bool found = false;
  std::string reasons;
  size_t p = hw.numDevices();
  for (uint32_t width = 1; width <= p; ++width) {
    if (p % width != 0 || (maxWidth && width > maxWidth))
      continue;
    ReplicaOption option;
    option.depth = uint32_t(p / width);
    option.width = width;
    auto infeasible = [&](Error error) {
      option.failure = llvm::toString(std::move(error));
    };
    if (Expected<Hardware> pipeline = pipelineHardware(hw, width); !pipeline) {
      infeasible(pipeline.takeError());
    } else if (Expected<Plan> plan = partitioner(*pipeline); !plan) {
      infeasible(plan.takeError());
    } else if (Expected<ReplicaOption> scored =
                   scoreReplicated(graph, hw, *plan, width, config);
               !scored) {
      infeasible(scored.takeError());
    } else {
      option = std::move(*scored);
    }
    if (!option.feasible)
      reasons += llvm::formatv("\n  {0} x {1}: {2}", option.depth, option.width,
                               option.failure)
                     .str();
    // Strictly shorter (beyond rounding) replaces: ties keep the narrower.
    if (option.feasible &&
        (!found ||
         option.simulatedMsPerMiniBatch <
             search.chosen().simulatedMsPerMiniBatch * (1.0 - 1e-9))) {
      search.best = search.options.size();
      found = true;
    }
    search.options.push_back(std::move(option));
  }
  if (!found)
    return makeError("no pipeline depth x replicas option is feasible:" +
                     reasons);
  return search;
}
