//===- Replication.cpp - Cheap values made where they are read ----------===//
//
// chooseReplicatedNodes picks values made from graph inputs and parameters
// alone that are cheaper to recompute than to send; the planning graph makes
// them free, so that any partitioner plans as if every stage made its own
// copy; solveWithReplication maps the plan back and checks it on the real
// graph.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Replication.h"
#include "FTPipe/Partition/Forwarding.h"
#include "FTPipe/Partition/Refinement.h"
#include "FTPipe/Partition/Simulator.h"
#include "FTPipe/Partition/Verify.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <set>

using namespace ftpipe::partition;
using llvm::Error;
using llvm::Expected;

/// Time to send `bytes` as one tensor over the slowest link between two
/// distinct devices.
static double slowestTransferMs(const Hardware &hw, uint64_t bytes) {
  double slowest = 0.0;
  for (DeviceId a = 0; a < hw.numDevices(); ++a)
    for (DeviceId b = 0; b < hw.numDevices(); ++b)
      if (a != b)
        slowest = std::max(slowest, hw.transferMs(bytes, a, b));
  return slowest;
}

std::vector<bool>
ftpipe::partition::chooseReplicatedNodes(const Graph &graph, const Hardware &hw,
                                         const ObjectiveConfig &config) {
  size_t numNodes = graph.numNodes();
  std::vector<bool> chosen(numNodes, false);
  if (hw.numDevices() < 2)
    return chosen;
  // Nodes whose every result is read (a result the function returns stays
  // where it is made).
  std::vector<bool> can(numNodes, false);
  for (NodeId n = 0; n < numNodes; ++n)
    can[n] = !graph.outputs(n).empty() &&
             llvm::all_of(graph.outputs(n), [&](ValueId v) {
               return !graph.consumers(v).empty();
             });
  unsigned stateFactor = optimizerStateFactor(config.optimizer);
  std::vector<uint32_t> visited(numNodes, ~0u);
  std::vector<NodeId> closure, work;
  std::set<ParamId> params;
  for (ValueId v = 0; v < graph.numValues(); ++v) {
    NodeId root = graph.producer(v);
    // Nothing to save on a value of no bytes (a constant: every stage makes
    // its own anyway).
    if (root == kNoNode || !can[root] || graph.valueBytes(v) == 0 ||
        llvm::all_of(graph.consumers(v), [&](NodeId c) { return chosen[c]; }))
      continue;
    // Everything the value is computed from, up to the graph inputs; given
    // up as soon as it costs more than sending the value, or its
    // parameters weigh more than the value.
    uint64_t bytes = graph.valueBytes(v);
    double budgetMs = slowestTransferMs(hw, bytes);
    closure.clear();
    params.clear();
    work.assign(1, root);
    visited[root] = v;
    double ms = 0.0;
    uint64_t paramBytes = 0;
    bool cheap = true;
    while (cheap && !work.empty()) {
      NodeId n = work.back();
      work.pop_back();
      closure.push_back(n);
      ms += graph.cost(n).fwdMs + graph.cost(n).bwdMs;
      for (ParamId p : graph.params(n))
        if (params.insert(p).second)
          paramBytes += graph.paramBytes(p) * (2 + stateFactor);
      cheap = can[n] && ms <= budgetMs && paramBytes <= bytes;
      for (ValueId in : graph.inputs(n)) {
        NodeId p = graph.producer(in);
        if (p != kNoNode && visited[p] != v) {
          visited[p] = v;
          work.push_back(p);
        }
      }
    }
    if (!cheap)
      continue;
    for (NodeId n : closure)
      chosen[n] = true;
  }
  return chosen;
}

Expected<Graph> ftpipe::partition::replicationPlanningGraph(
    const Graph &graph, const std::vector<bool> &replicated) {
  GraphBuilder b;
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    b.addNode(graph.scope(n), graph.type(n),
              replicated[n] ? NodeCost{} : graph.cost(n));
  for (ParamId p = 0; p < graph.numParams(); ++p)
    b.addParam(graph.paramName(p), graph.paramBytes(p), graph.paramFrozen(p));
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    if (!replicated[n])
      for (ParamId p : graph.params(n))
        b.addParamUse(n, p);
  for (ValueId v = 0; v < graph.numValues(); ++v) {
    NodeId p = graph.producer(v);
    if (p != kNoNode && replicated[p])
      b.addValue(kNoNode, 0, graph.consumers(v), /*needsGrad=*/false);
    else
      b.addValue(p, graph.valueBytes(v), graph.consumers(v),
                 graph.valueNeedsGrad(v));
  }
  return b.build();
}

/// Marks `replicated` in `plan` (made for the planning graph), places every
/// replicated node nominally in the first stage computing it, and drops the
/// stages left without a node of their own.
static Expected<Plan> mapPlanBack(const Graph &graph, Plan plan,
                                  const std::vector<bool> &replicated) {
  plan.nodeReplicated = replicated;
  Expected<std::vector<std::vector<StageId>>> replicas =
      replicaStages(graph, plan);
  if (!replicas)
    return replicas.takeError();
  std::vector<bool> used(plan.numStages(), false);
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    if (!replicated[n])
      used[plan.nodeStage[n]] = true;
  std::vector<StageId> renumber(plan.numStages(), 0);
  Plan out;
  for (StageId s = 0; s < plan.numStages(); ++s) {
    renumber[s] = StageId(out.stageDevice.size());
    if (!used[s])
      continue;
    out.stageDevice.push_back(plan.stageDevice[s]);
    if (!plan.stageRecompute.empty())
      out.stageRecompute.push_back(plan.stageRecompute[s]);
  }
  out.nodeStage.resize(graph.numNodes());
  for (NodeId n = 0; n < graph.numNodes(); ++n) {
    const std::vector<StageId> &at = (*replicas)[n];
    StageId s = replicated[n] && !at.empty() ? at.front() : plan.nodeStage[n];
    // A replicated node computed nowhere keeps a stage that exists.
    out.nodeStage[n] = used[s] ? renumber[s] : 0;
  }
  out.nodeReplicated = replicated;
  return std::move(out);
}

