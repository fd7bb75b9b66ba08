//===- Assignment.cpp - Mixed-Pipe placement of blocks on devices ---------===//
//
// Largest-first placement (LPT) of coarse blocks under evaluatePlan's memory
// model, and a two-resource variant that balances compute and memory
// together (vector packing: each block goes where the larger of the
// device's compute share and memory share stays smallest); the better plan
// by evaluatePlan wins. Then stage formation: blocks are visited in topological
// order and each joins the most recent stage of its device that it can join
// without closing a cycle in the stage graph, or opens a new one. Paired
// runs cut the block order instead (assignPairedRuns) and form stages the
// same way.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Assignment.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <queue>

using namespace ftpipe::partition;
using llvm::Error;
using llvm::Expected;

static Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

static std::string gib(uint64_t bytes) {
  return llvm::formatv("{0:F2} GiB", double(bytes) / double(1ull << 30));
}

Error AssignmentConfig::validate() const {
  if (!(tieTolerance >= 0.0) || !std::isfinite(tieTolerance))
    return makeError(llvm::formatv(
        "assignment: tieTolerance must be finite and non-negative, got {0}",
        tieTolerance));
  return Error::success();
}

namespace {
/// Blocks of a coarse graph with predecessor lists and their members.
struct BlockInfo {
  std::vector<std::vector<std::pair<BlockId, uint64_t>>> preds, succs;
  std::vector<std::vector<ParamId>> params;
  std::vector<uint64_t> inBytes;
  std::vector<uint32_t> height;
};
} // namespace

static BlockInfo describeBlocks(const Graph &g, const CoarseGraph &cg) {
  size_t L = cg.numBlocks();
  BlockInfo info;
  info.preds.resize(L);
  info.succs.resize(L);
  info.params.resize(L);
  info.inBytes.assign(L, 0);
  info.height.assign(L, 0);
  for (BlockId b = 0; b < L; ++b) {
    llvm::ArrayRef<BlockId> s = cg.successors(b);
    llvm::ArrayRef<uint64_t> bytes = cg.successorBytes(b);
    for (size_t i = 0; i < s.size(); ++i) {
      info.succs[b].push_back({s[i], bytes[i]});
      info.preds[s[i]].push_back({b, bytes[i]});
      info.inBytes[s[i]] += bytes[i];
    }
  }
  for (size_t b = L; b-- > 0;)
    for (auto [s, bytes] : info.succs[b])
      info.height[b] = std::max(info.height[b], info.height[s] + 1);
  std::vector<uint32_t> seen(g.numParams(), ~0u);
  for (NodeId n = 0; n < g.numNodes(); ++n) {
    BlockId b = cg.nodeBlock[n];
    for (ParamId p : g.params(n))
      if (seen[p] != b) {
        seen[p] = b;
        info.params[b].push_back(p);
      }
  }
  return info;
}

/// True when merging block b into cluster c (all of whose blocks precede b
/// in topological order) keeps the cluster graph acyclic: no path from c to
/// b through another cluster. Paths from b back to c cannot exist, since
/// every merged cluster holds only blocks before b.
/// O(blocks + block edges).
static bool canJoin(const BlockInfo &info, llvm::ArrayRef<uint32_t> clusterOf,
                    llvm::ArrayRef<std::vector<BlockId>> members, uint32_t c,
                    BlockId b, std::vector<uint32_t> &stamp, uint32_t epoch) {
  std::vector<BlockId> stack(members[c].begin(), members[c].end());
  for (BlockId x : stack)
    stamp[x] = epoch;
  while (!stack.empty()) {
    BlockId x = stack.back();
    stack.pop_back();
    for (auto [y, bytes] : info.succs[x]) {
      if (y == b) {
        if (clusterOf[x] != c)
          return false; // c -> ... -> x -> b with x outside c
        continue;
      }
      if (y > b || stamp[y] == epoch)
        continue;
      stamp[y] = epoch;
      stack.push_back(y);
      // Every block of a cluster we enter is reachable through the merge.
      for (BlockId z : members[clusterOf[y]])
        if (stamp[z] != epoch) {
          stamp[z] = epoch;
          stack.push_back(z);
        }
    }
  }
  return true;
}

