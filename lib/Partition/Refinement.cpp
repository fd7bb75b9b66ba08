//===- Refinement.cpp - Mixed-Pipe uncoarsening with refinement -----------===//
//
// IncrementalObjective mirrors evaluatePlan (Objective.cpp) term by term, as
// per-value and per-parameter contributions that a move subtracts and adds
// back; refinePlan drives it level by level down the coarsening hierarchy.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Refinement.h"
#include "FTPipe/Partition/Simulator.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>

using namespace ftpipe::partition;
using llvm::Error;
using llvm::Expected;

static Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

//===----------------------------------------------------------------------===//
// IncrementalObjective
//===----------------------------------------------------------------------===//

IncrementalObjective::IncrementalObjective(const Graph &graph,
                                           const Hardware &hardware, Plan plan,
                                           const ObjectiveConfig &cfg)
    : g(&graph), hw(&hardware), config(cfg), current(std::move(plan)) {}

Expected<IncrementalObjective>
IncrementalObjective::create(const Graph &graph, const Hardware &hw, Plan plan,
                             const ObjectiveConfig &config) {
  // buildStageGraph checks shape, ids and acyclicity for us.
  Expected<StageGraph> sg = buildStageGraph(graph, hw, plan, config);
  if (!sg)
    return sg.takeError();
  // Stage edges are a dense S x S table (pipelines have tens of stages).
  if (plan.numStages() > kMaxStages)
    return makeError(llvm::formatv(
        "incremental objective: {0} stages, at most {1} supported",
        plan.numStages(), kMaxStages));
  IncrementalObjective obj(graph, hw, std::move(plan), config);
  obj.rebuild();
  return std::move(obj);
}

void IncrementalObjective::rebuild() {
  size_t S = current.numStages(), P = hw->numDevices();
  speed.assign(P, 1.0);
  if (config.scaleComputeByDevice)
    for (DeviceId d = 0; d < P; ++d)
      speed[d] = hw->device(d).tflops / hw->device(0).tflops;
  rawFwd.assign(S, 0.0);
  rawBwd.assign(S, 0.0);
  commFwd.assign(S, 0.0);
  commBwd.assign(S, 0.0);
  stLoad.assign(S, 0.0);
  actSum.assign(S, 0);
  kept.assign(S, 0);
  stCount.assign(S, 0);
  edgeCount.assign(S * S, 0);
  pairStamp.assign(S * S, 0);
  touchedPairs.clear();
  devLoad.assign(P, 0.0);
  paramStages.assign(g->numParams(), {});
  stageStamp.assign(S, 0);
  touchedStamp.assign(S, 0);
  recomputes.resize(S);
  for (StageId s = 0; s < S; ++s)
    recomputes[s] = stageRecomputes(current, config, s);
  valueStamp.assign(g->numValues(), 0);
  paramStamp.assign(g->numParams(), 0);
  for (NodeId n = 0; n < g->numNodes(); ++n) {
    StageId s = current.nodeStage[n];
    rawFwd[s] += g->cost(n).fwdMs;
    rawBwd[s] += g->cost(n).bwdMs;
    actSum[s] += g->cost(n).actBytes;
    ++stCount[s];
  }
  for (ParamId p = 0; p < g->numParams(); ++p)
    for (NodeId r : g->paramReaders(p)) {
      StageId s = current.nodeStage[r];
      auto it = llvm::find_if(paramStages[p],
                              [&](const auto &e) { return e.first == s; });
      if (it == paramStages[p].end())
        paramStages[p].push_back({s, 1});
      else
        ++it->second;
    }
  for (ValueId v = 0; v < g->numValues(); ++v)
    applyValue(v, true);
  size_t words = (S + 63) / 64;
  edgeBits.assign(S * words, 0);
  for (size_t a = 0; a < S; ++a)
    for (size_t b = 0; b < S; ++b)
      if (edgeCount[a * S + b])
        edgeBits[a * words + b / 64] |= uint64_t(1) << (b % 64);
  recomputeOrder();
  recomputeParamMemory();
  for (StageId s = 0; s < S; ++s)
    refreshStage(s);
  touchedStages.clear();
  edgeSetChanged = false;
}

void IncrementalObjective::touch(StageId s) {
  if (touchedStamp[s] == touchEpoch)
    return;
  touchedStamp[s] = touchEpoch;
  touchedStages.push_back(s);
}

