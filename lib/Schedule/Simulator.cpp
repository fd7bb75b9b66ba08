//===- Simulator.cpp - Timed simulation of a pipeline schedule ------------===//
//
// An event queue ordered by time; all events of one instant are applied
// before idle devices pick their next task, so a task that becomes ready at
// the same instant as a device frees up competes fairly. Every stage walks
// its own fixed task order (the schedule); devices choose among their
// stages' next tasks. Deterministic: ties break by insertion order. On a
// node whose cores are shared, a task's end is rescheduled whenever the
// number of its node's running tasks changes; the events it leaves behind
// are recognised as stale by their generation.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Schedule/Simulator.h"
#include "FTPipe/Schedule/ZeroBubble.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>

using namespace ftpipe::schedule;
using llvm::Error;
using llvm::Expected;

static Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

Error SimulatorConfig::validate() const {
  if (microBatches == 0)
    return makeError("simulator: micro-batches per mini-batch must be at "
                     "least 1");
  if (asyncMicroBatches != 0 && asyncMicroBatches < 8)
    return makeError("simulator: stream at least 8 async micro-batches");
  if (!replicas.replicas.empty() && orders.devices.empty())
    return makeError("simulator: replicas need the lists (orders) of "
                     "replicateSchedule");
  if (!updateMs.empty() && orders.devices.empty())
    return makeError("simulator: update times need the lists (orders)");
  for (double ms : updateMs)
    if (!(ms >= 0) || !std::isfinite(ms))
      return makeError("simulator: an update time must be finite and at "
                       "least 0");
  for (uint32_t node : sharedCores.node)
    if (node >= sharedCores.cores.size())
      return makeError(llvm::formatv(
          "simulator: a device is on node {0}, the shared cores name {1} nodes",
          node, sharedCores.cores.size()));
  if (llvm::is_contained(sharedCores.cores, 0u))
    return makeError("simulator: a node of shared cores needs at least 1 core");
  return Error::success();
}

/// Per node of `shared`, its devices.
static std::vector<uint32_t> devicesPerNode(const SharedCores &shared) {
  std::vector<uint32_t> devices(shared.cores.size(), 0);
  for (uint32_t node : shared.node)
    ++devices[node];
  return devices;
}

bool SharedCores::shares() const {
  std::vector<uint32_t> devices = devicesPerNode(*this);
  for (auto [count, cores] : llvm::zip_equal(devices, this->cores))
    if (count > cores)
      return true;
  return false;
}

std::string SharedCores::str() const {
  std::string text;
  std::vector<uint32_t> devices = devicesPerNode(*this);
  for (auto [count, cores] : llvm::zip_equal(devices, this->cores))
    text += llvm::formatv("{0}{1} device{2} on {3} core{4}",
                          text.empty() ? "" : "; ", count,
                          count == 1 ? "" : "s", cores, cores == 1 ? "" : "s")
                .str();
  return text;
}

Links Links::uniform(size_t devices, double GBps, double latencyUs) {
  Links links;
  links.devices = devices;
  links.GBps.assign(devices * devices, GBps);
  links.latencyUs.assign(devices * devices, latencyUs);
  return links;
}

double ftpipe::schedule::ringAllReduceMs(uint64_t bytes,
                                         llvm::ArrayRef<int64_t> group,
                                         const Links &links) {
  size_t r = group.size();
  if (r < 2)
    return 0.0;
  double slowest = 0.0;
  for (size_t j = 0; j < r; ++j)
    slowest = std::max(slowest, links.transferMs(bytes / r, 1, size_t(group[j]),
                                                 size_t(group[(j + 1) % r])));
  return 2.0 * double(r - 1) * slowest;
}

double
ftpipe::schedule::exposedAllReduceMs(llvm::ArrayRef<double> lastBackwardMs,
                                     llvm::ArrayRef<uint64_t> gradientBytes,
                                     llvm::ArrayRef<int64_t> group,
                                     const Links &links) {
  double ended = 0.0, reduced = 0.0;
  for (auto [ms, bytes] : llvm::zip_equal(lastBackwardMs, gradientBytes)) {
    ended += ms;
    reduced = std::max(ended, reduced) + ringAllReduceMs(bytes, group, links);
  }
  return std::max(0.0, reduced - ended);
}

llvm::ArrayRef<StageEdge> TimedStageGraph::outEdges(uint32_t s) const {
  auto begin = llvm::partition_point(
      edges, [&](const StageEdge &e) { return e.src < s; });
  auto end = std::find_if(begin, edges.end(),
                          [&](const StageEdge &e) { return e.src != s; });
  return llvm::ArrayRef<StageEdge>(edges).slice(begin - edges.begin(),
                                                end - begin);
}

StageGraph TimedStageGraph::topology(int64_t devices) const {
  StageGraph graph;
  graph.devices = devices;
  graph.device.assign(device.begin(), device.end());
  graph.producers.resize(numStages());
  for (const StageEdge &e : edges)
    graph.producers[e.dst].push_back(e.src);
  return graph;
}

TimedStageGraph TimedStageGraph::withCosts(const StageGraph &graph,
                                           std::vector<double> fwdMs,
                                           std::vector<double> inputMs,
                                           std::vector<double> weightMs,
                                           uint64_t edgeBytes) {
  TimedStageGraph sg;
  size_t n = graph.stages();
  sg.device.assign(graph.device.begin(), graph.device.end());
  sg.fwdMs = std::move(fwdMs);
  sg.inputMs = std::move(inputMs);
  sg.weightMs = std::move(weightMs);
  for (size_t s = 0; s < n; ++s)
    sg.bwdMs.push_back(sg.inputMs[s] + sg.weightMs[s]);
  sg.recomputeMs.assign(n, 0.0);
  for (size_t s = 0; s < n; ++s)
    for (int64_t p : graph.producers[s]) {
      StageEdge e;
      e.src = uint32_t(p);
      e.dst = uint32_t(s);
      e.fwdBytes = e.bwdBytes = edgeBytes;
      e.fwdTensors = e.bwdTensors = 1;
      sg.edges.push_back(e);
    }
  llvm::sort(sg.edges, [](const StageEdge &a, const StageEdge &b) {
    return std::make_pair(a.src, a.dst) < std::make_pair(b.src, b.dst);
  });
  std::vector<int64_t> heights = graph.heights();
  sg.height.assign(heights.begin(), heights.end());
  // A producer is higher than each of its consumers: by decreasing height
  // the stages are in a topological order.
  for (uint32_t s = 0; s < n; ++s)
    sg.topoOrder.push_back(s);
  llvm::stable_sort(sg.topoOrder, [&](uint32_t a, uint32_t b) {
    return heights[a] > heights[b];
  });
  return sg;
}

