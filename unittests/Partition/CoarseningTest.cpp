//===- CoarseningTest.cpp - Mixed-Pipe coarsening tests ---------*- C++ -*-===//
//
// Property and example tests of coarsening (Mixed-Pipe phase 1): levels
// acyclic, nested and reaching L blocks, each pass alone, determinism,
// block-instance prefixes, recomputation, block types, absorbed ops and
// the coarse graph builder.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Coarsening.h"
#include "FTPipe/Partition/MixedPipe.h"
#include "FTPipe/Partition/Verify.h"
#include "MixedPipeTestUtil.h"

#include "gtest/gtest.h"

using namespace ftpipe::partition;
using namespace ftpipe::partition::test;

namespace {

/// The last level the prefix pass recorded (block instances).
const CoarseningLevel &lastPrefixLevel(const CoarseningHierarchy &h) {
  const CoarseningLevel *last = &h.levels.front();
  for (const CoarseningLevel &l : h.levels)
    if (l.pass == "prefix")
      last = &l;
  return *last;
}

TEST(Coarsening, LevelsAreAcyclicNestedAndReachL) {
  for (GraphFamily family : kFamilies)
    for (uint32_t n : {1u, 7u, 60u, 300u})
      for (uint64_t seed = 1; seed <= 4; ++seed)
        for (uint32_t L : {1u, 2u, 5u, 16u, 32u}) {
          SCOPED_TRACE(testing::Message() << familyName(family) << " n=" << n
                                          << " seed=" << seed << " L=" << L);
          Graph g = makeGraph(family, n, seed);
          Hardware hw = makeHardware(4);
          CoarseningHierarchy h = unwrap(coarsenGraph(g, hw, L));
          ASSERT_FALSE(h.levels.empty());
          for (size_t i = 0; i < h.levels.size(); ++i) {
            const CoarseningLevel &lvl = h.levels[i];
            ASSERT_EQ(lvl.nodeBlock.size(), n);
            EXPECT_TRUE(isBlockGraphAcyclic(g, lvl.nodeBlock)) << lvl.pass;
            // Blocks are numbered 0..numBlocks-1, all used.
            std::vector<char> used(lvl.numBlocks, 0);
            for (BlockId b : lvl.nodeBlock) {
              ASSERT_LT(b, lvl.numBlocks);
              used[b] = 1;
            }
            for (char u : used)
              EXPECT_TRUE(u);
            // Nested in the next level: a block maps to one coarser block.
            if (i + 1 < h.levels.size()) {
              std::vector<BlockId> up(lvl.numBlocks, ~0u);
              for (NodeId v = 0; v < n; ++v) {
                BlockId b = lvl.nodeBlock[v];
                BlockId c = h.levels[i + 1].nodeBlock[v];
                if (up[b] == ~0u)
                  up[b] = c;
                EXPECT_EQ(up[b], c);
              }
            }
          }
          EXPECT_EQ(h.top.numBlocks(), std::min<size_t>(L, n));
          EXPECT_EQ(h.top.nodeBlock, h.levels.back().nodeBlock);
          double total = 0.0;
          uint32_t nodes = 0;
          for (const CoarseBlock &b : h.top.blocks) {
            total += b.computeMs();
            nodes += b.numNodes;
          }
          EXPECT_NEAR(total, g.totalComputeMs(), 1e-9 * (1 + total));
          EXPECT_EQ(nodes, n);
          // Edges of the block graph go forward in block order.
          for (BlockId b = 0; b < h.top.numBlocks(); ++b)
            for (BlockId s : h.top.successors(b))
              EXPECT_LT(b, s);
        }
}

TEST(Coarsening, EveryPassAloneKeepsLevelsAcyclic) {
  // Ablation: each pass on its own (smallest first always runs last).
  for (int pass = 0; pass < 6; ++pass)
    for (GraphFamily family : kFamilies)
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        SCOPED_TRACE(testing::Message()
                     << "pass " << pass << " " << familyName(family)
                     << " seed=" << seed);
        CoarseningConfig cfg;
        cfg.byPrefix = pass == 0;
        cfg.byType = pass == 1;
        cfg.zeroWeight = pass == 2;
        cfg.cco = pass == 3;
        cfg.centres = pass == 4;
        cfg.memoryFraction = pass == 5 ? 0.0 : 0.5;
        Graph g = makeGraph(family, 240, seed);
        Hardware hw = makeHardware(4, 1ull << 32);
        CoarseningHierarchy h = unwrap(coarsenGraph(g, hw, 12, cfg));
        for (const CoarseningLevel &lvl : h.levels)
          EXPECT_TRUE(isBlockGraphAcyclic(g, lvl.nodeBlock)) << lvl.pass;
        EXPECT_EQ(h.top.numBlocks(), 12u);
      }
}