/// Stage load and its share of its device's load.
void IncrementalObjective::refreshStage(StageId s) {
  DeviceId d = current.stageDevice[s];
  double compute = (rawFwd[s] + rawBwd[s]) / speed[d];
  if (recomputes[s])
    compute += rawFwd[s] / speed[d];
  double load = compute + std::max(0.0, commFwd[s] - compute) +
                std::max(0.0, commBwd[s] - compute);
  devLoad[d] += load - stLoad[s];
  stLoad[s] = load;
}

/// Adds (or removes) value v's part of the figures: one transfer per
/// destination stage on another device (forward always, backward when the
/// value needs a gradient), one stage edge per destination stage, and the
/// bytes a destination receives as stage input (what it keeps when it
/// recomputes).
void IncrementalObjective::applyValue(ValueId v, bool add) {
  NodeId p = g->producer(v);
  StageId src = p == kNoNode ? ~StageId(0) : current.nodeStage[p];
  uint64_t bytes = g->valueBytes(v);
  double sign = add ? 1.0 : -1.0;
  size_t S = current.numStages();
  ++stageEpoch;
  if (src != ~StageId(0)) {
    stageStamp[src] = stageEpoch;
    touch(src);
  }
  for (NodeId c : g->consumers(v)) {
    StageId dst = current.nodeStage[c];
    if (dst == src || stageStamp[dst] == stageEpoch)
      continue;
    stageStamp[dst] = stageEpoch;
    touch(dst);
    kept[dst] += add ? bytes : uint64_t(0) - bytes;
    if (p == kNoNode)
      continue;
    size_t pair = size_t(src) * S + dst;
    if (pairStamp[pair] != pairEpoch) {
      // Remember whether the edge existed before this move.
      pairStamp[pair] = pairEpoch;
      touchedPairs.push_back({pair, edgeCount[pair] > 0});
    }
    edgeCount[pair] += add ? 1 : uint32_t(-1);
    DeviceId ds = current.stageDevice[src], dd = current.stageDevice[dst];
    if (ds == dd)
      continue;
    const LinkParams &fl = hw->link(ds, dd);
    double fwd = double(bytes) / (fl.GBps * 1e6) + fl.latencyUs * 1e-3;
    commFwd[src] += sign * fwd;
    commFwd[dst] += sign * fwd;
    if (g->valueNeedsGrad(v)) {
      const LinkParams &bl = hw->link(dd, ds);
      double bwd = double(bytes) / (bl.GBps * 1e6) + bl.latencyUs * 1e-3;
      commBwd[src] += sign * bwd;
      commBwd[dst] += sign * bwd;
    }
  }
}

/// Bytes parameter p costs on device d: weights, gradients, optimizer state
/// and as many stashed versions as its most demanding reader stage there.
uint64_t IncrementalObjective::paramContribution(ParamId p, DeviceId d) const {
  bool present = false;
  uint32_t extra = 0;
  for (const auto &[s, count] : paramStages[p]) {
    if (current.stageDevice[s] != d)
      continue;
    present = true;
    extra = std::max(extra, extraWeightVersions(inFlight(s), config));
  }
  if (!present)
    return 0;
  return g->paramBytes(p) *
         (2 + optimizerStateFactor(config.optimizer) + uint64_t(extra));
}

void IncrementalObjective::applyParam(ParamId p, bool add) {
  // Devices holding a reader, each once.
  llvm::SmallVector<DeviceId, 4> devs;
  for (const auto &[s, count] : paramStages[p]) {
    DeviceId d = current.stageDevice[s];
    if (!llvm::is_contained(devs, d))
      devs.push_back(d);
  }
  for (DeviceId d : devs) {
    uint64_t c = paramContribution(p, d);
    paramMem[d] += add ? c : uint64_t(0) - c;
  }
}

void IncrementalObjective::recomputeParamMemory() {
  paramMem.assign(hw->numDevices(), 0);
  for (ParamId p = 0; p < g->numParams(); ++p)
    applyParam(p, true);
}

