//===- ReplicaSearch.cpp - Pipeline depth x data-parallel replicas --------===//
//
// Each depth's pipeline is planned once on its even layout's replica-0
// devices; each layout's lists are the schedule's for one step (four under
// async), replicated round-robin (schedule::replicateSchedule) and simulated
// on all the cluster's links.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/ReplicaSearch.h"
#include "FTPipe/Partition/ZeroBubbleLists.h"
#include "FTPipe/Schedule/MemoryCheck.h"
#include "FTPipe/Schedule/StepBound.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

using namespace ftpipe::partition;
using llvm::Error;
using llvm::Expected;

static Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

using ftpipe::schedule::ReplicaLayout;

ReplicaLayout ftpipe::partition::evenLayout(uint32_t depth,
                                            uint32_t processes) {
  ReplicaLayout layout;
  for (uint32_t d = 0; d < depth; ++d)
    layout.replicas.push_back(processes / depth + (d < processes % depth));
  return layout;
}

std::string ftpipe::partition::describeLayout(const ReplicaLayout &layout) {
  if (!layout.replicas.empty() &&
      llvm::all_equal(llvm::ArrayRef(layout.replicas)))
    return std::to_string(layout.replicas.front());
  return layout.str();
}

std::string ftpipe::partition::describeOption(const ReplicaOption &option) {
  std::string text = describeLayout(option.layout);
  if (option.uneven == 0.5)
    text += " uneven";
  else if (option.uneven > 0.0)
    text +=
        llvm::formatv(" uneven 1/{0}", std::lround(1.0 / option.uneven)).str();
  if (option.cutParts)
    text += " (cut in " + std::to_string(option.cutParts) +
            (option.cutEveryDevice ? ", every device)" : ")");
  return text;
}

Expected<Hardware>
ftpipe::partition::pipelineHardware(const Hardware &hw,
                                    const ReplicaLayout &layout) {
  int64_t p = int64_t(hw.numDevices());
  if (layout.devices() == 0 || layout.processes() > p)
    return makeError(
        llvm::formatv("replicas {0} need {1} devices, '{2}' has {3}",
                      layout.str(), layout.processes(), hw.name(), p));
  std::vector<DeviceId> first;
  for (int64_t d = 0; d < layout.devices(); ++d) {
    std::vector<int64_t> group = layout.group(d);
    const Device &lead = hw.device(DeviceId(group.front()));
    for (int64_t process : llvm::drop_begin(group)) {
      const Device &other = hw.device(DeviceId(process));
      if (other.tflops != lead.tflops || other.memGBps != lead.memGBps ||
          other.launchUs != lead.launchUs ||
          other.memoryBytes != lead.memoryBytes)
        return makeError(llvm::formatv(
            "device {0} ({1}) would replicate device {2} ({3}): replicas "
            "must be alike",
            process, other.name, group.front(), lead.name));
    }
    first.push_back(DeviceId(group.front()));
  }
  return hw.selectDevices(first);
}

Expected<Hardware> ftpipe::partition::shareWeightedHardware(
    const Hardware &pipeline, const ReplicaLayout &layout,
    uint32_t microBatches, double strength) {
  if (int64_t(pipeline.numDevices()) != layout.devices())
    return makeError(llvm::formatv("replicas {0} for {1} devices", layout.str(),
                                   pipeline.numDevices()));
  std::vector<double> shares =
      chainSharesMs(1.0, layout.replicas, microBatches);
  HardwareSpec spec = pipeline.spec();
  // Part-way: the shares' ratios to the power `strength`. A device the
  // bound leaves nothing (after one with a replica per micro-batch) keeps a
  // tenth of the speed: a speed must be positive.
  for (auto [device, share] : llvm::zip(spec.devices, shares))
    device.tflops *= std::max(std::pow(share / shares.front(), strength), 0.1);
  return Hardware::create(std::move(spec));
}