TEST(Coarsening, IsDeterministic) {
  for (GraphFamily family : kFamilies) {
    Graph g = makeGraph(family, 500, 3);
    Hardware hw = makeHardware(8);
    CoarseningHierarchy a = unwrap(coarsenGraph(g, hw, 16));
    CoarseningHierarchy b = unwrap(coarsenGraph(g, hw, 16));
    ASSERT_EQ(a.levels.size(), b.levels.size());
    for (size_t i = 0; i < a.levels.size(); ++i)
      EXPECT_EQ(a.levels[i].nodeBlock, b.levels[i].nodeBlock);
  }
}

TEST(Coarsening, PrefixMakesOneNodePerBlockInstance) {
  // 10 blocks of 7 ops; with L = 2 every block instance fits under the cap.
  Graph g = makeGraph(GraphFamily::Layered, 72, 5);
  Hardware hw = makeHardware(2);
  CoarseningHierarchy h = unwrap(coarsenGraph(g, hw, 2));
  ASSERT_EQ(h.levels.front().pass, "prefix");
  const CoarseningLevel &level = lastPrefixLevel(h);
  const std::vector<BlockId> &map = level.nodeBlock;
  for (NodeId v = 1; v + 1 < g.numNodes(); ++v) {
    NodeId first = 1 + (v - 1) / 7 * 7;
    EXPECT_EQ(map[v], map[first]) << g.scope(v).str();
  }
  // Different instances stay apart, and so do embedding and head.
  EXPECT_NE(map[1], map[8]);
  EXPECT_NE(map[0], map[1]);
  EXPECT_EQ(level.numBlocks, 12u);
}

TEST(Coarsening, PrefixUnderstandsFTPipeScopes) {
  Graph g = t5Like(6);
  Hardware hw = makeHardware(2);
  CoarseningConfig cfg;
  CoarseningHierarchy h = unwrap(coarsenGraph(g, hw, 2, cfg));
  ASSERT_EQ(h.levels.front().pass, "prefix");
  // Deepest prefixes first: the two projections of each block's
  // DenseReluDense (depth 7) merge before anything else does.
  EXPECT_EQ(h.levels.front().numBlocks, g.numNodes() - 12);
  // Then 12 block instances, embedding and head.
  const CoarseningLevel &level = lastPrefixLevel(h);
  EXPECT_EQ(level.numBlocks, 14u);
  const std::vector<BlockId> &map = level.nodeBlock;
  for (NodeId v = 1; v + 1 < g.numNodes(); ++v)
    EXPECT_EQ(map[v], map[1 + (v - 1) / 6 * 6]);
}

TEST(Coarsening, RecomputationCountsActivationsOnce) {
  // A chain of equal ops heavy in activations. Early blocks keep more
  // micro-batches in flight, so without recomputation their activations weigh
  // more and smallest-first leaves them smaller; under recomputation a block
  // keeps one micro-batch of activations wherever it is, and early blocks are
  // no smaller than late ones.
  GraphBuilder b;
  NodeId prev = kNoNode;
  for (int i = 0; i < 16; ++i) {
    NodeId n = b.addNode("chain/op" + std::to_string(i), "test.op",
                         {1.0, 2.0, 64 << 20, 1 << 10});
    if (prev != kNoNode)
      b.addEdge(prev, n, 1 << 10);
    prev = n;
  }
  Graph g = unwrap(b.build());
  Hardware hw = makeHardware(4);
  CoarseningConfig cfg;
  cfg.byPrefix = false;
  cfg.byType = false;
  cfg.cco = false;
  cfg.centres = false;
  cfg.memoryFraction = 0.0;
  cfg.maxInFlight = 8;
  auto blockSizes = [&](bool recompute) {
    cfg.recompute = recompute;
    CoarseningHierarchy h = unwrap(coarsenGraph(g, hw, 3, cfg));
    std::vector<uint32_t> sizes;
    for (const CoarseBlock &blk : h.top.blocks)
      sizes.push_back(blk.numNodes);
    return sizes;
  };
  std::vector<uint32_t> kept = blockSizes(false);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_LT(kept.front(), kept.back());
  std::vector<uint32_t> rebuilt = blockSizes(true);
  ASSERT_EQ(rebuilt.size(), 3u);
  EXPECT_GE(rebuilt.front(), rebuilt.back());
}

