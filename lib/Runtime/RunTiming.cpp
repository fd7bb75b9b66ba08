//===- RunTiming.cpp - Measured timelines and the simulator's -------------===//

#include "FTPipe/Runtime/RunTiming.h"
#include "FTPipe/Schedule/Simulator.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>

using namespace ftpipe;
using namespace ftpipe::runtime;
using schedule::ActionKind;

double ftpipe::runtime::median(std::vector<double> values) {
  if (values.empty())
    return 0;
  size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + middle, values.end());
  return values[middle];
}

std::vector<uint64_t>
ftpipe::runtime::stageGradientBytes(const schedule::StageGraph &graph,
                                    const ParameterPlacement &placement,
                                    llvm::ArrayRef<ParameterInfo> parameters) {
  std::vector<uint64_t> bytes(size_t(graph.stages()), 0);
  // Each device's lowest stage.
  std::map<int64_t, int64_t> lowest;
  for (int64_t s = graph.stages() - 1; s >= 0; --s)
    lowest[graph.device[s]] = s;
  for (const ParameterInfo &param : parameters) {
    auto readers = placement.find(param.name);
    if (readers == placement.end())
      continue;
    // The replicas all-reduce gradients as floats (ReplicaReductions).
    uint64_t size = sizeof(float);
    for (int64_t extent : param.shape)
      size *= uint64_t(extent);
    for (int64_t device : readers->second)
      if (auto stage = lowest.find(device); stage != lowest.end())
        bytes[size_t(stage->second)] += size;
  }
  return bytes;
}

llvm::Expected<RunTiming> ftpipe::runtime::compareWithSimulator(
    const schedule::StageGraph &graph, const schedule::ScheduleConfig &config,
    const schedule::Schedule &lists,
    const std::vector<std::vector<TraceEvent>> &traces,
    const schedule::ReplicaLayout &replicas,
    llvm::ArrayRef<uint64_t> gradientBytes, double allReduceGBps) {
  int64_t processes =
      replicas.replicas.empty() ? graph.devices : replicas.processes();
  if (traces.size() != size_t(processes))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "timing: a timeline per device is needed");
  if (!(allReduceGBps >= 0) ||
      (allReduceGBps > 0 && gradientBytes.size() != size_t(graph.stages())))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "timing: an all-reduce rate must be positive (or 0: free) and come "
        "with each stage's gradient bytes");
  RunTiming timing;
  timing.microBatches = config.microBatches * config.steps;
  int64_t stages = graph.stages();
  std::vector<std::vector<double>> forwardMs(stages), backwardMs(stages),
      inputMs(stages), weightMs(stages);
  double start = 1e300, end = -1e300, computeMs = 0;
  for (const std::vector<TraceEvent> &events : traces) {
    if (events.empty())
      continue;
    start = std::min(start, events.front().startSeconds * 1e3);
    end = std::max(end, events.back().endSeconds * 1e3);
  }
  timing.measuredMs = std::max(0.0, end - start);
  for (const std::vector<TraceEvent> &events : traces) {
    double updateMs = 0, actionsMs = 0, bookkeepingMs = 0;
    for (const TraceEvent &event : events) {
      double duration = (event.endSeconds - event.startSeconds) * 1e3;
      actionsMs += duration;
      if (event.action.kind == ActionKind::Update) {
        updateMs += duration;
        continue;
      }
      double compute = event.computeSeconds * 1e3;
      computeMs += compute;
      bookkeepingMs +=
          std::max(0.0, duration - compute - event.waitSeconds * 1e3);
      ActionKind kind = event.action.kind;
      (kind == ActionKind::Forward          ? forwardMs
       : kind == ActionKind::InputBackward  ? inputMs
       : kind == ActionKind::WeightBackward ? weightMs
                                            : backwardMs)[event.action.stage]
          .push_back(compute);
    }
    if (events.empty() || timing.measuredMs <= 0)
      continue;
    double span =
        (events.back().endSeconds - events.front().startSeconds) * 1e3;
    timing.updateShare =
        std::max(timing.updateShare, updateMs / timing.measuredMs);
    timing.bookkeepingShare = std::max(
        timing.bookkeepingShare,
        (bookkeepingMs + std::max(0.0, span - actionsMs)) / timing.measuredMs);
  }
  if (timing.measuredMs > 0)
    timing.measuredIdle = 1.0 - computeMs / (processes * timing.measuredMs);

  // The simulator's stage graph: measured costs, free transfers that carry
  // the dependencies both ways.
  schedule::TimedStageGraph simulated;
  std::vector<std::vector<int64_t>> consumers = graph.consumers();
  for (int64_t s = 0; s < stages; ++s) {
    simulated.device.push_back(graph.device[s]);
    timing.stageForwardMs.push_back(median(forwardMs[s]));
    timing.stageBackwardMs.push_back(median(backwardMs[s]));
    simulated.fwdMs.push_back(timing.stageForwardMs.back());
    simulated.bwdMs.push_back(timing.stageBackwardMs.back());
    simulated.recomputeMs.push_back(0);
    // Split backwards (zero-bubble lists): I and W with their own costs.
    if (!inputMs[s].empty()) {
      simulated.inputMs.resize(stages, 0.0);
      simulated.weightMs.resize(stages, 0.0);
      simulated.inputMs[s] = median(inputMs[s]);
      simulated.weightMs[s] = median(weightMs[s]);
      simulated.bwdMs[s] = simulated.inputMs[s] + simulated.weightMs[s];
    }
    for (int64_t producer : graph.producers[s]) {
      schedule::StageEdge edge;
      edge.src = producer;
      edge.dst = s;
      edge.fwdTensors = edge.bwdTensors = 1;
      simulated.edges.push_back(edge);
    }
  }
  llvm::sort(simulated.edges, [](const auto &a, const auto &b) {
    return std::make_pair(a.src, a.dst) < std::make_pair(b.src, b.dst);
  });
  std::vector<int64_t> heights = graph.heights();
  std::vector<int64_t> pending(stages);
  std::vector<int64_t> ready;
  for (int64_t s = 0; s < stages; ++s)
    if ((pending[s] = graph.producers[s].size()) == 0)
      ready.push_back(s);
  while (!ready.empty()) {
    int64_t s = ready.back();
    ready.pop_back();
    simulated.topoOrder.push_back(s);
    for (int64_t c : consumers[s])
      if (--pending[c] == 0)
        ready.push_back(c);
  }
  for (int64_t h : heights)
    simulated.height.push_back(h);
  schedule::SimulatorConfig simulator;
  simulator.kind = config.kind;
  simulator.microBatches = config.microBatches;
  simulator.orders = lists;
  // The transfers carry no bytes: free on any link; the links' rate prices
  // the all-reduces alone.
  double linkGBps = 1e15;
  if (replicas.replicated()) {
    simulator.replicas = replicas;
    if (allReduceGBps > 0) {
      simulator.stageGradientBytes.assign(gradientBytes.begin(),
                                          gradientBytes.end());
      linkGBps = allReduceGBps;
      timing.allReduceGBps = allReduceGBps;
    }
  }
  llvm::Expected<schedule::SimResult> result = schedule::simulate(
      simulated, schedule::Links::uniform(processes, linkGBps, 0.0), simulator);
  if (!result)
    return result.takeError();
  for (const schedule::SimEvent &event : result->events)
    if (event.kind == schedule::SimEvent::Kind::AllReduce)
      timing.simulatedAllReduceMs += event.endMs - event.startMs;
  timing.simulatedMs = result->makespanMs;
  timing.simulatedIdle = result->idleFraction;
  timing.simulatedEvents = std::move(result->events);
  return timing;
}