std::vector<DeviceGradients>
ftpipe::partition::deviceGradients(const StageGraph &sg,
                                   const PlanMetrics &metrics) {
  std::vector<DeviceGradients> devices(metrics.devices.size());
  // Backwards run against the topological order; the lowest stage's last
  // backward ends first.
  std::vector<uint32_t> order(sg.topoOrder.rbegin(), sg.topoOrder.rend());
  llvm::stable_sort(order, [&](uint32_t a, uint32_t b) {
    return sg.height[a] < sg.height[b];
  });
  for (uint32_t s : order) {
    DeviceGradients &device = devices[sg.device[s]];
    device.lastBackwardMs.push_back(sg.bwdMs[s] + sg.recomputeMs[s]);
    device.bytes.push_back(metrics.stages[s].gradBytes);
  }
  return devices;
}

/// The busiest device's time per micro-batch under `layout`: its load over
/// its replicas plus, over M, the all-reduce its stages' last backwards
/// leave exposed.
static double busiestMs(llvm::ArrayRef<double> loadMs,
                        llvm::ArrayRef<DeviceGradients> gradients,
                        const ftpipe::schedule::Links &links,
                        const ReplicaLayout &layout, uint32_t microBatches) {
  double busiest = 0.0;
  for (int64_t d = 0; d < layout.devices(); ++d)
    busiest =
        std::max(busiest, loadMs[d] / double(layout.replicas[d]) +
                              ftpipe::schedule::exposedAllReduceMs(
                                  gradients[d].lastBackwardMs,
                                  gradients[d].bytes, layout.group(d), links) /
                                  std::max(microBatches, 1u));
  return busiest;
}

ReplicaLayout
ftpipe::partition::spreadByLoad(llvm::ArrayRef<double> loadMs,
                                llvm::ArrayRef<DeviceGradients> gradients,
                                const ftpipe::schedule::Links &links,
                                uint32_t processes, uint32_t microBatches) {
  ReplicaLayout layout = ReplicaLayout::none(int64_t(loadMs.size()));
  while (layout.processes() < int64_t(processes)) {
    double best = std::numeric_limits<double>::infinity();
    size_t bestDevice = 0;
    for (size_t d = 0; d < loadMs.size(); ++d) {
      ++layout.replicas[d];
      double ms = busiestMs(loadMs, gradients, links, layout, microBatches);
      --layout.replicas[d];
      if (ms < best) {
        best = ms;
        bestDevice = d;
      }
    }
    ++layout.replicas[bestDevice];
  }
  return layout;
}

Plan ftpipe::partition::cutForOverlap(const Graph &graph, const Plan &plan,
                                      const ReplicaLayout &layout,
                                      uint32_t parts, bool everyDevice) {
  Plan cut = plan;
  std::vector<std::vector<NodeId>> stageNodes(plan.numStages());
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    if (!plan.replicated(n))
      stageNodes[plan.nodeStage[n]].push_back(n);
  // Per device, the stage cut: its only one, or with `everyDevice` the one
  // whose backward ends last, that of the earliest node (ids are a
  // topological order; the backward runs against it).
  std::vector<std::optional<StageId>> last(layout.replicas.size());
  std::vector<uint32_t> stagesOn(layout.replicas.size(), 0);
  for (StageId s = 0; s < plan.numStages(); ++s) {
    DeviceId d = plan.stageDevice[s];
    if (d >= last.size())
      continue;
    ++stagesOn[d];
    if (!stageNodes[s].empty() &&
        (!last[d] || stageNodes[s].front() < stageNodes[*last[d]].front()))
      last[d] = s;
  }
  for (StageId s = 0; s < plan.numStages(); ++s) {
    DeviceId d = plan.stageDevice[s];
    const std::vector<NodeId> &nodes = stageNodes[s];
    if (d >= last.size() || layout.replicas[d] < 2 || last[d] != s ||
        (!everyDevice && stagesOn[d] != 1) || nodes.size() < parts || parts < 2)
      continue;
    double total = 0.0;
    for (NodeId n : nodes)
      total += graph.cost(n).bwdMs;
    // Node i goes to part floor(parts x (backward before it) / total); a
    // stage whose parts would not all get a node stays whole.
    std::vector<uint32_t> partOf;
    std::vector<size_t> sizes(parts, 0);
    double before = 0.0;
    for (NodeId n : nodes) {
      uint32_t part =
          total > 0 ? std::min(parts - 1, uint32_t(parts * before / total)) : 0;
      partOf.push_back(part);
      ++sizes[part];
      before += graph.cost(n).bwdMs;
    }
    if (llvm::is_contained(sizes, 0))
      continue;
    for (size_t i = 0; i < nodes.size(); ++i)
      if (partOf[i] > 0)
        cut.nodeStage[nodes[i]] =
            StageId(cut.stageDevice.size() + partOf[i] - 1);
    for (uint32_t extra = 1; extra < parts; ++extra) {
      cut.stageDevice.push_back(d);
      if (!cut.stageRecompute.empty())
        cut.stageRecompute.push_back(plan.stageRecompute[s]);
    }
  }
  return cut;
}

