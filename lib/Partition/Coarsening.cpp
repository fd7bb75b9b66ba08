//===- Coarsening.cpp - Mixed-Pipe coarsening to L blocks -----------------===//
//
// Implements the six coarsening passes of Mixed-Pipe on a union-find of
// clusters with a dynamic topological order (Pearce and Kelly, "A dynamic
// topological sort algorithm for directed acyclic graphs", JEA 2007). A merge
// of clusters u, v (u before v) searches forward from u and backward from v,
// visiting only clusters whose order lies strictly between the two: a path
// u -> w -> ... -> v means the merge would close a cycle; otherwise the
// visited clusters are reordered (v's ancestors first, then u's descendants),
// which puts v and u next to each other, and the two become one cluster. The
// cost of a merge is bounded by the clusters between u and v in the order,
// which the passes keep small by merging along edges.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Coarsening.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <numeric>
#include <queue>

using namespace ftpipe::partition;
using llvm::Error;
using llvm::Expected;

static Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

Error CoarseningConfig::validate() const {
  if (maxInFlight == 0)
    return makeError("coarsening: maxInFlight must be at least 1");
  if (!(memoryFraction >= 0.0) || !std::isfinite(memoryFraction))
    return makeError(llvm::formatv(
        "coarsening: memoryFraction must be finite and non-negative, got {0}",
        memoryFraction));
  if (!(capFactor > 0.0) || !std::isfinite(capFactor))
    return makeError(llvm::formatv(
        "coarsening: capFactor must be positive and finite, got {0}",
        capFactor));
  for (const std::string &t : blockTypes)
    if (t.empty() || t.find('/') != std::string::npos ||
        t.find('[') != std::string::npos)
      return makeError(llvm::formatv(
          "coarsening: block type '{0}' must be a non-empty module type name "
          "without '/' or '['",
          t));
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Coarse graph construction
//===----------------------------------------------------------------------===//

namespace {
/// Block-level edges (distinct per value and destination block) and a
/// topological order of blocks; `order` is shorter than the number of blocks
/// exactly when the block graph has a cycle.
struct BlockGraphScan {
  uint32_t numBlocks = 0;
  std::vector<uint32_t> dense; // node -> dense block id (first-seen order)
  std::vector<NodeId> minNode; // dense block -> smallest member
  struct Edge {
    uint32_t src, dst;
    uint64_t bytes;
  };
  std::vector<Edge> edges; // sorted by (src, dst), combined
  std::vector<uint32_t> order;
};
} // namespace

static BlockGraphScan scanBlocks(const Graph &g,
                                 llvm::ArrayRef<uint32_t> nodeBlock) {
  BlockGraphScan s;
  size_t n = g.numNodes();
  s.dense.resize(n);
  llvm::DenseMap<uint32_t, uint32_t> ids;
  for (NodeId v = 0; v < n; ++v) {
    auto [it, inserted] = ids.try_emplace(nodeBlock[v], s.numBlocks);
    if (inserted) {
      ++s.numBlocks;
      s.minNode.push_back(v);
    }
    s.dense[v] = it->second;
  }
  std::vector<uint32_t> seen(s.numBlocks, ~0u);
  for (ValueId x = 0; x < g.numValues(); ++x) {
    NodeId p = g.producer(x);
    if (p == kNoNode)
      continue;
    uint32_t bp = s.dense[p];
    for (NodeId c : g.consumers(x)) {
      uint32_t bc = s.dense[c];
      if (bc == bp || seen[bc] == x)
        continue;
      seen[bc] = x;
      s.edges.push_back({bp, bc, g.valueBytes(x)});
    }
  }
  llvm::sort(s.edges,
             [](const BlockGraphScan::Edge &a, const BlockGraphScan::Edge &b) {
               return a.src != b.src ? a.src < b.src : a.dst < b.dst;
             });
  size_t w = 0;
  for (size_t r = 0; r < s.edges.size(); ++r) {
    if (w > 0 && s.edges[w - 1].src == s.edges[r].src &&
        s.edges[w - 1].dst == s.edges[r].dst)
      s.edges[w - 1].bytes += s.edges[r].bytes;
    else
      s.edges[w++] = s.edges[r];
  }
  s.edges.resize(w);

  // Kahn's algorithm; among ready blocks the one with the smallest member
  // node goes first, so the numbering follows the fine order where it can.
  std::vector<uint32_t> indeg(s.numBlocks, 0), first(s.numBlocks + 1, 0);
  for (const auto &e : s.edges) {
    ++indeg[e.dst];
    ++first[e.src + 1];
  }
  for (uint32_t b = 0; b < s.numBlocks; ++b)
    first[b + 1] += first[b];
  using Item = std::pair<NodeId, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  for (uint32_t b = 0; b < s.numBlocks; ++b)
    if (indeg[b] == 0)
      ready.push({s.minNode[b], b});
  while (!ready.empty()) {
    uint32_t b = ready.top().second;
    ready.pop();
    s.order.push_back(b);
    for (uint32_t i = first[b]; i < first[b + 1]; ++i)
      if (--indeg[s.edges[i].dst] == 0)
        ready.push({s.minNode[s.edges[i].dst], s.edges[i].dst});
  }
  return s;
}

bool ftpipe::partition::isBlockGraphAcyclic(
    const Graph &graph, llvm::ArrayRef<uint32_t> nodeBlock) {
  if (nodeBlock.size() != graph.numNodes())
    return false;
  BlockGraphScan s = scanBlocks(graph, nodeBlock);
  return s.order.size() == s.numBlocks;
}

Expected<CoarseGraph>
ftpipe::partition::buildCoarseGraph(const Graph &graph,
                                    llvm::ArrayRef<uint32_t> nodeBlock) {
  if (nodeBlock.size() != graph.numNodes())
    return makeError(llvm::formatv(
        "coarse graph: node -> block map has {0} entries for {1} nodes",
        nodeBlock.size(), graph.numNodes()));
  BlockGraphScan s = scanBlocks(graph, nodeBlock);
  if (s.order.size() != s.numBlocks) {
    std::vector<bool> done(s.numBlocks, false);
    for (uint32_t b : s.order)
      done[b] = true;
    uint32_t bad = 0;
    while (done[bad])
      ++bad;
    return makeError(llvm::formatv(
        "coarse graph: block {0} (containing node {1}) lies on a cycle",
        nodeBlock[s.minNode[bad]], s.minNode[bad]));
  }
  std::vector<uint32_t> rank(s.numBlocks);
  for (uint32_t i = 0; i < s.numBlocks; ++i)
    rank[s.order[i]] = i;

  CoarseGraph cg;
  cg.blocks.resize(s.numBlocks);
  cg.nodeBlock.resize(graph.numNodes());
  for (NodeId v = 0; v < graph.numNodes(); ++v) {
    BlockId b = rank[s.dense[v]];
    cg.nodeBlock[v] = b;
    CoarseBlock &blk = cg.blocks[b];
    blk.fwdMs += graph.cost(v).fwdMs;
    blk.bwdMs += graph.cost(v).bwdMs;
    blk.actBytes += graph.cost(v).actBytes;
    ++blk.numNodes;
  }
  std::vector<uint32_t> seen(s.numBlocks, ~0u);
  for (ParamId p = 0; p < graph.numParams(); ++p)
    for (NodeId r : graph.paramReaders(p)) {
      BlockId b = cg.nodeBlock[r];
      if (seen[b] == p)
        continue;
      seen[b] = p;
      cg.blocks[b].paramBytes += graph.paramBytes(p);
    }
  for (auto &e : s.edges) {
    e.src = rank[e.src];
    e.dst = rank[e.dst];
  }
  llvm::sort(s.edges,
             [](const BlockGraphScan::Edge &a, const BlockGraphScan::Edge &b) {
               return a.src != b.src ? a.src < b.src : a.dst < b.dst;
             });
  cg.succOffsets.assign(s.numBlocks + 1, 0);
  for (const auto &e : s.edges) {
    ++cg.succOffsets[e.src + 1];
    cg.succs.push_back(e.dst);
    cg.succBytes.push_back(e.bytes);
  }
  for (uint32_t b = 0; b < s.numBlocks; ++b)
    cg.succOffsets[b + 1] += cg.succOffsets[b];
  return cg;
}

//===----------------------------------------------------------------------===//
// Contractor: clusters with a dynamic topological order
//===----------------------------------------------------------------------===//

namespace {
struct Adj {
  uint32_t cluster; // possibly stale: map through find()
  uint64_t bytes;
};

class Contractor {
public:
  Contractor(const Graph &g, double bytesPerMs, uint32_t paramCopies);

  uint32_t find(uint32_t x) {
    uint32_t r = x;
    while (parent[r] != r)
      r = parent[r];
    while (parent[x] != r) {
      uint32_t next = parent[x];
      parent[x] = r;
      x = next;
    }
    return r;
  }

  /// Merges the clusters of a and b unless they are the same, the merged
  /// compute would exceed `cap`, the merged memory `memCap` (when
  /// `limitMemory`), or the merge would close a cycle.
  bool tryMerge(uint32_t a, uint32_t b, double cap, bool limitMemory = true);

  /// Distinct neighbour clusters of rep c with connecting bytes; predecessors
  /// first when `predsFirst`, each group by bytes descending, then id.
  std::vector<Adj> neighbours(uint32_t c, bool predsFirst);

  /// Current clusters (reps) sorted by topological order.
  std::vector<uint32_t> clustersInOrder();

  /// Node -> dense block id in topological order.
  std::vector<BlockId> blockMap(uint32_t &numBlocks);

  double commMs(uint32_t c) const { return double(commBytes[c]) / bytesPerMs; }

  const Graph &g;
  double bytesPerMs;
  std::vector<uint32_t> parent, size, memberHead, memberNext, memberTail;
  std::vector<int64_t> ord;
  std::vector<double> compute;
  std::vector<uint64_t> commBytes;
  /// Parameter bytes (a tied parameter once per reader) times copies, plus
  /// activation bytes: an estimate of a block's memory.
  std::vector<uint64_t> memBytes;
  /// Parameter bytes (a tied parameter once per reader) and activation bytes.
  std::vector<uint64_t> paramBytes, actBytes;
  uint64_t memCap = ~uint64_t(0);
  std::vector<std::vector<Adj>> out, in;
  std::vector<uint32_t> outClean, inClean;
  uint32_t alive = 0;
  uint64_t merges = 0, refused = 0;

private:
  void compact(std::vector<Adj> &list, uint32_t self);
  void contribute(ValueId x, bool add);
  void doMerge(uint32_t u, uint32_t v);

  std::vector<uint32_t> mark, clusterStamp, valueStamp;
  uint32_t markEpoch = 0, clusterEpoch = 0, valueEpoch = 0;
  std::vector<uint32_t> stack, dF, dB;
  std::vector<int64_t> pool;
};
} // namespace

Contractor::Contractor(const Graph &graph, double bytesPerMs,
                       uint32_t paramCopies)
    : g(graph), bytesPerMs(bytesPerMs) {
  uint32_t n = g.numNodes();
  parent.resize(n);
  std::iota(parent.begin(), parent.end(), 0u);
  size.assign(n, 1);
  memberHead = parent;
  memberTail = parent;
  memberNext.assign(n, ~0u);
  ord.resize(n);
  std::iota(ord.begin(), ord.end(), int64_t(0));
  compute.resize(n);
  memBytes.resize(n);
  paramBytes.resize(n);
  actBytes.resize(n);
  for (NodeId v = 0; v < n; ++v) {
    compute[v] = g.cost(v).fwdMs + g.cost(v).bwdMs;
    memBytes[v] = g.nodeParamBytes(v) * paramCopies + g.cost(v).actBytes;
    paramBytes[v] = g.nodeParamBytes(v);
    actBytes[v] = g.cost(v).actBytes;
  }
  commBytes.assign(n, 0);
  out.resize(n);
  in.resize(n);
  for (ValueId x = 0; x < g.numValues(); ++x) {
    NodeId p = g.producer(x);
    if (p == kNoNode)
      continue;
    for (NodeId c : g.consumers(x)) {
      out[p].push_back({c, g.valueBytes(x)});
      in[c].push_back({p, g.valueBytes(x)});
    }
  }
  outClean.assign(n, 0);
  inClean.assign(n, 0);
  mark.assign(n, 0);
  clusterStamp.assign(n, 0);
  valueStamp.assign(g.numValues(), 0);
  for (ValueId x = 0; x < g.numValues(); ++x)
    contribute(x, true);
  alive = n;
}

/// Adds (or removes) the communication of value x under the current
/// clusters: its producer sends it once to every other cluster that reads it,
/// and each of those receives it once.
void Contractor::contribute(ValueId x, bool add) {
  NodeId p = g.producer(x);
  if (p == kNoNode)
    return;
  uint64_t bytes = g.valueBytes(x);
  uint64_t delta = add ? bytes : uint64_t(0) - bytes;
  uint32_t pc = find(p);
  ++clusterEpoch;
  uint64_t count = 0;
  for (NodeId c : g.consumers(x)) {
    uint32_t k = find(c);
    if (k == pc || clusterStamp[k] == clusterEpoch)
      continue;
    clusterStamp[k] = clusterEpoch;
    ++count;
    commBytes[k] += delta;
  }
  commBytes[pc] += delta * count;
}

void Contractor::compact(std::vector<Adj> &list, uint32_t self) {
  for (Adj &a : list)
    a.cluster = find(a.cluster);
  llvm::sort(list,
             [](const Adj &a, const Adj &b) { return a.cluster < b.cluster; });
  size_t w = 0;
  for (const Adj &a : list) {
    if (a.cluster == self)
      continue;
    if (w > 0 && list[w - 1].cluster == a.cluster)
      list[w - 1].bytes += a.bytes;
    else
      list[w++] = a;
  }
  list.resize(w);
}

bool Contractor::tryMerge(uint32_t a, uint32_t b, double cap,
                          bool limitMemory) {
  a = find(a);
  b = find(b);
  if (a == b)
    return false;
  if (compute[a] + compute[b] > cap)
    return false;
  // A side without memory (a reshape) may join a block already over the cap.
  if (limitMemory && memBytes[a] + memBytes[b] > memCap &&
      std::min(memBytes[a], memBytes[b]) > 0)
    return false;
  uint32_t u = ord[a] < ord[b] ? a : b;
  uint32_t v = u == a ? b : a;

  // Forward from u, only through clusters ordered before v.
  ++markEpoch;
  dF.clear();
  dB.clear();
  stack.clear();
  dF.push_back(u);
  stack.push_back(u);
  mark[u] = markEpoch;
  while (!stack.empty()) {
    uint32_t x = stack.back();
    stack.pop_back();
    for (const Adj &e : out[x]) {
      uint32_t y = find(e.cluster);
      if (y == x)
        continue;
      if (y == v) {
        if (x != u) {
          ++refused;
          return false;
        }
        continue;
      }
      if (ord[y] > ord[v] || mark[y] == markEpoch)
        continue;
      mark[y] = markEpoch;
      dF.push_back(y);
      stack.push_back(y);
    }
  }
  // Backward from v, only through clusters ordered after u. Disjoint from
  // the forward set, or the forward search would have reached v.
  dB.push_back(v);
  stack.push_back(v);
  mark[v] = markEpoch;
  while (!stack.empty()) {
    uint32_t x = stack.back();
    stack.pop_back();
    for (const Adj &e : in[x]) {
      uint32_t y = find(e.cluster);
      if (y == x || y == u || ord[y] < ord[u] || mark[y] == markEpoch)
        continue;
      mark[y] = markEpoch;
      dB.push_back(y);
      stack.push_back(y);
    }
  }
  if (dF.size() > 1 || dB.size() > 1) {
    // Reorder: v's ancestors (and v) first, then u (and its descendants),
    // reusing the same positions.
    pool.clear();
    for (uint32_t x : dB)
      pool.push_back(ord[x]);
    for (uint32_t x : dF)
      pool.push_back(ord[x]);
    llvm::sort(pool);
    auto byOrd = [&](uint32_t x, uint32_t y) { return ord[x] < ord[y]; };
    llvm::sort(dB, byOrd);
    llvm::sort(dF, byOrd);
    size_t i = 0;
    for (uint32_t x : dB)
      ord[x] = pool[i++];
    for (uint32_t x : dF)
      ord[x] = pool[i++];
  } else {
    std::swap(ord[u], ord[v]);
  }
  // v now sits right before u; the merged cluster takes v's place.
  int64_t newOrd = ord[v];
  doMerge(u, v);
  ord[find(u)] = newOrd;
  return true;
}

void Contractor::doMerge(uint32_t a, uint32_t b) {
  uint32_t rep = size[a] > size[b] || (size[a] == size[b] && a < b) ? a : b;
  uint32_t other = rep == a ? b : a;

  // Values touching the smaller cluster are the only ones whose
  // communication changes.
  ++valueEpoch;
  std::vector<ValueId> touched;
  for (uint32_t m = memberHead[other]; m != ~0u; m = memberNext[m]) {
    for (ValueId x : g.outputs(m))
      if (valueStamp[x] != valueEpoch) {
        valueStamp[x] = valueEpoch;
        touched.push_back(x);
      }
    for (ValueId x : g.inputs(m))
      if (valueStamp[x] != valueEpoch) {
        valueStamp[x] = valueEpoch;
        touched.push_back(x);
      }
  }
  for (ValueId x : touched)
    contribute(x, false);

  parent[other] = rep;
  size[rep] += size[other];
  memberNext[memberTail[rep]] = memberHead[other];
  memberTail[rep] = memberTail[other];
  compute[rep] += compute[other];
  memBytes[rep] += memBytes[other];
  paramBytes[rep] += paramBytes[other];
  actBytes[rep] += actBytes[other];
  commBytes[rep] += commBytes[other];
  commBytes[other] = 0;
  for (ValueId x : touched)
    contribute(x, true);

  auto append = [&](std::vector<Adj> &dst, std::vector<Adj> &src,
                    uint32_t &clean) {
    dst.insert(dst.end(), src.begin(), src.end());
    std::vector<Adj>().swap(src);
    if (dst.size() > 2 * size_t(clean) + 16) {
      compact(dst, rep);
      clean = dst.size();
    }
  };
  append(out[rep], out[other], outClean[rep]);
  append(in[rep], in[other], inClean[rep]);
  --alive;
  ++merges;
}

std::vector<Adj> Contractor::neighbours(uint32_t c, bool predsFirst) {
  compact(out[c], c);
  outClean[c] = out[c].size();
  compact(in[c], c);
  inClean[c] = in[c].size();
  auto byBytes = [](const Adj &a, const Adj &b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.cluster < b.cluster;
  };
  std::vector<Adj> first = predsFirst ? in[c] : out[c];
  std::vector<Adj> second = predsFirst ? out[c] : in[c];
  llvm::sort(first, byBytes);
  llvm::sort(second, byBytes);
  first.insert(first.end(), second.begin(), second.end());
  return first;
}

std::vector<uint32_t> Contractor::clustersInOrder() {
  std::vector<uint32_t> reps;
  reps.reserve(alive);
  for (uint32_t v = 0; v < parent.size(); ++v)
    if (parent[v] == v)
      reps.push_back(v);
  llvm::sort(reps, [&](uint32_t x, uint32_t y) { return ord[x] < ord[y]; });
  return reps;
}

std::vector<BlockId> Contractor::blockMap(uint32_t &numBlocks) {
  std::vector<uint32_t> reps = clustersInOrder();
  std::vector<uint32_t> index(parent.size(), 0);
  for (uint32_t i = 0; i < reps.size(); ++i)
    index[reps[i]] = i;
  std::vector<BlockId> map(parent.size());
  for (uint32_t v = 0; v < parent.size(); ++v)
    map[v] = index[find(v)];
  numBlocks = reps.size();
  return map;
}

//===----------------------------------------------------------------------===//
// The passes
//===----------------------------------------------------------------------===//

/// Type name of a scope component: "T5Block[23]" -> "T5Block".
static llvm::StringRef componentType(llvm::StringRef component) {
  return component.take_until([](char c) { return c == '['; });
}

/// Pass 1: deepest common scope prefixes first, up to block instances.
static void coarsenByPrefix(Contractor &c, const Graph &g,
                            const CoarseningConfig &config, double cap,
                            llvm::function_ref<void()> recordLevel) {
  llvm::StringSet<> blockTypes;
  for (const std::string &t : config.blockTypes)
    blockTypes.insert(t);
  uint32_t n = g.numNodes();
  // ends[offsets[v] + i] is the length of the first i+1 components of v's
  // scope; minDepth[v] the shallowest prefix depth v may merge at.
  std::vector<uint32_t> offsets(n + 1, 0), ends, minDepth(n, 0);
  uint32_t maxDepth = 0;
  for (NodeId v = 0; v < n; ++v) {
    llvm::StringRef scope = g.scope(v);
    uint32_t depth = 0, blockDepth = 0;
    size_t start = 0;
    while (start < scope.size()) {
      size_t slash = scope.find('/', start);
      size_t end = slash == llvm::StringRef::npos ? scope.size() : slash;
      ++depth;
      ends.push_back(end);
      if (!blockDepth &&
          blockTypes.contains(componentType(scope.slice(start, end))))
        blockDepth = depth;
      start = end + 1;
    }
    offsets[v + 1] = ends.size();
    // Inside a block instance: every depth down to the instance itself.
    // Elsewhere: only ops of the very same module merge.
    minDepth[v] = blockDepth ? blockDepth : depth;
    maxDepth = std::max(maxDepth, depth);
  }
  for (uint32_t d = maxDepth; d >= 1; --d) {
    llvm::DenseMap<llvm::StringRef, uint32_t> head;
    for (NodeId v = 0; v < n; ++v) {
      uint32_t depth = offsets[v + 1] - offsets[v];
      if (depth == 0 || d > depth || d < minDepth[v])
        continue;
      llvm::StringRef key = g.scope(v).take_front(ends[offsets[v] + d - 1]);
      auto [it, inserted] = head.try_emplace(key, v);
      if (!inserted && !c.tryMerge(it->second, v, cap))
        it->second = v; // later members of the group join v's cluster
    }
    // Every depth is a level: refinement can later move sub-layers.
    recordLevel();
  }
}

/// Pass 2: ops that compute only from parameters (weight preprocessing such
/// as the transposes of foreign IR whose weights are arguments, constants)
/// join the consumer of their largest output: cutting after them would send
/// a weight-sized tensor every micro-batch, and under recomputation keep it
/// per micro-batch in flight. Then view-like ops join the producer of their
/// largest input.
static void coarsenByType(Contractor &c, const Graph &g,
                          const CoarseningConfig &config, double cap) {
  // weightOnly[v]: v reads no value except outputs of weight-only ops (no
  // graph input, no activation).
  std::vector<char> weightOnly(g.numNodes(), 0);
  for (NodeId v = 0; v < g.numNodes(); ++v) {
    bool only = true;
    for (ValueId x : g.inputs(v)) {
      NodeId p = g.producer(x);
      if (p == kNoNode || !weightOnly[p]) {
        only = false;
        break;
      }
    }
    weightOnly[v] = only && !g.succs(v).empty();
  }
  // Last first, so a chain of them ends up with its first real consumer.
  for (NodeId v = g.numNodes(); v-- > 0;) {
    if (!weightOnly[v])
      continue;
    NodeId best = kNoNode;
    uint64_t bestBytes = 0;
    for (ValueId x : g.outputs(v))
      for (NodeId s : g.consumers(x))
        if (best == kNoNode || g.valueBytes(x) > bestBytes) {
          best = s;
          bestBytes = g.valueBytes(x);
        }
    // No cap: the weight goes wherever its consumer goes, however big.
    if (best != kNoNode)
      c.tryMerge(v, best, std::numeric_limits<double>::infinity(),
                 /*limitMemory=*/false);
  }

  llvm::StringSet<> types;
  for (const std::string &t : config.mergeTypes)
    types.insert(t);
  for (NodeId v = 0; v < g.numNodes(); ++v) {
    // Only ops still on their own: a view op that the prefix pass already
    // put in its module's block stays there (merging it would merge blocks).
    if (!types.contains(g.type(v)) || c.size[c.find(v)] != 1)
      continue;
    NodeId best = kNoNode;
    uint64_t bestBytes = 0;
    for (ValueId x : g.inputs(v)) {
      NodeId p = g.producer(x);
      if (p != kNoNode && (best == kNoNode || g.valueBytes(x) > bestBytes)) {
        best = p;
        bestBytes = g.valueBytes(x);
      }
    }
    if (best != kNoNode && c.tryMerge(best, v, cap))
      continue;
    for (NodeId s : g.succs(v))
      if (c.tryMerge(v, s, cap))
        break;
  }
}

/// Pass 3: clusters without compute join a neighbour (predecessors first).
static void coarsenZeroWeight(Contractor &c, const Graph &g) {
  const double inf = std::numeric_limits<double>::infinity();
  for (NodeId v = 0; v < g.numNodes(); ++v) {
    uint32_t r = c.find(v);
    while (c.compute[r] == 0.0) {
      bool merged = false;
      for (const Adj &a : c.neighbours(r, /*predsFirst=*/true))
        if (c.tryMerge(r, a.cluster, inf)) {
          merged = true;
          break;
        }
      if (!merged)
        break;
      r = c.find(r);
    }
  }
}

/// Pass 4: grow each block until compute covers its communication. Forward
/// and backward move the same bytes (activations, then their gradients), so
/// one comparison covers both directions.
static void coarsenCCO(Contractor &c, double cap) {
  for (uint32_t r : c.clustersInOrder()) {
    r = c.find(r);
    while (c.commMs(r) > c.compute[r]) {
      bool merged = false;
      for (const Adj &a : c.neighbours(r, /*predsFirst=*/false))
        if (c.tryMerge(r, a.cluster, cap)) {
          merged = true;
          break;
        }
      if (!merged)
        break;
      r = c.find(r);
    }
  }
}

/// Pass 5: L centres at evenly spaced compute quantiles of the topological
/// order; the lightest region repeatedly absorbs its most strongly connected
/// free neighbour.
static void coarsenAroundCentres(Contractor &c, uint32_t L, double cap) {
  std::vector<uint32_t> order = c.clustersInOrder();
  if (order.size() <= L)
    return;
  double total = 0.0;
  for (uint32_t r : order)
    total += c.compute[r];
  std::vector<char> isRegion(c.parent.size(), 0);
  using Item = std::pair<double, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  double prefix = 0.0;
  uint32_t j = 0;
  for (uint32_t r : order) {
    prefix += c.compute[r];
    // r is a centre when a quantile (j + 0.5) * total / L falls in it.
    bool centre = false;
    while (j < L && (j + 0.5) * total / L < prefix) {
      centre = true;
      ++j;
    }
    if (centre) {
      isRegion[r] = 1;
      heap.push({c.compute[r], r});
    }
  }
  while (!heap.empty()) {
    auto [w, r] = heap.top();
    heap.pop();
    if (c.find(r) != r || c.compute[r] != w)
      continue;
    // Most bytes first; among equals a predecessor, since the centre holds
    // the middle of its share and quantiles are taken at cluster ends.
    std::vector<Adj> nbrs = c.neighbours(r, /*predsFirst=*/true);
    llvm::stable_sort(
        nbrs, [](const Adj &a, const Adj &b) { return a.bytes > b.bytes; });
    for (const Adj &a : nbrs) {
      if (isRegion[a.cluster])
        continue;
      if (c.tryMerge(r, a.cluster, cap)) {
        uint32_t nr = c.find(r);
        isRegion[nr] = 1;
        heap.push({c.compute[nr], nr});
        break;
      }
    }
  }
}

/// Pass 6: the smallest block merges with its smallest neighbour that keeps
/// the graph acyclic. Size is the larger of a block's share of all compute
/// and its share of all memory, so that light but parameter-heavy blocks
/// (T5's decoder) do not clump into one block no device can hold. Blocks
/// with no such neighbour (a disconnected component, or every neighbour
/// closing a cycle) are set aside; if more than L blocks remain at the end,
/// the smallest pair of blocks next to each other in the topological order
/// merges until L remain. Such a pair never closes a cycle (no block lies
/// between them), and merging it moves no other block, so the order stays a
/// valid linked list. O(A log A) for A blocks.
static void coarsenSmallestFirst(Contractor &c, uint32_t L,
                                 const CoarseningConfig &config) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<uint32_t> start = c.clustersInOrder();

  double totalCompute = 0.0, totalMem = 0.0;
  for (uint32_t r : start)
    totalCompute += c.compute[r];
  // Memory as the pipeline will see it: a block early in the order keeps
  // more micro-batches in flight (up to maxInFlight for the first, one for
  // the last), each with its activations and, under stashing, a weight copy.
  std::vector<double> effMem(c.parent.size(), 0.0);
  double before = 0.0;
  for (uint32_t r : start) {
    double x = totalCompute > 0.0 ? before / totalCompute : 0.0;
    before += c.compute[r];
    double inFlight = 1.0 + (double(config.maxInFlight) - 1.0) * (1.0 - x);
    double copies = double(config.paramCopies) +
                    (config.stashPerInFlight ? inFlight - 1.0 : 0.0);
    // Under recomputation a block rebuilds its activations for one
    // micro-batch at a time and keeps only its (small) inputs per
    // micro-batch in flight.
    effMem[r] = double(c.paramBytes[r]) * copies +
                double(c.actBytes[r]) * (config.recompute ? 1.0 : inFlight);
    totalMem += effMem[r];
  }
  auto share = [&](double compute, double mem) {
    double s = totalCompute > 0.0 ? compute / totalCompute : 0.0;
    return totalMem > 0.0 ? std::max(s, mem / totalMem) : s;
  };
  auto size = [&](uint32_t r) { return share(c.compute[r], effMem[r]); };
  auto merge = [&](uint32_t a, uint32_t b, bool limitMemory) {
    a = c.find(a);
    b = c.find(b);
    double m = effMem[a] + effMem[b];
    if (!c.tryMerge(a, b, inf, limitMemory))
      return false;
    effMem[c.find(a)] = m;
    return true;
  };
  using Item = std::pair<double, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  for (uint32_t r : start)
    heap.push({size(r), r});
  while (c.alive > L && !heap.empty()) {
    auto [w, r] = heap.top();
    heap.pop();
    if (c.find(r) != r || size(r) != w)
      continue;
    std::vector<Adj> nbrs = c.neighbours(r, /*predsFirst=*/false);
    llvm::stable_sort(nbrs, [&](const Adj &a, const Adj &b) {
      return size(a.cluster) < size(b.cluster);
    });
    for (const Adj &a : nbrs)
      if (merge(r, a.cluster, /*limitMemory=*/true)) {
        uint32_t nr = c.find(r);
        heap.push({size(nr), nr});
        break;
      }
  }
  if (c.alive <= L)
    return;

  std::vector<uint32_t> order = c.clustersInOrder();
  size_t A = order.size();
  std::vector<uint32_t> prev(A), next(A), rep = order;
  std::vector<double> compute(A), mem(A);
  std::vector<uint64_t> version(A, 0);
  for (size_t i = 0; i < A; ++i) {
    prev[i] = i == 0 ? ~0u : uint32_t(i - 1);
    next[i] = i + 1 == A ? ~0u : uint32_t(i + 1);
    compute[i] = c.compute[order[i]];
    mem[i] = effMem[order[i]];
  }
  // Pair (i, next[i]) keyed by the size of their union, then position.
  struct Pair {
    double w;
    uint32_t left;
    uint64_t vl, vr;
    bool operator>(const Pair &o) const {
      return w != o.w ? w > o.w : left > o.left;
    }
  };
  std::priority_queue<Pair, std::vector<Pair>, std::greater<Pair>> pairs;
  auto pushPair = [&](uint32_t i) {
    if (i == ~0u || next[i] == ~0u)
      return;
    uint32_t j = next[i];
    pairs.push({share(compute[i] + compute[j], mem[i] + mem[j]), i, version[i],
                version[j]});
  };
  for (uint32_t i = 0; i + 1 < A; ++i)
    pushPair(i);
  while (c.alive > L && !pairs.empty()) {
    Pair p = pairs.top();
    pairs.pop();
    uint32_t i = p.left, j = next[i];
    if (j == ~0u || version[i] != p.vl || version[j] != p.vr)
      continue;
    bool merged = merge(rep[i], rep[j], /*limitMemory=*/false);
    assert(merged && "clusters next to each other in the order must merge");
    (void)merged;
    rep[i] = c.find(rep[i]);
    compute[i] += compute[j];
    mem[i] += mem[j];
    ++version[i];
    ++version[j];
    next[i] = next[j];
    if (next[j] != ~0u)
      prev[next[j]] = i;
    pushPair(prev[i]);
    pushPair(i);
  }
}

