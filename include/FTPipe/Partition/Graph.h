//===- Graph.h - Compact op graph for partitioning --------------*- C++ -*-===//
//
// The plain-data graph every algorithm in lib/Partition works on: nodes are
// ops in topological order (ids 0..N-1), values are tensors (hyperedges from
// one producer to its consumers), parameters are trainable weights that nodes
// read. Everything is flat arrays (CSR with offsets and a sentinel), built
// only through GraphBuilder, which validates the input, so algorithms can
// trust ids and order without re-checking them.
//
// Why hyperedges and not plain edges: a tensor consumed by three ops of the
// same stage crosses the boundary once, not three times. Why parameters as
// their own objects: a tied weight (shared embedding) read by two ops is one
// weight, stored once per device that holds a reader.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_GRAPH_H
#define FTPIPE_PARTITION_GRAPH_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ftpipe {
namespace partition {

/// Index of a node (op); nodes are numbered in topological order.
using NodeId = uint32_t;
/// Index of a value (tensor produced by one node or entering the graph).
using ValueId = uint32_t;
/// Index of a parameter (trainable weight).
using ParamId = uint32_t;

/// Producer of a value that enters the graph from outside (token ids, labels):
/// no node computes it, so it never crosses a stage boundary.
inline constexpr NodeId kNoNode = ~NodeId(0);

/// Per-node cost, for one micro-batch. Times in milliseconds, sizes in bytes.
/// The largest time of one op, in ms (about 11 days), and the largest byte
/// figure of one op, value or parameter (256 TiB): within these, every sum
/// the partitioner forms stays finite and far from overflowing 64 bits.
inline constexpr double kMaxOpMs = 1e9;
inline constexpr uint64_t kMaxGraphBytes = uint64_t(1) << 48;

struct NodeCost {
  /// Forward time.
  double fwdMs = 0.0;
  /// Backward time (0 for ops without a backward, e.g. frozen or integer ops).
  double bwdMs = 0.0;
  /// Bytes of activations this op keeps from forward until its backward.
  uint64_t actBytes = 0;
  /// Bytes of all results of this op (informational; transfers use values).
  uint64_t outBytes = 0;
  /// Of bwdMs, the part that makes parameter gradients: what a split
  /// backward's weight part W runs (the rest, its input part I).
  double bwdWeightMs = 0.0;
};

/// An immutable, validated op graph in CSR form. Build one with GraphBuilder
/// (or loadGraphJSON / generateRandomGraph). Copyable and movable.
///
/// Invariants (checked by GraphBuilder::build):
///  - every value's producer is kNoNode or a node id smaller than each of its
///    consumers (ids are a topological order, no self loops);
///  - a value lists each consumer once; a node reads each parameter once;
///  - costs are finite and non-negative.
class Graph {
public:
  Graph() = default;

  /// Number of nodes (ops); ids are 0..numNodes()-1 in topological order.
  size_t numNodes() const { return costs.size(); }
  /// Number of values (tensors), graph inputs included.
  size_t numValues() const { return valueProducers.size(); }
  /// Number of parameters (trainable weights).
  size_t numParams() const { return paramBytesArr.size(); }

  //===--- Nodes ----------------------------------------------------------===//

  /// Cost of node n for one micro-batch.
  const NodeCost &cost(NodeId n) const { return costs[n]; }
  /// Costs of all nodes, indexed by node id.
  llvm::ArrayRef<NodeCost> allCosts() const { return costs; }
  /// Scope path of the node (module path, e.g. "T5Stack[encoder]/T5Block[3]/
  /// T5LayerFF[1]"), possibly empty. Used for coarsening by prefix.
  llvm::StringRef scope(NodeId n) const { return scopes[n]; }
  /// Op type (e.g. "tosa.matmul"). Used for coarsening by type.
  llvm::StringRef type(NodeId n) const { return types[n]; }