/// Kahn's algorithm over the stage edges (smallest ready stage first, as
/// buildStageGraph), then heights from the sinks up.
void IncrementalObjective::recomputeOrder() {
  size_t S = current.numStages(), words = (S + 63) / 64;
  // Calls f(b) for every edge a -> b, b ascending.
  auto forEachSuccessor = [&](size_t a, auto f) {
    for (size_t w = 0; w < words; ++w)
      for (uint64_t bits = edgeBits[a * words + w]; bits; bits &= bits - 1)
        f(StageId(w * 64 + llvm::countr_zero(bits)));
  };
  std::vector<uint32_t> indeg(S, 0);
  for (size_t a = 0; a < S; ++a)
    forEachSuccessor(a, [&](StageId b) { ++indeg[b]; });
  std::priority_queue<StageId, std::vector<StageId>, std::greater<StageId>>
      ready;
  for (StageId s = 0; s < S; ++s)
    if (!indeg[s])
      ready.push(s);
  topo.clear();
  while (!ready.empty()) {
    StageId s = ready.top();
    ready.pop();
    topo.push_back(s);
    forEachSuccessor(s, [&](StageId b) {
      if (--indeg[b] == 0)
        ready.push(b);
    });
  }
  rank.assign(S, ~0u);
  for (uint32_t i = 0; i < topo.size(); ++i)
    rank[topo[i]] = i;
  height.assign(S, 0);
  for (size_t i = topo.size(); i-- > 0;) {
    StageId s = topo[i];
    forEachSuccessor(
        s, [&](StageId b) { height[s] = std::max(height[s], height[b] + 1); });
  }
  inFlightOf.resize(S);
  for (StageId s = 0; s < S; ++s)
    inFlightOf[s] = microBatchesInFlight(height[s], config);
}

void IncrementalObjective::moveNodes(llvm::ArrayRef<NodeId> nodes, StageId to) {
  edgeSetChanged = false;
  touchedStages.clear();
  ++touchEpoch;
  touch(to);
  touchedPairs.clear();
  ++pairEpoch;
  ++valueEpoch;
  ++paramEpoch;
  llvm::SmallVector<ValueId, 16> values;
  llvm::SmallVector<ParamId, 8> params;
  for (NodeId n : nodes) {
    for (ValueId v : g->outputs(n))
      if (valueStamp[v] != valueEpoch) {
        valueStamp[v] = valueEpoch;
        values.push_back(v);
      }
    for (ValueId v : g->inputs(n))
      if (valueStamp[v] != valueEpoch) {
        valueStamp[v] = valueEpoch;
        values.push_back(v);
      }
    for (ParamId p : g->params(n))
      if (paramStamp[p] != paramEpoch) {
        paramStamp[p] = paramEpoch;
        params.push_back(p);
      }
  }
  for (ValueId v : values)
    applyValue(v, false);
  for (ParamId p : params)
    applyParam(p, false);
  for (NodeId n : nodes) {
    StageId from = current.nodeStage[n];
    if (from == to)
      continue;
    touch(from);
    const NodeCost &c = g->cost(n);
    rawFwd[from] -= c.fwdMs;
    rawBwd[from] -= c.bwdMs;
    actSum[from] -= c.actBytes;
    --stCount[from];
    rawFwd[to] += c.fwdMs;
    rawBwd[to] += c.bwdMs;
    actSum[to] += c.actBytes;
    ++stCount[to];
    current.nodeStage[n] = to;
    for (ParamId p : g->params(n)) {
      auto &entries = paramStages[p];
      auto it = llvm::find_if(entries,
                              [&](const auto &e) { return e.first == from; });
      if (--it->second == 0)
        entries.erase(it);
      auto jt =
          llvm::find_if(entries, [&](const auto &e) { return e.first == to; });
      if (jt == entries.end())
        entries.push_back({to, 1});
      else
        ++jt->second;
    }
  }
  for (ValueId v : values)
    applyValue(v, true);
  size_t S = current.numStages(), words = (S + 63) / 64;
  for (auto [pair, existed] : touchedPairs)
    if (existed != (edgeCount[pair] > 0)) {
      edgeSetChanged = true;
      edgeBits[pair / S * words + pair % S / 64] ^= uint64_t(1)
                                                    << (pair % S % 64);
    }
  // Heights decide stash counts only for async schedules with weight
  // versions (extraWeightVersions is 0 otherwise); when they change then,
  // every parameter is recounted.
  bool stashesFollowHeights = config.memoryKind() == Kind::Async &&
                              config.versioning != WeightVersions::None;
  bool recount = false;
  if (edgeSetChanged) {
    std::vector<uint32_t> oldHeight;
    if (stashesFollowHeights)
      oldHeight = height;
    recomputeOrder();
    recount = stashesFollowHeights && height != oldHeight;
  }
  if (recount) {
    recomputeParamMemory();
  } else {
    for (ParamId p : params)
      applyParam(p, true);
  }
  // Rounding can leave -1e-17 where a stage has no traffic left.
  for (StageId s : touchedStages) {
    if (std::fabs(commFwd[s]) < 1e-12)
      commFwd[s] = 0.0;
    if (std::fabs(commBwd[s]) < 1e-12)
      commBwd[s] = 0.0;
    if (stCount[s] == 0) {
      rawFwd[s] = rawBwd[s] = 0.0;
    }
  }
  // std::sort: llvm::sort hands integers to qsort, slow on this hot path.
  std::sort(touchedStages.begin(), touchedStages.end());
  for (StageId s : touchedStages)
    refreshStage(s);
}