std::string SimEvent::label() const {
  switch (kind) {
  case Kind::Forward:
    return llvm::formatv("F s{0} mb{1}", stage, microBatch).str();
  case Kind::Backward:
    return llvm::formatv("B s{0} mb{1}", stage, microBatch).str();
  case Kind::InputBackward:
    return llvm::formatv("I s{0} mb{1}", stage, microBatch).str();
  case Kind::WeightBackward:
    return llvm::formatv("W s{0} mb{1}", stage, microBatch).str();
  case Kind::Transfer:
    return llvm::formatv("{0} s{1}->s{2} mb{3}", backward ? "grad" : "act",
                         stage, peer, microBatch)
        .str();
  case Kind::AllReduce:
    return llvm::formatv("AR s{0} U{1}", stage, microBatch).str();
  case Kind::Update:
    return llvm::formatv("U{0}", microBatch).str();
  }
  llvm_unreachable("unknown event kind");
}

namespace {

using StageId = uint32_t;
using DeviceId = uint32_t;

/// Parts of a stage's work on one micro-batch: its forward, its backward
/// (B, or I when it splits) and, when it splits, its weight part W. In a
/// replicated device's order, kUpdate is its update (microBatch: the step).
enum Part3 : uint8_t { kForward = 0, kBackward = 1, kWeight = 2, kUpdate = 3 };

/// One task of a stage's or a device's order.
struct Task {
  StageId stage = 0;
  uint32_t microBatch = 0;
  uint8_t part = kForward;
};
using TaskLists = std::vector<std::vector<Task>>;

/// Which of an edge's traffic a send carries: everything, what the sending
/// stage made, what it passes on (activations, or gradients the receiver
/// passes back), or the gradients of forwarded values the receiver made.
enum class Part { All, Made, Passed, FirstHop };

/// The whole simulation state; one object per simulate() call.
class Simulation {
public:
  /// `lists`: per stage its own order (`byDevice` false), or per device
  /// its given order (`byDevice` true).
  Simulation(const TimedStageGraph &sg, const Links &links,
             const SimulatorConfig &config, uint32_t numMicroBatches,
             TaskLists lists, bool byDevice)
      : sg(sg), links(links), config(config), K(numMicroBatches),
        lists(std::move(lists)), byDevice(byDevice) {}

  llvm::Expected<SimResult> run();

private:
  // Task id: (stage * K + microBatch) * 3 + part.
  uint32_t taskId(StageId s, uint32_t m, uint8_t part) const {
    return (s * K + m) * 3 + part;
  }
  /// Tasks per micro-batch of stage s: F and B, or F, I and W.
  uint32_t partsOf(StageId s) const { return splits[s] ? 3 : 2; }

  /// What an event is: a task that ends, or a transfer that arrives and
  /// satisfies a dependency of a task, or one that brings a task's stage
  /// gradients of forwarded values to pass back (StageEdge::passGrad*).
  enum class EventKind : uint8_t {
    TaskEnd,
    Arrival,
    PassedGradient,
    /// A replicated device's replicas may leave an update (`task`: its
    /// index in joinedUpdates).
    AllReduceEnd,
    /// Device `task`'s update (SimulatorConfig::updateMs) has ended.
    UpdateEnd
  };

  struct Event {
    double time;
    uint64_t order;
    /// Task that finished, or that the transfer feeds.
    uint32_t task;
    EventKind kind;
    /// A task's end on shared cores: its reschedule count when pushed.
    uint32_t generation = 0;
    bool operator>(const Event &o) const {
      return time != o.time ? time > o.time : order > o.order;
    }
  };

  void push(double time, uint32_t task, EventKind kind,
            uint32_t generation = 0) {
    queue.push({time, nextOrder++, task, kind, generation});
  }

  /// One dependency of `task` is satisfied at time t.
  void arrive(uint32_t task, double t) {
    readyAt[task] = std::max(readyAt[task], t);
    --depsLeft[task];
  }

  void send(const StageEdge &e, uint32_t m, bool bwd, double t,
            Part part = Part::All);
  /// Backward task `task` has ended and every gradient its stage passes
  /// back has arrived: sends the forwarded values' gradients at time t.
  void sendForwardedGradients(uint32_t task, double t);
  /// A gradient that `task`'s stage passes back arrived at time t.
  void passedGradientArrived(uint32_t task, double t);
  void finishTask(uint32_t task, double t);
  void dispatch(DeviceId d, double t);
  /// Runs stage s's task (m, part) on device d from time t.
  void start(DeviceId d, StageId s, uint32_t m, uint8_t part, double t);
  /// The node of device d when its cores are shared with more devices than
  /// it has, or ~0u.
  uint32_t sharedNodeOf(DeviceId d) const {
    return sharingNodes.empty() || !sharingNodes[config.sharedCores.node[d]]
               ? ~0u
               : config.sharedCores.node[d];
  }
  /// The tasks running on `node` changed at time t: each one whose share
  /// of the cores changes gets its new end.
  void reshare(uint32_t node, double t);
  /// A task's end event at time t on shared cores: ends the task unless the
  /// event is stale.
  void endSharedTask(const Event &ev);
  /// The device (process, with replicas) of stage s's task of micro-batch m.
  DeviceId deviceOf(StageId s, uint32_t m) const {
    if (config.replicas.replicas.empty())
      return sg.device[s];
    return DeviceId(config.replicas.process(
        sg.device[s], config.replicas.replicaFor(sg.device[s], m)));
  }
  /// Process d reached update k of its replicated device at time t: once
  /// every replica has, they leave it when its all-reduces are done.
  void reachUpdate(DeviceId d, uint32_t k, double t);
  void endAllReduce(uint32_t index, double t);
  /// Device d runs its update from time t (SimulatorConfig::updateMs), or
  /// leaves it at once when it takes no time.
  void runUpdate(DeviceId d, double t);
  /// Per replicated device and update, one all-reduce per stage of the
  /// device, and which of the processes' tasks ready them (the last
  /// backward of the stage before the update in each replica's order).
  void planReductions();
  /// Reduction `index` starts at t, or when its group's ring is free.
  void startReduction(uint32_t index, double t);

