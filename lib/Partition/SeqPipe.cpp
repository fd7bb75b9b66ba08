//===- SeqPipe.cpp - Contiguous pipelines: exact DP and greedy ----------===//
//
// The DP walks cuts from the end of the topological order to its start.
// Going right to left, a new stage's successors are all known when it is
// formed, so its in-flight depth (memory) and the traffic it sends are
// exact; what it will receive is not, so a stage stays "open" until the cut
// passes the earliest producer it reads from. A state is (cut, stages so
// far, open stages with their ranges) plus partial traffic; states with the
// same key are kept only when no other is at least as good in every figure,
// which keeps the search exact because every stage cost is monotone in its
// traffic and memory is monotone in the depth. Cuts whose prefix cannot be
// split into the stages left (by compute at the bound, or by greedy packing
// under the bound and the largest device memory) are never taken, and the
// state-independent sums of a stage grown from a cut are shared by the
// states at that cut. Both methods' plans are then polished by the
// simulator: cut shifts that keep the objective and lower the simulated time.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/SeqPipe.h"
#include "FTPipe/Partition/Simulator.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

using namespace ftpipe::partition;
using llvm::Error;
using llvm::Expected;

static Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

static constexpr double kInf = std::numeric_limits<double>::infinity();

Error SeqPipeConfig::validate() const { return objective.validate(); }

Plan ftpipe::partition::contiguousPlan(size_t numNodes,
                                       llvm::ArrayRef<uint32_t> cuts,
                                       size_t numDevices) {
  Plan plan;
  size_t numStages = cuts.size() + 1;
  plan.nodeStage.assign(numNodes, 0);
  size_t stage = 0;
  for (size_t n = 0; n < numNodes; ++n) {
    while (stage < cuts.size() && cuts[stage] <= n)
      ++stage;
    plan.nodeStage[n] = StageId(stage);
  }
  for (size_t s = 0; s < numStages; ++s)
    plan.stageDevice.push_back(DeviceId(numDevices - numStages + s));
  return plan;
}

static std::string gib(double bytes) {
  return llvm::formatv("{0:F2} GiB", bytes / double(1ull << 30)).str();
}

namespace {

/// Per-graph tables shared by both methods.
struct Problem {
  const Graph &graph;
  const Hardware &hw;
  const ObjectiveConfig &cfg;
  size_t numNodes, numDevices, maxStages;
  std::vector<double> speed;
  /// Compute of node x on device 0 (f + b, + f when recomputing).
  std::vector<double> nodeCompute;
  /// Prefix sums of nodeCompute.
  std::vector<double> prefixCompute;
  /// Smallest producer among the node-produced values x reads (numNodes if
  /// none): a stage [lo, hi) receives from the left of cut c iff the minimum
  /// over its nodes is below c.
  std::vector<uint32_t> minProducer;
  unsigned stateFactor;
  /// By stage height (0..maxStages): micro-batches in flight and extra
  /// weight versions, looked up in the DP's innermost loop.
  std::vector<uint32_t> inFlightAt, extraAt;

  Problem(const Graph &graph, const Hardware &hw, const SeqPipeConfig &config)
      : graph(graph), hw(hw), cfg(config.objective), numNodes(graph.numNodes()),
        numDevices(hw.numDevices()) {
    maxStages = config.maxStages
                    ? std::min<size_t>(config.maxStages, numDevices)
                    : numDevices;
    maxStages = std::min(maxStages, std::max<size_t>(1, numNodes));
    speed.assign(numDevices, 1.0);
    if (cfg.scaleComputeByDevice)
      for (size_t d = 0; d < numDevices; ++d)
        speed[d] = hw.device(DeviceId(d)).tflops / hw.device(0).tflops;
    nodeCompute.resize(numNodes);
    prefixCompute.assign(numNodes + 1, 0.0);
    minProducer.assign(numNodes, uint32_t(numNodes));
    for (NodeId x = 0; x < numNodes; ++x) {
      const NodeCost &c = graph.cost(x);
      nodeCompute[x] = c.fwdMs + c.bwdMs + (cfg.recompute ? c.fwdMs : 0.0);
      prefixCompute[x + 1] = prefixCompute[x] + nodeCompute[x];
      for (ValueId u : graph.inputs(x)) {
        NodeId p = graph.producer(u);
        if (p != kNoNode)
          minProducer[x] = std::min(minProducer[x], uint32_t(p));
      }
    }
    stateFactor = optimizerStateFactor(cfg.optimizer);
    for (uint32_t h = 0; h <= maxStages; ++h) {
      inFlightAt.push_back(microBatchesInFlight(h, cfg));
      extraAt.push_back(extraWeightVersions(inFlightAt.back(), cfg));
    }
  }

  /// Memory of one stage alone on its device.
  double memory(double params, double act, double inputs,
                uint32_t height) const {
    assert(height <= maxStages && "deeper than the stages allow");
    uint32_t inFlight = inFlightAt[height], extra = extraAt[height];
    double activations =
        cfg.recompute ? double(inFlight) * inputs + act : inFlight * act;
    return params * (2 + stateFactor + extra) + activations +
           double(cfg.reservedBytesPerDevice);
  }

  static double cco(double c, double fwd, double bwd) {
    return c + std::max(0.0, fwd - c) + std::max(0.0, bwd - c);
  }