bool IncrementalObjective::moveIsOrderSafe(llvm::ArrayRef<NodeId> nodes,
                                           StageId to) const {
  // Nodes of the unit are recognised by their stage; the caller moves whole
  // units out of one stage, so "outside" means any node we are not moving.
  // Units come sorted (refinePlan's are): only others are copied.
  llvm::SmallVector<NodeId, 16> copy;
  llvm::ArrayRef<NodeId> sorted = nodes;
  if (!llvm::is_sorted(nodes)) {
    copy.assign(nodes.begin(), nodes.end());
    std::sort(copy.begin(), copy.end());
    sorted = copy;
  }
  auto inUnit = [&](NodeId n) {
    return std::binary_search(sorted.begin(), sorted.end(), n);
  };
  uint32_t rt = rank[to];
  for (NodeId n : nodes) {
    for (NodeId p : g->preds(n)) {
      StageId s = current.nodeStage[p];
      if (s != to && rank[s] >= rt && !inUnit(p))
        return false;
    }
    for (NodeId c : g->succs(n)) {
      StageId s = current.nodeStage[c];
      if (s != to && rank[s] <= rt && !inUnit(c))
        return false;
    }
  }
  return true;
}

double IncrementalObjective::objective() const {
  double best = 0.0;
  for (double l : devLoad)
    best = std::max(best, l);
  return best;
}

uint64_t IncrementalObjective::deviceMemoryBytes(DeviceId d) const {
  uint64_t bytes = paramMem[d] + config.reservedBytesPerDevice;
  // One task at a time per device: only one of its stages holds a
  // recomputed micro-batch at any moment.
  uint64_t recomputePeak = 0;
  for (StageId s = 0; s < current.numStages(); ++s) {
    if (current.stageDevice[s] != d)
      continue;
    bool recompute = recomputes[s];
    bytes += uint64_t(inFlight(s)) * (recompute ? kept[s] : actSum[s]);
    if (recompute)
      recomputePeak = std::max(recomputePeak, actSum[s]);
  }
  return bytes + recomputePeak;
}

bool IncrementalObjective::deviceMemoryFits(DeviceId d) const {
  return deviceMemoryBytes(d) <= hw->device(d).memoryBytes;
}