TEST(Coarsening, ConfigurableBlockTypes) {
  Graph g = makeGraph(GraphFamily::Layered, 72, 5);
  Hardware hw = makeHardware(2);
  CoarseningConfig cfg;
  cfg.blockTypes = {"T5Block"}; // not present: only same-module ops merge
  cfg.cco = cfg.centres = false;
  CoarseningHierarchy h = unwrap(coarsenGraph(g, hw, 2, cfg));
  // Same-module ops of a block (its two norms, its two adds) would close a
  // cycle, so nothing merges by prefix.
  EXPECT_NE(h.levels.front().pass, "prefix");
  EXPECT_GT(h.refusedForCycles, 0u);
  cfg.blockTypes = {"a/b"};
  EXPECT_NE(message(cfg.validate()), "");
  EXPECT_FALSE(bool(coarsenGraph(g, hw, 0)));
  llvm::consumeError(coarsenGraph(g, hw, 0).takeError());
}

TEST(Coarsening, ZeroWeightOpsAreAbsorbed) {
  GraphBuilder b;
  b.addNode("m/a", "tosa.matmul", {1.0, 2.0, 0, 100});
  b.addNode("m/z", "tosa.reshape2", {0.0, 0.0, 0, 100});
  b.addNode("n/c", "tosa.matmul", {1.0, 2.0, 0, 100});
  b.addNode("o/d", "tosa.matmul", {1.0, 2.0, 0, 100});
  b.addValue(kNoNode, 8, {0}, false); // token ids: a computes from data
  b.addEdge(0, 1, 100);
  b.addEdge(1, 2, 100);
  b.addEdge(2, 3, 100);
  Graph g = unwrap(b.build());
  Hardware hw = makeHardware(2);
  CoarseningConfig cfg;
  cfg.byPrefix = cfg.cco = cfg.centres = false;
  CoarseningHierarchy h = unwrap(coarsenGraph(g, hw, 3, cfg));
  EXPECT_EQ(h.levels.front().pass, "zero");
  EXPECT_EQ(h.top.nodeBlock[0], h.top.nodeBlock[1]);
  EXPECT_EQ(h.top.numBlocks(), 3u);
}

TEST(Coarsening, WeightPreprocessingJoinsItsConsumer) {
  // Foreign IR: weights are arguments, transposed before use. The transposes
  // (and a reshape before one of them) read only parameters; each must end
  // up with the matmul that reads its output, never in a block of its own.
  GraphBuilder b;
  NodeId x = b.addNode("", "tosa.mul", {1.0, 1.0, 8, 8});
  NodeId r = b.addNode("", "tosa.reshape", {0.0, 0.0, 0, 1 << 24});
  NodeId t1 = b.addNode("", "tosa.transpose", {0.5, 0.0, 0, 1 << 24});
  NodeId m1 = b.addNode("", "tosa.matmul", {4.0, 8.0, 8, 8});
  NodeId t2 = b.addNode("", "tosa.transpose", {0.5, 0.0, 0, 1 << 24});
  NodeId m2 = b.addNode("", "tosa.matmul", {4.0, 8.0, 8, 8});
  ParamId w1 = b.addParam("w1", 1 << 24), w2 = b.addParam("w2", 1 << 24);
  b.addParamUse(r, w1);
  b.addParamUse(t2, w2);
  b.addValue(kNoNode, 8, {x}, false);
  b.addEdge(r, t1, 1 << 24);
  b.addValue(x, 8, {m1});
  b.addEdge(t1, m1, 1 << 24);
  b.addEdge(m1, m2, 8);
  b.addEdge(t2, m2, 1 << 24);
  Graph g = unwrap(b.build());
  Hardware hw = makeHardware(2);
  for (uint32_t L : {2u, 3u, 4u}) {
    CoarseningHierarchy h = unwrap(coarsenGraph(g, hw, L));
    const std::vector<BlockId> &map = h.top.nodeBlock;
    EXPECT_EQ(map[r], map[m1]);
    EXPECT_EQ(map[t1], map[m1]);
    EXPECT_EQ(map[t2], map[m2]);
  }
}