/// ReplicaOption::sharedCoresMs: per node with fewer cores than processes,
/// its processes' busy time (`busyMs`, per process, over the simulated run;
/// `perMiniBatch` scales it to one mini-batch) plus each replica's share of
/// its device's all-reduces, over the node's cores.
static double sharedCoresMs(const Hardware &hw, const ReplicaLayout &layout,
                            const StageGraph &sg,
                            llvm::ArrayRef<StageMetrics> stages,
                            const ftpipe::schedule::Links &links,
                            llvm::ArrayRef<double> busyMs,
                            double perMiniBatch) {
  std::vector<double> allReduceMs(size_t(layout.devices()), 0.0);
  for (size_t s = 0; s < stages.size(); ++s) {
    uint32_t d = sg.device[s];
    if (layout.replicas[d] > 1)
      allReduceMs[d] += ftpipe::schedule::ringAllReduceMs(
          stages[s].gradBytes, layout.group(d), links);
  }
  std::vector<double> work;
  std::vector<uint32_t> processes;
  for (int64_t d = 0; d < layout.devices(); ++d)
    for (int64_t process : layout.group(d)) {
      uint32_t node = hw.device(DeviceId(process)).node;
      if (node >= work.size()) {
        work.resize(node + 1, 0.0);
        processes.resize(node + 1, 0);
      }
      work[node] += busyMs[size_t(process)] * perMiniBatch + allReduceMs[d];
      ++processes[node];
    }
  double longest = 0.0;
  for (uint32_t node = 0; node < work.size(); ++node) {
    uint32_t cores = hw.nodeCores(node);
    if (cores > 0 && processes[node] > cores)
      longest = std::max(longest, work[node] / double(cores));
  }
  return longest;
}