  const TimedStageGraph &sg;
  const Links &links;
  const SimulatorConfig &config;
  const uint32_t K;
  const TaskLists lists;
  const bool byDevice;
  /// Per stage: whether the lists split its backward into I and W.
  std::vector<char> splits;

  std::vector<std::vector<uint32_t>> inEdges, outEdges; // edge indices
  std::vector<std::vector<StageId>> deviceStages;
  std::vector<uint32_t> rank; // topological rank of each stage
  std::vector<uint32_t> depsLeft;
  /// Per backward task: gradients its stage passes back still to come, and
  /// whether the task has ended.
  std::vector<uint32_t> passedLeft;
  std::vector<char> backwardEnded;
  std::vector<double> readyAt, finishedAt;
  std::vector<uint32_t> pos;
  /// With given orders: each device's next position in its order.
  std::vector<size_t> orderPos;
  std::vector<char> deviceBusy;
  /// Replicated devices: per (plan device, step), the processes that have
  /// reached the update; and the replicas of updates all have reached.
  std::map<std::pair<int64_t, uint32_t>, std::vector<DeviceId>> atUpdate;
  std::vector<std::vector<DeviceId>> joinedUpdates;
  /// One stage's gradient all-reduce for one update of its device.
  struct Reduction {
    int64_t device = 0;
    StageId stage = 0;
    uint32_t step = 0;
    /// Replicas whose last backward of the stage before the update is yet
    /// to end.
    uint32_t pending = 0;
    bool started = false;
    double endMs = 0.0;
  };
  std::vector<Reduction> reductions;
  /// Per (plan device, step), its reductions; per task, the reduction its
  /// end readies (~0u: none); per plan device, when its ring is free.
  std::map<std::pair<int64_t, uint32_t>, std::vector<uint32_t>> reductionsOf;
  std::vector<uint32_t> readies;
  std::vector<double> ringFree;
  std::vector<double> linkFree;
  /// Shared cores: per node, whether it has fewer cores than devices, and
  /// the tasks running on it; per task, its work left (ms on a core of its
  /// own) as of `progressAt`, its share of a core, its reschedule count,
  /// its start and its timeline event.
  std::vector<char> sharingNodes;
  std::vector<std::vector<uint32_t>> runningOn;
  std::vector<double> workLeft, progressAt, share, startedAt;
  std::vector<uint32_t> generation;
  std::vector<size_t> eventOf;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> queue;
  uint64_t nextOrder = 0;
  SimResult result;
};

} // namespace

/// Bytes and tensors of one part of an edge's traffic.
static std::pair<uint64_t, uint32_t> partOf(const StageEdge &e, bool bwd,
                                            Part part) {
  if (!bwd) {
    if (part == Part::Passed)
      return {e.passBytes, e.passTensors};
    if (part == Part::Made)
      return {e.fwdBytes - e.passBytes, e.fwdTensors - e.passTensors};
    return {e.fwdBytes, e.fwdTensors};
  }
  if (part == Part::Passed)
    return {e.passGradBytes, e.passGradTensors};
  if (part == Part::FirstHop)
    return {e.firstHopGradBytes, e.firstHopGradTensors};
  if (part == Part::Made)
    return {e.bwdBytes - e.passGradBytes - e.firstHopGradBytes,
            e.bwdTensors - e.passGradTensors - e.firstHopGradTensors};
  return {e.bwdBytes, e.bwdTensors};
}

void Simulation::send(const StageEdge &e, uint32_t m, bool bwd, double t,
                      Part part) {
  StageId from = bwd ? e.dst : e.src, to = bwd ? e.src : e.dst;
  uint32_t target = taskId(to, m, bwd);
  EventKind kind = bwd && part == Part::Passed ? EventKind::PassedGradient
                                               : EventKind::Arrival;
  DeviceId a = deviceOf(from, m), b = deviceOf(to, m);
  if (a == b) {
    if (kind == EventKind::Arrival)
      arrive(target, t);
    else
      passedGradientArrived(target, t);
    return;
  }
  auto [bytes, tensors] = partOf(e, bwd, part);
  double duration = links.transferMs(bytes, tensors, a, b);
  double &free = linkFree[size_t(a) * links.devices + b];
  double start = std::max(t, free);
  free = start + duration;
  push(free, target, kind);
  if (config.recordEvents) {
    SimEvent ev;
    ev.kind = SimEvent::Kind::Transfer;
    ev.backward = bwd;
    ev.stage = from;
    ev.peer = to;
    ev.microBatch = m;
    ev.device = a;
    ev.toDevice = b;
    ev.startMs = start;
    ev.endMs = free;
    result.events.push_back(ev);
  }
}

void Simulation::sendForwardedGradients(uint32_t task, double t) {
  StageId s = task / 3 / K;
  uint32_t m = task / 3 % K;
  for (uint32_t i : inEdges[s]) {
    const StageEdge &e = sg.edges[i];
    if (e.firstHopGradTensors > 0)
      send(e, m, /*bwd=*/true, t, Part::FirstHop);
    if (e.passGradTensors > 0)
      send(e, m, /*bwd=*/true, t, Part::Passed);
  }
}

void Simulation::passedGradientArrived(uint32_t task, double t) {
  if (--passedLeft[task] == 0 && backwardEnded[task])
    sendForwardedGradients(task, t);
}

void Simulation::finishTask(uint32_t task, double t) {
  StageId s = task / 3 / K;
  uint32_t m = task / 3 % K;
  uint8_t part = task % 3;
  finishedAt[task] = t;
  deviceBusy[deviceOf(s, m)] = 0;
  if (!readies.empty() && readies[task] != ~0u &&
      --reductions[readies[task]].pending == 0)
    startReduction(readies[task], t);
  if (part == kWeight)
    return;
  if (part == kForward) {
    // What the stage passes on left when its forward started.
    for (uint32_t i : outEdges[s]) {
      const StageEdge &e = sg.edges[i];
      if (e.passTensors == 0)
        send(e, m, /*bwd=*/false, t);
      else if (e.passTensors < e.fwdTensors)
        send(e, m, /*bwd=*/false, t, Part::Made);
    }
  } else {
    for (uint32_t i : inEdges[s]) {
      const StageEdge &e = sg.edges[i];
      uint32_t forwarded = e.passGradTensors + e.firstHopGradTensors;
      if (forwarded == 0 && e.bwdTensors > 0)
        send(e, m, /*bwd=*/true, t);
      else if (e.bwdTensors > forwarded)
        send(e, m, /*bwd=*/true, t, Part::Made);
    }
    backwardEnded[task] = 1;
    if (passedLeft[task] == 0)
      sendForwardedGradients(task, t);
    if (splits[s])
      arrive(taskId(s, m, kWeight), t);
  }
}

