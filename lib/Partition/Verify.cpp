//===- Verify.cpp - Independent plan verifier ---------------------------===//
//
// Deliberately written differently from Objective.cpp (ordered sets, a
// recursive-style DFS with colours, per-device memory summed from node
// lists), so that the two catch each other's mistakes in property tests.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Verify.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <set>

using namespace ftpipe::partition;
using llvm::Error;

static Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

static std::string gib(uint64_t bytes) {
  return llvm::formatv("{0:F2} GiB", double(bytes) / double(1ull << 30)).str();
}

Error ftpipe::partition::verifyPlan(const Graph &graph, const Hardware &hw,
                                    const Plan &plan,
                                    const ObjectiveConfig &config,
                                    const VerifyOptions &options) {
  if (Error err = config.validate())
    return err;
  size_t numNodes = graph.numNodes(), numStages = plan.stageDevice.size();
  if (plan.nodeStage.size() != numNodes)
    return makeError(
        llvm::formatv("plan places {0} nodes but the graph has {1}",
                      plan.nodeStage.size(), numNodes));
  if (!plan.stageRecompute.empty() && plan.stageRecompute.size() != numStages)
    return makeError(llvm::formatv("plan chooses recomputation for {0} stages "
                                   "but has {1}",
                                   plan.stageRecompute.size(), numStages));
  if (!plan.nodeReplicated.empty() && plan.nodeReplicated.size() != numNodes)
    return makeError(llvm::formatv("plan chooses replication for {0} nodes "
                                   "but the graph has {1}",
                                   plan.nodeReplicated.size(), numNodes));
  if (!plan.nodeForwarded.empty() && plan.nodeForwarded.size() != numNodes)
    return makeError(llvm::formatv("plan chooses forwarding for {0} nodes "
                                   "but the graph has {1}",
                                   plan.nodeForwarded.size(), numNodes));
  auto replicated = [&](NodeId n) {
    return !plan.nodeReplicated.empty() && plan.nodeReplicated[n];
  };
  // members: the nodes a stage owns; computed: those it runs, replicated
  // nodes included (found by walking up from every owned node).
  std::vector<std::vector<NodeId>> members(numStages);
  std::vector<std::set<NodeId>> computed(numStages);
  for (NodeId n = 0; n < numNodes; ++n) {
    if (plan.nodeStage[n] >= numStages)
      return makeError(llvm::formatv(
          "node {0} ('{1}') is in stage {2}, but the plan has {3} stages", n,
          graph.scope(n), plan.nodeStage[n], numStages));
    if (replicated(n)) {
      for (ValueId v : graph.inputs(n)) {
        NodeId p = graph.producer(v);
        if (p != kNoNode && !replicated(p))
          return makeError(llvm::formatv(
              "node {0} ('{1}') is replicated but reads value {2}, which "
              "node {3} sends from stage {4}",
              n, graph.scope(n), v, p, plan.nodeStage[p]));
      }
      continue;
    }
    StageId s = plan.nodeStage[n];
    members[s].push_back(n);
    computed[s].insert(n);
    std::vector<NodeId> work = {n};
    while (!work.empty()) {
      NodeId m = work.back();
      work.pop_back();
      for (ValueId v : graph.inputs(m)) {
        NodeId p = graph.producer(v);
        if (p != kNoNode && replicated(p) && computed[s].insert(p).second)
          work.push_back(p);
      }
    }
  }
  for (size_t s = 0; s < numStages; ++s) {
    if (plan.stageDevice[s] >= hw.numDevices())
      return makeError(llvm::formatv(
          "stage {0} is on device {1}, but hardware '{2}' has {3} devices", s,
          plan.stageDevice[s], hw.name(), hw.numDevices()));
    if (members[s].empty() && !options.allowEmptyStages)
      return makeError(llvm::formatv("stage {0} holds no node", s));
  }

  // Stage graph, remembering one witness value per stage edge.
  struct Witness {
    ValueId value;
    NodeId from, to;
  };
  std::map<std::pair<StageId, StageId>, Witness> stageEdges;
  for (ValueId v = 0; v < graph.numValues(); ++v) {
    NodeId p = graph.producer(v);
    if (p == kNoNode || replicated(p))
      continue;
    for (NodeId c : graph.consumers(v)) {
      StageId a = plan.nodeStage[p], b = plan.nodeStage[c];
      if (a != b)
        stageEdges.emplace(std::make_pair(a, b), Witness{v, p, c});
    }
  }
  std::vector<std::vector<StageId>> succ(numStages);
  for (const auto &entry : stageEdges)
    succ[entry.first.first].push_back(entry.first.second);

  // DFS with colours; the grey path is the stack.
  enum Colour : uint8_t { White, Grey, Black };
  std::vector<Colour> colour(numStages, White);
  std::vector<uint32_t> height(numStages, 0);
  for (StageId root = 0; root < numStages; ++root) {
    if (colour[root] != White)
      continue;
    std::vector<std::pair<StageId, size_t>> stack = {{root, 0}};
    colour[root] = Grey;
    while (!stack.empty()) {
      auto &[s, next] = stack.back();
      if (next < succ[s].size()) {
        StageId t = succ[s][next++];
        if (colour[t] == Grey) {
          std::string cycle;
          size_t i = 0;
          while (stack[i].first != t)
            ++i;
          for (; i < stack.size(); ++i)
            cycle += "stage " + std::to_string(stack[i].first) + " -> ";
          cycle += "stage " + std::to_string(t);
          StageId last = stack.back().first;
          const Witness &w = stageEdges.at({last, t});
          return makeError(llvm::formatv(
              "stage graph has a cycle: {0} (value {1} flows from node {2} in "
              "stage {3} to node {4} in stage {5})",
              cycle, w.value, w.from, last, w.to, t));
        }
        if (colour[t] == White) {
          colour[t] = Grey;
          stack.push_back({t, 0});
        }
        continue;
      }
      for (StageId t : succ[s])
        height[s] = std::max(height[s], height[t] + 1);
      colour[s] = Black;
      stack.pop_back();
    }
  }

  // Forwarded values: the stages reading one (other than its producer's)
  // must run one after another, i.e. among k of them, one reaches the k - 1
  // others, one k - 2, ..., one none (searched here stage by stage).
  auto reachable = [&](StageId from) {
    std::set<StageId> seen;
    std::vector<StageId> work = {from};
    while (!work.empty()) {
      StageId s = work.back();
      work.pop_back();
      for (StageId t : succ[s])
        if (seen.insert(t).second)
          work.push_back(t);
    }
    return seen;
  };
  for (NodeId n = 0; n < plan.nodeForwarded.size(); ++n) {
    if (!plan.nodeForwarded[n])
      continue;
    if (replicated(n))
      return makeError(
          llvm::formatv("node {0} ('{1}') is both replicated and forwarded", n,
                        graph.scope(n)));
    for (ValueId v : graph.outputs(n)) {
      std::set<StageId> readers;
      for (NodeId c : graph.consumers(v))
        if (plan.nodeStage[c] != plan.nodeStage[n])
          readers.insert(plan.nodeStage[c]);
      std::set<size_t> counts;
      for (StageId r : readers) {
        std::set<StageId> after = reachable(r);
        counts.insert(llvm::count_if(
            readers, [&](StageId t) { return after.count(t) > 0; }));
      }
      if (counts.size() != readers.size() ||
          (!counts.empty() && *counts.rbegin() != readers.size() - 1)) {
        std::string list;
        for (StageId r : readers)
          list += (list.empty() ? "" : ", ") + std::to_string(r);
        return makeError(llvm::formatv(
            "node {0} ('{1}') is forwarded, but the stages reading value {2} "
            "({3}) do not run one after another",
            n, graph.scope(n), v, list));
      }
    }
  }
  if (!options.checkMemory)
    return Error::success();

  // Memory, device by device, from the member lists.
  unsigned state = optimizerStateFactor(config.optimizer);
  for (DeviceId d = 0; d < hw.numDevices(); ++d) {
    std::map<ParamId, uint32_t> paramVersions; // param -> extra versions
    uint64_t activations = 0, recomputePeak = 0;
    std::vector<StageId> stagesHere;
    for (StageId s = 0; s < numStages; ++s) {
      if (plan.stageDevice[s] != d)
        continue;
      stagesHere.push_back(s);
      uint32_t inFlight = microBatchesInFlight(height[s], config);
      uint32_t extra = extraWeightVersions(inFlight, config);
      uint64_t act = 0, weightBuffer = 0;
      std::set<ValueId> inputs;
      for (NodeId n : computed[s]) {
        const NodeCost &cost = graph.cost(n);
        act += cost.actBytes;
        if (cost.bwdWeightMs > 0)
          weightBuffer += cost.actBytes + cost.outBytes;
        for (ParamId p : graph.params(n)) {
          auto [it, inserted] = paramVersions.emplace(p, extra);
          if (!inserted)
            it->second = std::max(it->second, extra);
        }
        for (ValueId v : graph.inputs(n)) {
          NodeId p = graph.producer(v);
          if (p == kNoNode || (!replicated(p) && plan.nodeStage[p] != s))
            inputs.insert(v);
        }
      }
      bool recompute = plan.stageRecompute.empty() ? config.recompute
                                                   : plan.stageRecompute[s];
      if (recompute) {
        uint64_t in = 0;
        for (ValueId v : inputs)
          in += graph.valueBytes(v);
        // A device runs one task at a time, so only one of its stages holds
        // a recomputed micro-batch at any moment.
        activations += schedule::stageActivationBytes(
            inFlight, in, weightBuffer, config.memoryKind(),
            config.microBatches);
        recomputePeak = std::max(recomputePeak, act);
      } else {
        activations += schedule::stageActivationBytes(
            inFlight, act, weightBuffer, config.memoryKind(),
            config.microBatches);
      }
    }
    activations += recomputePeak;
    uint64_t params = 0, stash = 0, frozen = 0;
    for (const auto &[p, extra] : paramVersions) {
      if (graph.paramFrozen(p)) {
        frozen += graph.paramBytes(p);
        continue;
      }
      params += graph.paramBytes(p);
      stash += graph.paramBytes(p) * extra;
    }
    uint64_t total = params * (2 + state) + frozen + stash + activations +
                     config.reservedBytesPerDevice;
    uint64_t budget = hw.device(d).memoryBytes;
    if (total > budget) {
      std::string stages;
      for (StageId s : stagesHere)
        stages += (stages.empty() ? "" : ", ") + std::to_string(s);
      return makeError(llvm::formatv(
          "device {0} needs {1} but has {2} (stages {3}: weights {4}, "
          "gradients {4}, optimizer state {5}, stashed weights {6}, "
          "activations {7}, reserved {8})",
          d, gib(total), gib(budget), stages, gib(params), gib(params * state),
          gib(stash), gib(activations), gib(config.reservedBytesPerDevice)));
    }
  }
  return Error::success();
}