Expected<Plan> ftpipe::partition::solveWithReplication(
    const Graph &graph, const Hardware &hw, const ObjectiveConfig &config,
    GraphPlanSolver solve, std::optional<schedule::Kind> syncSchedule) {
  std::vector<bool> replicated = chooseReplicatedNodes(graph, hw, config);
  if (llvm::none_of(replicated, [](bool r) { return r; }))
    return solve(graph, config);
  Expected<Graph> planning = replicationPlanningGraph(graph, replicated);
  if (!planning)
    return planning.takeError();
  // What the planning graph leaves out, reserved on every device: each
  // replicated node's activations (kept or rebuilt), its parameters with
  // their gradients and optimizer state, and the graph inputs they read,
  // kept under recomputation by every stage computing them for each of its
  // micro-batches in flight (at most 4P stages of at most 4P micro-batches:
  // Mixed-Pipe's deepest plans).
  ObjectiveConfig reserved = config;
  std::set<ParamId> params;
  std::set<ValueId> inputs;
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    if (replicated[n]) {
      reserved.reservedBytesPerDevice += graph.cost(n).actBytes;
      params.insert(graph.params(n).begin(), graph.params(n).end());
      for (ValueId v : graph.inputs(n))
        if (graph.producer(v) == kNoNode)
          inputs.insert(v);
    }
  uint64_t deepest = 16 * uint64_t(hw.numDevices()) * hw.numDevices();
  for (ValueId v : inputs)
    reserved.reservedBytesPerDevice += graph.valueBytes(v) * deepest;
  for (ParamId p : params)
    reserved.reservedBytesPerDevice +=
        graph.paramBytes(p) * (2 + optimizerStateFactor(config.optimizer));

  Expected<Plan> plain = solve(graph, config);
  Expected<Plan> plan = solve(*planning, reserved);
  if (!plan) {
    llvm::consumeError(plan.takeError());
    return plain;
  }
  Expected<Plan> mapped = mapPlanBack(graph, std::move(*plan), replicated);
  if (!mapped) {
    llvm::consumeError(plain.takeError());
    return mapped.takeError();
  }
  if (Error invalid = verifyPlan(graph, hw, *mapped, config)) {
    llvm::consumeError(std::move(invalid));
    return plain;
  }
  if (!plain) {
    llvm::consumeError(plain.takeError());
    return mapped;
  }
  // With a synchronous schedule to run, the shorter step under it.
  if (syncSchedule) {
    double mappedStep =
        synchronousStepMs(graph, hw, *mapped, config, *syncSchedule);
    double plainStep =
        synchronousStepMs(graph, hw, *plain, config, *syncSchedule);
    if (mappedStep < plainStep * (1 - 1e-9))
      return mapped;
    if (plainStep < mappedStep * (1 - 1e-9))
      return plain;
  }
  // The faster plan by the objective (between equals, the one whose busiest
  // sender sends less), as long as it does not simulate slower either.
  Expected<PlanMetrics> plainM = evaluatePlan(graph, hw, *plain, config);
  if (!plainM)
    return plainM.takeError();
  Expected<PlanMetrics> mappedM = evaluatePlan(graph, hw, *mapped, config);
  if (!mappedM)
    return mappedM.takeError();
  auto maxSent = [](const PlanMetrics &m) {
    uint64_t sent = 0;
    for (const DeviceMetrics &d : m.devices)
      sent = std::max(sent, d.sentBytes);
    return sent;
  };
  double a = mappedM->asyncMsPerMicroBatch, b = plainM->asyncMsPerMicroBatch;
  double eps = 1e-9 * std::max({1.0, a, b});
  if (a > b + eps || (a >= b - eps && maxSent(*mappedM) >= maxSent(*plainM)))
    return plain;
  Expected<SimResult> mappedSim =
      simulatePlan(graph, hw, *mapped, config, /*recordEvents=*/false);
  if (!mappedSim)
    return mappedSim.takeError();
  Expected<SimResult> plainSim =
      simulatePlan(graph, hw, *plain, config, /*recordEvents=*/false);
  if (!plainSim)
    return plainSim.takeError();
  if (mappedSim->msPerMicroBatch > plainSim->msPerMicroBatch * (1 + 1e-9))
    return plain;
  return mapped;
}

Expected<Plan> ftpipe::partition::solvePartitioning(
    RecomputeMode mode, bool replicate, bool forward, const Graph &graph,
    const Hardware &hw, const ObjectiveConfig &config, GraphPlanSolver solve,
    bool tryKeeping, std::optional<schedule::Kind> syncSchedule) {
  Expected<Plan> plan = solveWithRecomputation(
      mode, graph, hw, config,
      [&](const ObjectiveConfig &c) -> Expected<Plan> {
        if (replicate)
          return solveWithReplication(graph, hw, c, solve, syncSchedule);
        return solve(graph, c);
      },
      tryKeeping);
  if (!plan)
    return plan;
  // Any partitioner may cut between a weight's reshape or folded transpose
  // and its matmul: a free cut by its loads, but a weight sent every
  // micro-batch, and a transpose that code generation then copies.
  Expected<size_t> attached = attachFreeOps(graph, hw, *plan, config);
  if (!attached)
    return attached.takeError();
  if (!forward)
    return plan;
  return forwardSharedValues(graph, hw, std::move(*plan), config);
}
