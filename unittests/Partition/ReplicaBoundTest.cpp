//===- ReplicaBoundTest.cpp - The chain bound of replicated layouts -------===//
//
// chainBoundMs by hand; lowestChainBound's layout by hand; chainSharesMs
// reaching the bound on every device; the bound under a cap on a device's
// compute by hand; and on random
// chains of devices, each device a chain of 1-3 stages, random costs and
// layouts, GPipe and 1F1B with free links and all-reduces: the simulated
// mini-batch is never below the bound, nor below the bound capped at the
// busiest device's compute (the property the benchmark's "bound" column
// relied on). The step bound's figures by hand: the longest path through
// a node's task with m - 1 more of it, a value without a gradient off the
// backward path, no bound under async, and the lowest layout.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/ReplicaBound.h"
#include "FTPipe/Schedule/Simulator.h"

#include "TestUtil.h"

#include <algorithm>
#include <limits>
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

TEST(ReplicaBound, SharesReachTheBound) {
  // 2 devices of 4 replicas at M = 8: 2 micro-batches each; the first
  // device takes 2/3 of C, computing through the second's bubble.
  std::vector<double> shares = chainSharesMs(3.0, {4, 4}, 8);
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_DOUBLE_EQ(shares[0], 2.0);
  EXPECT_DOUBLE_EQ(shares[1], 1.0);
  // Every layout: the shares add up to C and each device's chain m_k c_k +
  // (c_0 + ... + c_{k-1}) is the bound.
  for (std::vector<int64_t> replicas :
       {std::vector<int64_t>{1, 1, 1}, {3, 2, 1, 2}, {8, 1}, {1, 8}, {5}}) {
    double bound = chainBoundMs(7.0, replicas, 8), before = 0.0;
    shares = chainSharesMs(7.0, replicas, 8);
    ASSERT_EQ(shares.size(), replicas.size());
    for (auto [r, c] : llvm::zip(replicas, shares)) {
      EXPECT_NEAR(double((8 + r - 1) / r) * c + before, bound, 1e-9);
      before += c;
    }
    EXPECT_NEAR(before, 7.0, 1e-9);
  }
}

TEST(ReplicaBound, CappedByHand) {
  double inf = std::numeric_limits<double>::infinity();
  // No cap, or one that does not bind: the chain bound.
  EXPECT_DOUBLE_EQ(cappedChainBoundMs(3.0, inf, {4, 4}, 8), 4.0);
  EXPECT_DOUBLE_EQ(cappedChainBoundMs(3.0, 2.0, {4, 4}, 8), 4.0);
  // The first device may take 1.5 of its 2: the second takes 1.5 too, and
  // 2 x 1.5 + 1.5 = 4.5.
  EXPECT_NEAR(cappedChainBoundMs(3.0, 1.5, {4, 4}, 8), 4.5, 1e-9);
  // Two devices of 1 cannot hold 3.
  EXPECT_EQ(cappedChainBoundMs(3.0, 1.0, {4, 4}, 8), inf);
  // The order matters under a cap: 8 replicas first take 0.6 in 1 micro-
  // batch each, the other device's 8 micro-batches of 0.4 follow (3.8);
  // the other way round, 8 x 0.4 then the 0.6 (3.2).
  EXPECT_NEAR(cappedChainBoundMs(1.0, 0.6, {8, 1}, 8), 3.8, 1e-9);
  EXPECT_NEAR(cappedChainBoundMs(1.0, 0.6, {1, 8}, 8), 3.2, 1e-9);
  ChainBound bound = lowestChainBound(1.0, 1, 9, 8, 0.6);
  EXPECT_LE(bound.ms, 3.2 + 1e-9);
  EXPECT_GE(bound.ms, lowestChainBound(1.0, 1, 9, 8).ms);
  EXPECT_NEAR(bound.ms, cappedChainBoundMs(1.0, 0.6, bound.layout.replicas, 8),
              1e-12);
  // The whole model on one device does not fit: no depth 1.
  EXPECT_GE(bound.layout.devices(), 2);
  // Beyond kMaxCappedProcesses the cap is left out.
  EXPECT_DOUBLE_EQ(lowestChainBound(1.0, 1, 17, 8, 0.6).ms,
                   lowestChainBound(1.0, 1, 17, 8).ms);
}