Expected<ReplicaOption> ftpipe::partition::scoreReplicated(
    const Graph &graph, const Hardware &hw, const Plan &plan,
    const ReplicaLayout &layout, const ObjectiveConfig &config) {
  Expected<Hardware> pipeline = pipelineHardware(hw, layout);
  if (!pipeline)
    return pipeline.takeError();
  Expected<PlanMetrics> metrics = evaluatePlan(graph, *pipeline, plan, config);
  if (!metrics)
    return metrics.takeError();
  Expected<StageGraph> sg = buildStageGraph(graph, *pipeline, plan, config);
  if (!sg)
    return sg.takeError();

  uint32_t depth = uint32_t(pipeline->numDevices());
  schedule::Links links = linksOf(hw);
  ReplicaOption option;
  option.layout = layout;
  option.plan = plan;
  option.feasible = metrics->memoryFits;
  if (!option.feasible)
    option.failure = "does not fit in memory";
  std::vector<double> loads;
  for (const DeviceMetrics &device : metrics->devices) {
    loads.push_back(device.loadMs);
    option.memoryBytes.push_back(device.memoryBytes);
  }
  for (uint32_t d = 0; d < depth; ++d)
    option.allReduceMs =
        std::max(option.allReduceMs,
                 schedule::ringAllReduceMs(metrics->devices[d].gradBytes,
                                           layout.group(d), links));
  option.objectiveMs = busiestMs(loads, deviceGradients(*sg, *metrics), links,
                                 layout, config.microBatches);

  // The plan's lists for its pipeline, then one per process.
  schedule::StageGraph topology = sg->topology(depth);
  // A replicated device holds more than its plan's device (1F1B's lists,
  // made for the layout, start more micro-batches upstream of it; its
  // all-reduce's buffer): checked by ftpipe-run's rule (schedule::checkMemory),
  // at least the plan's figure.
  if (layout.replicated()) {
    schedule::MemoryCheck memory = schedule::checkMemory(
        topology, metrics->memoryInputs, trainingSetupOf(config), layout,
        option.memoryBytes);
    for (auto [d, need] : llvm::enumerate(memory.devices))
      option.memoryBytes[d] = need.bytes;
    if (!memory.fits()) {
      if (option.feasible)
        option.failure = std::move(memory.failure);
      option.feasible = false;
    }
  }
  schedule::ScheduleConfig lists{config.schedule, config.microBatches,
                                 config.schedule == Kind::Async ? 4 : 1,
                                 schedule::isZeroBubble(config.schedule)
                                     ? sg->splitStages()
                                     : std::vector<bool>(),
                                 layout.replicas};
  // zb-auto's lists within each device's memory, as the unreplicated
  // plans' steps (simulateSynchronousStep) and ftpipe-run's.
  Expected<schedule::Schedule> steps =
      config.schedule == Kind::ZeroBubbleAuto
          ? zeroBubbleAutoLists(*sg, *pipeline, metrics->memoryInputs,
                                trainingSetupOf(config), config.microBatches,
                                {}, layout.replicas)
          : schedule::generate(topology, lists);
  if (!steps)
    return steps.takeError();
  if (config.schedule != Kind::Async) {
    schedule::StepLowerBound bound = schedule::stepLowerBound(
        *sg,
        schedule::isZeroBubble(config.schedule)
            ? sg->splitStages()
            : std::vector<bool>(sg->numStages(), false),
        config.microBatches, /*links=*/nullptr, layout.replicas);
    option.boundMs = bound.msPerMiniBatch;
    option.boundDevice = bound.device;
    option.boundBusyMs = bound.busyMs;
  }
  SimulatorConfig sim;
  sim.kind = config.schedule;
  sim.microBatches = config.microBatches;
  sim.recordEvents = false;
  sim.orders = schedule::replicateSchedule(*steps, layout);
  sim.replicas = layout;
  for (const StageMetrics &stage : metrics->stages)
    sim.stageGradientBytes.push_back(stage.gradBytes);
  Expected<SimResult> result = schedule::simulate(*sg, links, sim);
  if (!result)
    return result.takeError();
  option.idleFraction = result->idleFraction;
  option.sharedCoresMs = sharedCoresMs(
      hw, layout, *sg, metrics->stages, links, result->deviceBusyMs,
      double(config.microBatches) / double(std::max(result->microBatches, 1u)));
  option.simulatedMsPerMiniBatch =
      std::max(result->msPerMiniBatch, option.sharedCoresMs);
  return option;
}

