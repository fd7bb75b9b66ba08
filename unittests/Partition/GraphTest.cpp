//===- GraphTest.cpp - Graph builder and random graph tests -----*- C++ -*-===//
//
// The builder must reject every malformed input with a message naming the
// offending id, lay out CSR arrays correctly, and the random generator must
// be deterministic and always valid.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Graph.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace ftpipe::partition;

namespace {

std::string errorOf(llvm::Expected<Graph> g) {
  if (g)
    return "";
  return llvm::toString(g.takeError());
}

TEST(GraphBuilder, BuildsDiamondWithHyperedge) {
  GraphBuilder b;
  NodeId a = b.addNode("m/a", "tosa.matmul", {1.0, 2.0, 10, 100});
  NodeId l = b.addNode("m/l", "tosa.add", {0.5, 0.5, 0, 100});
  NodeId r = b.addNode("m/r", "tosa.mul", {0.25, 0.25, 0, 100});
  NodeId j = b.addNode("m/j", "tosa.add", {0.0, 0.0, 0, 100});
  ParamId w = b.addParam("w", 64);
  b.addParamUse(a, w);
  b.addParamUse(j, w); // tied
  ValueId in = b.addValue(kNoNode, 8, {a});
  ValueId v = b.addValue(a, 100, {r, l}); // unsorted on purpose
  b.addEdge(l, j, 100);
  b.addEdge(r, j, 100);
  llvm::Expected<Graph> g = b.build();
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  EXPECT_EQ(g->numNodes(), 4u);
  EXPECT_EQ(g->numValues(), 4u);
  EXPECT_EQ(g->numParams(), 1u);
  EXPECT_EQ(g->consumers(v).vec(), (std::vector<NodeId>{l, r}));
  EXPECT_EQ(g->succs(a).vec(), (std::vector<NodeId>{l, r}));
  EXPECT_EQ(g->preds(j).vec(), (std::vector<NodeId>{l, r}));
  EXPECT_TRUE(g->preds(a).empty());
  EXPECT_EQ(g->inputs(a).vec(), (std::vector<ValueId>{in}));
  EXPECT_EQ(g->outputs(a).vec(), (std::vector<ValueId>{v}));
  EXPECT_EQ(g->producer(in), kNoNode);
  EXPECT_EQ(g->paramReaders(w).vec(), (std::vector<NodeId>{a, j}));
  EXPECT_EQ(g->nodeParamBytes(j), 64u);
  EXPECT_EQ(g->totalParamBytes(), 64u);
  EXPECT_DOUBLE_EQ(g->totalComputeMs(), 4.5);
  EXPECT_DOUBLE_EQ(g->maxNodeComputeMs(), 3.0);
  EXPECT_EQ(g->scope(r), "m/r");
  EXPECT_EQ(g->type(r), "tosa.mul");
}

TEST(GraphBuilder, EmptyGraphIsValid) {
  GraphBuilder b;
  llvm::Expected<Graph> g = b.build();
  ASSERT_TRUE(bool(g));
  EXPECT_EQ(g->numNodes(), 0u);
}

TEST(GraphBuilder, RejectsBackwardEdge) {
  GraphBuilder b;
  b.addNode("a", "t", {});
  b.addNode("b", "t", {});
  b.addEdge(1, 0, 4);
  EXPECT_NE(errorOf(b.build()).find("topological order"), std::string::npos);
}

TEST(GraphBuilder, RejectsSelfLoop) {
  GraphBuilder b;
  b.addNode("a", "t", {});
  b.addEdge(0, 0, 4);
  EXPECT_NE(errorOf(b.build()).find("topological"), std::string::npos);
}

TEST(GraphBuilder, RejectsUnknownIds) {
  {
    GraphBuilder b;
    b.addNode("a", "t", {});
    b.addEdge(0, 5, 4);
    EXPECT_NE(errorOf(b.build()).find("consumed by node 5"), std::string::npos);
  }
  {
    GraphBuilder b;
    b.addNode("a", "t", {});
    b.addValue(7, 4, {0});
    EXPECT_NE(errorOf(b.build()).find("produced by node 7"), std::string::npos);
  }
  {
    GraphBuilder b;
    b.addNode("a", "t", {});
    b.addParamUse(0, 3);
    EXPECT_NE(errorOf(b.build()).find("reads param 3"), std::string::npos);
  }
  {
    GraphBuilder b;
    b.addParam("w", 4);
    b.addParamUse(2, 0);
    EXPECT_NE(errorOf(b.build()).find("names node 2"), std::string::npos);
  }
  {
    GraphBuilder b;
    b.addNode("a", "t", {});
    b.addConsumer(9, 0);
    EXPECT_NE(errorOf(b.build()).find("value 9"), std::string::npos);
  }
}

TEST(GraphBuilder, RejectsDuplicates) {
  {
    GraphBuilder b;
    b.addNode("a", "t", {});
    b.addNode("b", "t", {});
    b.addValue(0, 4, {1, 1});
    EXPECT_NE(errorOf(b.build()).find("twice"), std::string::npos);
  }
  {
    GraphBuilder b;
    b.addNode("a", "t", {});
    ParamId p = b.addParam("w", 4);
    b.addParamUse(0, p);
    b.addParamUse(0, p);
    EXPECT_NE(errorOf(b.build()).find("twice"), std::string::npos);
  }
}

TEST(GraphBuilder, RejectsBadCosts) {
  for (double bad : {-1.0, std::nan(""), HUGE_VAL}) {
    GraphBuilder b;
    b.addNode("bad", "t", {1.0, bad, 0, 0});
    std::string err = errorOf(b.build());
    EXPECT_NE(err.find("node 0 ('bad')"), std::string::npos) << err;
  }
}

TEST(GraphBuilder, BuilderIsEmptyAfterBuild) {
  GraphBuilder b;
  b.addNode("a", "t", {});
  ASSERT_TRUE(bool(b.build()));
  EXPECT_EQ(b.numNodes(), 0u);
}

class RandomGraphTest
    : public ::testing::TestWithParam<std::tuple<GraphFamily, uint64_t>> {};

TEST_P(RandomGraphTest, ValidAndDeterministic) {
  RandomGraphOptions o;
  o.family = std::get<0>(GetParam());
  o.seed = std::get<1>(GetParam());
  o.numNodes = 50 + uint32_t(o.seed * 37 % 200);
  llvm::Expected<Graph> g1 = generateRandomGraph(o);
  llvm::Expected<Graph> g2 = generateRandomGraph(o);
  ASSERT_TRUE(bool(g1)) << llvm::toString(g1.takeError());
  ASSERT_TRUE(bool(g2)) << llvm::toString(g2.takeError());
  ASSERT_EQ(g1->numNodes(), o.numNodes);
  ASSERT_EQ(g1->numValues(), g2->numValues());
  for (NodeId n = 0; n < g1->numNodes(); ++n) {
    EXPECT_EQ(g1->cost(n).fwdMs, g2->cost(n).fwdMs);
    EXPECT_EQ(g1->succs(n).vec(), g2->succs(n).vec());
    for (NodeId s : g1->succs(n))
      EXPECT_GT(s, n);
    if (n > 0) {
      EXPECT_FALSE(g1->preds(n).empty());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Families, RandomGraphTest,
    ::testing::Combine(::testing::Values(GraphFamily::Chain,
                                         GraphFamily::Layered,
                                         GraphFamily::Wide),
                       ::testing::Values(1, 2, 3, 42)));

TEST(RandomGraph, LayeredHasTiedEmbeddingAndSkips) {
  RandomGraphOptions o;
  o.family = GraphFamily::Layered;
  o.numNodes = 30;
  llvm::Expected<Graph> g = generateRandomGraph(o);
  ASSERT_TRUE(bool(g));
  EXPECT_EQ(g->paramName(0), "embedding");
  EXPECT_EQ(g->paramReaders(0).vec(), (std::vector<NodeId>{0, 29}));
  // The first block's attention add (node 3) reads the embedding output.
  EXPECT_EQ(g->preds(3).vec(), (std::vector<NodeId>{0, 2}));
  EXPECT_EQ(g->scope(3), "Model/Block[0]/add");
}

TEST(RandomGraph, RejectsZeroNodes) {
  RandomGraphOptions o;
  o.numNodes = 0;
  EXPECT_FALSE(bool(generateRandomGraph(o)));
  llvm::consumeError(generateRandomGraph(o).takeError());
}

} // namespace