bool IncrementalObjective::allMemoryFits() const {
  for (DeviceId d = 0; d < numDevices(); ++d)
    if (!deviceMemoryFits(d))
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// refinePlan
//===----------------------------------------------------------------------===//

Error RefinementConfig::validate() const {
  if (!(minRelativeGain >= 0.0) || !std::isfinite(minRelativeGain))
    return makeError(llvm::formatv(
        "refinement: minRelativeGain must be finite and non-negative, got {0}",
        minRelativeGain));
  return Error::success();
}

namespace {
/// Units of one level as CSR lists of nodes, in block order.
struct Units {
  std::vector<uint32_t> offsets;
  std::vector<NodeId> nodes;
  size_t size() const { return offsets.size() - 1; }
  llvm::ArrayRef<NodeId> operator[](size_t u) const {
    return llvm::ArrayRef<NodeId>(nodes.data() + offsets[u],
                                  nodes.data() + offsets[u + 1]);
  }
};
} // namespace

static Units unitsOf(llvm::ArrayRef<BlockId> nodeBlock, uint32_t numBlocks) {
  Units u;
  u.offsets.assign(numBlocks + 1, 0);
  for (BlockId b : nodeBlock)
    ++u.offsets[b + 1];
  for (uint32_t b = 0; b < numBlocks; ++b)
    u.offsets[b + 1] += u.offsets[b];
  u.nodes.resize(nodeBlock.size());
  std::vector<uint32_t> fill(u.offsets.begin(), u.offsets.end() - 1);
  for (NodeId n = 0; n < nodeBlock.size(); ++n)
    u.nodes[fill[nodeBlock[n]]++] = n;
  return u;
}

/// The units of a level: the nodes of one block that lie in one stage, in
/// block order. A block straddles stages when the plan was refined below its
/// level before (a plan refined again); moving such a block whole, and moving
/// it back into one stage when the move is refused, would rewrite the plan
/// outside the move, with no check for stage cycles or a worse objective.
/// Units move whole, so each stays in one stage for the whole level.
static std::vector<BlockId> unitOfNode(llvm::ArrayRef<BlockId> nodeBlock,
                                       llvm::ArrayRef<StageId> nodeStage,
                                       uint32_t &numUnits) {
  std::vector<std::pair<BlockId, StageId>> keys;
  keys.reserve(nodeBlock.size());
  for (NodeId n = 0; n < nodeBlock.size(); ++n)
    keys.push_back({nodeBlock[n], nodeStage[n]});
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<BlockId> unit(nodeBlock.size());
  for (NodeId n = 0; n < nodeBlock.size(); ++n)
    unit[n] =
        llvm::lower_bound(keys, std::make_pair(nodeBlock[n], nodeStage[n])) -
        keys.begin();
  numUnits = keys.size();
  return unit;
}

/// Tries to move one unit to a neighbouring stage; returns whether a move
/// was taken. `fits` says which devices fitted their memory so far.
static bool tryMoveUnit(IncrementalObjective &obj, const Graph &g,
                        llvm::ArrayRef<NodeId> unit,
                        const RefinementConfig &config, std::vector<char> &fits,
                        std::vector<StageId> &candidates,
                        RefinementStats &stats) {
  size_t P = obj.numDevices();
  StageId from = obj.plan().nodeStage[unit.front()];
  if (obj.stageNodeCount(from) == unit.size())
    return false; // would leave an empty stage
  // Stages of the unit's neighbours, and the stages right before and after
  // its own in the order (an op whose inputs are all graph inputs or
  // parameters has no neighbour there, yet may be the one in the way).
  candidates.clear();
  for (NodeId n : unit) {
    for (NodeId p : g.preds(n))
      candidates.push_back(obj.plan().nodeStage[p]);
    for (NodeId c : g.succs(n))
      candidates.push_back(obj.plan().nodeStage[c]);
  }
  uint32_t rank = obj.stageRank()[from];
  if (rank > 0)
    candidates.push_back(obj.stageOrder()[rank - 1]);
  if (rank + 1 < obj.numStages())
    candidates.push_back(obj.stageOrder()[rank + 1]);
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()),
                   candidates.end());
  for (StageId to : candidates) {
    if (to == from || !obj.moveIsOrderSafe(unit, to))
      continue;
    DeviceId ds = obj.plan().stageDevice[from];
    DeviceId dt = obj.plan().stageDevice[to];
    double before = obj.objective();
    double fromLoad = obj.deviceLoadMs(ds), toLoad = obj.deviceLoadMs(dt);
    double pairBefore = std::max(fromLoad, toLoad);
    ++stats.movesTried;
    obj.moveNodes(unit, to);
    double after = obj.objective();
    double pairAfter = std::max(obj.deviceLoadMs(ds), obj.deviceLoadMs(dt));
    double eps = config.minRelativeGain * before;
    // Lower the bottleneck, or keep it and even out the two devices, which
    // opens room for the bottleneck's next move. A move that changes neither
    // (an op without compute, such as a reshape, at a boundary) is taken
    // when it goes from the busier device to the less busy one: it lets the
    // ops behind it follow, and it cannot bounce straight back.
    bool better =
        after < before - eps ||
        (after <= before && pairAfter < pairBefore - eps) ||
        (after <= before && pairAfter <= pairBefore && fromLoad > toLoad + eps);
    if (better) {
      // Not only the target's memory changes: a new stage edge changes
      // heights (in-flight copies) anywhere, and under recomputation every
      // stage that now receives a value from another stage keeps more input.
      if (obj.lastMoveChangedStageGraph() || obj.anyStageRecomputes()) {
        for (DeviceId d = 0; d < P && better; ++d)
          better = !fits[d] || obj.deviceMemoryFits(d);
      } else {
        better = !fits[dt] || obj.deviceMemoryFits(dt);
      }
    }
    if (!better) {
      obj.moveNodes(unit, from);
      continue;
    }
    ++stats.movesAccepted;
    for (DeviceId d = 0; d < P; ++d)
      fits[d] = fits[d] && obj.deviceMemoryFits(d);
    return true;
  }
  return false;
}