double ftpipe::partition::memoryCapMs(const Graph &graph,
                                      const ObjectiveConfig &config,
                                      uint64_t memoryBytes, bool recomputes) {
  std::vector<double> stateBytes(graph.numNodes(), 0.0);
  for (ParamId p = 0; p < graph.numParams(); ++p)
    if (!graph.paramReaders(p).empty())
      stateBytes[graph.paramReaders(p).front()] +=
          double(graph.paramBytes(p)) *
          (graph.paramFrozen(p) ? 1.0
                                : 2.0 + optimizerStateFactor(config.optimizer));
  // Nodes by compute per state byte, the stateless first.
  std::vector<NodeId> order;
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    order.push_back(n);
  auto computeOf = [&](NodeId n) {
    const NodeCost &c = graph.cost(n);
    return c.fwdMs + c.bwdMs + (recomputes ? c.fwdMs : 0.0);
  };
  std::vector<double> perByte(graph.numNodes());
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    perByte[n] = stateBytes[n] > 0 ? computeOf(n) / stateBytes[n]
                                   : std::numeric_limits<double>::infinity();
  llvm::stable_sort(
      order, [&](NodeId a, NodeId b) { return perByte[a] > perByte[b]; });
  double room = std::max(
      double(memoryBytes) - double(config.reservedBytesPerDevice), 0.0);
  double cap = 0.0;
  for (NodeId n : order) {
    if (stateBytes[n] <= room) {
      room -= stateBytes[n];
      cap += computeOf(n);
      continue;
    }
    return cap + computeOf(n) * room / stateBytes[n];
  }
  return std::numeric_limits<double>::infinity();
}

/// ReplicaSearchResult's bounds for `graph` on `hw`'s devices.
static void setBounds(const Graph &graph, const Hardware &hw,
                      const ObjectiveConfig &config,
                      ReplicaSearchResult &search) {
  uint32_t p = uint32_t(hw.numDevices());
  // Recomputation counts only when the config makes every stage recompute
  // (under recompute=auto a plan may choose not to).
  bool recomputes =
      config.recompute && llvm::none_of(search.options, [](const auto &o) {
        return !o.plan.stageRecompute.empty();
      });
  for (NodeId n = 0; n < graph.numNodes(); ++n) {
    const NodeCost &c = graph.cost(n);
    search.computeMs += c.fwdMs + c.bwdMs + (recomputes ? c.fwdMs : 0.0);
  }
  uint64_t memory = 0;
  for (const Device &device : hw.devices())
    memory = std::max(memory, device.memoryBytes);
  double state = double(graph.totalParamBytes()) *
                 (2 + optimizerStateFactor(config.optimizer));
  search.minDepth = std::max<uint32_t>(
      1, uint32_t(std::ceil(state / double(std::max<uint64_t>(memory, 1)))));
  search.capMs = memoryCapMs(graph, config, memory, recomputes);
  search.pureBoundMs =
      cappedChainBoundMs(search.computeMs, search.capMs,
                         std::vector<int64_t>(p, 1), config.microBatches);
  search.gradientBytes = graph.totalParamBytes();
  if (p >= 2)
    search.allReduceTwoMs = ftpipe::schedule::ringAllReduceMs(
        search.gradientBytes, std::vector<int64_t>{0, 1}, linksOf(hw));
  search.replicatedBound.ms = std::numeric_limits<double>::infinity();
  search.stepBound.ms = std::numeric_limits<double>::infinity();
  if (search.minDepth < p) {
    search.replicatedBound =
        lowestChainBound(search.computeMs, search.minDepth, p,
                         config.microBatches, search.capMs);
    StepBoundFigures figures = stepBoundFigures(graph, hw, config, recomputes);
    search.pathMs = figures.pathMs.empty() ? 0.0 : figures.pathMs.front();
    search.stepBound =
        lowestStepBound(figures, search.minDepth, p, config.microBatches);
    for (const ReplicaOption &option : search.options)
      if (option.layout.replicated())
        search.highestLayoutBoundMs = std::max(
            search.highestLayoutBoundMs,
            stepBoundMs(figures, option.layout.replicas, config.microBatches));
  }
}