namespace {
/// What placement needs to know about the problem.
struct PlacementInput {
  const Graph &graph;
  const Hardware &hw;
  const CoarseGraph &coarse;
  const ObjectiveConfig &objective;
  const AssignmentConfig &config;
  const BlockInfo &info;
  std::vector<double> speed;
  /// Memory each device may fill while placing (its memory at first, less
  /// after an exact check found the estimate short).
  std::vector<uint64_t> budget;
};

/// How placeBlocks picks a device for a block.
enum class PlacementRule {
  /// The device that finishes the block first (the paper's LPT).
  EarliestFinish,
  /// The device whose larger share, compute (of the mean load) or memory (of
  /// its budget), is smallest once the block is there.
  BalancedShares,
};
} // namespace

static double blockCompute(const PlacementInput &in, BlockId b) {
  const CoarseBlock &blk = in.coarse.blocks[b];
  return blk.fwdMs + blk.bwdMs + (in.objective.recompute ? blk.fwdMs : 0.0);
}

namespace {
/// Memory a block brings to a device: activations kept per micro-batch in
/// flight, the micro-batch rebuilt under recomputation (a device rebuilds
/// one stage at a time, so only the largest of its blocks' counts), and the
/// bytes one copy of each of its parameters costs (weights, gradients,
/// optimizer state, stashed versions).
struct BlockMemory {
  uint64_t kept = 0;
  uint64_t recomputePeak = 0;
  uint64_t perParam = 0;
};
} // namespace

static BlockMemory blockMemoryTerms(const PlacementInput &in, BlockId b) {
  const CoarseBlock &blk = in.coarse.blocks[b];
  uint32_t inFlight = microBatchesInFlight(in.info.height[b], in.objective);
  BlockMemory memory;
  memory.perParam = 2 + optimizerStateFactor(in.objective.optimizer) +
                    extraWeightVersions(inFlight, in.objective);
  if (in.objective.recompute) {
    memory.kept = inFlight * in.info.inBytes[b];
    memory.recomputePeak = blk.actBytes;
  } else {
    memory.kept = inFlight * blk.actBytes;
  }
  return memory;
}

/// Places blocks in `order`, each on the device that finishes it first among
/// those with memory for it (ties: most bytes exchanged with blocks already
/// there, then lowest id).
static Expected<std::vector<DeviceId>>
placeBlocks(const PlacementInput &in, llvm::ArrayRef<BlockId> order,
            PlacementRule rule) {
  size_t L = in.coarse.numBlocks(), P = in.hw.numDevices();
  // The mean load a device would carry with compute spread evenly.
  double speedSum = 0.0, totalCompute = 0.0;
  for (double sp : in.speed)
    speedSum += sp;
  for (BlockId b = 0; b < L; ++b)
    totalCompute += blockCompute(in, b);
  double meanLoad = std::max(totalCompute / speedSum, 1e-300);
  std::vector<DeviceId> blockDevice(L, 0);
  std::vector<double> load(P, 0.0);
  std::vector<uint64_t> memory(P, in.objective.reservedBytesPerDevice);
  std::vector<uint64_t> peak(P, 0);
  std::vector<llvm::DenseSet<ParamId>> onDevice(P);
  std::vector<char> placed(L, 0);
  for (BlockId b : order) {
    const CoarseBlock &blk = in.coarse.blocks[b];
    BlockMemory terms = blockMemoryTerms(in, b);
    auto activations = [&](DeviceId d) {
      return terms.kept + (terms.recomputePeak > peak[d]
                               ? terms.recomputePeak - peak[d]
                               : 0);
    };
    int best = -1;
    double bestFinish = 0.0, bestShare = 0.0;
    uint64_t bestComm = 0, smallestNeed = ~uint64_t(0), mostFree = 0;
    for (DeviceId d = 0; d < P; ++d) {
      uint64_t need = activations(d);
      for (ParamId p : in.info.params[b])
        if (!onDevice[d].contains(p))
          need += in.graph.paramBytes(p) * terms.perParam;
      uint64_t budget = in.budget[d];
      smallestNeed = std::min(smallestNeed, need);
      mostFree =
          std::max(mostFree, budget > memory[d] ? budget - memory[d] : 0);
      if (memory[d] + need > budget)
        continue;
      double finish = load[d] + blockCompute(in, b) / in.speed[d];
      uint64_t comm = 0;
      for (auto [x, bytes] : in.info.preds[b])
        if (placed[x] && blockDevice[x] == d)
          comm += bytes;
      for (auto [x, bytes] : in.info.succs[b])
        if (placed[x] && blockDevice[x] == d)
          comm += bytes;
      // Under EarliestFinish the share is the finish time itself.
      double share = finish;
      if (rule == PlacementRule::BalancedShares)
        share = std::max(finish / meanLoad,
                         double(memory[d] + need) /
                             double(std::max<uint64_t>(budget, 1)));
      double tol = in.config.tieTolerance * std::max(share, bestShare);
      double ftol = in.config.tieTolerance * std::max(finish, bestFinish);
      bool take = best < 0 || share < bestShare - tol ||
                  (share <= bestShare + tol &&
                   (finish < bestFinish - ftol ||
                    (finish <= bestFinish + ftol && comm > bestComm)));
      if (take) {
        best = int(d);
        bestFinish = finish;
        bestShare = share;
        bestComm = comm;
      }
    }
    if (best < 0)
      return makeError(llvm::formatv(
          "block {0} ({1} ops) needs {2} but the device with the most free "
          "memory has {3}",
          b, blk.numNodes, gib(smallestNeed), gib(mostFree)));
    DeviceId d = DeviceId(best);
    blockDevice[b] = d;
    placed[b] = 1;
    load[d] = bestFinish;
    for (ParamId p : in.info.params[b])
      if (onDevice[d].insert(p).second)
        memory[d] += in.graph.paramBytes(p) * terms.perParam;
    memory[d] += activations(d);
    peak[d] = std::max(peak[d], terms.recomputePeak);
  }
  return blockDevice;
}

