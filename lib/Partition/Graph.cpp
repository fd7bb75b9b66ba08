//===- Graph.cpp - Validating graph builder -----------------------------===//
//
// GraphBuilder checks every id, the topological order and the costs, then
// lays the graph out as CSR arrays and derives the node adjacency.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Graph.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace ftpipe::partition;
using llvm::Error;
using llvm::Expected;

static Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

NodeId GraphBuilder::addNode(llvm::StringRef scope, llvm::StringRef type,
                             NodeCost cost) {
  nodes.push_back({scope.str(), type.str(), cost, {}});
  return NodeId(nodes.size() - 1);
}

ParamId GraphBuilder::addParam(llvm::StringRef name, uint64_t bytes,
                               bool frozen) {
  paramRecs.push_back({name.str(), bytes, frozen});
  return ParamId(paramRecs.size() - 1);
}

void GraphBuilder::addParamUse(NodeId node, ParamId param) {
  if (node >= nodes.size()) {
    badParamUses.push_back({node, param});
    return;
  }
  nodes[node].params.push_back(param);
}

ValueId GraphBuilder::addValue(NodeId producer, uint64_t bytes,
                               llvm::ArrayRef<NodeId> consumers,
                               bool needsGrad) {
  values.push_back({producer, bytes, consumers.vec(), needsGrad});
  return ValueId(values.size() - 1);
}

void GraphBuilder::addConsumer(ValueId value, NodeId consumer) {
  if (value >= values.size()) {
    badConsumerAdds.push_back({value, consumer});
    return;
  }
  values[value].consumers.push_back(consumer);
}

static bool validTime(double t) {
  return std::isfinite(t) && t >= 0.0 && t <= kMaxOpMs;
}

/// Builds CSR offsets + list from per-row vectors.
template <typename T>
static void toCSR(const std::vector<std::vector<T>> &rows,
                  std::vector<uint32_t> &offsets, std::vector<T> &list) {
  offsets.assign(rows.size() + 1, 0);
  for (size_t i = 0; i < rows.size(); ++i)
    offsets[i + 1] = offsets[i] + uint32_t(rows[i].size());
  list.clear();
  list.reserve(offsets.back());
  for (const auto &row : rows)
    list.insert(list.end(), row.begin(), row.end());
}