  /// Values this node produces.
  llvm::ArrayRef<ValueId> outputs(NodeId n) const {
    return slice(nodeOutOffsets, nodeOuts, n);
  }
  /// Values this node consumes (graph inputs included).
  llvm::ArrayRef<ValueId> inputs(NodeId n) const {
    return slice(nodeInOffsets, nodeIns, n);
  }
  /// Distinct successor nodes (consumers of any output), ascending.
  llvm::ArrayRef<NodeId> succs(NodeId n) const {
    return slice(succOffsets, succList, n);
  }
  /// Distinct predecessor nodes (producers of any input), ascending.
  llvm::ArrayRef<NodeId> preds(NodeId n) const {
    return slice(predOffsets, predList, n);
  }
  /// Parameters this node reads, ascending.
  llvm::ArrayRef<ParamId> params(NodeId n) const {
    return slice(nodeParamOffsets, nodeParamList, n);
  }
  /// Sum of the bytes of the parameters this node reads (a tied parameter
  /// counts for every reader here; memory accounting dedups per device).
  uint64_t nodeParamBytes(NodeId n) const { return nodeParamBytesArr[n]; }

  //===--- Values ---------------------------------------------------------===//

  /// Producing node, or kNoNode for a graph input.
  NodeId producer(ValueId v) const { return valueProducers[v]; }
  /// Size of the value in bytes (per micro-batch).
  uint64_t valueBytes(ValueId v) const { return valueBytesArr[v]; }
  /// Whether a gradient of this value flows back in the backward pass (false
  /// for integer tensors, masks, and values that no parameter depends on).
  bool valueNeedsGrad(ValueId v) const { return valueGrad[v] != 0; }
  /// Consumers of the value, ascending, each once.
  llvm::ArrayRef<NodeId> consumers(ValueId v) const {
    return slice(valueConsOffsets, valueConsList, v);
  }

  //===--- Parameters -----------------------------------------------------===//

  /// Size of the parameter in bytes.
  uint64_t paramBytes(ParamId p) const { return paramBytesArr[p]; }
  /// Name of the parameter (e.g. the function argument's name), may be "".
  llvm::StringRef paramName(ParamId p) const { return paramNames[p]; }
  /// Whether the parameter is frozen: stored, but with no gradient, no
  /// optimizer state and no stashed version.
  bool paramFrozen(ParamId p) const { return paramFrozenArr[p] != 0; }
  /// Nodes that read the parameter, ascending.
  llvm::ArrayRef<NodeId> paramReaders(ParamId p) const {
    return slice(paramReaderOffsets, paramReaderList, p);
  }

  //===--- Totals ---------------------------------------------------------===//

  /// Sum over nodes of fwdMs + bwdMs.
  double totalComputeMs() const { return totalCompute; }
  /// Largest fwdMs + bwdMs of a single node.
  double maxNodeComputeMs() const { return maxNodeCompute; }
  /// Sum of the bytes of all parameters (each counted once).
  uint64_t totalParamBytes() const { return totalParams; }

private:
  friend class GraphBuilder;

  template <typename T>
  static llvm::ArrayRef<T> slice(const std::vector<uint32_t> &offsets,
                                 const std::vector<T> &list, uint32_t i) {
    return llvm::ArrayRef<T>(list.data() + offsets[i],
                             list.data() + offsets[i + 1]);
  }

  std::vector<NodeCost> costs;
  std::vector<std::string> scopes, types;
  std::vector<uint64_t> nodeParamBytesArr;
  // CSR arrays: offsets have numX + 1 entries (last one is the sentinel).
  std::vector<uint32_t> nodeOutOffsets, nodeInOffsets, succOffsets, predOffsets,
      nodeParamOffsets;
  std::vector<ValueId> nodeOuts, nodeIns;
  std::vector<NodeId> succList, predList;
  std::vector<ParamId> nodeParamList;

  std::vector<NodeId> valueProducers;
  std::vector<uint64_t> valueBytesArr;
  std::vector<uint8_t> valueGrad;
  std::vector<uint32_t> valueConsOffsets;
  std::vector<NodeId> valueConsList;

  std::vector<uint64_t> paramBytesArr;
  std::vector<std::string> paramNames;
  std::vector<uint8_t> paramFrozenArr;
  std::vector<uint32_t> paramReaderOffsets;
  std::vector<NodeId> paramReaderList;