void Simulation::dispatch(DeviceId d, double t) {
  if (deviceBusy[d])
    return;
  if (byDevice) {
    // The given order: the device's next task, once it is ready.
    const std::vector<Task> &order = lists[d];
    if (orderPos[d] == order.size())
      return;
    const Task &next = order[orderPos[d]];
    if (next.part == kUpdate) {
      if (config.replicas.replicas.empty() ||
          config.replicas.replicas[config.replicas.replicaOf(d).first] < 2)
        runUpdate(d, t);
      else
        reachUpdate(d, next.microBatch, t);
      if (!deviceBusy[d])
        dispatch(d, t);
      return;
    }
    uint32_t task = taskId(next.stage, next.microBatch, next.part);
    if (depsLeft[task] != 0 || readyAt[task] > t)
      return;
    ++orderPos[d];
    start(d, next.stage, next.microBatch, next.part, t);
    return;
  }
  // Best ready task: backward first, then older micro-batch, then earlier
  // stage in topological order.
  StageId best = ~StageId(0);
  std::tuple<int, uint32_t, uint32_t> bestKey;
  for (StageId s : deviceStages[d]) {
    if (pos[s] >= 2 * K)
      continue;
    auto [stage, m, part] = lists[s][pos[s]];
    uint32_t task = taskId(s, m, part);
    if (depsLeft[task] != 0 || readyAt[task] > t)
      continue;
    std::tuple<int, uint32_t, uint32_t> key{part == kForward, m, rank[s]};
    if (best == ~StageId(0) || key < bestKey) {
      best = s;
      bestKey = key;
    }
  }
  if (best == ~StageId(0))
    return;
  auto [stage, m, part] = lists[best][pos[best]];
  start(d, best, m, part, t);
}

void Simulation::planReductions() {
  const ReplicaLayout &layout = config.replicas;
  std::vector<std::vector<StageId>> stagesOn(layout.replicas.size());
  for (StageId s : sg.topoOrder)
    stagesOn[sg.device[s]].push_back(s);
  readies.assign(size_t(sg.numStages()) * K * 3, ~0u);
  ringFree.assign(layout.replicas.size(), 0.0);
  for (DeviceId d = 0; d < lists.size(); ++d) {
    int64_t device = layout.replicaOf(d).first;
    if (layout.replicas[device] < 2)
      continue;
    // Per stage, its last backward (B, or W when split) since the update
    // before.
    std::vector<uint32_t> last(sg.numStages(), ~0u);
    for (const Task &task : lists[d]) {
      if (task.part != kUpdate) {
        if (task.part == (splits[task.stage] ? kWeight : kBackward))
          last[task.stage] = taskId(task.stage, task.microBatch, task.part);
        continue;
      }
      std::vector<uint32_t> &ofUpdate = reductionsOf[{device, task.microBatch}];
      if (ofUpdate.empty())
        for (StageId s : stagesOn[device]) {
          ofUpdate.push_back(uint32_t(reductions.size()));
          reductions.push_back({device, s, task.microBatch});
        }
      for (uint32_t index : ofUpdate) {
        uint32_t &closer = last[reductions[index].stage];
        if (closer == ~0u)
          continue;
        readies[closer] = index;
        ++reductions[index].pending;
        closer = ~0u;
      }
    }
  }
}

void Simulation::startReduction(uint32_t index, double t) {
  Reduction &reduction = reductions[index];
  std::vector<int64_t> group = config.replicas.group(reduction.device);
  uint64_t bytes = config.stageGradientBytes.empty()
                       ? 0
                       : config.stageGradientBytes[reduction.stage];
  double start = std::max(t, ringFree[reduction.device]);
  reduction.started = true;
  reduction.endMs = start + ringAllReduceMs(bytes, group, links);
  ringFree[reduction.device] = reduction.endMs;
  if (config.recordEvents)
    for (int64_t member : group) {
      SimEvent ev;
      ev.kind = SimEvent::Kind::AllReduce;
      ev.stage = reduction.stage;
      ev.microBatch = reduction.step;
      ev.device = ev.toDevice = uint32_t(member);
      ev.startMs = start;
      ev.endMs = reduction.endMs;
      result.events.push_back(ev);
    }
}

void Simulation::reachUpdate(DeviceId d, uint32_t k, double t) {
  int64_t device = config.replicas.replicaOf(d).first;
  std::vector<DeviceId> &arrived = atUpdate[{device, k}];
  deviceBusy[d] = 1;
  arrived.push_back(d);
  if (int64_t(arrived.size()) < config.replicas.replicas[device])
    return;
  // Every replica has ended its backwards: what is not reducing yet (a
  // stage no replica ran since the update before) starts now.
  double end = t;
  for (uint32_t index : reductionsOf[{device, k}]) {
    if (!reductions[index].started)
      startReduction(index, t);
    end = std::max(end, reductions[index].endMs);
  }
  joinedUpdates.push_back(std::move(arrived));
  atUpdate.erase({device, k});
  queue.push({end, nextOrder++, uint32_t(joinedUpdates.size() - 1),
              EventKind::AllReduceEnd});
}

void Simulation::endAllReduce(uint32_t index, double t) {
  for (DeviceId member : joinedUpdates[index])
    runUpdate(member, t);
}

void Simulation::runUpdate(DeviceId d, double t) {
  double duration = config.updateMs.empty() ? 0.0 : config.updateMs[d];
  if (duration <= 0.0) {
    deviceBusy[d] = 0;
    ++orderPos[d];
    return;
  }
  deviceBusy[d] = 1;
  push(t + duration, d, EventKind::UpdateEnd);
  if (config.recordEvents) {
    SimEvent ev;
    ev.kind = SimEvent::Kind::Update;
    ev.microBatch = lists[d][orderPos[d]].microBatch;
    ev.device = ev.toDevice = d;
    ev.startMs = t;
    ev.endMs = t + duration;
    result.events.push_back(ev);
  }
}