/// Memory a block needs on a device holding nothing else.
static uint64_t blockNeed(const PlacementInput &in, BlockId b) {
  BlockMemory terms = blockMemoryTerms(in, b);
  return terms.kept + terms.recomputePeak +
         in.coarse.blocks[b].paramBytes * terms.perParam;
}

/// EarliestFinish: largest compute first (the paper's rule); when memory runs
/// out before every block is placed, tries once more with the most memory
/// first, which packs tight instances that compute order cannot.
/// BalancedShares: blocks by their larger share, compute of the mean load or
/// memory of the mean budget, largest first.
static Expected<std::vector<DeviceId>> placeAll(const PlacementInput &in,
                                                PlacementRule rule) {
  size_t L = in.coarse.numBlocks(), P = in.hw.numDevices();
  std::vector<BlockId> order(L);
  for (BlockId b = 0; b < L; ++b)
    order[b] = b;
  std::vector<uint64_t> need(L);
  for (BlockId b = 0; b < L; ++b)
    need[b] = blockNeed(in, b);
  if (rule == PlacementRule::BalancedShares) {
    double compute = 0.0, memory = 0.0;
    for (BlockId b = 0; b < L; ++b)
      compute += blockCompute(in, b);
    for (uint64_t bytes : in.budget)
      memory += double(bytes);
    compute = std::max(compute / double(P), 1e-300);
    memory = std::max(memory / double(P), 1.0);
    std::vector<double> size(L);
    for (BlockId b = 0; b < L; ++b)
      size[b] =
          std::max(blockCompute(in, b) / compute, double(need[b]) / memory);
    llvm::stable_sort(order,
                      [&](BlockId a, BlockId b) { return size[a] > size[b]; });
    return placeBlocks(in, order, rule);
  }
  llvm::stable_sort(order, [&](BlockId a, BlockId b) {
    return blockCompute(in, a) > blockCompute(in, b);
  });
  Expected<std::vector<DeviceId>> placement = placeBlocks(in, order, rule);
  if (placement)
    return placement;
  llvm::stable_sort(order,
                    [&](BlockId a, BlockId b) { return need[a] > need[b]; });
  Expected<std::vector<DeviceId>> second = placeBlocks(in, order, rule);
  if (!second) {
    llvm::consumeError(second.takeError());
    return placement;
  }
  llvm::consumeError(placement.takeError());
  return second;
}