TEST(Coarsening, CCOGrowsBlocksThatCannotHideTheirTransfers) {
  // 40 cheap ops exchanging 12 MB tensors (1 ms each way at 12 GB/s) with
  // 0.2 ms of compute each: every cut is exposed until blocks are big.
  GraphBuilder b;
  for (int i = 0; i < 40; ++i)
    b.addNode("m/op" + std::to_string(i), "t", {0.1, 0.1, 0, 12000000});
  b.addValue(kNoNode, 8, {0}, false);
  for (int i = 0; i + 1 < 40; ++i)
    b.addEdge(i, i + 1, 12000000);
  Graph g = unwrap(b.build());
  Hardware hw = makeHardware(2);
  CoarseningConfig cfg;
  cfg.centres = false;
  CoarseningHierarchy h = unwrap(coarsenGraph(g, hw, 2, cfg));
  const CoarseningLevel *cco = nullptr;
  for (const CoarseningLevel &l : h.levels)
    if (l.pass == "cco")
      cco = &l;
  ASSERT_NE(cco, nullptr);
  CoarseGraph cg = unwrap(buildCoarseGraph(g, cco->nodeBlock));
  // Interior blocks send 1 ms and receive 1 ms: they need >= 2 ms compute.
  for (BlockId blk = 1; blk + 1 < cg.numBlocks(); ++blk)
    EXPECT_GE(cg.blocks[blk].computeMs(), 2.0 - 1e-9);
}

TEST(Coarsening, DisconnectedGraphsReachL) {
  // 100 chains of 5 ops, 300 isolated ops, and one hub value read by 200
  // ops: smallest first must fall back to merging blocks next to each other
  // in the order.
  GraphBuilder b;
  for (int i = 0; i < 800; ++i)
    b.addNode("", "t", {0.5 + (i % 7) * 0.25, 1.0, 64, 64});
  for (int c = 0; c < 100; ++c)
    for (int k = 0; k + 1 < 5; ++k)
      b.addEdge(c * 5 + k, c * 5 + k + 1, 1000);
  std::vector<NodeId> readers;
  for (int i = 601; i < 800; ++i)
    readers.push_back(i);
  b.addValue(600, 5000, readers);
  Graph g = unwrap(b.build());
  Hardware hw = makeHardware(4);
  for (uint32_t L : {1u, 4u, 8u, 16u}) {
    CoarseningHierarchy h = unwrap(coarsenGraph(g, hw, L));
    EXPECT_EQ(h.top.numBlocks(), L);
    for (const CoarseningLevel &lvl : h.levels)
      EXPECT_TRUE(isBlockGraphAcyclic(g, lvl.nodeBlock)) << lvl.pass;
  }
  MixedPipeResult r = unwrap(runMixedPipe(g, hw));
  EXPECT_EQ(message(verifyPlan(g, hw, r.plan, MixedPipeConfig().objective)),
            "");
}

TEST(Coarsening, BuildCoarseGraphRejectsCycles) {
  GraphBuilder b;
  for (int i = 0; i < 3; ++i)
    b.addNode("m", "t", {1.0, 1.0, 0, 8});
  b.addEdge(0, 1, 8);
  b.addEdge(1, 2, 8);
  Graph g = unwrap(b.build());
  std::vector<uint32_t> map = {7, 9, 7}; // {0, 2} and {1}: a cycle
  EXPECT_FALSE(isBlockGraphAcyclic(g, map));
  llvm::Expected<CoarseGraph> cg = buildCoarseGraph(g, map);
  ASSERT_FALSE(bool(cg));
  EXPECT_NE(llvm::toString(cg.takeError()).find("cycle"), std::string::npos);
  map = {9, 9, 7};
  CoarseGraph ok = unwrap(buildCoarseGraph(g, map));
  EXPECT_EQ(ok.nodeBlock, (std::vector<BlockId>{0, 0, 1}));
  EXPECT_EQ(ok.successorBytes(0).vec(), (std::vector<uint64_t>{8}));
}

} // namespace
