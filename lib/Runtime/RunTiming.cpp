//===- RunTiming.cpp - Measured timelines and the simulator's -------------===//

#include "FTPipe/Runtime/RunTiming.h"
#include "FTPipe/Schedule/Simulator.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>

#include <sched.h>
#include <unistd.h>

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

ProcessCpus ProcessCpus::current() {
  ProcessCpus here;
  if (gethostname(here.host, sizeof(here.host) - 1) != 0)
    std::strcpy(here.host, "?");
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < 64 * 16 && cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set))
        here.cpus[cpu / 64] |= uint64_t(1) << (cpu % 64);
  } else {
    long online = std::clamp(sysconf(_SC_NPROCESSORS_ONLN), 1L, 64L * 16);
    for (long cpu = 0; cpu < online; ++cpu)
      here.cpus[cpu / 64] |= uint64_t(1) << (cpu % 64);
  }
  return here;
}

int64_t ProcessCpus::count() const {
  int64_t n = 0;
  for (uint64_t word : cpus)
    n += llvm::popcount(word);
  return n;
}

schedule::SharedCores
ftpipe::runtime::sharedCoresOf(llvm::ArrayRef<ProcessCpus> processes) {
  // Union-find over the processes: one host and a CPU in common.
  std::vector<size_t> parent(processes.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto root = [&](size_t p) {
    while (parent[p] != p)
      p = parent[p] = parent[parent[p]];
    return p;
  };
  for (size_t a = 0; a < processes.size(); ++a)
    for (size_t b = a + 1; b < processes.size(); ++b) {
      if (std::strncmp(processes[a].host, processes[b].host,
                       sizeof(ProcessCpus::host)) != 0)
        continue;
      bool overlap = false;
      for (size_t w = 0; w < 16; ++w)
        overlap |= (processes[a].cpus[w] & processes[b].cpus[w]) != 0;
      if (overlap)
        parent[root(b)] = root(a);
    }
  schedule::SharedCores shared;
  std::map<size_t, uint32_t> nodeOf;
  std::vector<ProcessCpus> unions;
  for (size_t p = 0; p < processes.size(); ++p) {
    auto [it, added] = nodeOf.try_emplace(root(p), uint32_t(unions.size()));
    if (added)
      unions.emplace_back();
    shared.node.push_back(it->second);
    for (size_t w = 0; w < 16; ++w)
      unions[it->second].cpus[w] |= processes[p].cpus[w];
  }
  for (const ProcessCpus &node : unions)
    shared.cores.push_back(uint32_t(std::max<int64_t>(1, node.count())));
  return shared;
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

std::vector<std::vector<double>> ftpipe::runtime::receiveOverheadMs(
    const schedule::StageGraph &graph,
    const std::vector<std::vector<TraceEvent>> &traces) {
  // When each task ended (kind, stage, micro-batch -> ms); a task run twice
  // (replicas of one stage) counts its last end.
  std::map<std::tuple<ActionKind, int64_t, int64_t>, double> ended;
  for (const std::vector<TraceEvent> &events : traces)
    for (const TraceEvent &event : events) {
      if (event.migration || event.action.kind == ActionKind::Update)
        continue;
      double &end =
          ended[{event.action.kind, event.action.stage, event.action.index}];
      end = std::max(end, event.endSeconds * 1e3);
    }
  std::vector<std::vector<int64_t>> consumers = graph.consumers();
  static constexpr ActionKind forwards[] = {ActionKind::Forward};
  static constexpr ActionKind backwards[] = {ActionKind::Backward,
                                             ActionKind::InputBackward};
  std::vector<std::vector<double>> overhead;
  for (const std::vector<TraceEvent> &events : traces) {
    std::vector<double> &process = overhead.emplace_back(events.size(), 0.0);
    for (auto [i, event] : llvm::enumerate(events)) {
      const schedule::Action &action = event.action;
      if (event.migration || action.kind == ActionKind::Update ||
          action.stage < 0 || action.stage >= graph.stages())
        continue;
      // The tasks whose messages this one receives: its producers'
      // forwards, or its consumers' backwards (whole or input part); a
      // weight part receives none.
      bool forward = action.kind == ActionKind::Forward;
      double sent = 0;
      if (action.kind != ActionKind::WeightBackward)
        for (int64_t peer :
             forward ? graph.producers[action.stage] : consumers[action.stage])
          for (ActionKind kind :
               forward ? llvm::ArrayRef(forwards) : llvm::ArrayRef(backwards))
            if (auto end = ended.find({kind, peer, action.index});
                end != ended.end())
              sent = std::max(sent, end->second);
      // Of the wait, the last sender explains the time until its end.
      double startMs = event.startSeconds * 1e3;
      process[i] = std::max(0.0, event.waitSeconds * 1e3 -
                                     std::max(0.0, sent - startMs));
    }
  }
  return overhead;
}

llvm::Expected<RunTiming> ftpipe::runtime::compareWithSimulator(
    const schedule::StageGraph &graph, const schedule::ScheduleConfig &config,
    const schedule::Schedule &lists,
    const std::vector<std::vector<TraceEvent>> &traces,
    const schedule::ReplicaLayout &replicas,
    llvm::ArrayRef<uint64_t> gradientBytes, double allReduceGBps,
    const schedule::SharedCores &cores) {
  int64_t processes =
      replicas.replicas.empty() ? graph.devices : replicas.processes();
  if (traces.size() != size_t(processes))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "timing: a timeline per device is needed");
  if (!cores.empty() && cores.node.size() != size_t(processes))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "timing: the cores place %zu processes, the run has %lld",
        cores.node.size(), static_cast<long long>(processes));
  if (!(allReduceGBps >= 0) ||
      (allReduceGBps > 0 && gradientBytes.size() != size_t(graph.stages())))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "timing: an all-reduce rate must be positive (or 0: free) and come "
        "with each stage's gradient bytes");
  RunTiming timing;
  timing.microBatches = config.microBatches * config.steps;
  int64_t stages = graph.stages();
  // Per stage, the samples of each part: the wall time in its code, that
  // and its receives' overhead (receiveOverheadMs), and the CPU time of the
  // whole action.
  struct PartSamples {
    std::vector<std::vector<double>> forward, backward, input, weight;
  };
  PartSamples wall, received, cpu;
  for (PartSamples *samples : {&wall, &received, &cpu})
    for (auto *part : {&samples->forward, &samples->backward, &samples->input,
                       &samples->weight})
      part->resize(stages);
  double start = 1e300, end = -1e300, computeMs = 0;
  for (const std::vector<TraceEvent> &events : traces) {
    if (events.empty())
      continue;
    start = std::min(start, events.front().startSeconds * 1e3);
    end = std::max(end, events.back().endSeconds * 1e3);
  }
  timing.measuredMs = std::max(0.0, end - start);
  // Per process, the mean of its updates' own work: their CPU time (the
  // trace counts no waits inside an update; a waiting process sleeps, and
  // what it waits for, other processes, the simulation runs itself).
  timing.processUpdateMs.assign(size_t(processes), 0.0);
  std::vector<std::vector<double>> overhead = receiveOverheadMs(graph, traces);
  std::vector<double> receives;
  for (auto [process, events] : llvm::enumerate(traces)) {
    double updateMs = 0, actionsMs = 0, bookkeepingMs = 0;
    int64_t updates = 0;
    for (auto [i, event] : llvm::enumerate(events)) {
      double duration = (event.endSeconds - event.startSeconds) * 1e3;
      actionsMs += duration;
      if (event.action.kind == ActionKind::Update) {
        updateMs += duration;
        timing.processUpdateMs[process] += event.cpuSeconds * 1e3;
        ++updates;
        continue;
      }
      double compute = event.computeSeconds * 1e3;
      computeMs += compute;
      bookkeepingMs +=
          std::max(0.0, duration - compute - event.waitSeconds * 1e3);
      ActionKind kind = event.action.kind;
      double receiving = overhead[process][i];
      if (event.waitSeconds > 0)
        receives.push_back(receiving);
      for (auto [samples, ms] : {std::make_pair(&wall, compute),
                                 std::make_pair(&received, compute + receiving),
                                 std::make_pair(&cpu, event.cpuSeconds * 1e3)})
        (kind == ActionKind::Forward         ? samples->forward
         : kind == ActionKind::InputBackward ? samples->input
         : kind == ActionKind::WeightBackward
             ? samples->weight
             : samples->backward)[event.action.stage]
            .push_back(ms);
    }
    if (updates > 0)
      timing.processUpdateMs[process] /= double(updates);
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
  timing.receives = receives.size();
  timing.receiveMs = median(receives);

  // The simulator's stage graph: measured costs, free transfers that carry
  // the dependencies both ways.
  schedule::TimedStageGraph simulated;
  std::vector<std::vector<int64_t>> consumers = graph.consumers();
  for (int64_t s = 0; s < stages; ++s) {
    simulated.device.push_back(graph.device[s]);
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
  // The stages' costs: the medians of `samples`.
  auto setCosts = [&](const PartSamples &samples) {
    simulated.fwdMs.clear();
    simulated.bwdMs.clear();
    simulated.recomputeMs.assign(stages, 0);
    simulated.inputMs.clear();
    simulated.weightMs.clear();
    for (int64_t s = 0; s < stages; ++s) {
      simulated.fwdMs.push_back(median(samples.forward[s]));
      simulated.bwdMs.push_back(median(samples.backward[s]));
      // Split backwards (zero-bubble lists): I and W with their own costs.
      if (!samples.input[s].empty()) {
        simulated.inputMs.resize(stages, 0.0);
        simulated.weightMs.resize(stages, 0.0);
        simulated.inputMs[s] = median(samples.input[s]);
        simulated.weightMs[s] = median(samples.weight[s]);
        simulated.bwdMs[s] = simulated.inputMs[s] + simulated.weightMs[s];
      }
    }
  };
  schedule::SimulatorConfig simulator;
  simulator.kind = config.kind;
  simulator.microBatches = config.microBatches;
  simulator.orders = lists;
  if (llvm::any_of(timing.processUpdateMs, [](double ms) { return ms > 0; }))
    simulator.updateMs = timing.processUpdateMs;
  else
    timing.processUpdateMs.clear();
  // The transfers carry no bytes: free on any link; the links' rate prices
  // the all-reduces alone. What a message costs its receiver beyond its
  // sender's task is in the receiver's costs (`received`).
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
  schedule::Links links = schedule::Links::uniform(processes, linkGBps, 0.0);
  auto simulateWith =
      [&](const PartSamples &samples) -> llvm::Expected<schedule::SimResult> {
    setCosts(samples);
    return schedule::simulate(simulated, links, simulator);
  };
  // The stage code's wall times alone: transfers free.
  llvm::Expected<schedule::SimResult> free = simulateWith(wall);
  if (!free)
    return free.takeError();
  timing.freeTransfersMs = free->makespanMs;
  timing.freeTransfersIdle = free->idleFraction;
  timing.cores = cores.str();
  timing.sharedCores = cores.shares();
  if (timing.sharedCores) {
    // Each process on a core of its own, with the wall times and the
    // receives: beside the shared cores' figure.
    llvm::Expected<schedule::SimResult> own = simulateWith(received);
    if (!own)
      return own.takeError();
    timing.ownCoresMs = own->makespanMs;
    timing.ownCoresIdle = own->idleFraction;
    simulator.sharedCores = cores;
  }
  // Shared cores: the CPU times, which hold the receives' own work (their
  // copies and polls; their waits for a core are the sharing's).
  llvm::Expected<schedule::SimResult> result =
      simulateWith(timing.sharedCores ? cpu : received);
  if (!result)
    return result.takeError();
  timing.stageForwardMs = simulated.fwdMs;
  timing.stageBackwardMs = simulated.bwdMs;
  for (const schedule::SimEvent &event : result->events)
    if (event.kind == schedule::SimEvent::Kind::AllReduce)
      timing.simulatedAllReduceMs += event.endMs - event.startMs;
  timing.simulatedMs = result->makespanMs;
  timing.simulatedIdle = result->idleFraction;
  timing.simulatedEvents = std::move(result->events);
  return timing;
}

llvm::json::Value ftpipe::runtime::simulatedTrace(const RunTiming &timing) {
  // Only the devices' tracks, as the measured trace has (a transfer shows as
  // its receiver's wait).
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
  double micro = double(std::max<int64_t>(1, timing.microBatches));
  double perMeasured = timing.measuredMs / micro;
  double perSimulated = timing.simulatedMs / micro;
  std::string receives =
      timing.receives == 0
          ? std::string("no task waited for a message")
          : llvm::formatv("receives as measured: median {0:F3} ms beyond "
                          "their senders, {1} tasks waited",
                          timing.receiveMs, timing.receives)
                .str();
  std::string costs =
      timing.sharedCores
          ? "per-stage CPU times measured in this run (with their receives' "
            "own work), " +
                timing.cores + " shared"
          : "per-stage costs measured in this run, " + receives;
  if (!timing.processUpdateMs.empty()) {
    std::string updates;
    for (double ms : timing.processUpdateMs)
      updates += llvm::formatv("{0}{1:F3}", updates.empty() ? "" : "/", ms);
    costs +=
        ", updates as measured (" + updates + " ms CPU per update and process)";
  }
  if (timing.allReduceGBps > 0)
    costs += llvm::formatv(", all-reduces at {0} GB/s: {1:F3} ms over the "
                           "processes",
                           llvm::format("%g", timing.allReduceGBps),
                           timing.simulatedAllReduceMs)
                 .str();
  std::string text = llvm::formatv(
      "timing: {0} micro-batches{1}\n"
      "  measured:  {2:F3} ms per micro-batch, idle {3:F3}\n"
      "  simulated: {4:F3} ms per micro-batch, idle {5:F3} (the same "
      "lists, {6})\n"
      "  measured / simulated: {7:F3}\n",
      timing.microBatches,
      timing.cores.empty() ? "" : " (processes: " + timing.cores + ")",
      perMeasured, timing.measuredIdle, perSimulated, timing.simulatedIdle,
      costs, perSimulated > 0 ? perMeasured / perSimulated : 0.0);
  auto line = [&](llvm::StringRef what, double ms, double idle) {
    double per = ms / micro;
    text += llvm::formatv("  simulated {0}: {1:F3} ms per micro-batch, idle "
                          "{2:F3}, measured / simulated {3:F3}\n",
                          what, per, idle, per > 0 ? perMeasured / per : 0.0);
  };
  if (timing.sharedCores)
    line("on cores of their own (wall times; " + receives + ")",
         timing.ownCoresMs, timing.ownCoresIdle);
  line(timing.sharedCores ? "on cores of their own with free transfers"
                          : "with free transfers",
       timing.freeTransfersMs, timing.freeTransfersIdle);
  return text + llvm::formatv("  runtime overhead (outside stage code and "
                              "waits, busiest device): updates {0:F1}%, "
                              "bookkeeping {1:F1}% of the run\n",
                              100 * timing.updateShare,
                              100 * timing.bookkeepingShare)
                    .str();
}