/// Stages: each block, in topological order, joins the latest stage of its
/// device it can join without closing a cycle; stages are numbered in a
/// topological order of the stage graph (smallest first block first).
static Expected<Plan> formStages(const PlacementInput &in,
                                 llvm::ArrayRef<DeviceId> blockDevice) {
  const Graph &graph = in.graph;
  const CoarseGraph &coarse = in.coarse;
  const BlockInfo &info = in.info;
  const AssignmentConfig &config = in.config;
  size_t L = coarse.numBlocks(), P = in.hw.numDevices();
  std::vector<uint32_t> clusterOf(L);
  std::vector<std::vector<uint32_t>> deviceClusters(P);
  std::vector<std::vector<BlockId>> members;
  std::vector<uint32_t> stamp(L, 0);
  uint32_t epoch = 0, numClusters = 0;
  for (BlockId b = 0; b < L; ++b) {
    DeviceId d = blockDevice[b];
    clusterOf[b] = ~0u;
    if (config.mergeStagesPerDevice)
      for (size_t i = deviceClusters[d].size(); i-- > 0;) {
        uint32_t c = deviceClusters[d][i];
        if (canJoin(info, clusterOf, members, c, b, stamp, ++epoch)) {
          clusterOf[b] = c;
          members[c].push_back(b);
          break;
        }
      }
    if (clusterOf[b] == ~0u) {
      clusterOf[b] = numClusters++;
      deviceClusters[d].push_back(clusterOf[b]);
      members.push_back({b});
    }
  }

  // Number stages in a topological order of the cluster graph (smallest
  // first block first).
  std::vector<std::vector<uint32_t>> succ(numClusters);
  std::vector<uint32_t> indeg(numClusters, 0), firstBlock(numClusters, ~0u);
  std::vector<DeviceId> clusterDevice(numClusters);
  for (BlockId b = 0; b < L; ++b) {
    firstBlock[clusterOf[b]] = std::min(firstBlock[clusterOf[b]], b);
    clusterDevice[clusterOf[b]] = blockDevice[b];
    for (auto [s, bytes] : info.succs[b])
      if (clusterOf[s] != clusterOf[b])
        succ[clusterOf[b]].push_back(clusterOf[s]);
  }
  for (auto &list : succ) {
    llvm::sort(list);
    list.erase(std::unique(list.begin(), list.end()), list.end());
    for (uint32_t c : list)
      ++indeg[c];
  }
  using Item = std::pair<uint32_t, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  for (uint32_t c = 0; c < numClusters; ++c)
    if (!indeg[c])
      ready.push({firstBlock[c], c});
  std::vector<StageId> stageOf(numClusters, ~0u);
  Plan plan;
  while (!ready.empty()) {
    uint32_t c = ready.top().second;
    ready.pop();
    stageOf[c] = plan.stageDevice.size();
    plan.stageDevice.push_back(clusterDevice[c]);
    for (uint32_t s : succ[c])
      if (--indeg[s] == 0)
        ready.push({firstBlock[s], s});
  }
  if (plan.stageDevice.size() != numClusters)
    return makeError("assignment: internal error, the stage graph has a cycle");
  plan.nodeStage.resize(graph.numNodes());
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    plan.nodeStage[n] = stageOf[clusterOf[coarse.nodeBlock[n]]];
  return plan;
}

/// The checks both placements make on their inputs.
static Error checkInputs(const Graph &graph, const CoarseGraph &coarse,
                         const ObjectiveConfig &objective,
                         const AssignmentConfig &config) {
  if (Error err = config.validate())
    return err;
  if (Error err = objective.validate())
    return err;
  if (coarse.nodeBlock.size() != graph.numNodes())
    return makeError(
        llvm::formatv("assignment: coarse graph maps {0} nodes, graph has {1}",
                      coarse.nodeBlock.size(), graph.numNodes()));
  return Error::success();
}

/// Each device's speed relative to device 0 (all 1 unless the objective
/// scales compute by device).
static std::vector<double> relativeSpeeds(const Hardware &hw,
                                          const ObjectiveConfig &objective) {
  std::vector<double> speed(hw.numDevices(), 1.0);
  if (objective.scaleComputeByDevice)
    for (DeviceId d = 0; d < hw.numDevices(); ++d)
      speed[d] = hw.device(d).tflops / hw.device(0).tflops;
  return speed;
}

