//===- Coarsening.h - Mixed-Pipe coarsening to L blocks ---------*- C++ -*-===//
//
// The first phase of Mixed-Pipe (FTPipe, Eliad et al., ATC'21, Sec. 4.2):
// contract the op graph into at most L blocks that are worth placing on a
// device on their own. Six passes run in order, each one a level of the
// hierarchy that refinement later walks back down:
//   1. by prefix: ops sharing a scope prefix merge, deepest prefix first, up
//      to one node per instance of a block type (T5Block, BertLayer, ...);
//   2. by type: ops computing only from parameters (weight transposes,
//      constants) join their consumer, and view-like ops (reshape,
//      transpose, cast, ...) their producer, since cutting after them sends
//      a weight every micro-batch, or the same bytes;
//   3. zero weight: ops with fwd + bwd == 0 join a neighbour;
//   4. CCO: a block grows until its compute covers both its forward and its
//      backward communication (T_comm - C <= 0 in both directions);
//   5. growth around L centres spread evenly over the topological order;
//   6. smallest first, down to L blocks.
// Blocks also stay small enough to fit a device's memory, so that the blocks
// of a parameter-heavy part (T5's decoder) do not clump into one.
// Every contraction keeps the coarse graph acyclic. The check is Pearce-Kelly
// style: clusters keep a dynamic topological order, and merging u, v (u before
// v) is safe iff no path u -> w -> ... -> v exists; the search only visits
// clusters whose order lies strictly between u and v, and a safe merge
// reorders exactly the clusters it visited. Blocks never exceed
// capFactor * total / L compute, except in the last pass, which must reach L.
//
//===----------------------------------------------------------------------===//

#ifndef FTPIPE_PARTITION_COARSENING_H
#define FTPIPE_PARTITION_COARSENING_H

#include "FTPipe/Partition/Graph.h"
#include "FTPipe/Partition/Hardware.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ftpipe {
namespace partition {

/// Index of a block of a coarse graph.
using BlockId = uint32_t;

/// Parameters of coarsening (mt-KaHyPar style: in-class defaults, validate()).
struct CoarseningConfig {
  /// Module types whose instances become one node each (the text of a scope
  /// component before '['). Defaults cover the bundled families: T5, BERT,
  /// GPT-2 (HF `GPT2Block`, older `Block`), LLaMA.
  std::vector<std::string> blockTypes = {"T5Block", "BertLayer", "GPT2Block",
                                         "Block", "LlamaDecoderLayer"};
  /// Op types that join their producer in the by-type pass.
  std::vector<std::string> mergeTypes = {"tosa.reshape",
                                         "tosa.transpose",
                                         "tosa.cast",
                                         "tensor.expand_shape",
                                         "tensor.collapse_shape",
                                         "tensor.cast",
                                         "tensor.extract_slice",
                                         "tosa.slice",
                                         "tosa.identity",
                                         "tosa.const",
                                         "arith.constant",
                                         "tensor.empty"};
  /// Switches for the individual passes (ablation; all on by default).
  bool byPrefix = true;
  bool byType = true;
  bool zeroWeight = true;
  bool cco = true;
  bool centres = true;
  /// No pass but the last (smallest first) builds a block with more than
  /// capFactor * totalCompute / L of compute.
  double capFactor = 1.0;
  /// Copies of every parameter byte a device keeps (weights, gradients,
  /// optimizer state: 4 for Adam); runMixedPipe sets it from the objective.
  uint32_t paramCopies = 4;
  /// Micro-batches in flight on the first block of the order (the last has
  /// one; in between, in proportion): the smallest-first pass sizes blocks by
  /// the memory they will need there. runMixedPipe sets it from the
  /// objective's schedule (L under async). With `stashPerInFlight`, every
  /// micro-batch in flight beyond the first also keeps a weight copy.
  uint32_t maxInFlight = 1;
  bool stashPerInFlight = false;
  /// Stages recompute their forward: a block's activations are counted once
  /// (rebuilt for one micro-batch at a time), not per micro-batch in flight.
  bool recompute = false;
  /// No merge builds a block whose parameters (times paramCopies) plus
  /// activations exceed this fraction of the smaller of the smallest
  /// device's memory and capFactor / L of the whole graph's (the memory
  /// analogue of the compute cap), except merges that add no memory and
  /// merges of blocks next to each other in topological order that the last
  /// pass needs to reach L. 0 disables the limit.
  double memoryFraction = 1.0;