  /// Scores a plan with the one objective; kInf when it does not fit.
  double score(const Plan &plan) const {
    Expected<PlanMetrics> m = evaluatePlan(graph, hw, plan, cfg);
    if (!m) {
      llvm::consumeError(m.takeError());
      return kInf;
    }
    return m->memoryFits ? m->asyncMsPerMicroBatch : kInf;
  }
};

/// A stage formed to the right of the cut that still receives from its left.
/// Only what its final cost and the depth rule need: the nodes it holds
/// that wait for values from the left are in the state's pending map.
struct Open {
  /// Index counted from the right (device numDevices - 1 - j); unique.
  uint32_t j;
  uint32_t height;
  /// The stage's cost no longer depends on what it will receive (it is in
  /// the state's maxClosed already): always with uniform links, and
  /// otherwise when even the slowest link could not change the CCO cost.
  bool final;
  double compute;
  /// Traffic so far (sends are final; receives grow as stages form on the
  /// left).
  double fwd, bwd;
  /// Upper bounds on what it may still receive (slowest link).
  double moreFwd, moreBwd;
};

struct State {
  uint32_t cut;
  /// Stages formed so far.
  uint32_t numStages;
  double maxClosed;
  int64_t parent;
  /// End of the stage formed to reach this state (it starts at `cut`).
  uint32_t stageHi;
  /// Open stages, by ascending j.
  std::vector<Open> open;
  /// For each node of pending[cut] (nodes right of the cut that read a
  /// value from its left), the index in `open` of its stage.
  std::vector<uint32_t> pendingStage;
};

/// Whether `a` is at least as good as `b` for every future. Both have the
/// same key: the same open stages (by j) holding the same pending nodes, so
/// the future adds the same traffic d_F in [0, D], d_B in [0, E] to each. A
/// stage's final cost is max(C, F + d_F) + max(0, B + d_B - C), no larger
/// for `a` whatever is added when C_a <= max(C_b, F_b), F_a <= F_b or
/// F_a + D <= C_b, and B_a - C_a <= B_b - C_b or B_a + E <= C_a; a final
/// stage adds nothing more; a smaller depth never needs more memory later.
bool dominates(const State &a, const State &b) {
  if (a.maxClosed > b.maxClosed)
    return false;
  for (size_t i = 0; i < a.open.size(); ++i) {
    const Open &x = a.open[i], &y = b.open[i];
    if (x.height > y.height)
      return false;
    if (x.final)
      continue;
    if (y.final)
      return false;
    double d = std::max(x.moreFwd, y.moreFwd),
           e = std::max(x.moreBwd, y.moreBwd);
    if (x.compute > std::max(y.compute, y.fwd))
      return false;
    if (x.fwd > y.fwd && x.fwd + d > y.compute)
      return false;
    if (x.bwd - x.compute > y.bwd - y.compute && x.bwd + e > x.compute)
      return false;
  }
  return true;
}

/// What a stage [x, a) formed at cut a holds and receives that does not
/// depend on the state it is formed from, shared by every state at cut a.
/// Most of a state's walk from a leftwards lies where the cut would leave
/// too much compute for the stages still to come, so without these tables
/// each state at a repeats the same per-node work for nothing. Filled
/// lazily, a node at a time from a - 1 down, in the order the walk visits
/// the nodes, so every sum is the one the walk would form itself.
class CutTables {
public:
  /// A value made left of the cut and read right of it, with the indices
  /// in pending[a] of its readers there (ascending) in readers[begin, end).
  struct Crossing {
    NodeId producer;
    ValueId value;
    uint32_t begin, end;
  };

  CutTables(const Graph &graph, llvm::ArrayRef<double> receiveMs)
      : graph(graph), receiveMs(receiveMs), paramStamp(graph.numParams(), 0),
        valueStamp(graph.numValues(), 0), pendingIndex(graph.numNodes(), ~0u) {}

  /// Starts the tables of cut `a`, whose pending nodes are `pendA`.
  void reset(uint32_t a, llvm::ArrayRef<uint32_t> pendA) {
    for (uint32_t y : pending)
      pendingIndex[y] = ~0u;
    pending = pendA;
    for (uint32_t i = 0; i < pendA.size(); ++i)
      pendingIndex[pendA[i]] = i;
    cut = lowest = a;
    ++token;
    act.clear();
    params.clear();
    inputs.clear();
    recvF.clear();
    recvB.clear();
    // Every value crossing the cut leftwards-to-rightwards is read by a
    // pending node; ordered as the walk meets them (producer descending,
    // then a producer's outputs ascending, then readers ascending).
    struct Edge {
      NodeId producer;
      ValueId value;
      uint32_t reader;
    };
    std::vector<Edge> edges;
    for (uint32_t i = 0; i < pendA.size(); ++i)
      for (ValueId u : graph.inputs(NodeId(pendA[i]))) {
        NodeId p = graph.producer(u);
        if (p != kNoNode && p < a)
          edges.push_back({p, u, i});
      }
    llvm::sort(edges, [](const Edge &l, const Edge &r) {
      return std::make_tuple(r.producer, l.value, l.reader) <
             std::make_tuple(l.producer, r.value, r.reader);
    });
    crossings.clear();
    readers.clear();
    for (const Edge &e : edges) {
      if (crossings.empty() || crossings.back().value != e.value)
        crossings.push_back({e.producer, e.value, uint32_t(readers.size()),
                             uint32_t(readers.size())});
      readers.push_back(e.reader);
      ++crossings.back().end;
    }
  }