/// One level: passes over its units in order; a unit that moves puts its
/// neighbouring units back on the work list, so a boundary can travel
/// further than one unit per pass. Each pass tries at most four moves per
/// unit; a pass without a move ends the level.
static void refineLevel(IncrementalObjective &obj, const Graph &g,
                        llvm::ArrayRef<BlockId> nodeUnit, const Units &units,
                        const RefinementConfig &config,
                        RefinementStats &stats) {
  size_t P = obj.numDevices();
  std::vector<char> fits(P);
  for (DeviceId d = 0; d < P; ++d)
    fits[d] = obj.deviceMemoryFits(d);
  std::vector<StageId> candidates;
  std::vector<char> queued(units.size(), 0);
  std::deque<uint32_t> work;
  for (uint32_t pass = 0; pass < config.maxPassesPerLevel; ++pass) {
    bool improved = false;
    for (uint32_t u = 0; u < units.size(); ++u)
      if (!units[u].empty()) {
        work.push_back(u);
        queued[u] = 1;
      }
    uint64_t budget = 4 * uint64_t(units.size());
    while (!work.empty()) {
      uint32_t u = work.front();
      work.pop_front();
      queued[u] = 0;
      if (budget == 0)
        continue; // drain
      --budget;
      llvm::ArrayRef<NodeId> unit = units[u];
      if (!tryMoveUnit(obj, g, unit, config, fits, candidates, stats))
        continue;
      improved = true;
      for (NodeId n : unit) {
        for (NodeId x : g.preds(n))
          if (!queued[nodeUnit[x]]) {
            queued[nodeUnit[x]] = 1;
            work.push_back(nodeUnit[x]);
          }
        for (NodeId x : g.succs(n))
          if (!queued[nodeUnit[x]]) {
            queued[nodeUnit[x]] = 1;
            work.push_back(nodeUnit[x]);
          }
      }
    }
    if (!improved)
      break;
  }
}

/// Per node, whether it computes only from parameters (and graph inputs and
/// constants, such as a transpose's permutation), directly or through other
/// such nodes, and reads at least one of them.
static std::vector<char> weightOnlyNodes(const Graph &g) {
  size_t N = g.numNodes();
  std::vector<char> weightOnly(N, 0);
  auto constant = [&](NodeId n) {
    return g.inputs(n).empty() && g.params(n).empty();
  };
  for (NodeId n = 0; n < N; ++n) {
    bool readsWeights = !g.params(n).empty();
    bool only = !g.outputs(n).empty();
    for (ValueId v : g.inputs(n)) {
      NodeId p = g.producer(v);
      if (p == kNoNode || constant(p))
        continue;
      only &= weightOnly[p] != 0;
      readsWeights = true;
    }
    weightOnly[n] = only && readsWeights;
  }
  return weightOnly;
}

/// Moves `n` into the one stage that reads all its results, when it has such
/// a reader stage other than its own, leaves its stage non-empty, keeps the
/// stage graph acyclic and every device in `fits` fitting, and either
/// `force` or the objective does not rise; otherwise leaves it. Returns
/// whether it moved.
static bool moveToReaderStage(IncrementalObjective &obj, const Graph &g,
                              NodeId n, const std::vector<char> &fits,
                              bool force, RefinementStats &stats) {
  if (g.succs(n).empty())
    return false;
  StageId from = obj.plan().nodeStage[n];
  StageId to = obj.plan().nodeStage[g.succs(n).front()];
  if (to == from || obj.stageNodeCount(from) == 1 ||
      llvm::any_of(g.succs(n),
                   [&](NodeId c) { return obj.plan().nodeStage[c] != to; }))
    return false;
  NodeId unit[] = {n};
  if (!obj.moveIsOrderSafe(unit, to))
    return false;
  double before = obj.objective();
  ++stats.movesTried;
  obj.moveNodes(unit, to);
  bool keep = force || obj.objective() <= before;
  for (DeviceId d = 0; d < fits.size() && keep; ++d)
    keep = !fits[d] || obj.deviceMemoryFits(d);
  if (!keep) {
    obj.moveNodes(unit, from);
    return false;
  }
  ++stats.movesAccepted;
  return true;
}