void Simulation::start(DeviceId d, StageId best, uint32_t m, uint8_t part,
                       double t) {
  ++pos[best];
  bool split = splits[best];
  double duration =
      part == kForward ? sg.fwdMs[best]
      : part == kWeight
          ? sg.weightMs[best]
          : (split ? sg.inputMs[best] : sg.bwdMs[best]) + sg.recomputeMs[best];
  bool bwd = part != kForward;
  deviceBusy[d] = 1;
  if (!bwd)
    for (uint32_t i : outEdges[best])
      if (sg.edges[i].passTensors > 0)
        send(sg.edges[i], m, /*bwd=*/false, t, Part::Passed);
  uint32_t task = taskId(best, m, part);
  uint32_t node = sharedNodeOf(d);
  if (node == ~0u) {
    result.deviceBusyMs[d] += duration;
    push(t + duration, task, EventKind::TaskEnd);
  } else {
    // Its end depends on what else runs on the node (reshare).
    workLeft[task] = duration;
    progressAt[task] = startedAt[task] = t;
    share[task] = 0.0;
    eventOf[task] = result.events.size();
    runningOn[node].push_back(task);
    reshare(node, t);
  }
  if (config.recordEvents) {
    SimEvent ev;
    ev.kind = part == kForward  ? SimEvent::Kind::Forward
              : part == kWeight ? SimEvent::Kind::WeightBackward
              : split           ? SimEvent::Kind::InputBackward
                                : SimEvent::Kind::Backward;
    ev.stage = best;
    ev.microBatch = m;
    ev.device = ev.toDevice = d;
    ev.startMs = t;
    ev.endMs = t + duration;
    result.events.push_back(ev);
  }
}

void Simulation::reshare(uint32_t node, double t) {
  const std::vector<uint32_t> &running = runningOn[node];
  double now = std::min(1.0, double(config.sharedCores.cores[node]) /
                                 double(std::max<size_t>(1, running.size())));
  for (uint32_t task : running) {
    if (share[task] == now)
      continue;
    workLeft[task] =
        std::max(0.0, workLeft[task] - (t - progressAt[task]) * share[task]);
    progressAt[task] = t;
    share[task] = now;
    push(t + workLeft[task] / now, task, EventKind::TaskEnd,
         ++generation[task]);
  }
}

void Simulation::endSharedTask(const Event &ev) {
  if (ev.generation != generation[ev.task])
    return;
  StageId s = ev.task / 3 / K;
  DeviceId d = deviceOf(s, ev.task / 3 % K);
  uint32_t node = sharedNodeOf(d);
  llvm::erase(runningOn[node], ev.task);
  result.deviceBusyMs[d] += ev.time - startedAt[ev.task];
  if (config.recordEvents)
    result.events[eventOf[ev.task]].endMs = ev.time;
  finishTask(ev.task, ev.time);
  reshare(node, ev.time);
}