  /// Makes the totals of [x, a) available.
  void extendTo(uint32_t x) {
    while (lowest > x) {
      NodeId y = NodeId(--lowest);
      bool first = act.empty();
      double a = first ? 0.0 : act.back(), p = first ? 0.0 : params.back(),
             in = first ? 0.0 : inputs.back(), rF = first ? 0.0 : recvF.back(),
             rB = first ? 0.0 : recvB.back();
      a += double(graph.cost(y).actBytes);
      for (ParamId q : graph.params(y))
        if (paramStamp[q] != token) {
          paramStamp[q] = token;
          p += double(graph.paramBytes(q));
        }
      for (ValueId u : graph.inputs(y))
        if (valueStamp[u] != token) {
          valueStamp[u] = token;
          in += double(graph.valueBytes(u));
          if (graph.producer(u) != kNoNode) {
            rF += receiveMs[u];
            if (graph.valueNeedsGrad(u))
              rB += receiveMs[u];
          }
        }
      for (ValueId v : graph.outputs(y)) {
        if (valueStamp[v] == token) {
          in -= double(graph.valueBytes(v)); // now internal
          rF -= receiveMs[v];
          if (graph.valueNeedsGrad(v))
            rB -= receiveMs[v];
        }
        valueStamp[v] = token;
      }
      act.push_back(a);
      params.push_back(p);
      inputs.push_back(in);
      recvF.push_back(rF);
      recvB.push_back(rB);
    }
  }

  /// Totals of [x, a) (after extendTo(x)): activation, parameter and input
  /// bytes, and what the stage receives from the left (exact or a bound).
  double actOf(uint32_t x) const { return act[cut - 1 - x]; }
  double paramsOf(uint32_t x) const { return params[cut - 1 - x]; }
  double inputsOf(uint32_t x) const { return inputs[cut - 1 - x]; }
  double recvFOf(uint32_t x) const { return recvF[cut - 1 - x]; }
  double recvBOf(uint32_t x) const { return recvB[cut - 1 - x]; }
  /// The index of node y in pending[a] (y must be pending there).
  uint32_t indexInPending(uint32_t y) const {
    assert(pendingIndex[y] != ~0u && "not pending");
    return pendingIndex[y];
  }

  std::vector<Crossing> crossings;
  std::vector<uint32_t> readers;

private:
  const Graph &graph;
  llvm::ArrayRef<double> receiveMs;
  std::vector<uint32_t> paramStamp, valueStamp, pendingIndex;
  llvm::ArrayRef<uint32_t> pending;
  uint32_t token = 0, cut = 0, lowest = 0;
  std::vector<double> act, params, inputs, recvF, recvB;
};

} // namespace

/// Builds the "does not fit" error with a hint.
/// Memory every plan needs at least, summed over devices: each weight once
/// with its gradient and optimizer state, every node's saved activations
/// once (one micro-batch in flight, or one recomputed micro-batch per
/// stage), and the reserve of one device.
static double memoryLowerBound(const Problem &pb) {
  double act = 0.0;
  for (NodeId x = 0; x < pb.numNodes; ++x)
    act += double(pb.graph.cost(x).actBytes);
  return double(pb.graph.totalParamBytes()) * (2 + pb.stateFactor) + act +
         double(pb.cfg.reservedBytesPerDevice);
}

static double usableMemory(const Problem &pb) {
  double budget = 0.0;
  for (size_t d = pb.numDevices - pb.maxStages; d < pb.numDevices; ++d)
    budget += double(pb.hw.device(DeviceId(d)).memoryBytes);
  return budget;
}

/// For every prefix [0, c) of the nodes, the fewest contiguous stages it
/// splits into when a stage only has to keep its compute (on device 0's
/// scale) within `maxCompute`, and its parameters with their gradients and
/// optimizer state, its activations and the reserve within `maxBytes`. Every
/// stage the DP forms obeys both (traffic, inputs and deeper pipelines only
/// add), so a cut whose prefix needs more stages than are left cannot be
/// completed. Cutting greedily from the left gives the fewest, since any
/// part of a stage that fits fits too; a node that does not fit alone
/// counts as one stage.
static std::vector<uint32_t>
fewestStagesOfPrefixes(const Problem &pb, double maxCompute, double maxBytes) {
  const Graph &graph = pb.graph;
  std::vector<uint32_t> fewest(pb.numNodes + 1, 0);
  // paramStage[p]: the last stage that reads p, 1-based.
  std::vector<uint32_t> paramStage(graph.numParams(), 0);
  uint32_t stage = 0;
  double compute = 0.0, params = 0.0, act = 0.0;
  for (NodeId x = 0; x < pb.numNodes; ++x) {
    double moreParams = 0.0;
    for (ParamId p : graph.params(x))
      if (paramStage[p] != stage)
        moreParams += double(graph.paramBytes(p));
    double c = compute + pb.nodeCompute[x], pBytes = params + moreParams,
           a = act + double(graph.cost(x).actBytes);
    if (stage == 0 || c > maxCompute ||
        pBytes * (2 + pb.stateFactor) + a +
                double(pb.cfg.reservedBytesPerDevice) >
            maxBytes) {
      ++stage;
      c = pb.nodeCompute[x];
      pBytes = double(graph.nodeParamBytes(x));
      a = double(graph.cost(x).actBytes);
    }
    for (ParamId p : graph.params(x))
      paramStage[p] = stage;
    compute = c;
    params = pBytes;
    act = a;
    fewest[x + 1] = stage;
  }
  return fewest;
}