Expected<Graph> GraphBuilder::build() {
  // Take the contents so the builder is empty whatever happens.
  std::vector<NodeRec> ns = std::move(nodes);
  std::vector<ValueRec> vs = std::move(values);
  std::vector<ParamRec> ps = std::move(paramRecs);
  auto badUses = std::move(badParamUses);
  auto badAdds = std::move(badConsumerAdds);
  nodes.clear();
  values.clear();
  paramRecs.clear();
  badParamUses.clear();
  badConsumerAdds.clear();

  if (!badUses.empty())
    return makeError(llvm::formatv(
        "parameter use of param {0} names node {1}, but only {2} nodes exist",
        badUses.front().second, badUses.front().first, ns.size()));
  if (!badAdds.empty())
    return makeError(llvm::formatv(
        "consumer {0} added to value {1}, but only {2} values exist",
        badAdds.front().second, badAdds.front().first, vs.size()));
  if (ns.size() >= size_t(kNoNode) || vs.size() >= size_t(kNoNode))
    return makeError("graph too large for 32-bit ids");

  size_t numNodes = ns.size();
  for (size_t n = 0; n < numNodes; ++n) {
    const NodeCost &c = ns[n].cost;
    if (!validTime(c.fwdMs) || !validTime(c.bwdMs))
      return makeError(llvm::formatv(
          "node {0} ('{1}'): forward/backward time must be non-negative and at "
          "most {4} ms, "
          "got {2} / {3} ms",
          n, ns[n].scope, c.fwdMs, c.bwdMs, kMaxOpMs));
    if (!(c.bwdWeightMs >= 0.0 && c.bwdWeightMs <= c.bwdMs))
      return makeError(llvm::formatv(
          "node {0} ('{1}'): the weight part of the backward must be between "
          "0 and the backward time ({2} ms), got {3} ms",
          n, ns[n].scope, c.bwdMs, c.bwdWeightMs));
    if (c.actBytes > kMaxGraphBytes || c.outBytes > kMaxGraphBytes)
      return makeError(llvm::formatv(
          "node {0} ('{1}'): activation/output bytes must be at most {2}, "
          "got {3} / {4}",
          n, ns[n].scope, kMaxGraphBytes, c.actBytes, c.outBytes));
    std::vector<ParamId> &params = ns[n].params;
    std::sort(params.begin(), params.end());
    for (size_t i = 0; i < params.size(); ++i) {
      if (params[i] >= ps.size())
        return makeError(
            llvm::formatv("node {0} reads param {1}, but only {2} params exist",
                          n, params[i], ps.size()));
      if (i > 0 && params[i] == params[i - 1])
        return makeError(
            llvm::formatv("node {0} reads param {1} twice", n, params[i]));
    }
  }

  for (size_t p = 0; p < ps.size(); ++p)
    if (ps[p].bytes > kMaxGraphBytes)
      return makeError(llvm::formatv(
          "parameter {0} ('{1}'): bytes must be at most {2}, got {3}", p,
          ps[p].name, kMaxGraphBytes, ps[p].bytes));

  std::vector<std::vector<ValueId>> outs(numNodes), ins(numNodes);
  std::vector<std::vector<NodeId>> succ(numNodes), pred(numNodes);
  for (size_t v = 0; v < vs.size(); ++v) {
    ValueRec &val = vs[v];
    if (val.bytes > kMaxGraphBytes)
      return makeError(
          llvm::formatv("value {0}: bytes must be at most {1}, got {2}", v,
                        kMaxGraphBytes, val.bytes));
    if (val.producer != kNoNode && val.producer >= numNodes)
      return makeError(llvm::formatv(
          "value {0} is produced by node {1}, but only {2} nodes exist", v,
          val.producer, numNodes));
    std::sort(val.consumers.begin(), val.consumers.end());
    for (size_t i = 0; i < val.consumers.size(); ++i) {
      NodeId c = val.consumers[i];
      if (c >= numNodes)
        return makeError(llvm::formatv(
            "value {0} is consumed by node {1}, but only {2} nodes exist", v, c,
            numNodes));
      if (i > 0 && c == val.consumers[i - 1])
        return makeError(
            llvm::formatv("value {0} lists consumer {1} twice", v, c));
      if (val.producer != kNoNode && c <= val.producer)
        return makeError(llvm::formatv(
            "value {0} flows from node {1} to node {2}: node ids must be a "
            "topological order (every consumer after its producer)",
            v, val.producer, c));
      ins[c].push_back(ValueId(v));
      if (val.producer != kNoNode) {
        succ[val.producer].push_back(c);
        pred[c].push_back(val.producer);
      }
    }
    if (val.producer != kNoNode)
      outs[val.producer].push_back(ValueId(v));
  }
  auto sortUnique = [](std::vector<NodeId> &list) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  };
  for (size_t n = 0; n < numNodes; ++n) {
    sortUnique(succ[n]);
    sortUnique(pred[n]);
  }

  Graph g;
  g.costs.reserve(numNodes);
  g.scopes.reserve(numNodes);
  g.types.reserve(numNodes);
  g.nodeParamBytesArr.assign(numNodes, 0);
  std::vector<std::vector<ParamId>> nodeParams(numNodes);
  std::vector<std::vector<NodeId>> readers(ps.size());
  for (size_t n = 0; n < numNodes; ++n) {
    NodeRec &rec = ns[n];
    g.costs.push_back(rec.cost);
    g.scopes.push_back(std::move(rec.scope));
    g.types.push_back(std::move(rec.type));
    double c = rec.cost.fwdMs + rec.cost.bwdMs;
    g.totalCompute += c;
    g.maxNodeCompute = std::max(g.maxNodeCompute, c);
    for (ParamId p : rec.params) {
      g.nodeParamBytesArr[n] += ps[p].bytes;
      readers[p].push_back(NodeId(n));
    }
    nodeParams[n] = std::move(rec.params);
  }
  toCSR(outs, g.nodeOutOffsets, g.nodeOuts);
  toCSR(ins, g.nodeInOffsets, g.nodeIns);
  toCSR(succ, g.succOffsets, g.succList);
  toCSR(pred, g.predOffsets, g.predList);
  toCSR(nodeParams, g.nodeParamOffsets, g.nodeParamList);
  toCSR(readers, g.paramReaderOffsets, g.paramReaderList);

  std::vector<std::vector<NodeId>> cons(vs.size());
  g.valueProducers.reserve(vs.size());
  g.valueBytesArr.reserve(vs.size());
  g.valueGrad.reserve(vs.size());
  for (size_t v = 0; v < vs.size(); ++v) {
    g.valueProducers.push_back(vs[v].producer);
    g.valueBytesArr.push_back(vs[v].bytes);
    g.valueGrad.push_back(vs[v].needsGrad ? 1 : 0);
    cons[v] = std::move(vs[v].consumers);
  }
  toCSR(cons, g.valueConsOffsets, g.valueConsList);

  g.paramBytesArr.reserve(ps.size());
  g.paramNames.reserve(ps.size());
  for (ParamRec &p : ps) {
    g.paramBytesArr.push_back(p.bytes);
    g.totalParams += p.bytes;
    g.paramNames.push_back(std::move(p.name));
    g.paramFrozenArr.push_back(p.frozen ? 1 : 0);
  }
  return std::move(g);
}