Expected<SimResult> Simulation::run() {
  size_t S = sg.numStages(), P = links.devices;
  splits.assign(S, 0);
  if (byDevice)
    for (const std::vector<Task> &list : lists)
      for (const Task &task : list)
        if (task.part == kWeight)
          splits[task.stage] = 1;
  inEdges.assign(S, {});
  outEdges.assign(S, {});
  for (uint32_t i = 0; i < sg.edges.size(); ++i) {
    outEdges[sg.edges[i].src].push_back(i);
    inEdges[sg.edges[i].dst].push_back(i);
  }
  rank.assign(S, 0);
  for (uint32_t i = 0; i < sg.topoOrder.size(); ++i)
    rank[sg.topoOrder[i]] = i;
  deviceStages.assign(P, {});
  for (StageId s : sg.topoOrder) {
    if (config.replicas.replicas.empty()) {
      deviceStages[sg.device[s]].push_back(s);
      continue;
    }
    for (int64_t process : config.replicas.group(sg.device[s]))
      deviceStages[process].push_back(s);
  }

  size_t numTasks = S * K * 3;
  depsLeft.assign(numTasks, 0);
  passedLeft.assign(numTasks, 0);
  backwardEnded.assign(numTasks, 0);
  readyAt.assign(numTasks, 0.0);
  finishedAt.assign(numTasks, 0.0);
  for (StageId s = 0; s < S; ++s) {
    // Gradients of values the stage made hold up its backward (one message
    // for those of forwarded values, one for the others); gradients it
    // passes back do not.
    uint32_t gradsIn = 0, passedIn = 0;
    for (uint32_t i : outEdges[s]) {
      const StageEdge &e = sg.edges[i];
      gradsIn += e.bwdTensors > e.passGradTensors + e.firstHopGradTensors;
      gradsIn += e.firstHopGradTensors > 0;
      passedIn += e.passGradTensors > 0;
    }
    // An edge carrying values its source passes on and values it makes
    // arrives as two messages.
    uint32_t messagesIn = 0;
    for (uint32_t i : inEdges[s]) {
      const StageEdge &e = sg.edges[i];
      messagesIn += e.passTensors > 0 && e.passTensors < e.fwdTensors ? 2 : 1;
    }
    for (uint32_t m = 0; m < K; ++m) {
      depsLeft[taskId(s, m, kForward)] = messagesIn;
      depsLeft[taskId(s, m, kBackward)] = gradsIn;
      passedLeft[taskId(s, m, kBackward)] = passedIn;
      depsLeft[taskId(s, m, kWeight)] = 1; // its I
    }
  }
  if (byDevice && !config.replicas.replicas.empty())
    planReductions();
  pos.assign(S, 0);
  orderPos.assign(P, 0);
  deviceBusy.assign(P, 0);
  linkFree.assign(P * P, 0.0);
  result.deviceBusyMs.assign(P, 0.0);
  const SharedCores &shared = config.sharedCores;
  if (shared.shares()) {
    std::vector<uint32_t> devices = devicesPerNode(shared);
    for (auto [count, cores] : llvm::zip_equal(devices, shared.cores))
      sharingNodes.push_back(count > cores);
    runningOn.assign(shared.cores.size(), {});
    workLeft.assign(numTasks, 0.0);
    progressAt.assign(numTasks, 0.0);
    share.assign(numTasks, 0.0);
    startedAt.assign(numTasks, 0.0);
    generation.assign(numTasks, 0);
    eventOf.assign(numTasks, 0);
  }
  result.microBatches = K;

  double now = 0.0;
  for (DeviceId d = 0; d < P; ++d)
    dispatch(d, now);
  while (!queue.empty()) {
    now = queue.top().time;
    while (!queue.empty() && queue.top().time == now) {
      Event ev = queue.top();
      queue.pop();
      switch (ev.kind) {
      case EventKind::TaskEnd:
        if (sharedNodeOf(deviceOf(ev.task / 3 / K, ev.task / 3 % K)) != ~0u)
          endSharedTask(ev);
        else
          finishTask(ev.task, ev.time);
        break;
      case EventKind::Arrival:
        arrive(ev.task, ev.time);
        break;
      case EventKind::PassedGradient:
        passedGradientArrived(ev.task, ev.time);
        break;
      case EventKind::AllReduceEnd:
        endAllReduce(ev.task, ev.time);
        break;
      case EventKind::UpdateEnd:
        deviceBusy[ev.task] = 0;
        ++orderPos[ev.task];
        break;
      }
    }
    for (DeviceId d = 0; d < P; ++d)
      dispatch(d, now);
  }
  result.makespanMs = now;
  for (StageId s = 0; s < S; ++s)
    if (pos[s] != partsOf(s) * K)
      return makeError(llvm::formatv(
          !byDevice
              ? "simulator: stage {0} stalled after {1} of {2} tasks "
                "(internal error: the schedule deadlocked)"
              : "simulator: stage {0} stalled after {1} of {2} tasks: the "
                "given orders deadlock",
          s, pos[s], partsOf(s) * K));
  if (byDevice)
    for (DeviceId d = 0; d < P; ++d)
      if (orderPos[d] != lists[d].size())
        return makeError(llvm::formatv(
            "simulator: device {0} stalled at its update {1}: the given "
            "orders deadlock",
            d, lists[d][orderPos[d]].microBatch));

  if (config.kind == Kind::Async) {
    // Completion of micro-batch m: its last backward anywhere. The pipeline
    // becomes periodic after the fill, possibly with a cycle of several
    // micro-batches (stages sharing a device interleave in a pattern); find
    // the shortest cycle in the middle half and average over whole cycles.
    std::vector<double> done(K, 0.0);
    for (uint32_t m = 0; m < K; ++m)
      for (StageId s = 0; s < S; ++s)
        done[m] = std::max(done[m], finishedAt[taskId(s, m, kBackward)]);
    uint32_t lo = K / 4, hi = 3 * K / 4;
    double eps = 1e-9 * std::max(1.0, done[K - 1]);
    auto gap = [&](uint32_t m) { return done[m] - done[m - 1]; };
    uint32_t cycle = 0;
    for (uint32_t k = 1; k <= (hi - lo) / 2 && cycle == 0; ++k) {
      bool periodic = true;
      for (uint32_t m = lo + 1 + k; m <= hi && periodic; ++m)
        periodic = std::abs(gap(m) - gap(m - k)) <= eps;
      if (periodic)
        cycle = k;
    }
    uint32_t span = cycle ? (hi - lo) / cycle * cycle : hi - lo;
    result.asyncCycle = cycle;
    result.msPerMicroBatch = (done[hi] - done[hi - span]) / double(span);
    result.msPerMiniBatch = result.msPerMicroBatch * config.microBatches;
  } else {
    result.msPerMiniBatch = result.makespanMs;
    result.msPerMicroBatch = result.makespanMs / double(K);
  }

  double busy = 0.0;
  size_t used = 0;
  for (DeviceId d = 0; d < P; ++d)
    if (!deviceStages[d].empty()) {
      busy += result.deviceBusyMs[d];
      ++used;
    }
  if (used > 0 && result.makespanMs > 0.0)
    result.idleFraction = 1.0 - busy / (double(used) * result.makespanMs);
  llvm::stable_sort(result.events, [](const SimEvent &a, const SimEvent &b) {
    return a.startMs < b.startMs;
  });
  return std::move(result);
}