/// Per device, whether it fits its memory now.
static std::vector<char> devicesThatFit(const IncrementalObjective &obj) {
  std::vector<char> fits(obj.numDevices());
  for (DeviceId d = 0; d < fits.size(); ++d)
    fits[d] = obj.deviceMemoryFits(d);
  return fits;
}

/// Ops that compute only from parameters (a weight's transpose or reshape,
/// directly or through other such ops; graph inputs, which every stage has,
/// may be read too, as an embedding lookup does) and sit in another stage
/// than all their readers send their result every micro-batch, while moving
/// them costs nothing by the objective when that transfer is hidden. Each
/// such op, last first so that chains follow their readers, joins the one
/// stage all its readers are in when that keeps the stage graph acyclic and
/// every device that fitted its memory fitting, and the objective from
/// rising (with `force`, ops without compute move whatever the objective;
/// with `freeOnly`, only they move).
static void attachWeightOnlyOps(IncrementalObjective &obj, const Graph &g,
                                RefinementStats &stats, bool force,
                                bool freeOnly = false,
                                const std::vector<char> *only = nullptr) {
  std::vector<char> weightOnly = weightOnlyNodes(g);
  std::vector<char> fits = devicesThatFit(obj);
  for (NodeId n = g.numNodes(); n-- > 0;) {
    // Forced only where it moves no compute (a weight's reshape, or a
    // transpose that code generation folds into its matmul).
    const NodeCost &cost = g.cost(n);
    bool free = cost.fwdMs == 0.0 && cost.bwdMs == 0.0;
    if (weightOnly[n] && (free || !freeOnly) && (!only || (*only)[n]))
      moveToReaderStage(obj, g, n, fits, force && free, stats);
  }
}

Expected<RefinementStats>
ftpipe::partition::refinePlan(const Graph &graph, const Hardware &hw,
                              const CoarseningHierarchy &hierarchy, Plan &plan,
                              const ObjectiveConfig &objective,
                              const RefinementConfig &config) {
  if (Error err = config.validate())
    return std::move(err);
  for (const CoarseningLevel &level : hierarchy.levels)
    if (level.nodeBlock.size() != graph.numNodes())
      return makeError(llvm::formatv(
          "refinement: hierarchy level '{0}' maps {1} nodes, graph has {2}",
          level.pass, level.nodeBlock.size(), graph.numNodes()));
  Expected<IncrementalObjective> objOr =
      IncrementalObjective::create(graph, hw, plan, objective);
  if (!objOr)
    return objOr.takeError();
  IncrementalObjective &obj = *objOr;

  RefinementStats stats;
  stats.initialObjectiveMs = obj.objective();
  if (config.allLevels)
    for (size_t i = hierarchy.levels.size(); i-- > 0;) {
      const CoarseningLevel &level = hierarchy.levels[i];
      uint32_t numUnits = 0;
      std::vector<BlockId> nodeUnit =
          unitOfNode(level.nodeBlock, obj.plan().nodeStage, numUnits);
      refineLevel(obj, graph, nodeUnit, unitsOf(nodeUnit, numUnits), config,
                  stats);
      obj.rebuild();
      ++stats.levelsVisited;
    }
  std::vector<BlockId> identity(graph.numNodes());
  for (NodeId n = 0; n < graph.numNodes(); ++n)
    identity[n] = n;
  if (config.glueWeightOnlyOps) {
    // Weights' transposes and reshapes join their one reader and move with
    // it from now on: the level rebalances around them.
    attachWeightOnlyOps(obj, graph, stats, /*force=*/true);
    std::vector<char> weightOnly = weightOnlyNodes(graph);
    for (NodeId n = graph.numNodes(); n-- > 0;) {
      if (!weightOnly[n] || graph.succs(n).size() != 1)
        continue;
      NodeId r = graph.succs(n).front();
      if (obj.plan().nodeStage[r] == obj.plan().nodeStage[n])
        identity[n] = identity[r];
    }
  }
  refineLevel(obj, graph, identity, unitsOf(identity, graph.numNodes()), config,
              stats);
  if (config.attachWeightOnlyOps)
    attachWeightOnlyOps(obj, graph, stats, /*force=*/false);
  obj.rebuild();
  ++stats.levelsVisited;
  stats.finalObjectiveMs = obj.objective();
  plan = obj.plan();
  return stats;
}