/// Builds the "does not fit" error with a hint.
static Error noFitError(const Problem &pb, double smallestShortfallNeed,
                        double smallestShortfallHave) {
  double fixed = memoryLowerBound(pb);
  double budget = usableMemory(pb);
  std::string detail =
      fixed > budget
          ? llvm::formatv("weights, gradients, optimizer state and one "
                          "micro-batch of activations need at least {0} and "
                          "{1} devices have {2}",
                          gib(fixed), pb.maxStages, gib(budget))
                .str()
      : smallestShortfallNeed > 0
          ? llvm::formatv("a stage that did not fit needed {0} on a device "
                          "with {1}",
                          gib(smallestShortfallNeed),
                          gib(smallestShortfallHave))
                .str()
          : std::string("every split needs more stages than devices");
  return makeError(llvm::formatv(
      "no contiguous split of {0} nodes into at most {1} stages fits in "
      "memory ({2}); more devices, recomputation, a smaller micro-batch or an "
      "optimizer with less state would help",
      pb.numNodes, pb.maxStages, detail));
}

using SeqPipeMethod = Expected<SeqPipeResult> (*)(const Graph &,
                                                  const Hardware &,
                                                  const SeqPipeConfig &);

/// Runs `method` without polishing, then polishes its plan.
static Expected<SeqPipeResult> solveAndPolish(const Graph &graph,
                                              const Hardware &hw,
                                              const SeqPipeConfig &config,
                                              SeqPipeMethod method) {
  SeqPipeConfig unpolished = config;
  unpolished.polishSimulations = 0;
  Expected<SeqPipeResult> result = method(graph, hw, unpolished);
  if (!result)
    return result;
  if (Error err = polishCutsBySimulation(graph, hw, config.objective,
                                         config.polishSimulations, *result))
    return std::move(err);
  return result;
}

Expected<SeqPipeResult>
ftpipe::partition::seqPipeGreedy(const Graph &graph, const Hardware &hw,
                                 const SeqPipeConfig &config) {
  if (Error err = config.validate())
    return std::move(err);
  if (config.polishSimulations)
    return solveAndPolish(graph, hw, config, seqPipeGreedy);
  if (graph.numNodes() == 0)
    return makeError("seq-pipe: the graph has no nodes");
  Problem pb(graph, hw, config);
  if (memoryLowerBound(pb) > usableMemory(pb))
    return noFitError(pb, 0.0, 0.0);
  size_t n = pb.numNodes, smax = pb.maxStages;

  double needWorst = 0.0, haveWorst = 0.0;
  std::vector<uint32_t> paramStamp(graph.numParams(), 0),
      valueStamp(graph.numValues(), 0);
  uint32_t token = 0;
  // Cuts for target T, or false when it needs more than smax stages or a
  // node does not fit alone. Stage k is assumed to be on device P - smax + k
  // with height smax - 1 - k (the most it can have), so memory is safe.
  auto cutFor = [&](double target, std::vector<uint32_t> &cuts) {
    cuts.clear();
    size_t k = 0, lo = 0;
    double c = 0, recvF = 0, recvB = 0, params = 0, act = 0, inputs = 0;
    ++token;
    for (size_t x = 0; x < n;) {
      DeviceId dev = DeviceId(pb.numDevices - smax + k);
      double budget = double(hw.device(dev).memoryBytes);
      // Try adding x to the current stage [lo, x).
      double c2 = c + pb.nodeCompute[x] / pb.speed[dev];
      double rF = recvF, rB = recvB, pBytes = params, in = inputs;
      double a2 = act + double(graph.cost(NodeId(x)).actBytes);
      for (ParamId p : graph.params(NodeId(x)))
        if (paramStamp[p] != token)
          pBytes += double(graph.paramBytes(p));
      for (ValueId u : graph.inputs(NodeId(x))) {
        if (valueStamp[u] == token)
          continue;
        in += double(graph.valueBytes(u));
        NodeId p = graph.producer(u);
        if (p == kNoNode || p >= lo)
          continue;
        DeviceId from =
            DeviceId(pb.numDevices - smax + (k == 0 ? 0 : k - 1)); // estimate
        double t = hw.transferMs(graph.valueBytes(u), from, dev);
        rF += t;
        if (graph.valueNeedsGrad(u))
          rB += t;
      }
      double mem = pb.memory(pBytes, a2, in, uint32_t(smax - 1 - k));
      bool fits = mem <= budget && Problem::cco(c2, rF, rB) <= target;
      if (!fits && x > lo) {
        // Close [lo, x) and start a new stage at x.
        cuts.push_back(uint32_t(x));
        if (++k >= smax)
          return false;
        lo = x;
        c = recvF = recvB = params = act = inputs = 0;
        ++token;
        continue;
      }
      if (mem > budget) {
        if (needWorst == 0.0 || mem < needWorst) {
          needWorst = mem;
          haveWorst = budget;
        }
        return false;
      }
      // Commit x.
      for (ParamId p : graph.params(NodeId(x)))
        paramStamp[p] = token;
      for (ValueId u : graph.inputs(NodeId(x)))
        valueStamp[u] = token;
      // x's own results consumed inside the stage are not inputs; results
      // are marked so later consumers in the stage do not count them.
      for (ValueId v : graph.outputs(NodeId(x)))
        valueStamp[v] = token;
      c = c2;
      recvF = rF;
      recvB = rB;
      params = pBytes;
      act = a2;
      inputs = in;
      ++x;
    }
    return true;
  };

  SeqPipeResult best;
  best.objectiveMs = kInf;
  std::vector<uint32_t> cuts;
  auto consider = [&](const std::vector<uint32_t> &c) {
    Plan plan = contiguousPlan(n, c, pb.numDevices);
    double score = pb.score(plan);
    if (score < best.objectiveMs) {
      best.objectiveMs = score;
      best.plan = std::move(plan);
    }
  };
  double lo = 0.0, hi = pb.prefixCompute[n];
  // Upper end: everything on one device plus all traffic, doubled until it
  // is feasible (or clearly hopeless).
  double total = 0.0;
  for (ValueId v = 0; v < graph.numValues(); ++v)
    total += hw.transferMs(graph.valueBytes(v), 0,
                           DeviceId(pb.numDevices > 1 ? 1 : 0)) *
             double(graph.consumers(v).size());
  hi = std::max(hi, pb.prefixCompute[n] / pb.speed[0]) + 2 * total + 1e-9;
  bool any = false;
  for (int i = 0; i < 8 && !any; ++i) {
    ++best.work;
    if (cutFor(hi, cuts)) {
      any = true;
      consider(cuts);
    } else {
      hi *= 2;
    }
  }
  if (!any)
    return noFitError(pb, needWorst, haveWorst);
  for (int i = 0; i < 60 && hi - lo > 1e-9 * hi; ++i) {
    double mid = 0.5 * (lo + hi);
    ++best.work;
    if (cutFor(mid, cuts)) {
      hi = mid;
      consider(cuts);
    } else {
      lo = mid;
    }
  }
  if (best.objectiveMs == kInf)
    return noFitError(pb, needWorst, haveWorst);
  return std::move(best);
}