/// Per device, the forwards and backwards of `orders` (updates dropped),
/// once they are checked to hold every task exactly once on its stage's
/// device (a stage with I and W has no B), each backward after its forward
/// and each W after its I; `K` is set to the micro-batches they name.
static Expected<TaskLists> checkOrders(const TimedStageGraph &sg,
                                       const Links &links,
                                       const Schedule &orders,
                                       const ReplicaLayout &replicas,
                                       bool timedUpdates, uint32_t &K) {
  if (orders.devices.size() != links.devices)
    return makeError(
        llvm::formatv("simulator: orders for {0} devices, the hardware has {1}",
                      orders.devices.size(), links.devices));
  TaskLists lists(orders.devices.size());
  K = 0;
  size_t tasks = 0;
  size_t S = sg.numStages();
  std::vector<char> split(S, 0);
  auto deviceOf = [&](int64_t stage, int64_t m) -> DeviceId {
    if (replicas.replicas.empty())
      return sg.device[stage];
    return DeviceId(replicas.process(sg.device[stage],
                                     replicas.replicaFor(sg.device[stage], m)));
  };
  for (DeviceId d = 0; d < orders.devices.size(); ++d)
    for (const Action &action : orders.devices[d]) {
      if (action.kind == ActionKind::Update) {
        // A replicated device's update is its all-reduce; an update may
        // take time of its own.
        if (timedUpdates ||
            (!replicas.replicas.empty() &&
             replicas.replicas[replicas.replicaOf(d).first] > 1))
          lists[d].push_back(
              {0, uint32_t(std::max<int64_t>(action.index, 0)), kUpdate});
        continue;
      }
      if (action.stage < 0 || size_t(action.stage) >= S ||
          deviceOf(action.stage, std::max<int64_t>(action.index, 0)) != d)
        return makeError(llvm::formatv(
            "simulator: device {0}'s order names stage {1}, not on it", d,
            action.stage));
      if (action.index < 0 || action.index >= (int64_t(1) << 30))
        return makeError(
            llvm::formatv("simulator: device {0}'s order names micro-batch {1}",
                          d, action.index));
      uint8_t part = action.kind == ActionKind::Forward          ? kForward
                     : action.kind == ActionKind::WeightBackward ? kWeight
                                                                 : kBackward;
      if (action.kind == ActionKind::InputBackward ||
          action.kind == ActionKind::WeightBackward) {
        if (sg.inputMs.size() != S || sg.weightMs.size() != S)
          return makeError(llvm::formatv(
              "simulator: device {0}'s order splits stage {1}'s backward, the "
              "stage graph has no I and W costs",
              d, action.stage));
        split[action.stage] = 1;
      }
      Task task{StageId(action.stage), uint32_t(action.index), part};
      K = std::max(K, task.microBatch + 1);
      lists[d].push_back(task);
      ++tasks;
    }
  // Per (stage, micro-batch, part): 0 not seen, 1 seen as B or F or W, 2
  // seen as I.
  std::vector<char> seen(S * K * 3, 0);
  size_t expected = 0;
  for (StageId s = 0; s < S; ++s)
    expected += size_t(split[s] ? 3 : 2) * K;
  for (DeviceId d = 0; d < lists.size(); ++d)
    for (const Task &task : lists[d]) {
      if (task.part == kUpdate)
        continue;
      size_t base = (size_t(task.stage) * K + task.microBatch) * 3;
      char &mark = seen[base + task.part];
      if (mark)
        return makeError(llvm::formatv(
            "simulator: device {0}'s order repeats a task of stage {1}", d,
            task.stage));
      if (task.part != kForward && !seen[base + task.part - 1])
        return makeError(llvm::formatv(
            "simulator: device {0}'s order runs stage {1}'s {2} of "
            "micro-batch {3} before its {4}",
            d, task.stage, task.part == kWeight ? "W" : "backward",
            task.microBatch, task.part == kWeight ? "I" : "forward"));
      mark = 1;
    }
  for (DeviceId d = 0; d < orders.devices.size(); ++d)
    for (const Action &action : orders.devices[d])
      if (action.kind == ActionKind::Backward && split[action.stage])
        return makeError(llvm::formatv(
            "simulator: device {0}'s order runs stage {1}'s full backward, "
            "and elsewhere its I and W",
            d, action.stage));
  if (tasks != expected)
    return makeError(llvm::formatv(
        "simulator: the orders hold {0} tasks, {1} stages x {2} micro-batches "
        "need {3}",
        tasks, S, K, expected));
  return std::move(lists);
}

/// Per stage, its own order of `K` micro-batches under `kind` (stageOrders).
static TaskLists stageTaskLists(const TimedStageGraph &sg, size_t devices,
                                Kind kind, uint32_t K) {
  ScheduleConfig config;
  config.kind = kind;
  config.microBatches = K;
  config.steps = 1;
  TaskLists lists;
  for (const std::vector<Action> &order :
       stageOrders(sg.topology(int64_t(devices)), config)) {
    std::vector<Task> &list = lists.emplace_back();
    for (const Action &action : order)
      list.push_back(
          {StageId(action.stage), uint32_t(action.index),
           action.kind == ActionKind::Forward ? kForward : kBackward});
  }
  return lists;
}

/// Whether every device of `links` holds a stage of `sg`.
static bool usesEveryDevice(const TimedStageGraph &sg, const Links &links) {
  std::vector<bool> used(links.devices, false);
  for (uint32_t d : sg.device)
    used[d] = true;
  return llvm::all_of(used, [](bool u) { return u; });
}

/// Zero-bubble lists need every device to hold a stage: simulates `sg` on
/// the devices that hold one (numbered in order, with their links) and
/// numbers the result's devices back.
static Expected<SimResult>
simulateOnUsedDevices(const TimedStageGraph &sg, const Links &links,
                      const SimulatorConfig &config) {
  std::vector<int64_t> compact(links.devices, -1);
  std::vector<uint32_t> original;
  for (uint32_t d : sg.device)
    if (compact[d] < 0) {
      compact[d] = int64_t(original.size());
      original.push_back(d);
    }
  llvm::sort(original);
  for (auto [i, d] : llvm::enumerate(original))
    compact[d] = int64_t(i);
  TimedStageGraph sub = sg;
  for (uint32_t &d : sub.device)
    d = uint32_t(compact[d]);
  Links subLinks;
  subLinks.devices = original.size();
  for (uint32_t from : original)
    for (uint32_t to : original) {
      subLinks.GBps.push_back(links.GBps[from * links.devices + to]);
      subLinks.latencyUs.push_back(links.latencyUs[from * links.devices + to]);
    }
  SimulatorConfig subConfig = config;
  if (!config.sharedCores.empty()) {
    subConfig.sharedCores.node.clear();
    for (uint32_t d : original)
      subConfig.sharedCores.node.push_back(config.sharedCores.node[d]);
  }
  Expected<SimResult> result = simulate(sub, subLinks, subConfig);
  if (!result)
    return result.takeError();
  std::vector<double> busy(links.devices, 0.0);
  for (auto [i, ms] : llvm::enumerate(result->deviceBusyMs))
    busy[original[i]] = ms;
  result->deviceBusyMs = std::move(busy);
  for (SimEvent &event : result->events) {
    event.device = original[event.device];
    if (event.onLink())
      event.toDevice = original[event.toDevice];
  }
  return result;
}

Error ftpipe::schedule::checkTaskCount(uint64_t stages, uint64_t microBatches) {
  // A forward and a backward task (or an input and a weight part) per stage
  // and micro-batch.
  constexpr uint64_t kMaxTasks = uint64_t(1) << 22;
  if (stages * microBatches * 3 > kMaxTasks)
    return makeError(llvm::formatv(
        "simulator: {0} stages x {1} micro-batches make more than {2} "
        "tasks; use fewer micro-batches (option 'microbatches')",
        stages, microBatches, kMaxTasks));
  return Error::success();
}

