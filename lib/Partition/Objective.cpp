//===- Objective.cpp - Stage graph and from-scratch plan metrics --------===//
//
// buildStageGraph collapses a plan into stages and the traffic between
// them; evaluatePlan turns that into FTPipe's steady-state objective and the
// memory of every device. Everything is recomputed from scratch, in time
// linear in the size of the graph.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Objective.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace ftpipe::partition;
using llvm::Error;
using llvm::Expected;

static Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

Error ObjectiveConfig::validate() const {
  if (microBatches == 0)
    return makeError("micro-batches per mini-batch must be at least 1");
  return Error::success();
}

ftpipe::schedule::TrainingSetup
ftpipe::partition::trainingSetupOf(const ObjectiveConfig &config) {
  schedule::TrainingSetup setup;
  setup.schedule = config.memoryKind();
  setup.microBatches = config.microBatches;
  setup.optimizer = config.optimizer;
  setup.weightVersions = config.versioning;
  setup.recompute = config.recompute ? schedule::RecomputeMode::Always
                                     : schedule::RecomputeMode::Never;
  return setup;
}

ObjectiveConfig
ftpipe::partition::objectiveConfigOf(const schedule::TrainingSetup &setup) {
  ObjectiveConfig config;
  config.schedule = setup.schedule;
  config.optimizer = setup.optimizer;
  config.versioning = setup.weightVersions;
  config.recompute = setup.recompute != schedule::RecomputeMode::Never;
  config.microBatches = setup.microBatches;
  // zb-auto's memory is checked as a plan made for its step is
  // (memoryScheduleFor): a module whose setup records zb-auto (a
  // sync-schedule plan's) is re-checked for what it was checked for.
  if (memoryScheduleFor(setup.schedule) != setup.schedule)
    config.memorySchedule = memoryScheduleFor(setup.schedule);
  return config;
}

static double linkTransferMs(uint64_t bytes, uint32_t tensors, DeviceId from,
                             DeviceId to, const Hardware &hw) {
  if (from == to)
    return 0.0;
  const LinkParams &l = hw.link(from, to);
  return ftpipe::schedule::linkTransferMs(bytes, tensors, l.GBps, l.latencyUs);
}

double StageGraph::transferMs(uint64_t bytes, uint32_t tensors, StageId from,
                              StageId to, const Hardware &hw) const {
  return linkTransferMs(bytes, tensors, device[from], device[to], hw);
}

double StageGraph::fwdTransferMs(const StageEdge &e, const Hardware &hw) const {
  return linkTransferMs(e.fwdBytes, e.fwdTensors, device[e.src], device[e.dst],
                        hw);
}

double StageGraph::bwdTransferMs(const StageEdge &e, const Hardware &hw) const {
  return linkTransferMs(e.bwdBytes, e.bwdTensors, device[e.dst], device[e.src],
                        hw);
}

/// Relative speed of each device (1 for device 0's speed).
static std::vector<double> deviceSpeeds(const Hardware &hw,
                                        const ObjectiveConfig &config) {
  std::vector<double> speed(hw.numDevices(), 1.0);
  if (config.scaleComputeByDevice)
    for (size_t d = 0; d < hw.numDevices(); ++d)
      speed[d] = hw.device(DeviceId(d)).tflops / hw.device(0).tflops;
  return speed;
}