Expected<SeqPipeResult>
ftpipe::partition::seqPipeDP(const Graph &graph, const Hardware &hw,
                             const SeqPipeConfig &config) {
  if (Error err = config.validate())
    return std::move(err);
  if (config.polishSimulations)
    return solveAndPolish(graph, hw, config, seqPipeDP);
  if (graph.numNodes() == 0)
    return makeError("seq-pipe: the graph has no nodes");
  Problem pb(graph, hw, config);
  if (memoryLowerBound(pb) > usableMemory(pb))
    return noFitError(pb, 0.0, 0.0);
  size_t n = pb.numNodes, smax = pb.maxStages, numDevices = pb.numDevices;

  // pending[c]: nodes y >= c that read a value produced left of c, i.e.
  // minProducer[y] < c; ascending. Their total size is the sum over nodes
  // of how far back they read, small for graphs with local edges.
  std::vector<std::vector<uint32_t>> pending(n + 1);
  uint64_t pendingSize = 0;
  for (uint32_t y = 0; y < n; ++y)
    if (pb.minProducer[y] < y)
      pendingSize += y - pb.minProducer[y];
  if (pendingSize > 50'000'000)
    return makeError(llvm::formatv(
        "seq-pipe dp: values live across too many cuts ({0} node-cut pairs "
        "on {1} nodes); use the greedy method or coarsen the graph first",
        pendingSize, n));
  for (uint32_t y = 0; y < n; ++y)
    for (uint32_t c = pb.minProducer[y] + 1; c <= y && c <= n; ++c)
      pending[c].push_back(y);

  // Upper bound from the greedy plan (any feasible plan will do).
  double upper = kInf;
  SeqPipeResult greedy;
  greedy.objectiveMs = kInf;
  if (config.greedyBound) {
    if (Expected<SeqPipeResult> g = seqPipeGreedy(graph, hw, config)) {
      greedy = std::move(*g);
      upper = greedy.objectiveMs * (1 + 1e-9) + 1e-12;
    } else {
      llvm::consumeError(g.takeError());
    }
  }
  double fastest = 0.0;
  for (size_t d = numDevices - smax; d < numDevices; ++d)
    fastest = std::max(fastest, pb.speed[d]);
  // Links are uniform when every pair of the devices in use has the same
  // bandwidth and latency (all presets but the V100 cube mesh).
  bool uniform = true;
  DeviceId first = DeviceId(numDevices - smax);
  for (size_t d1 = first; d1 < numDevices; ++d1)
    for (size_t d2 = first; d2 < numDevices; ++d2)
      if (d1 != d2) {
        const LinkParams &l = hw.link(DeviceId(d1), DeviceId(d2));
        const LinkParams &l0 = hw.link(first, first + 1);
        uniform &= l.GBps == l0.GBps && l.latencyUs == l0.latencyUs;
      }
  // What a stage receives is priced when it is formed: exactly with
  // uniform links, else as an upper bound with the slowest link.
  double slowGBps = kInf, slowLatencyUs = 0.0;
  for (size_t d1 = first; d1 < numDevices; ++d1)
    for (size_t d2 = first; d2 < numDevices; ++d2)
      if (d1 != d2) {
        const LinkParams &l = hw.link(DeviceId(d1), DeviceId(d2));
        slowGBps = std::min(slowGBps, l.GBps);
        slowLatencyUs = std::max(slowLatencyUs, l.latencyUs);
      }
  std::vector<double> receiveMs(graph.numValues(), 0.0);
  if (smax > 1)
    for (ValueId v = 0; v < graph.numValues(); ++v)
      receiveMs[v] = uniform
                         ? hw.transferMs(graph.valueBytes(v), first, first + 1)
                         : double(graph.valueBytes(v)) / (slowGBps * 1e6) +
                               slowLatencyUs * 1e-3;

  // maxCut[j]: the stage formed j-th from the right may start at cut c
  // only when c <= maxCut[j]: when the compute left of c fits in the
  // stages still to come at the bound, and so do the prefix's stages one
  // by one, memory included. Both only grow with c. This prunes exactly
  // the states that cannot be completed, which the search would otherwise
  // expand (with a loose bound and tight memory, nearly all of them).
  double maxBytes = 0.0;
  for (size_t d = first; d < numDevices; ++d)
    maxBytes = std::max(maxBytes, double(hw.device(DeviceId(d)).memoryBytes));
  std::vector<uint32_t> fewest =
      fewestStagesOfPrefixes(pb, upper * fastest * (1 + 1e-9), maxBytes);
  std::vector<uint32_t> maxCut(smax, 0);
  for (size_t j = 0; j < smax; ++j) {
    size_t left = smax - (j + 1);
    if (left == 0)
      continue;
    while (maxCut[j] < n &&
           pb.prefixCompute[maxCut[j] + 1] / (double(left) * fastest) <=
               upper &&
           fewest[maxCut[j] + 1] <= left)
      ++maxCut[j];
  }

  std::vector<State> states;
  states.push_back({uint32_t(n), 0, 0.0, -1, 0, {}, {}});
  // Buckets per cut: key -> state ids (the Pareto front of that key).
  std::vector<std::map<std::vector<uint32_t>, std::vector<int64_t>>> buckets(n +
                                                                             1);
  buckets[n][{0}].push_back(0);

  double bestCost = kInf;
  int64_t bestParent = -1;
  uint32_t bestLast = 0;
  double needWorst = 0.0, haveWorst = 0.0;

  CutTables tables(graph, receiveMs);
  std::vector<double> dFwd, dBwd;
  std::vector<uint32_t> seenValue, remap, runEnd, nextKey;
  State next; // the candidate, built in place; copied when kept
  std::vector<char> receives;
  uint64_t created = 1;
  // Work done, counted in node steps plus the consumers and pending nodes
  // each step visits (a value read by thousands of ops makes one step
  // that long); bounded like the states, since without a good upper bound
  // every state may extend its stage back to the first node.
  uint64_t steps = 0, maxSteps = config.maxStates * 64;
  auto overBudget = [&] {
    return makeError(llvm::formatv(
        "seq-pipe dp: gave up after {0} steps on {1} nodes; use the "
        "greedy method or coarsen the graph first",
        maxSteps, n));
  };

  for (size_t a = n; a >= 1; --a) {
    const std::vector<uint32_t> &pendA = pending[a];
    if (llvm::any_of(buckets[a], [](const auto &front) {
          return llvm::any_of(front.second, [](int64_t id) { return id >= 0; });
        }))
      tables.reset(uint32_t(a), pendA);
    for (auto &[key, ids] : buckets[a]) {
      for (int64_t id : ids) {
        if (id < 0)
          continue;                      // dominated after insertion
        State from = states[size_t(id)]; // copy: `states` grows below
        steps += from.pendingStage.size() + from.open.size();
        uint32_t j = from.numStages;
        if (j >= smax)
          continue;
        DeviceId dev = DeviceId(numDevices - 1 - j);
        double budget = double(hw.device(dev).memoryBytes);
        size_t numOpen = from.open.size();
        dFwd.assign(numOpen, 0.0);
        dBwd.assign(numOpen, 0.0);
        receives.assign(numOpen, 0);
        seenValue.assign(numOpen, ~0u);
        double c = 0, sendF = 0, sendB = 0;
        uint32_t height = 0;
        // runEnd[i]: the last pending index after i whose node sits in the
        // same open stage as pendA[i], with all between (a stage's pending
        // nodes are consecutive, as its nodes are): a value read by many
        // nodes of one open stage is priced at the first and the others
        // are skipped.
        size_t numPending = from.pendingStage.size();
        runEnd.resize(numPending);
        for (size_t i = numPending; i-- > 0;)
          runEnd[i] = i + 1 < numPending &&
                              from.pendingStage[i + 1] == from.pendingStage[i]
                          ? runEnd[i + 1]
                          : uint32_t(i);
        size_t nextCrossing = 0;
        for (size_t x = a; x-- > 0;) {
          if (++steps > maxSteps)
            return overBudget();
          // Extend the new stage to [x, a).
          c += pb.nodeCompute[x] / pb.speed[dev];
          if (c > upper)
            break;
          tables.extendTo(uint32_t(x));
          double act = tables.actOf(uint32_t(x)),
                 params = tables.paramsOf(uint32_t(x)),
                 inputs = tables.inputsOf(uint32_t(x));
          // Receives: exact, or bounds (receiveMs).
          double recvF = tables.recvFOf(uint32_t(x)),
                 recvB = tables.recvBOf(uint32_t(x));
          // Values x makes that are read right of the cut: each destination
          // (an open stage) is priced once. Steps count every reader, as
          // when they were visited one by one.
          for (; nextCrossing < tables.crossings.size() &&
                 tables.crossings[nextCrossing].producer == x;
               ++nextCrossing) {
            const CutTables::Crossing &cr = tables.crossings[nextCrossing];
            ValueId v = cr.value;
            steps += cr.end - cr.begin;
            const uint32_t *rd = tables.readers.data();
            for (const uint32_t *it = rd + cr.begin, *end = rd + cr.end;
                 it != end;) {
              uint32_t i = *it;
              uint32_t o = from.pendingStage[i];
              it = std::upper_bound(it, end, runEnd[i]);
              if (seenValue[o] == v)
                continue;
              seenValue[o] = v;
              DeviceId to = DeviceId(numDevices - 1 - from.open[o].j);
              double t = hw.transferMs(graph.valueBytes(v), dev, to);
              sendF += t;
              if (!from.open[o].final)
                dFwd[o] += t;
              if (graph.valueNeedsGrad(v)) {
                double tb = hw.transferMs(graph.valueBytes(v), to, dev);
                sendB += tb;
                if (!from.open[o].final)
                  dBwd[o] += tb;
              }
              if (!receives[o]) {
                receives[o] = 1;
                height = std::max(height, from.open[o].height + 1);
              }
            }
          }
          if (steps > maxSteps)
            return overBudget();
          double fixedMem = params * (2 + pb.stateFactor) + act +
                            double(pb.cfg.reservedBytesPerDevice);
          if (fixedMem > budget) {
            if (needWorst == 0.0 || fixedMem < needWorst) {
              needWorst = fixedMem;
              haveWorst = budget;
            }
            break; // only grows as the stage grows
          }
          double mem = pb.memory(params, act, inputs, height);
          if (mem > budget) {
            if (needWorst == 0.0 || mem < needWorst) {
              needWorst = mem;
              haveWorst = budget;
            }
            continue;
          }
          uint32_t cut = uint32_t(x);
          if (cut > maxCut[j])
            continue;

          // Stages still pending at the new cut stay open; the others are
          // final.
          const std::vector<uint32_t> &pendX = pending[cut];
          // Both loops over pendX below, and the state copy.
          steps += 2 * pendX.size() + numOpen;
          if (steps > maxSteps)
            return overBudget();
          remap.assign(numOpen, ~0u);
          bool mineOpen = false;
          for (uint32_t y : pendX) {
            if (y < a) {
              mineOpen = true;
              continue;
            }
            remap[from.pendingStage[tables.indexInPending(y)]] = 0; // open
          }
          next.open.clear();
          next.pendingStage.clear();
          next.cut = cut;
          next.numStages = j + 1;
          next.maxClosed = from.maxClosed;
          next.parent = id;
          next.stageHi = uint32_t(a);
          bool pruned = false;
          for (size_t o = 0; o < numOpen && !pruned; ++o) {
            Open st = from.open[o];
            double cost = 0.0;
            if (!st.final) {
              st.fwd += dFwd[o];
              st.bwd += dBwd[o];
              cost = Problem::cco(st.compute, st.fwd, st.bwd);
            }
            if (cost > upper) {
              pruned = true;
            } else if (remap[o] != ~0u) {
              remap[o] = uint32_t(next.open.size());
              next.open.push_back(st);
            } else {
              next.maxClosed = std::max(next.maxClosed, cost);
            }
          }
          // The new stage's cost is final now when its receives cannot
          // change it: with uniform links (every value read from the left
          // crosses once, priced exactly) or when even the slowest link
          // leaves the CCO cost as it is.
          double lowCost = Problem::cco(c, sendF, sendB);
          double highCost = Problem::cco(c, sendF + recvF, sendB + recvB);
          bool final = uniform || !mineOpen || highCost == lowCost;
          double myCost = uniform ? highCost : lowCost;
          if (pruned || myCost > upper)
            continue;
          uint32_t mine = uint32_t(next.open.size());
          if (final)
            next.maxClosed = std::max(next.maxClosed, myCost);
          if (mineOpen) {
            if (final)
              next.open.push_back({j, height, true, 0.0, 0.0, 0.0, 0.0, 0.0});
            else
              next.open.push_back(
                  {j, height, false, c, sendF, sendB, recvF, recvB});
          }
          if (next.maxClosed > upper)
            continue;
          if (cut == 0) {
            if (next.maxClosed < bestCost) {
              bestCost = next.maxClosed;
              bestParent = id;
              bestLast = uint32_t(a);
            }
            continue;
          }
          nextKey.assign(1, next.numStages);
          for (uint32_t y : pendX) {
            uint32_t o;
            if (y < a) {
              o = mine;
            } else {
              o = remap[from.pendingStage[tables.indexInPending(y)]];
            }
            next.pendingStage.push_back(o);
            nextKey.push_back(next.open[o].j);
          }
          auto bucket = buckets[cut].find(nextKey);
          if (bucket == buckets[cut].end())
            bucket =
                buckets[cut].emplace(nextKey, std::vector<int64_t>()).first;
          std::vector<int64_t> &front = bucket->second;
          bool dominated = false;
          for (int64_t other : front)
            if (other >= 0 && dominates(states[size_t(other)], next)) {
              dominated = true;
              break;
            }
          if (dominated)
            continue;
          for (int64_t &other : front)
            if (other >= 0 && dominates(next, states[size_t(other)]))
              other = -1;
          if (++created > config.maxStates)
            return makeError(llvm::formatv(
                "seq-pipe dp: gave up after {0} states on {1} nodes (values "
                "that live across many cuts multiply the states); use the "
                "greedy method or coarsen the graph first",
                config.maxStates, n));
          front.push_back(int64_t(states.size()));
          states.push_back(next);
        }
      }
    }
    // States at cut a are never expanded again: keep only what rebuilds
    // the plan.
    for (auto &[key, ids] : buckets[a])
      for (int64_t id : ids)
        if (id >= 0) {
          std::vector<Open>().swap(states[size_t(id)].open);
          std::vector<uint32_t>().swap(states[size_t(id)].pendingStage);
        }
    buckets[a].clear();
  }

  if (bestParent < 0) {
    if (greedy.objectiveMs < kInf) {
      // The greedy plan is optimal up to rounding (nothing beat the bound).
      greedy.work = steps;
      return std::move(greedy);
    }
    return noFitError(pb, needWorst, haveWorst);
  }
  std::vector<uint32_t> cuts = {bestLast};
  for (int64_t s = bestParent; s > 0; s = states[size_t(s)].parent)
    cuts.push_back(states[size_t(s)].stageHi);
  cuts.pop_back(); // the last stage ends at N: not a cut
  SeqPipeResult result;
  result.plan = contiguousPlan(n, cuts, numDevices);
  result.objectiveMs = pb.score(result.plan);
  result.work = steps;
  if (greedy.objectiveMs < result.objectiveMs)
    return std::move(greedy); // equal up to rounding: keep the bound's plan
  return std::move(result);
}