Expected<SimResult> ftpipe::schedule::simulate(const TimedStageGraph &sg,
                                               const Links &links,
                                               const SimulatorConfig &config) {
  if (Error err = config.validate())
    return std::move(err);
  size_t S = sg.numStages();
  if (sg.fwdMs.size() != S || sg.bwdMs.size() != S ||
      sg.recomputeMs.size() != S || sg.height.size() != S ||
      sg.topoOrder.size() != S)
    return makeError("simulator: malformed stage graph (use "
                     "buildStageGraph)");
  if (links.GBps.size() != links.devices * links.devices ||
      links.latencyUs.size() != links.devices * links.devices)
    return makeError("simulator: malformed link table");
  const ReplicaLayout &replicas = config.replicas;
  if (!replicas.replicas.empty() &&
      size_t(replicas.processes()) != links.devices)
    return makeError(llvm::formatv(
        "simulator: the replicas ({0}) make {1} processes, the hardware has "
        "{2} devices",
        replicas.str(), replicas.processes(), links.devices));
  size_t planDevices =
      replicas.replicas.empty() ? links.devices : replicas.replicas.size();
  for (StageId s = 0; s < S; ++s)
    if (sg.device[s] >= planDevices)
      return makeError(llvm::formatv(
          "simulator: stage {0} is on device {1}, but the hardware has {2}", s,
          sg.device[s], planDevices));
  for (const StageEdge &e : sg.edges)
    if (e.src >= S || e.dst >= S)
      return makeError("simulator: stage edge names a missing stage");
  if (!config.sharedCores.empty() &&
      config.sharedCores.node.size() != links.devices)
    return makeError(llvm::formatv(
        "simulator: shared cores place {0} devices, the hardware has {1}",
        config.sharedCores.node.size(), links.devices));
  if (!config.updateMs.empty() && config.updateMs.size() != links.devices)
    return makeError(llvm::formatv(
        "simulator: update times of {0} devices, the hardware has {1}",
        config.updateMs.size(), links.devices));
  if (!config.stageGradientBytes.empty() &&
      config.stageGradientBytes.size() != S)
    return makeError(llvm::formatv(
        "simulator: gradient bytes of {0} stages, the stage graph has {1}",
        config.stageGradientBytes.size(), S));
  // (Async streams its own count of micro-batches, checked below.)
  if (config.kind != Kind::Async)
    if (llvm::Error error = checkTaskCount(S, config.microBatches))
      return std::move(error);
  if (config.orders.devices.empty() && isZeroBubble(config.kind)) {
    // Zero-bubble W go where a device is idle: the per-device lists, not
    // per-stage orders, say when. zb-auto's come from the stages' costs
    // (no memory budget).
    if (!usesEveryDevice(sg, links))
      return simulateOnUsedDevices(sg, links, config);
    StageGraph topology = sg.topology(int64_t(links.devices));
    ScheduleConfig step{config.kind, config.microBatches, 1, config.split};
    Expected<Schedule> lists =
        config.kind == Kind::ZeroBubbleAuto
            ? generateZeroBubbleAuto(topology, sg, links, step)
            : generate(topology, step);
    if (!lists)
      return lists.takeError();
    SimulatorConfig withLists = config;
    withLists.orders = std::move(*lists);
    return simulate(sg, links, withLists);
  }
  if (!config.orders.devices.empty()) {
    uint32_t K = 0;
    Expected<TaskLists> lists = checkOrders(
        sg, links, config.orders, config.replicas, !config.updateMs.empty(), K);
    if (!lists)
      return lists.takeError();
    return Simulation(sg, links, config, K, std::move(*lists),
                      /*byDevice=*/true)
        .run();
  }
  uint32_t K = config.microBatches;
  if (config.kind == Kind::Async)
    K = config.asyncMicroBatches ? config.asyncMicroBatches
                                 : std::max<uint32_t>(64, uint32_t(8 * S));
  for (;;) {
    if (llvm::Error error = checkTaskCount(S, K))
      return std::move(error);
    Simulation sim(sg, links, config, K,
                   stageTaskLists(sg, links.devices, config.kind, K),
                   /*byDevice=*/false);
    Expected<SimResult> result = sim.run();
    bool retry = result && config.kind == Kind::Async &&
                 config.asyncMicroBatches == 0 && result->asyncCycle == 0 &&
                 K < 4096;
    if (!retry)
      return result;
    K = std::min<uint32_t>(4096, 2 * K);
  }
}

llvm::json::Value ftpipe::schedule::simulationToChromeTrace(
    const SimResult &result, llvm::ArrayRef<std::string> deviceNames) {
  size_t p = deviceNames.size();
  llvm::json::Array events;
  std::vector<char> linkUsed(p * p, 0);
  for (const SimEvent &e : result.events)
    if (e.onLink())
      linkUsed[size_t(e.device) * p + e.toDevice] = 1;
  auto name = [&](int64_t tid, std::string text) {
    events.push_back(llvm::json::Object{
        {"ph", "M"},
        {"name", "thread_name"},
        {"pid", 0},
        {"tid", tid},
        {"args", llvm::json::Object{{"name", std::move(text)}}}});
  };
  for (size_t d = 0; d < p; ++d)
    name(int64_t(d),
         llvm::formatv("device {0} ({1})", d, deviceNames[d]).str());
  for (size_t a = 0; a < p; ++a)
    for (size_t b = 0; b < p; ++b)
      if (linkUsed[a * p + b])
        name(int64_t(p + a * p + b), llvm::formatv("link {0}->{1}", a, b));
  for (const SimEvent &e : result.events) {
    int64_t tid = e.onLink() ? int64_t(p + size_t(e.device) * p + e.toDevice)
                             : int64_t(e.device);
    const char *cat = e.kind == SimEvent::Kind::Forward          ? "forward"
                      : e.kind == SimEvent::Kind::Backward       ? "backward"
                      : e.kind == SimEvent::Kind::InputBackward  ? "input"
                      : e.kind == SimEvent::Kind::WeightBackward ? "weight"
                      : e.kind == SimEvent::Kind::AllReduce      ? "allreduce"
                      : e.kind == SimEvent::Kind::Update         ? "update"
                      : e.backward                               ? "gradient"
                                                                 : "activation";
    llvm::json::Object args{{"stage", int64_t(e.stage)},
                            {"microbatch", int64_t(e.microBatch)}};
    if (e.onLink())
      args["to_stage"] = int64_t(e.peer);
    events.push_back(llvm::json::Object{{"name", e.label()},
                                        {"cat", cat},
                                        {"ph", "X"},
                                        {"pid", 0},
                                        {"tid", tid},
                                        {"ts", e.startMs * 1e3},
                                        {"dur", (e.endMs - e.startMs) * 1e3},
                                        {"args", std::move(args)}});
  }
  return llvm::json::Object{{"traceEvents", std::move(events)},
                            {"displayTimeUnit", "ms"}};
}