/// Checks sizes and ids of a plan; shared by buildStageGraph only (the
/// verifier has its own checks).
static Error checkPlanShape(const Graph &graph, const Hardware &hw,
                            const Plan &plan) {
  if (plan.nodeStage.size() != graph.numNodes())
    return makeError(llvm::formatv("plan assigns {0} nodes but the graph has "
                                   "{1}",
                                   plan.nodeStage.size(), graph.numNodes()));
  if (plan.stageDevice.empty() && graph.numNodes() > 0)
    return makeError("plan has no stages");
  for (size_t n = 0; n < plan.nodeStage.size(); ++n)
    if (plan.nodeStage[n] >= plan.numStages())
      return makeError(
          llvm::formatv("node {0} is in stage {1}, but the plan has {2} stages",
                        n, plan.nodeStage[n], plan.numStages()));
  for (size_t s = 0; s < plan.numStages(); ++s)
    if (plan.stageDevice[s] >= hw.numDevices())
      return makeError(llvm::formatv(
          "stage {0} is on device {1}, but the hardware has {2} devices", s,
          plan.stageDevice[s], hw.numDevices()));
  if (!plan.stageRecompute.empty() &&
      plan.stageRecompute.size() != plan.numStages())
    return makeError(llvm::formatv("plan has {0} stages but a recompute choice "
                                   "for {1}",
                                   plan.numStages(),
                                   plan.stageRecompute.size()));
  for (auto [what, choice] :
       {std::make_pair("replication", &plan.nodeReplicated),
        std::make_pair("forwarding", &plan.nodeForwarded)})
    if (!choice->empty() && choice->size() != graph.numNodes())
      return makeError(llvm::formatv("plan has {0} nodes but a {1} choice "
                                     "for {2}",
                                     graph.numNodes(), what, choice->size()));
  for (size_t n = 0; n < plan.nodeForwarded.size(); ++n)
    if (plan.forwarded(n) && plan.replicated(n))
      return makeError(
          llvm::formatv("node {0} is both replicated and forwarded", n));
  return Error::success();
}

Expected<std::vector<std::vector<StageId>>>
ftpipe::partition::replicaStages(const Graph &graph, const Plan &plan) {
  std::vector<std::vector<StageId>> stages(graph.numNodes());
  if (plan.nodeReplicated.empty())
    return std::move(stages);
  if (plan.nodeReplicated.size() != graph.numNodes() ||
      plan.nodeStage.size() != graph.numNodes())
    return makeError(llvm::formatv("plan has a replication choice for {0} "
                                   "nodes but the graph has {1}",
                                   plan.nodeReplicated.size(),
                                   graph.numNodes()));
  // Consumers come after producers, so a reverse sweep sees every consumer's
  // stages before its producer's.
  for (NodeId n = graph.numNodes(); n-- > 0;) {
    if (!plan.replicated(n))
      continue;
    for (ValueId v : graph.inputs(n)) {
      NodeId p = graph.producer(v);
      if (p != kNoNode && !plan.replicated(p))
        return makeError(llvm::formatv(
            "node {0} is replicated but reads value {1} of node {2}, which "
            "is not",
            n, v, p));
    }
    std::vector<StageId> &here = stages[n];
    for (ValueId v : graph.outputs(n))
      for (NodeId c : graph.consumers(v)) {
        if (plan.replicated(c))
          here.insert(here.end(), stages[c].begin(), stages[c].end());
        else
          here.push_back(plan.nodeStage[c]);
      }
    llvm::sort(here);
    here.erase(std::unique(here.begin(), here.end()), here.end());
  }
  return std::move(stages);
}

namespace {
/// Where every node of a plan is computed: its own stage, or, for a
/// replicated node, every stage that reads it (replicaStages).
class NodeStages {
public:
  static Expected<NodeStages> create(const Graph &graph, const Plan &plan) {
    Expected<std::vector<std::vector<StageId>>> replicas =
        replicaStages(graph, plan);
    if (!replicas)
      return replicas.takeError();
    return NodeStages(plan, std::move(*replicas));
  }
  llvm::ArrayRef<StageId> operator()(NodeId n) const {
    if (plan->replicated(n))
      return replicas[n];
    return llvm::ArrayRef<StageId>(plan->nodeStage[n]);
  }

private:
  NodeStages(const Plan &plan, std::vector<std::vector<StageId>> replicas)
      : plan(&plan), replicas(std::move(replicas)) {}
  const Plan *plan;
  std::vector<std::vector<StageId>> replicas;
};
} // namespace

std::vector<llvm::BitVector> StageGraph::reachability() const {
  size_t numStages = this->numStages();
  std::vector<llvm::BitVector> reach(numStages, llvm::BitVector(numStages));
  for (size_t i = topoOrder.size(); i-- > 0;) {
    StageId s = topoOrder[i];
    for (const StageEdge &e : outEdges(s)) {
      reach[s].set(e.dst);
      reach[s] |= reach[e.dst];
    }
  }
  return reach;
}

std::vector<bool> StageGraph::splitStages() const {
  std::vector<bool> split;
  for (double ms : weightMs)
    split.push_back(ms > 0);
  return split;
}