Error ftpipe::partition::polishCutsBySimulation(
    const Graph &graph, const Hardware &hw, const ObjectiveConfig &objective,
    uint32_t maxSimulations, SeqPipeResult &result) {
  Plan &plan = result.plan;
  size_t n = plan.nodeStage.size();
  // cuts[c]: the first node of stage c + 1.
  std::vector<uint32_t> cuts;
  for (size_t x = 0; x < n; ++x) {
    StageId expected = x == 0 ? 0 : plan.nodeStage[x - 1];
    if (plan.nodeStage[x] == expected + 1 && x > 0)
      cuts.push_back(uint32_t(x));
    else if (plan.nodeStage[x] != expected)
      return makeError("seq-pipe: polishing needs a contiguous plan (stage "
                       "ids ascending in node order)");
  }
  if (cuts.size() + 1 != plan.stageDevice.size())
    return makeError("seq-pipe: polishing needs a contiguous plan without "
                     "empty stages");
  if (maxSimulations == 0 || cuts.empty())
    return Error::success();

  Expected<PlanFigures> best = measurePlan(graph, hw, plan, objective);
  if (!best)
    return best.takeError();
  // Nodes [lo, hi) go to `stage`.
  auto assign = [&](uint32_t lo, uint32_t hi, StageId stage) {
    std::fill(plan.nodeStage.begin() + lo, plan.nodeStage.begin() + hi, stage);
  };
  // Cut c moved to `to`: nodes between the old and the new place change
  // from one of its stages to the other.
  auto moveCut = [&](size_t c, uint32_t to) {
    if (to > cuts[c])
      assign(cuts[c], to, StageId(c));
    else
      assign(to, cuts[c], StageId(c + 1));
    cuts[c] = to;
  };
  uint32_t simulations = 0;
  bool improved = true;
  while (improved && simulations < maxSimulations) {
    improved = false;
    for (size_t c = 0; c < cuts.size() && simulations < maxSimulations; ++c) {
      uint32_t home = cuts[c];
      int64_t lo = c == 0 ? 1 : cuts[c - 1] + 1;
      int64_t hi = c + 1 == cuts.size() ? int64_t(n) - 1 : cuts[c + 1] - 1;
      std::optional<uint32_t> bestTo;
      PlanFigures bestHere = *best;
      for (int64_t sign : {-1, 1})
        for (int64_t step = 1; simulations < maxSimulations; step *= 2) {
          int64_t to = int64_t(home) + sign * step;
          if (to < lo || to > hi)
            break;
          moveCut(c, uint32_t(to));
          // Only plans that keep the objective and memory are simulated; a
          // longer shift only grows the stage that grew here further.
          Expected<std::optional<PlanFigures>> figures =
              measurePlanIfObjectiveHolds(graph, hw, plan, objective, *best);
          moveCut(c, home);
          if (!figures)
            return figures.takeError();
          if (!*figures)
            break;
          ++simulations;
          if ((*figures)->noSlowerThan(bestHere) &&
              (*figures)->fasterThan(bestHere)) {
            bestHere = **figures;
            bestTo = uint32_t(to);
          }
        }
      if (bestTo) {
        moveCut(c, *bestTo);
        best = bestHere;
        improved = true;
      }
    }
  }
  result.objectiveMs = best->objectiveMs;
  return Error::success();
}