TEST(ReplicaBound, StepBoundByHand) {
  using ftpipe::partition::test::chain;
  using ftpipe::partition::test::uniformHardware;
  // Three nodes of F 1 ms and B 2 ms: one micro-batch's path is 3 + 6 ms;
  // with m micro-batches on a replica, m - 1 more backwards of a node.
  ftpipe::partition::Graph graph = chain(3, 1.0, 2.0, 100);
  ftpipe::partition::ObjectiveConfig config;
  config.schedule = Kind::OneFOneB;
  config.microBatches = 4;
  StepBoundFigures figures =
      stepBoundFigures(graph, uniformHardware(2), config);
  EXPECT_DOUBLE_EQ(figures.computeMs, 9.0);
  EXPECT_EQ(figures.pathMs, (std::vector<double>{9.0, 11.0, 13.0, 15.0}));
  // One device: all 4 micro-batches' work. Two devices once each: the path
  // with 3 more backwards of a node (15) over the work halved (18).
  EXPECT_DOUBLE_EQ(stepBoundMs(figures, {1}, 4), 36.0);
  EXPECT_DOUBLE_EQ(stepBoundMs(figures, {1, 1}, 4), 18.0);
  EXPECT_DOUBLE_EQ(stepBoundMs(figures, {4}, 4), 9.0);
  // 3 replicas of 4 micro-batches: a replica with 2; the other device's 4
  // micro-batches: 9 / (1/2 + 1/4) = 12 over the path 11.
  EXPECT_DOUBLE_EQ(stepBoundMs(figures, {3, 1}, 4), 12.0);
  // 4 processes on at least 2 devices: 2,2 (9 / (1/2 + 1/2) = 9 against
  // the path 11; 2,1,1 ties), below 3,1 (12).
  ChainBound lowest = lowestStepBound(figures, 2, 4, 4);
  EXPECT_EQ(lowest.layout.replicas, (std::vector<int64_t>{2, 2}));
  EXPECT_DOUBLE_EQ(lowest.ms, 11.0);
  // Values without a gradient: the backwards wait for no other node, the
  // path is the forwards and the last node's backward.
  figures = stepBoundFigures(chain(3, 1.0, 2.0, 100, /*grad=*/false),
                             uniformHardware(2), config);
  EXPECT_DOUBLE_EQ(figures.pathMs[0], 5.0);
  // Async's estimated period is not bounded.
  config.schedule = Kind::Async;
  figures = stepBoundFigures(graph, uniformHardware(2), config);
  EXPECT_EQ(figures.pathMs, (std::vector<double>(4, 0.0)));
  EXPECT_DOUBLE_EQ(stepBoundMs(figures, {1, 1}, 4), 0.0);
}

TEST(ReplicaBound, RandomChainsSimulateAboveTheBound) {
  std::mt19937 rng(2828);
  for (int trial = 0; trial < 300; ++trial) {
    int64_t devices = 1 + rng() % 4, M = 1 + rng() % 8;
    std::vector<int64_t> placement;
    for (int64_t d = 0; d < devices; ++d)
      for (int64_t k = 1 + rng() % 3; k > 0; --k)
        placement.push_back(d);
    ftpipe::schedule::StageGraph graph =
        ftpipe::schedule::StageGraph::chain(placement);
    ReplicaLayout layout;
    for (int64_t d = 0; d < devices; ++d)
      layout.replicas.push_back(1 + rng() % 4);
    std::vector<double> fwd, input, weight, perDevice(size_t(devices), 0.0);
    double compute = 0.0;
    for (size_t s = 0; s < placement.size(); ++s) {
      fwd.push_back(0.5 + rng() % 5);
      input.push_back(0.5 + rng() % 5);
      weight.push_back(rng() % 3);
      compute += fwd.back() + input.back() + weight.back();
      perDevice[size_t(placement[s])] +=
          fwd.back() + input.back() + weight.back();
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
    // Capped at the busiest device's compute, which every device respects.
    double cap = *std::max_element(perDevice.begin(), perDevice.end());
    EXPECT_GE(result->msPerMiniBatch * (1 + 1e-9),
              cappedChainBoundMs(compute, cap, layout.replicas, uint32_t(M)))
        << "trial " << trial << ": replicas " << layout.str() << ", M " << M
        << ", cap " << cap;
  }
}

} // namespace