namespace {
/// A device's load and memory as placement estimates them.
struct RunEstimate {
  double maxLoad = 0.0;
  double maxMemoryShare = 0.0;
  bool fits = true;
};
} // namespace

/// Paired runs for split point k: blocks [0, k) and [k, L) are each cut into
/// P contiguous runs at the quantiles of their compute (weighted by device
/// speed); device d gets run d of the first part and run P - 1 - d of the
/// second, so the devices that keep the most micro-batches in flight for the
/// first part keep the fewest for the second.
static std::vector<DeviceId> placePairedRuns(const PlacementInput &in,
                                             size_t k) {
  size_t L = in.coarse.numBlocks(), P = in.hw.numDevices();
  double speedSum = 0.0;
  for (double sp : in.speed)
    speedSum += sp;
  std::vector<DeviceId> blockDevice(L, 0);
  auto cut = [&](size_t lo, size_t hi, bool reversed) {
    double total = 0.0;
    for (size_t b = lo; b < hi; ++b)
      total += blockCompute(in, BlockId(b));
    double before = 0.0;
    size_t run = 0;
    double runEnd = total * in.speed[reversed ? P - 1 : 0] / speedSum;
    for (size_t b = lo; b < hi; ++b) {
      double c = blockCompute(in, BlockId(b));
      // A block goes to the run its compute's midpoint falls in.
      while (run + 1 < P && before + 0.5 * c > runEnd) {
        ++run;
        runEnd += total * in.speed[reversed ? P - 1 - run : run] / speedSum;
      }
      blockDevice[b] = DeviceId(reversed ? P - 1 - run : run);
      before += c;
    }
  };
  cut(0, k, /*reversed=*/false);
  cut(k, L, /*reversed=*/true);
  return blockDevice;
}

/// Per-device load and memory of a placement, as placeBlocks counts them.
static RunEstimate estimatePlacement(const PlacementInput &in,
                                     llvm::ArrayRef<DeviceId> blockDevice) {
  size_t L = in.coarse.numBlocks(), P = in.hw.numDevices();
  std::vector<double> load(P, 0.0);
  std::vector<uint64_t> memory(P, in.objective.reservedBytesPerDevice),
      peak(P, 0);
  std::vector<llvm::DenseSet<ParamId>> onDevice(P);
  for (BlockId b = 0; b < L; ++b) {
    DeviceId d = blockDevice[b];
    BlockMemory terms = blockMemoryTerms(in, b);
    load[d] += blockCompute(in, b) / in.speed[d];
    memory[d] += terms.kept;
    peak[d] = std::max(peak[d], terms.recomputePeak);
    for (ParamId p : in.info.params[b])
      if (onDevice[d].insert(p).second)
        memory[d] += in.graph.paramBytes(p) * terms.perParam;
  }
  RunEstimate e;
  for (DeviceId d = 0; d < P; ++d) {
    uint64_t used = memory[d] + peak[d];
    e.maxLoad = std::max(e.maxLoad, load[d]);
    e.maxMemoryShare =
        std::max(e.maxMemoryShare,
                 double(used) / double(std::max<uint64_t>(in.budget[d], 1)));
    e.fits &= used <= in.budget[d];
  }
  return e;
}