Expected<ReplicaLayout>
ftpipe::partition::requestedLayout(llvm::ArrayRef<int64_t> replicas,
                                   uint32_t devices) {
  assert(!replicas.empty() && "no layout requested");
  ReplicaLayout layout;
  layout.replicas.assign(replicas.begin(), replicas.end());
  // Factors between 1 and ReplicaLayout::kMaxReplicas.
  if (Error wrong = layout.verify(layout.devices(), layout.processes()))
    return std::move(wrong);
  if (replicas.size() == 1) {
    int64_t width = replicas.front();
    if (devices % width != 0)
      return makeError(
          llvm::formatv("{0} identical pipelines do not divide the {1} "
                        "devices: each needs {1} / {0} of them",
                        width, devices)
              .str());
    return ReplicaLayout::uniform(devices / width, width);
  }
  if (layout.processes() != int64_t(devices))
    return makeError(llvm::formatv("the layout {0} runs {1} processes, not "
                                   "the {2} devices",
                                   layout.str(), layout.processes(), devices)
                         .str());
  return layout;
}

Expected<ReplicaSearchResult> ftpipe::partition::searchReplicas(
    const Graph &graph, const Hardware &hw, const ObjectiveConfig &config,
    ReplicaPartitioner partitioner, llvm::ArrayRef<int64_t> replicas,
    std::optional<Kind> syncSchedule) {
  ReplicaSearchResult search;
  bool found = false;
  std::string reasons;
  uint32_t p = uint32_t(hw.numDevices());
  std::optional<ReplicaLayout> requested;
  if (!replicas.empty()) {
    Expected<ReplicaLayout> layout = requestedLayout(replicas, p);
    if (!layout)
      return layout.takeError();
    requested = std::move(*layout);
  }
  auto add = [&](ReplicaOption option) {
    if (!option.feasible)
      reasons += llvm::formatv("\n  {0} x {1}: {2}", option.depth(),
                               describeLayout(option.layout), option.failure)
                     .str();
    // Strictly shorter (beyond rounding) replaces: ties keep the earlier.
    if (option.feasible &&
        (!found || option.rankMs() < search.chosen().rankMs() * (1.0 - 1e-9))) {
      search.best = search.options.size();
      found = true;
    }
    search.options.push_back(std::move(option));
  };
  // The plan run as the layout, scored under `config`'s schedule and, with
  // a sync schedule, simulated under that one too.
  ObjectiveConfig syncConfig = config;
  if (syncSchedule)
    syncConfig.schedule = *syncSchedule;
  auto score = [&](const Plan &plan,
                   const ReplicaLayout &layout) -> Expected<ReplicaOption> {
    Expected<ReplicaOption> scored =
        scoreReplicated(graph, hw, plan, layout, config);
    if (!scored || !syncSchedule)
      return scored;
    Expected<ReplicaOption> step =
        scoreReplicated(graph, hw, plan, layout, syncConfig);
    if (step) {
      scored->syncStepMs = step->simulatedMsPerMiniBatch;
    } else {
      llvm::consumeError(step.takeError());
      scored->syncStepMs = std::numeric_limits<double>::infinity();
    }
    return scored;
  };
  // The layout's one-stage replicated devices cut in 2 and 4, when the
  // uncut option pays for an all-reduce; a cut that does not score (its
  // plan breaks a forwarding chain) is left out.
  auto tryCuts = [&](const Plan &plan, const ReplicaLayout &layout) {
    const ReplicaOption &uncut = search.options.back();
    if (!uncut.feasible || uncut.allReduceMs <= 0.0)
      return;
    double uneven = uncut.uneven;
    for (bool everyDevice : {false, true}) {
      for (uint32_t parts : {2u, 4u}) {
        Plan cut = cutForOverlap(graph, plan, layout, parts, everyDevice);
        // Every device's cut is tried only where it cuts more.
        if (cut.numStages() == plan.numStages() ||
            (everyDevice && cut == cutForOverlap(graph, plan, layout, parts)))
          break;
        Expected<ReplicaOption> scored = score(cut, layout);
        if (!scored) {
          llvm::consumeError(scored.takeError());
          continue;
        }
        scored->cutParts = parts;
        scored->cutEveryDevice = everyDevice;
        scored->uneven = uneven;
        add(std::move(*scored));
      }
    }
  };
  // The layout's pipeline planned again to the chain bound's shares, when
  // it has a replica and 2 devices or more; a pipeline that cannot be so
  // planned or scored is left out (the balanced one was tried).
  auto tryUneven = [&](const ReplicaLayout &layout) {
    if (layout.devices() < 2 || !layout.replicated())
      return;
    for (double strength : kUnevenStrengths) {
      Expected<Plan> plan = [&]() -> Expected<Plan> {
        Expected<Hardware> pipeline = pipelineHardware(hw, layout);
        if (!pipeline)
          return pipeline.takeError();
        Expected<Hardware> weighted = shareWeightedHardware(
            *pipeline, layout, config.microBatches, strength);
        if (!weighted)
          return weighted.takeError();
        return partitioner(*weighted);
      }();
      if (!plan) {
        llvm::consumeError(plan.takeError());
        continue;
      }
      Expected<ReplicaOption> scored = score(*plan, layout);
      if (!scored) {
        llvm::consumeError(scored.takeError());
        continue;
      }
      scored->uneven = strength;
      add(std::move(*scored));
      tryCuts(*plan, layout);
    }
  };

  for (uint32_t depth = p; depth >= 1; --depth) {
    // A requested layout alone (W identical pipelines: their depth's even
    // layout).
    if (requested && depth != uint32_t(requested->devices()))
      continue;
    ReplicaLayout even = requested ? *requested : evenLayout(depth, p);
    ReplicaOption option;
    option.layout = even;
    auto infeasible = [&](Error error) {
      option.failure = llvm::toString(std::move(error));
      add(std::move(option));
    };
    Expected<Hardware> pipeline = pipelineHardware(hw, even);
    if (!pipeline) {
      infeasible(pipeline.takeError());
      continue;
    }
    Expected<Plan> plan = partitioner(*pipeline);
    if (!plan) {
      infeasible(plan.takeError());
      continue;
    }
    Expected<ReplicaOption> scored = score(*plan, even);
    if (!scored) {
      infeasible(scored.takeError());
      continue;
    }
    add(std::move(*scored));
    tryCuts(*plan, even);
    tryUneven(even);
    // The per-stage layout by the plan's loads on the even layout's devices
    // (scoreReplicated evaluated the same plan there).
    Expected<PlanMetrics> metrics =
        evaluatePlan(graph, *pipeline, *plan, config);
    if (!metrics)
      return metrics.takeError();
    Expected<StageGraph> sg = buildStageGraph(graph, *pipeline, *plan, config);
    if (!sg)
      return sg.takeError();
    std::vector<double> loads;
    for (const DeviceMetrics &device : metrics->devices)
      loads.push_back(device.loadMs);
    ReplicaLayout spread = spreadByLoad(loads, deviceGradients(*sg, *metrics),
                                        linksOf(hw), p, config.microBatches);
    if (spread.replicas == even.replicas || requested)
      continue;
    ReplicaOption perStage;
    perStage.layout = spread;
    if (Expected<ReplicaOption> again = score(*plan, spread))
      perStage = std::move(*again);
    else
      perStage.failure = llvm::toString(again.takeError());
    add(std::move(perStage));
    tryCuts(*plan, spread);
    tryUneven(spread);
  }
  if (!found)
    return makeError(
        (!requested ? std::string("no pipeline depth x replicas option is "
                                  "feasible:")
         : replicas.size() == 1
             ? llvm::formatv("{0} identical pipelines of depth {1} are not "
                             "feasible:",
                             replicas.front(), requested->devices())
                   .str()
             : llvm::formatv("the layout {0} is not feasible:",
                             requested->str())
                   .str()) +
        reasons);
  // The pure pipeline (the first option, every device one stage group)
  // stays unless replicas beat it by kReplicaMinGain.
  const ReplicaOption &pure = search.options.front();
  if (pure.feasible && !pure.layout.replicated() &&
      search.chosen().rankMs() > pure.rankMs() * (1.0 - kReplicaMinGain))
    search.best = 0;
  setBounds(graph, hw, config, search);
  return search;
}