  double totalCompute = 0.0;
  double maxNodeCompute = 0.0;
  uint64_t totalParams = 0;
};

/// Collects nodes, values and parameters, then validates and freezes them
/// into a Graph. The add* calls never fail; every check happens in build(),
/// which reports the first problem as an llvm::Error naming the offending id.
class GraphBuilder {
public:
  /// Adds a node and returns its id (ids are handed out 0, 1, 2, ... and must
  /// be a topological order of the values added later).
  NodeId addNode(llvm::StringRef scope, llvm::StringRef type, NodeCost cost);

  /// Adds a parameter (a weight) of `bytes` bytes, trained unless `frozen`.
  ParamId addParam(llvm::StringRef name, uint64_t bytes, bool frozen = false);

  /// Records that `node` reads `param`.
  void addParamUse(NodeId node, ParamId param);

  /// Adds a value of `bytes` bytes produced by `producer` (kNoNode for a
  /// graph input) and consumed by `consumers`. `needsGrad` says whether its
  /// gradient flows back (and crosses stage boundaries in the backward).
  ValueId addValue(NodeId producer, uint64_t bytes,
                   llvm::ArrayRef<NodeId> consumers = {},
                   bool needsGrad = true);

  /// Adds one more consumer to an existing value.
  void addConsumer(ValueId value, NodeId consumer);

  /// Convenience for simple graphs: a value produced by `src` and consumed by
  /// `dst` only.
  ValueId addEdge(NodeId src, NodeId dst, uint64_t bytes) {
    return addValue(src, bytes, {dst});
  }

  /// Nodes added so far.
  size_t numNodes() const { return nodes.size(); }

  /// Validates everything added so far and returns the graph. Fails when a
  /// value or parameter use names a node that does not exist, a consumer does
  /// not come after its producer, a consumer or parameter use is repeated, or
  /// a cost is negative, NaN or infinite. The builder is left empty.
  llvm::Expected<Graph> build();

private:
  struct NodeRec {
    std::string scope, type;
    NodeCost cost;
    std::vector<ParamId> params;
  };
  struct ValueRec {
    NodeId producer;
    uint64_t bytes;
    std::vector<NodeId> consumers;
    bool needsGrad;
  };
  struct ParamRec {
    std::string name;
    uint64_t bytes;
    bool frozen;
  };
  std::vector<NodeRec> nodes;
  std::vector<ValueRec> values;
  std::vector<ParamRec> paramRecs;
  // Uses naming a node id that did not exist when added; reported by build().
  std::vector<std::pair<NodeId, ParamId>> badParamUses;
  std::vector<std::pair<ValueId, NodeId>> badConsumerAdds;
};

//===----------------------------------------------------------------------===//
// Random graphs for tests and benchmarks
//===----------------------------------------------------------------------===//

/// Shapes of random DAGs.
enum class GraphFamily {
  /// A chain: node i feeds node i+1 only.
  Chain,
  /// Transformer-like: repeated blocks of a few ops with residual (skip)
  /// edges around each sub-layer, scopes "Model/Block[k]/...", a tied
  /// embedding read by the first and the last node, token ids as graph input.
  Layered,
  /// Wide random DAG: each node reads 1-3 random earlier nodes from a window.
  Wide,
};

/// Options of generateRandomGraph. The same options give the same graph on
/// every platform (the generator uses its own PRNG and arithmetic).
struct RandomGraphOptions {
  GraphFamily family = GraphFamily::Layered;
  /// Number of nodes (at least 1).
  uint32_t numNodes = 64;
  uint64_t seed = 1;
  /// Forward time of a node is uniform in [minFwdMs, maxFwdMs]; backward is
  /// forward times a factor uniform in [1, 3].
  double minFwdMs = 0.1;
  double maxFwdMs = 2.0;
  /// Value sizes are uniform in [minBytes, maxBytes].
  uint64_t minBytes = 1 << 16;
  uint64_t maxBytes = 1 << 24;
  /// Probability that a node owns a parameter, and its size range.
  double paramProbability = 0.5;
  uint64_t minParamBytes = 1 << 20;
  uint64_t maxParamBytes = 1 << 26;
};

/// Generates a random, valid graph. Never fails for numNodes >= 1; returns an
/// error for numNodes == 0 or inverted ranges.
llvm::Expected<Graph> generateRandomGraph(const RandomGraphOptions &options);

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_GRAPH_H