/// Fills `sg.topoOrder` (Kahn's algorithm, the smallest ready stage first)
/// from its edges, sorted by (src, dst); fails naming the stages of a cycle.
static Error orderStages(StageGraph &sg) {
  size_t numStages = sg.numStages();
  sg.topoOrder.clear();
  std::vector<uint32_t> indeg(numStages, 0);
  for (const StageEdge &e : sg.edges)
    ++indeg[e.dst];
  std::vector<StageId> ready;
  for (StageId s = 0; s < numStages; ++s)
    if (indeg[s] == 0)
      ready.push_back(s);
  // Smallest ready stage first, so the order is deterministic and follows
  // stage numbering where it can.
  std::make_heap(ready.begin(), ready.end(), std::greater<>());
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), std::greater<>());
    StageId s = ready.back();
    ready.pop_back();
    sg.topoOrder.push_back(s);
    for (const StageEdge &e : sg.outEdges(s))
      if (--indeg[e.dst] == 0) {
        ready.push_back(e.dst);
        std::push_heap(ready.begin(), ready.end(), std::greater<>());
      }
  }
  if (sg.topoOrder.size() == numStages)
    return Error::success();
  // Walk back along in-edges between stages left over; every one of them
  // has such an in-edge, so the walk closes a cycle.
  std::vector<std::vector<StageId>> predsLeft(numStages);
  for (const StageEdge &e : sg.edges)
    if (indeg[e.dst] > 0 && indeg[e.src] > 0)
      predsLeft[e.dst].push_back(e.src);
  StageId s = 0;
  while (indeg[s] == 0)
    ++s;
  std::vector<int> pos(numStages, -1);
  std::vector<StageId> walk;
  while (pos[s] < 0) {
    pos[s] = int(walk.size());
    walk.push_back(s);
    s = predsLeft[s].front();
  }
  std::string cycle;
  for (size_t i = walk.size(); i-- > size_t(pos[s]);)
    cycle += "stage " + std::to_string(walk[i]) + " -> ";
  cycle += "stage " + std::to_string(walk.back());
  return makeError("stage graph has a cycle: " + cycle);
}

std::vector<size_t>
ftpipe::partition::forwardingSources(llvm::ArrayRef<DeviceId> readerDevices) {
  std::vector<size_t> source(readerDevices.size(), ~size_t(0));
  for (size_t i = 1; i < readerDevices.size(); ++i) {
    source[i] = i - 1;
    for (size_t j = i; j-- > 0;)
      if (readerDevices[j] == readerDevices[i]) {
        source[i] = j;
        break;
      }
  }
  return source;
}