Expected<Plan> ftpipe::partition::assignPairedRuns(
    const Graph &graph, const Hardware &hw, const CoarseGraph &coarse,
    const ObjectiveConfig &objective, const AssignmentConfig &config) {
  if (Error err = checkInputs(graph, coarse, objective, config))
    return std::move(err);
  size_t L = coarse.numBlocks(), P = hw.numDevices();
  BlockInfo info = describeBlocks(graph, coarse);
  PlacementInput in{graph, hw, coarse, objective, config, info, {}, {}};
  in.speed = relativeSpeeds(hw, objective);
  for (DeviceId d = 0; d < P; ++d)
    in.budget.push_back(hw.device(d).memoryBytes);

  // Every split point by the estimate: fitting first, then the smaller
  // largest load, then the smaller largest memory share, then the smaller k.
  std::vector<std::pair<RunEstimate, size_t>> splits;
  for (size_t k = 0; k < L; ++k)
    splits.push_back({estimatePlacement(in, placePairedRuns(in, k)), k});
  llvm::stable_sort(splits, [](const auto &a, const auto &b) {
    const RunEstimate &x = a.first, &y = b.first;
    if (x.fits != y.fits)
      return x.fits;
    if (x.maxLoad != y.maxLoad)
      return x.maxLoad < y.maxLoad;
    return x.maxMemoryShare < y.maxMemoryShare;
  });
  // The best few exactly: the lowest objective among those that fit.
  std::optional<Plan> best;
  double bestMs = 0.0;
  for (size_t i = 0; i < std::min<size_t>(splits.size(), 3); ++i) {
    Expected<Plan> plan = formStages(in, placePairedRuns(in, splits[i].second));
    if (!plan)
      return plan.takeError();
    Expected<PlanMetrics> metrics = evaluatePlan(graph, hw, *plan, objective);
    if (!metrics)
      return metrics.takeError();
    if (!metrics->memoryFits ||
        (best && metrics->asyncMsPerMicroBatch >= bestMs))
      continue;
    best = std::move(*plan);
    bestMs = metrics->asyncMsPerMicroBatch;
  }
  if (!best)
    return makeError("assignment: no split into paired runs fits in memory");
  return std::move(*best);
}

Expected<Plan> ftpipe::partition::assignDevices(
    const Graph &graph, const Hardware &hw, const CoarseGraph &coarse,
    const ObjectiveConfig &objective, const AssignmentConfig &config) {
  if (Error err = checkInputs(graph, coarse, objective, config))
    return std::move(err);
  size_t P = hw.numDevices();
  BlockInfo info = describeBlocks(graph, coarse);
  PlacementInput in{graph, hw, coarse, objective, config, info, {}, {}};
  in.speed = relativeSpeeds(hw, objective);
  // Placement estimates in-flight copies from block heights; stages can be
  // deeper than blocks. Check the plan exactly and, where a device came out
  // over its memory, place again with that device's budget cut by the excess.
  auto assignWith = [&](PlacementRule rule) -> Expected<Plan> {
    in.budget.clear();
    for (DeviceId d = 0; d < P; ++d)
      in.budget.push_back(hw.device(d).memoryBytes);
    Expected<Plan> plan = makeError("assignment: no placement tried");
    for (int round = 0; round < 4; ++round) {
      llvm::consumeError(plan.takeError());
      Expected<std::vector<DeviceId>> placement = placeAll(in, rule);
      if (!placement)
        return placement.takeError();
      plan = formStages(in, *placement);
      if (!plan)
        return plan.takeError();
      Expected<PlanMetrics> metrics = evaluatePlan(graph, hw, *plan, objective);
      if (!metrics)
        return metrics.takeError();
      bool over = false;
      for (DeviceId d = 0; d < P; ++d) {
        uint64_t used = metrics->devices[d].memoryBytes;
        uint64_t limit = hw.device(d).memoryBytes;
        if (used <= limit)
          continue;
        over = true;
        uint64_t cut = used - limit + limit / 64;
        in.budget[d] = in.budget[d] > cut ? in.budget[d] - cut : 0;
      }
      if (!over)
        break;
    }
    return plan;
  };

  Expected<Plan> best = assignWith(PlacementRule::EarliestFinish);
  if (!config.balanceMemory)
    return best;
  Expected<Plan> balanced = assignWith(PlacementRule::BalancedShares);
  if (!balanced) {
    llvm::consumeError(balanced.takeError());
    return best;
  }
  Expected<PlanMetrics> balancedM =
      evaluatePlan(graph, hw, *balanced, objective);
  if (!balancedM)
    return balancedM.takeError();
  if (!balancedM->memoryFits)
    return best;
  if (!best) {
    llvm::consumeError(best.takeError());
    return balanced;
  }
  Expected<PlanMetrics> bestM = evaluatePlan(graph, hw, *best, objective);
  if (!bestM)
    return bestM.takeError();
  if (!bestM->memoryFits ||
      balancedM->asyncMsPerMicroBatch < bestM->asyncMsPerMicroBatch)
    return balanced;
  return best;
}