llvm::json::Value ftpipe::runtime::simulatedTrace(const RunTiming &timing) {
  // Transfers are free in this simulation: only the devices' tracks.
  schedule::SimResult simulated;
  for (const schedule::SimEvent &event : timing.simulatedEvents)
    if (!event.onLink())
      simulated.events.push_back(event);
  uint32_t processes = 0;
  for (const schedule::SimEvent &event : simulated.events)
    processes = std::max({processes, event.device + 1, event.toDevice + 1});
  std::vector<std::string> names;
  for (uint32_t d = 0; d < processes; ++d)
    names.push_back("simulated, process " + std::to_string(d));
  return schedule::simulationToChromeTrace(simulated, names);
}

std::string ftpipe::runtime::formatRunTiming(const RunTiming &timing) {
  double perMeasured =
      timing.measuredMs / std::max<int64_t>(1, timing.microBatches);
  double perSimulated =
      timing.simulatedMs / std::max<int64_t>(1, timing.microBatches);
  return llvm::formatv(
             "timing: {0} micro-batches\n"
             "  measured:  {1:F3} ms per micro-batch, idle {2:F3}\n"
             "  simulated: {3:F3} ms per micro-batch, idle {4:F3} (the same "
             "lists, per-stage costs measured in this run, free transfers{8})\n"
             "  measured / simulated: {5:F3}\n"
             "  runtime overhead (outside stage code and waits, busiest "
             "device): updates {6:F1}%, bookkeeping {7:F1}% of the run\n",
             timing.microBatches, perMeasured, timing.measuredIdle,
             perSimulated, timing.simulatedIdle,
             perSimulated > 0 ? perMeasured / perSimulated : 0.0,
             100 * timing.updateShare, 100 * timing.bookkeepingShare,
             timing.allReduceGBps > 0
                 ? llvm::formatv(", all-reduces at {0} GB/s: {1:F3} ms over "
                                 "the processes",
                                 llvm::format("%g", timing.allReduceGBps),
                                 timing.simulatedAllReduceMs)
                       .str()
                 : std::string())
      .str();
}