  /// Checks ranges; names the offending field.
  llvm::Error validate() const;
};

/// Totals of one coarse block.
struct CoarseBlock {
  double fwdMs = 0.0;
  double bwdMs = 0.0;
  /// Parameter bytes, a tied parameter counted once per block.
  uint64_t paramBytes = 0;
  uint64_t actBytes = 0;
  uint32_t numNodes = 0;
  double computeMs() const { return fwdMs + bwdMs; }
};

/// A contracted graph: every node of the fine graph belongs to one block;
/// blocks are numbered in a topological order of the block graph.
struct CoarseGraph {
  /// nodeBlock[n] is the block of fine node n.
  std::vector<BlockId> nodeBlock;
  std::vector<CoarseBlock> blocks;
  /// Block graph in CSR form: distinct successor blocks of block b are
  /// succs[succOffsets[b] .. succOffsets[b+1]), with the bytes of the values
  /// that cross from b to each (a value counted once per destination block).
  std::vector<uint32_t> succOffsets;
  std::vector<BlockId> succs;
  std::vector<uint64_t> succBytes;

  size_t numBlocks() const { return blocks.size(); }
  llvm::ArrayRef<BlockId> successors(BlockId b) const {
    return llvm::ArrayRef<BlockId>(succs.data() + succOffsets[b],
                                   succs.data() + succOffsets[b + 1]);
  }
  llvm::ArrayRef<uint64_t> successorBytes(BlockId b) const {
    return llvm::ArrayRef<uint64_t>(succBytes.data() + succOffsets[b],
                                    succBytes.data() + succOffsets[b + 1]);
  }
};

/// Builds the coarse graph of `graph` under the node -> block map
/// `nodeBlock` (any block ids; they are renumbered in topological order, ties
/// by smallest member node). Fails when `nodeBlock` has the wrong size or the
/// block graph has a cycle (naming a block on it).
llvm::Expected<CoarseGraph>
buildCoarseGraph(const Graph &graph, llvm::ArrayRef<uint32_t> nodeBlock);

/// True when the graph of the blocks given by `nodeBlock` (any ids) has no
/// cycle. O(N + E).
bool isBlockGraphAcyclic(const Graph &graph,
                         llvm::ArrayRef<uint32_t> nodeBlock);

/// One level of the hierarchy: the blocks after one coarsening pass.
struct CoarseningLevel {
  /// Name of the pass that produced this level ("prefix", "type", "zero",
  /// "cco", "centres", "smallest").
  std::string pass;
  /// nodeBlock[n]: block of fine node n, blocks in topological order.
  std::vector<BlockId> nodeBlock;
  uint32_t numBlocks = 0;
};

/// All levels, finest first; each level's blocks are unions of the previous
/// level's blocks. Passes that changed nothing add no level; the prefix pass
/// adds one level per scope depth that merged something. The fine graph
/// itself (one block per node) is implicit and not stored.
struct CoarseningHierarchy {
  std::vector<CoarseningLevel> levels;
  /// The coarsest level as a coarse graph (what assignment places).
  CoarseGraph top;
  /// Number of successful contractions and of merges refused because they
  /// would have closed a cycle (for reports and tests).
  uint64_t contractions = 0;
  uint64_t refusedForCycles = 0;
};

/// Coarsens `graph` to at most `numBlocks` (L) blocks with the six passes
/// above, in order, for the devices of `hardware` (the slowest link between
/// two of them prices communication in the CCO pass). Guarantees: every level
/// is acyclic and nested in the next; the top level has at most L blocks,
/// exactly min(L, numNodes) when capFactor <= 1 and the graph has compute
/// (each block then holds at most 1/L of it); deterministic (no randomness,
/// ties broken by ids). O((N + E) log N) in practice. Fails when L == 0 or
/// the config is invalid.
llvm::Expected<CoarseningHierarchy>
coarsenGraph(const Graph &graph, const Hardware &hardware, uint32_t numBlocks,
             const CoarseningConfig &config = {});

} // namespace partition
} // namespace ftpipe

#endif // FTPIPE_PARTITION_COARSENING_H