//===----------------------------------------------------------------------===//
// Random graphs
//===----------------------------------------------------------------------===//

namespace {
/// SplitMix64: tiny, fast, and the same sequence on every platform (unlike
/// the std distributions, whose output is implementation-defined).
class Rng {
public:
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1).
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Uniform in [lo, hi].
  uint64_t range(uint64_t lo, uint64_t hi) {
    return lo + next() % (hi - lo + 1);
  }
  bool chance(double p) { return uniform() < p; }

private:
  uint64_t state;
};
} // namespace

static NodeCost randomCost(Rng &rng, const RandomGraphOptions &o,
                           uint64_t outBytes) {
  NodeCost c;
  // Round to 1/1024 ms so sums are exact in double (helps property tests
  // that compare incremental and from-scratch totals).
  auto round = [](double x) { return std::round(x * 1024.0) / 1024.0; };
  c.fwdMs = round(rng.uniform(o.minFwdMs, o.maxFwdMs));
  c.bwdMs = round(c.fwdMs * rng.uniform(1.0, 3.0));
  c.outBytes = outBytes;
  c.actBytes = rng.chance(0.7) ? outBytes : 0;
  return c;
}

Expected<Graph>
ftpipe::partition::generateRandomGraph(const RandomGraphOptions &o) {
  if (o.numNodes == 0)
    return makeError("random graph needs at least one node");
  if (!(o.minFwdMs >= 0.0 && o.minFwdMs <= o.maxFwdMs &&
        std::isfinite(o.maxFwdMs)))
    return makeError("random graph: need 0 <= minFwdMs <= maxFwdMs < inf");
  if (o.minBytes > o.maxBytes || o.minParamBytes > o.maxParamBytes)
    return makeError("random graph: byte ranges are inverted");

  Rng rng(o.seed * 0x2545F4914F6CDD1Dull + uint64_t(o.family));
  GraphBuilder b;
  uint32_t n = o.numNodes;
  std::vector<uint64_t> outBytes(n);
  for (uint32_t i = 0; i < n; ++i)
    outBytes[i] = rng.range(o.minBytes, o.maxBytes);
  auto maybeParam = [&](NodeId node, llvm::StringRef name) {
    if (rng.chance(o.paramProbability))
      b.addParamUse(
          node, b.addParam(name, rng.range(o.minParamBytes, o.maxParamBytes)));
  };

  switch (o.family) {
  case GraphFamily::Chain: {
    for (uint32_t i = 0; i < n; ++i) {
      NodeId id = b.addNode(("Chain/op" + llvm::Twine(i)).str(), "test.op",
                            randomCost(rng, o, outBytes[i]));
      maybeParam(id, ("w" + llvm::Twine(i)).str());
    }
    b.addValue(kNoNode, o.minBytes, {0}, /*needsGrad=*/false);
    for (uint32_t i = 0; i + 1 < n; ++i)
      b.addEdge(i, i + 1, outBytes[i]);
    break;
  }
  case GraphFamily::Layered: {
    // Embedding, then blocks of {norm, attn, add, norm, ff1, ff2, add}, each
    // add reading the block's residual stream; the last node (the head)
    // reads the embedding weight again (tied).
    static const char *const kOps[] = {"norm", "attn", "add", "norm",
                                       "ff1",  "ff2",  "add"};
    static const char *const kTypes[] = {
        "tosa.mul",    "tosa.matmul", "tosa.add", "tosa.mul",
        "tosa.matmul", "tosa.matmul", "tosa.add"};
    ParamId embedding =
        b.addParam("embedding", rng.range(o.minParamBytes, o.maxParamBytes));
    NodeId first = b.addNode("Model/Embedding", "tosa.gather",
                             randomCost(rng, o, outBytes[0]));
    b.addParamUse(first, embedding);
    b.addValue(kNoNode, o.minBytes, {first}, /*needsGrad=*/false);
    // residual: the value currently carrying the residual stream.
    ValueId residual = b.addValue(first, outBytes[0]);
    ValueId prev = residual;
    NodeId prevNode = first;
    for (uint32_t i = 1; i < n; ++i) {
      uint32_t k = (i - 1) % 7, block = (i - 1) / 7;
      bool last = i + 1 == n;
      std::string scope =
          last ? std::string("Model/Head")
               : ("Model/Block[" + llvm::Twine(block) + "]/" + kOps[k]).str();
      NodeId id = b.addNode(scope, last ? "tosa.matmul" : kTypes[k],
                            randomCost(rng, o, outBytes[i]));
      b.addConsumer(prev, id);
      if (!last && (k == 2 || k == 6) && residual != prev)
        b.addConsumer(residual, id); // skip edge
      if (last)
        b.addParamUse(id, embedding);
      else if (k == 1 || k == 4 || k == 5)
        maybeParam(id, (scope + ".weight"));
      prev = b.addValue(id, outBytes[i]);
      prevNode = id;
      if (k == 2 || k == 6)
        residual = prev;
    }
    (void)prevNode;
    break;
  }
  case GraphFamily::Wide: {
    const uint32_t window = 16;
    std::vector<ValueId> out(n);
    for (uint32_t i = 0; i < n; ++i) {
      NodeId id = b.addNode(("Wide/op" + llvm::Twine(i)).str(), "test.op",
                            randomCost(rng, o, outBytes[i]));
      maybeParam(id, ("w" + llvm::Twine(i)).str());
      if (i == 0) {
        b.addValue(kNoNode, o.minBytes, {0}, /*needsGrad=*/false);
      } else {
        uint32_t lo = i > window ? i - window : 0;
        uint32_t fanIn = uint32_t(rng.range(1, 3));
        // Always read the previous node so the graph stays connected-ish.
        std::vector<NodeId> srcs = {i - 1};
        for (uint32_t j = 1; j < fanIn; ++j) {
          NodeId s = NodeId(rng.range(lo, i - 1));
          if (!llvm::is_contained(srcs, s))
            srcs.push_back(s);
        }
        for (NodeId s : srcs)
          b.addConsumer(out[s], id);
      }
      out[i] = b.addValue(id, outBytes[i]);
    }
    break;
  }
  }
  return b.build();
}
