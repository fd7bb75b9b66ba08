//===- ReplicaBoundTest.cpp - The chain bound of replicated layouts -------===//
//
// chainBoundMs by hand; lowestChainBound's layout by hand; and on random
// chains of devices, each device a chain of 1-3 stages, random costs and
// layouts, GPipe and 1F1B with free links and all-reduces: the simulated
// mini-batch is never below the bound (the property the benchmark's
// "bound" column relies on).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/ReplicaBound.h"
#include "FTPipe/Schedule/Simulator.h"

#include "gtest/gtest.h"

#include <random>

using namespace ftpipe::partition;
using namespace ftpipe::schedule;

namespace {

TEST(ReplicaBound, ChainBoundByHand) {
  // Two devices, one replica each, 8 micro-batches: C / (1 - (7/8)^2).
  EXPECT_DOUBLE_EQ(chainBoundMs(15.0, {1, 1}, 8), 15.0 / (1.0 - 49.0 / 64.0));
  // One micro-batch per replica: nothing overlaps, one chain of C.
  EXPECT_DOUBLE_EQ(chainBoundMs(10.0, {8}, 8), 10.0);
  EXPECT_DOUBLE_EQ(chainBoundMs(10.0, {3, 8}, 8), 10.0);
  // One device alone: all M micro-batches, M x C.
  EXPECT_DOUBLE_EQ(chainBoundMs(10.0, {1}, 8), 80.0);
  // 3 replicas of 8: the busiest replica has 3.
  EXPECT_DOUBLE_EQ(chainBoundMs(9.0, {3}, 8), 27.0);
}

TEST(ReplicaBound, LowestLayoutByHand) {
  // 8 processes, 8 micro-batches, at least 2 devices: 4,4 (2 micro-batches
  // each: 1 - 1/4) beats 5,3 (1 - 1/3) and 7,1.
  ChainBound bound = lowestChainBound(1.0, 2, 8, 8);
  EXPECT_EQ(bound.layout.replicas, (std::vector<int64_t>{4, 4}));
  EXPECT_DOUBLE_EQ(bound.ms, 4.0 / 3.0);
  // Depth 1 allowed: every process a replica of the whole model.
  bound = lowestChainBound(1.0, 1, 8, 8);
  EXPECT_EQ(bound.layout.replicas, (std::vector<int64_t>{8}));
  EXPECT_DOUBLE_EQ(bound.ms, 1.0);
  // 4 processes need 3 devices: one of them replicated twice.
  bound = lowestChainBound(1.0, 3, 4, 8);
  EXPECT_EQ(bound.layout.replicas, (std::vector<int64_t>{2, 1, 1}));
  EXPECT_DOUBLE_EQ(bound.ms, chainBoundMs(1.0, {2, 1, 1}, 8));
}

TEST(ReplicaBound, RandomChainsSimulateAboveTheBound) {
  std::mt19937 rng(2828);
  for (int trial = 0; trial < 300; ++trial) {
    int64_t devices = 1 + rng() % 4, M = 1 + rng() % 8;
    std::vector<int64_t> placement;
    for (int64_t d = 0; d < devices; ++d)
      for (int64_t k = 1 + rng() % 3; k > 0; --k)
        placement.push_back(d);
    StageGraph graph = StageGraph::chain(placement);
    ReplicaLayout layout;
    for (int64_t d = 0; d < devices; ++d)
      layout.replicas.push_back(1 + rng() % 4);
    std::vector<double> fwd, input, weight;
    double compute = 0.0;
    for (size_t s = 0; s < placement.size(); ++s) {
      fwd.push_back(0.5 + rng() % 5);
      input.push_back(0.5 + rng() % 5);
      weight.push_back(rng() % 3);
      compute += fwd.back() + input.back() + weight.back();
    }
    TimedStageGraph sg = TimedStageGraph::withCosts(graph, fwd, input, weight,
                                                    /*edgeBytes=*/1000);
    Kind kind = rng() % 2 ? Kind::GPipe : Kind::OneFOneB;
    llvm::Expected<Schedule> lists =
        generate(graph, {kind, M, 1, {}, layout.replicas});
    ASSERT_TRUE(static_cast<bool>(lists)) << llvm::toString(lists.takeError());
    SimulatorConfig config;
    config.kind = kind;
    config.microBatches = uint32_t(M);
    config.orders = replicateSchedule(*lists, layout);
    config.replicas = layout;
    config.stageGradientBytes.assign(placement.size(), 0);
    // Free transfers and all-reduces: only compute and order remain.
    llvm::Expected<SimResult> result = simulate(
        sg, Links::uniform(size_t(layout.processes()), 1e6, 0.0), config);
    ASSERT_TRUE(static_cast<bool>(result))
        << "trial " << trial << ": " << llvm::toString(result.takeError());
    EXPECT_GE(result->msPerMiniBatch * (1 + 1e-9),
              chainBoundMs(compute, layout.replicas, uint32_t(M)))
        << "trial " << trial << ": replicas " << layout.str() << ", M " << M;
  }
}

} // namespace