Expected<CoarseningHierarchy>
ftpipe::partition::coarsenGraph(const Graph &graph, const Hardware &hardware,
                                uint32_t numBlocks,
                                const CoarseningConfig &config) {
  if (Error err = config.validate())
    return std::move(err);
  if (numBlocks == 0)
    return makeError("coarsening: the number of blocks L must be positive");

  // Price communication on the slowest link between two devices: a block
  // that hides its transfers there hides them anywhere.
  double slowestGBps = std::numeric_limits<double>::infinity();
  for (DeviceId a = 0; a < hardware.numDevices(); ++a)
    for (DeviceId b = 0; b < hardware.numDevices(); ++b)
      if (a != b)
        slowestGBps = std::min(slowestGBps, hardware.link(a, b).GBps);
  double bytesPerMs =
      std::isfinite(slowestGBps) ? slowestGBps * 1e6 : 1e300; // one device

  CoarseningHierarchy h;
  Contractor c(graph, bytesPerMs, config.paramCopies);
  if (config.memoryFraction > 0.0) {
    // A block may fill neither a device nor more than its share (as for
    // compute, capFactor / L) of the whole model's memory.
    uint64_t smallest = ~uint64_t(0);
    for (const Device &d : hardware.devices())
      smallest = std::min(smallest, d.memoryBytes);
    double total = 0.0;
    for (uint64_t m : c.memBytes)
      total += double(m);
    c.memCap = uint64_t(
        config.memoryFraction *
        std::min(double(smallest), config.capFactor * total / numBlocks));
  }
  double cap = config.capFactor * graph.totalComputeMs() / numBlocks;
  uint64_t lastMerges = 0;
  auto record = [&](const char *pass) {
    if (c.merges == lastMerges)
      return;
    lastMerges = c.merges;
    CoarseningLevel level;
    level.pass = pass;
    level.nodeBlock = c.blockMap(level.numBlocks);
    h.levels.push_back(std::move(level));
  };

  if (config.byPrefix) {
    coarsenByPrefix(c, graph, config, cap, [&] { record("prefix"); });
  }
  if (config.byType) {
    coarsenByType(c, graph, config, cap);
    record("type");
  }
  if (config.zeroWeight) {
    coarsenZeroWeight(c, graph);
    record("zero");
  }
  if (config.cco) {
    coarsenCCO(c, cap);
    record("cco");
  }
  if (config.centres) {
    coarsenAroundCentres(c, numBlocks, cap);
    record("centres");
  }
  coarsenSmallestFirst(c, numBlocks, config);
  record("smallest");
  if (h.levels.empty()) { // nothing merged: the top level is the graph
    CoarseningLevel level;
    level.pass = "none";
    level.nodeBlock = c.blockMap(level.numBlocks);
    h.levels.push_back(std::move(level));
  }

  h.contractions = c.merges;
  h.refusedForCycles = c.refused;
  Expected<CoarseGraph> top =
      buildCoarseGraph(graph, h.levels.back().nodeBlock);
  if (!top)
    return top.takeError();
  h.top = std::move(*top);
  return h;
}