Expected<StageGraph>
ftpipe::partition::buildStageGraph(const Graph &graph, const Hardware &hw,
                                   const Plan &plan,
                                   const ObjectiveConfig &config) {
  if (Error err = config.validate())
    return std::move(err);
  if (Error err = checkPlanShape(graph, hw, plan))
    return std::move(err);
  size_t numStages = plan.numStages();
  std::vector<double> speed = deviceSpeeds(hw, config);

  StageGraph sg;
  sg.device = plan.stageDevice;
  sg.fwdMs.assign(numStages, 0.0);
  sg.bwdMs.assign(numStages, 0.0);
  sg.recomputeMs.assign(numStages, 0.0);
  sg.inputMs.assign(numStages, 0.0);
  sg.weightMs.assign(numStages, 0.0);
  sg.weightBufferBytesPerMicroBatch.assign(numStages, 0);
  sg.keptBytesPerMicroBatch.assign(numStages, 0);
  sg.recomputePeakBytes.assign(numStages, 0);
  Expected<NodeStages> stagesOf = NodeStages::create(graph, plan);
  if (!stagesOf)
    return stagesOf.takeError();
  std::vector<uint64_t> actBytes(numStages, 0);
  for (NodeId n = 0; n < graph.numNodes(); ++n) {
    const NodeCost &c = graph.cost(n);
    for (StageId s : (*stagesOf)(n)) {
      sg.fwdMs[s] += c.fwdMs;
      sg.bwdMs[s] += c.bwdMs;
      sg.weightMs[s] += c.bwdWeightMs;
      actBytes[s] += c.actBytes;
      // What a split backward's I passes to W for this op: the activations
      // its parameters' gradients read and its result's gradient.
      if (c.bwdWeightMs > 0)
        sg.weightBufferBytesPerMicroBatch[s] += c.actBytes + c.outBytes;
    }
  }
  for (StageId s = 0; s < numStages; ++s) {
    double scale = 1.0 / speed[sg.device[s]];
    sg.fwdMs[s] *= scale;
    sg.bwdMs[s] *= scale;
    sg.weightMs[s] = std::min(sg.weightMs[s] * scale, sg.bwdMs[s]);
    sg.inputMs[s] = sg.bwdMs[s] - sg.weightMs[s];
    if (stageRecomputes(plan, config, s)) {
      sg.recomputeMs[s] = sg.fwdMs[s];
      sg.recomputePeakBytes[s] = actBytes[s];
    } else {
      sg.keptBytesPerMicroBatch[s] = actBytes[s];
    }
  }

  // Values crossing stages: once per (value, destination stage); the
  // results of a forwarded node first as if sent from their producer to
  // every reader too, then rerouted along their readers below.
  llvm::DenseMap<uint64_t, uint32_t> edgeIndex;
  auto edgeAt = [&](StageId src, StageId dst) -> StageEdge & {
    uint64_t key = (uint64_t(src) << 32) | dst;
    auto [it, inserted] = edgeIndex.try_emplace(key, sg.edges.size());
    if (inserted)
      sg.edges.push_back({src, dst});
    return sg.edges[it->second];
  };
  auto addTraffic = [&](StageEdge &e, ValueId v) {
    e.fwdBytes += graph.valueBytes(v);
    ++e.fwdTensors;
    if (graph.valueNeedsGrad(v)) {
      e.bwdBytes += graph.valueBytes(v);
      ++e.bwdTensors;
    }
  };
  auto removeTraffic = [&](StageEdge &e, ValueId v) {
    e.fwdBytes -= graph.valueBytes(v);
    --e.fwdTensors;
    if (graph.valueNeedsGrad(v)) {
      e.bwdBytes -= graph.valueBytes(v);
      --e.bwdTensors;
    }
  };
  // Forwarded values and the stages reading them, producer's excluded.
  std::vector<std::pair<ValueId, std::vector<StageId>>> forwarded;
  std::vector<uint32_t> seen(numStages, ~0u);
  for (ValueId v = 0; v < graph.numValues(); ++v) {
    NodeId p = graph.producer(v);
    // A replicated node's results are made where they are read.
    if (p != kNoNode && plan.replicated(p))
      continue;
    StageId src = p == kNoNode ? ~StageId(0) : plan.nodeStage[p];
    std::vector<StageId> *readers = nullptr;
    if (p != kNoNode && plan.forwarded(p))
      readers = &forwarded.emplace_back(v, std::vector<StageId>()).second;
    for (NodeId c : graph.consumers(v))
      for (StageId dst : (*stagesOf)(c)) {
        if (dst == src || seen[dst] == v)
          continue;
        seen[dst] = v;
        // Stage inputs are what recomputation keeps (graph inputs included).
        if (stageRecomputes(plan, config, dst))
          sg.keptBytesPerMicroBatch[dst] += graph.valueBytes(v);
        if (p == kNoNode)
          continue;
        addTraffic(edgeAt(src, dst), v);
        if (readers)
          readers->push_back(dst);
      }
  }
  auto sortEdges = [&] {
    llvm::sort(sg.edges, [](const StageEdge &a, const StageEdge &b) {
      return std::make_pair(a.src, a.dst) < std::make_pair(b.src, b.dst);
    });
  };
  sortEdges();
  if (Error err = orderStages(sg))
    return std::move(err);

  if (!forwarded.empty()) {
    // Reroute each forwarded value: producer -> first reader, and each later
    // reader (in the order the stages run) from an earlier one
    // (forwardingSources). Each reader must be reachable from the one
    // before, so the new edges add no dependency (no cycle, the same
    // heights) and the edges they replace follow from them.
    std::vector<llvm::BitVector> reach = sg.reachability();
    std::vector<uint32_t> position(numStages, 0);
    for (auto [i, s] : llvm::enumerate(sg.topoOrder))
      position[s] = uint32_t(i);
    edgeIndex.clear();
    for (auto [i, e] : llvm::enumerate(sg.edges))
      edgeIndex[(uint64_t(e.src) << 32) | e.dst] = uint32_t(i);
    for (auto &[v, readers] : forwarded) {
      llvm::sort(readers, [&](StageId a, StageId b) {
        return position[a] < position[b];
      });
      StageId src = plan.nodeStage[graph.producer(v)];
      bool grad = graph.valueNeedsGrad(v);
      if (grad) {
        StageEdge &first = edgeAt(src, readers.front());
        first.firstHopGradBytes += graph.valueBytes(v);
        ++first.firstHopGradTensors;
      }
      std::vector<DeviceId> devices;
      for (StageId r : readers)
        devices.push_back(sg.device[r]);
      std::vector<size_t> source = forwardingSources(devices);
      for (size_t i = 1; i < readers.size(); ++i) {
        if (!reach[readers[i - 1]].test(readers[i]))
          return makeError(llvm::formatv(
              "value {0} of node {1} is forwarded, but stages {2} and {3} "
              "that read it do not depend on each other",
              v, graph.producer(v), readers[i - 1], readers[i]));
        removeTraffic(edgeAt(src, readers[i]), v);
        StageEdge &pass = edgeAt(readers[source[i]], readers[i]);
        addTraffic(pass, v);
        pass.passBytes += graph.valueBytes(v);
        ++pass.passTensors;
        if (grad) {
          pass.passGradBytes += graph.valueBytes(v);
          ++pass.passGradTensors;
        }
      }
    }
    llvm::erase_if(sg.edges,
                   [](const StageEdge &e) { return e.fwdTensors == 0; });
    sortEdges();
    if (Error err = orderStages(sg))
      return std::move(err);
  }

  sg.height.assign(numStages, 0);
  for (size_t i = numStages; i-- > 0;) {
    StageId s = sg.topoOrder[i];
    for (const StageEdge &e : sg.outEdges(s))
      sg.height[s] = std::max(sg.height[s], sg.height[e.dst] + 1);
  }
  return std::move(sg);
}