/// Ops without compute on activations (a reshape) whose every reader is in
/// one other stage: there the reader's stage receives the op's input instead
/// of its result, once for all such views of one value (a T5 decoder reshapes
/// the encoder's output separately for each layer's cross-attention). Each
/// whose inputs weigh no more than its results (a reshape, not a slice),
/// last first, joins that stage when the stage graph stays acyclic, memory
/// that fitted still fits and the objective does not rise.
static void attachFreeViews(IncrementalObjective &obj, const Graph &g,
                            RefinementStats &stats) {
  std::vector<char> weightOnly = weightOnlyNodes(g);
  std::vector<char> fits = devicesThatFit(obj);
  for (NodeId n = g.numNodes(); n-- > 0;) {
    const NodeCost &cost = g.cost(n);
    if (weightOnly[n] || cost.fwdMs != 0.0 || cost.bwdMs != 0.0 ||
        g.inputs(n).empty())
      continue;
    uint64_t in = 0, out = 0;
    for (ValueId v : g.inputs(n))
      in += g.valueBytes(v);
    for (ValueId v : g.outputs(n))
      out += g.valueBytes(v);
    if (in <= out)
      moveToReaderStage(obj, g, n, fits, /*force=*/false, stats);
  }
}

/// Free weight ops that are a transpose, or read one through other such ops:
/// the chains from a weight's folded transpose to its matmul.
static std::vector<char> transposeChains(const Graph &g) {
  std::vector<char> weightOnly = weightOnlyNodes(g), chain(g.numNodes(), 0);
  for (NodeId n = 0; n < g.numNodes(); ++n) {
    const NodeCost &cost = g.cost(n);
    if (!weightOnly[n] || cost.fwdMs != 0.0 || cost.bwdMs != 0.0)
      continue;
    chain[n] = g.type(n) == "tosa.transpose" ||
               llvm::any_of(g.inputs(n), [&](ValueId v) {
                 NodeId p = g.producer(v);
                 return p != kNoNode && chain[p];
               });
  }
  return chain;
}

/// Applies `attach` to `plan` and keeps the result when it moved an op and
/// is no worse by the objective, the simulator and memory (moving an op
/// without compute changes transfers and memory only, which the objective
/// may hide and the simulator may not). Returns the ops moved and kept.
static Expected<size_t>
tryAttach(const Graph &graph, const Hardware &hw, Plan &plan,
          const ObjectiveConfig &objective,
          llvm::function_ref<void(IncrementalObjective &, RefinementStats &)>
              attach) {
  Expected<IncrementalObjective> objOr =
      IncrementalObjective::create(graph, hw, plan, objective);
  if (!objOr)
    return objOr.takeError();
  RefinementStats stats;
  attach(*objOr, stats);
  if (stats.movesAccepted == 0)
    return 0;
  Plan attached = objOr->plan();
  Expected<PlanFigures> before = measurePlan(graph, hw, plan, objective);
  Expected<PlanFigures> after = measurePlan(graph, hw, attached, objective);
  if (!before || !after)
    return llvm::joinErrors(before.takeError(), after.takeError());
  if (!after->noSlowerThan(*before))
    return 0;
  plan = std::move(attached);
  return size_t(stats.movesAccepted);
}

Expected<size_t>
ftpipe::partition::attachFreeOps(const Graph &graph, const Hardware &hw,
                                 Plan &plan, const ObjectiveConfig &objective) {
  // The incremental objective knows no replicated or forwarded values.
  if (llvm::is_contained(plan.nodeReplicated, true) ||
      llvm::is_contained(plan.nodeForwarded, true))
    return 0;
  // All free weight ops; when that is slower, the folded transposes' chains
  // alone (a transpose apart from its matmul is a copy the objective leaves
  // out); then the views.
  std::vector<char> chains = transposeChains(graph);
  size_t moved = 0;
  const std::vector<char> *subsets[] = {nullptr, &chains};
  for (const std::vector<char> *only : subsets) {
    Expected<size_t> weights =
        tryAttach(graph, hw, plan, objective,
                  [&](IncrementalObjective &obj, RefinementStats &stats) {
                    attachWeightOnlyOps(obj, graph, stats, /*force=*/true,
                                        /*freeOnly=*/true, only);
                  });
    if (!weights)
      return weights.takeError();
    moved += *weights;
    if (*weights)
      break;
  }
  Expected<size_t> views =
      tryAttach(graph, hw, plan, objective,
                [&](IncrementalObjective &obj, RefinementStats &stats) {
                  attachFreeViews(obj, graph, stats);
                });
  if (!views)
    return views.takeError();
  return moved + *views;
}