Expected<PlanMetrics>
ftpipe::partition::evaluatePlan(const Graph &graph, const Hardware &hw,
                                const Plan &plan,
                                const ObjectiveConfig &config) {
  Expected<StageGraph> sgOr = buildStageGraph(graph, hw, plan, config);
  if (!sgOr)
    return sgOr.takeError();
  const StageGraph &sg = *sgOr;
  size_t numStages = sg.numStages(), numDevices = hw.numDevices();

  PlanMetrics m;
  m.stages.resize(numStages);
  m.devices.resize(numDevices);
  m.memoryInputs.resize(numDevices);
  for (StageId s = 0; s < numStages; ++s) {
    StageMetrics &st = m.stages[s];
    st.device = sg.device[s];
    st.computeMs = sg.fwdMs[s] + sg.bwdMs[s] + sg.recomputeMs[s];
    st.inFlight = microBatchesInFlight(sg.height[s], config);
    st.recompute = stageRecomputes(plan, config, s);
    st.activationBytes = schedule::stageActivationBytes(
                             st.inFlight, sg.keptBytesPerMicroBatch[s],
                             sg.weightBufferBytesPerMicroBatch[s],
                             config.memoryKind(), config.microBatches) +
                         sg.recomputePeakBytes[s];
  }
  for (const StageEdge &e : sg.edges) {
    if (sg.device[e.src] == sg.device[e.dst])
      continue;
    double fwd = sg.fwdTransferMs(e, hw), bwd = sg.bwdTransferMs(e, hw);
    StageMetrics &src = m.stages[e.src], &dst = m.stages[e.dst];
    src.commFwdMs += fwd;
    dst.commFwdMs += fwd;
    src.commBwdMs += bwd;
    dst.commBwdMs += bwd;
    src.sentBytes += e.fwdBytes;
    src.receivedBytes += e.bwdBytes;
    dst.receivedBytes += e.fwdBytes;
    dst.sentBytes += e.bwdBytes;
  }
  for (StageId s = 0; s < numStages; ++s) {
    StageMetrics &st = m.stages[s];
    st.exposedCommMs = std::max(0.0, st.commFwdMs - st.computeMs) +
                       std::max(0.0, st.commBwdMs - st.computeMs);
    st.loadMs = st.computeMs + st.exposedCommMs;
    DeviceMetrics &d = m.devices[st.device];
    d.computeMs += st.computeMs;
    d.exposedCommMs += st.exposedCommMs;
    d.loadMs += st.loadMs;
    ++d.numStages;
    m.memoryInputs[st.device].stages.push_back(
        {sg.height[s], sg.keptBytesPerMicroBatch[s], sg.recomputePeakBytes[s],
         sg.weightBufferBytesPerMicroBatch[s]});
    d.sentBytes += st.sentBytes;
    d.receivedBytes += st.receivedBytes;
  }

  // Parameters: once per device holding a reader, by the height of its
  // tallest reader stage there (which decides its stashed versions).
  Expected<NodeStages> stagesOf = NodeStages::create(graph, plan);
  if (!stagesOf)
    return stagesOf.takeError();
  // Its gradient is the tallest reader's there to all-reduce: the one
  // whose backward, upstream of the others, completes it.
  std::vector<uint32_t> seen(numDevices, ~0u), tallest(numDevices, 0);
  std::vector<StageId> tallestStage(numDevices, 0);
  std::vector<DeviceId> devs;
  for (ParamId p = 0; p < graph.numParams(); ++p) {
    devs.clear();
    for (NodeId r : graph.paramReaders(p))
      for (StageId s : (*stagesOf)(r)) {
        DeviceId d = sg.device[s];
        if (seen[d] != p) {
          seen[d] = p;
          tallest[d] = sg.height[s];
          tallestStage[d] = s;
          devs.push_back(d);
        } else if (sg.height[s] > tallest[d]) {
          tallest[d] = sg.height[s];
          tallestStage[d] = s;
        }
      }
    for (DeviceId d : devs) {
      if (graph.paramFrozen(p)) {
        m.memoryInputs[d].frozenParamBytes += graph.paramBytes(p);
        continue;
      }
      m.stages[tallestStage[d]].gradBytes += graph.paramBytes(p);
      std::vector<uint64_t> &byHeight = m.memoryInputs[d].paramBytesByHeight;
      if (byHeight.size() <= tallest[d])
        byHeight.resize(tallest[d] + 1, 0);
      byHeight[tallest[d]] += graph.paramBytes(p);
    }
  }
  schedule::TrainingSetup setup = trainingSetupOf(config);
  double maxLoad = -1.0, sumLoad = 0.0;
  for (DeviceId d = 0; d < numDevices; ++d) {
    DeviceMetrics &dm = m.devices[d];
    schedule::DeviceMemoryInputs &inputs = m.memoryInputs[d];
    inputs.reservedBytes = config.reservedBytesPerDevice;
    inputs.budgetBytes = hw.device(d).memoryBytes;
    schedule::DeviceMemory memory = schedule::deviceMemory(inputs, setup);
    dm.paramBytes = memory.weightBytes;
    dm.gradBytes = memory.gradientBytes;
    dm.optimizerBytes = memory.optimizerBytes;
    dm.stashBytes = memory.stashBytes;
    dm.activationBytes = memory.activationBytes;
    dm.memoryBytes = memory.totalBytes();
    dm.budgetBytes = memory.budgetBytes;
    if (!memory.fits())
      m.memoryFits = false;
    sumLoad += dm.loadMs;
    if (dm.loadMs > maxLoad) {
      maxLoad = dm.loadMs;
      m.bottleneckDevice = d;
    }
  }
  m.asyncMsPerMicroBatch = maxLoad;
  double mean = sumLoad / double(numDevices);
  m.imbalance = mean > 0.0 ? maxLoad / mean : 1.0;

  std::vector<double> speed = deviceSpeeds(hw, config);
  double speedSum = 0.0, speedMax = 0.0;
  for (double s : speed) {
    speedSum += s;
    speedMax = std::max(speedMax, s);
  }
  double total = 0.0, largest = 0.0;
  bool boundRecomputes = config.recompute && plan.stageRecompute.empty();
  for (NodeId n = 0; n < graph.numNodes(); ++n) {
    const NodeCost &c = graph.cost(n);
    double t = c.fwdMs + c.bwdMs + (boundRecomputes ? c.fwdMs : 0.0);
    total += t;
    largest = std::max(largest, t);
    for (StageId s : (*stagesOf)(n)) {
      if (stageRecomputes(plan, config, s))
        m.totalComputeMs += c.fwdMs;
      m.totalComputeMs += c.fwdMs + c.bwdMs;
    }
  }
  m.lowerBoundMs = std::max(total / speedSum, largest / speedMax);
  return std::move(m);
}
