//===- ObjectiveTest.cpp - Objective and memory model -----------*- C++ -*-===//
//
// Hand-computed cases for the stage graph, FTPipe's CCO rule, device loads,
// the lower bound and the memory model (tied weights, stashing, optimizer
// state, recomputation), plus the in-flight rules of each schedule.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Objective.h"
#include "FTPipe/Partition/Verify.h"

#include "TestUtil.h"

using namespace ftpipe::partition;
using namespace ftpipe::partition::test;

namespace {

/// n0 -> n1 -> {n2, n3}, n2 -> n3 (no gradient). Params: w0 (100 B, tied:
/// n0 and n3), w1 (50 B, n1).
Graph smallGraph() {
  GraphBuilder b;
  b.addNode("a", "t", {1, 2, 10, 0});
  b.addNode("b", "t", {3, 6, 20, 0});
  b.addNode("c", "t", {2, 4, 30, 0});
  b.addNode("d", "t", {1, 1, 40, 0});
  b.addValue(0, 4'000'000, {1});
  b.addValue(1, 2'000'000, {2, 3});
  b.addValue(2, 1'000'000, {3}, /*needsGrad=*/false);
  ParamId w0 = b.addParam("w0", 100), w1 = b.addParam("w1", 50);
  b.addParamUse(0, w0);
  b.addParamUse(3, w0);
  b.addParamUse(1, w1);
  return unwrap(b.build());
}

Plan twoStages() { return Plan{{0, 0, 1, 1}, {0, 1}}; }

TEST(Objective, TwoStagesHandComputed) {
  Graph g = smallGraph();
  Hardware hw = uniformHardware(2, /*gbps=*/1.0);
  ObjectiveConfig config;
  PlanMetrics m = unwrap(evaluatePlan(g, hw, twoStages(), config));
  ASSERT_EQ(m.stages.size(), 2u);
  EXPECT_DOUBLE_EQ(m.stages[0].computeMs, 12.0);
  EXPECT_DOUBLE_EQ(m.stages[1].computeMs, 8.0);
  // The hyperedge v1 crosses once (2 MB = 2 ms), both ways.
  EXPECT_DOUBLE_EQ(m.stages[0].commFwdMs, 2.0);
  EXPECT_DOUBLE_EQ(m.stages[0].commBwdMs, 2.0);
  EXPECT_DOUBLE_EQ(m.stages[1].commFwdMs, 2.0);
  EXPECT_DOUBLE_EQ(m.stages[0].exposedCommMs, 0.0);
  EXPECT_EQ(m.stages[0].sentBytes, 2'000'000u);
  EXPECT_EQ(m.stages[0].receivedBytes, 2'000'000u);
  EXPECT_DOUBLE_EQ(m.asyncMsPerMicroBatch, 12.0);
  EXPECT_EQ(m.bottleneckDevice, 0u);
  EXPECT_DOUBLE_EQ(m.totalComputeMs, 20.0);
  EXPECT_DOUBLE_EQ(m.lowerBoundMs, 10.0);
  EXPECT_DOUBLE_EQ(m.imbalance, 1.2);

  // Memory, Adam + stashing: stage 0 has height 1, so 2 micro-batches in
  // flight and one stashed version; stage 1 keeps one.
  EXPECT_EQ(m.stages[0].inFlight, 2u);
  EXPECT_EQ(m.stages[1].inFlight, 1u);
  const DeviceMetrics &d0 = m.devices[0], &d1 = m.devices[1];
  EXPECT_EQ(d0.paramBytes, 150u);
  EXPECT_EQ(d0.gradBytes, 150u);
  EXPECT_EQ(d0.optimizerBytes, 300u);
  EXPECT_EQ(d0.stashBytes, 150u);
  EXPECT_EQ(d0.activationBytes, 60u);
  EXPECT_EQ(d0.memoryBytes, 810u);
  EXPECT_EQ(d1.paramBytes, 100u); // tied w0 again, on the second device
  EXPECT_EQ(d1.stashBytes, 0u);
  EXPECT_EQ(d1.activationBytes, 70u);
  EXPECT_EQ(d1.memoryBytes, 470u);
  EXPECT_TRUE(m.memoryFits);
}

TEST(Objective, CCOExposesOnlyWhatComputeCannotHide) {
  Graph g = smallGraph();
  // 0.1 GB/s: 2 MB take 20 ms, more than either stage computes.
  Hardware hw = uniformHardware(2, /*gbps=*/0.1);
  PlanMetrics m = unwrap(evaluatePlan(g, hw, twoStages(), {}));
  EXPECT_NEAR(m.stages[0].exposedCommMs, 16.0, 1e-9); // 2 x (20 - 12)
  EXPECT_NEAR(m.stages[1].exposedCommMs, 24.0, 1e-9); // 2 x (20 - 8)
  EXPECT_NEAR(m.stages[1].loadMs, 32.0, 1e-9);
  EXPECT_NEAR(m.asyncMsPerMicroBatch, 32.0, 1e-9);
  EXPECT_EQ(m.bottleneckDevice, 1u);
}

TEST(Objective, LatencyPerTensor) {
  Graph g = smallGraph();
  Hardware hw = uniformHardware(2, 1.0, /*latencyUs=*/100.0);
  PlanMetrics m = unwrap(evaluatePlan(g, hw, twoStages(), {}));
  EXPECT_NEAR(m.stages[0].commFwdMs, 2.1, 1e-12);
}

TEST(Objective, HyperedgeCountsOncePerDestinationStage) {
  Graph g = smallGraph();
  Hardware hw = uniformHardware(3, 1.0);
  PlanMetrics m =
      unwrap(evaluatePlan(g, hw, Plan{{0, 0, 1, 2}, {0, 1, 2}}, {}));
  EXPECT_DOUBLE_EQ(m.stages[0].commFwdMs, 4.0); // v1 to stages 1 and 2
  EXPECT_DOUBLE_EQ(m.stages[0].commBwdMs, 4.0);
  EXPECT_DOUBLE_EQ(m.stages[1].commFwdMs, 3.0); // v1 in, v2 out
  EXPECT_DOUBLE_EQ(m.stages[1].commBwdMs, 2.0); // v2 has no gradient
  EXPECT_DOUBLE_EQ(m.stages[2].commFwdMs, 3.0);
  EXPECT_DOUBLE_EQ(m.stages[2].commBwdMs, 2.0);
  StageGraph sg =
      unwrap(buildStageGraph(g, hw, Plan{{0, 0, 1, 2}, {0, 1, 2}}, {}));
  ASSERT_EQ(sg.edges.size(), 3u);
  EXPECT_EQ(sg.edges[2].src, 1u);
  EXPECT_EQ(sg.edges[2].bwdTensors, 0u);
  EXPECT_EQ(sg.height, (std::vector<uint32_t>{2, 1, 0}));
}

TEST(Objective, StagesOnOneDeviceTalkForFree) {
  Graph g = smallGraph();
  Hardware hw = uniformHardware(2, 0.001);
  PlanMetrics m = unwrap(evaluatePlan(g, hw, Plan{{0, 0, 1, 1}, {0, 0}}, {}));
  EXPECT_DOUBLE_EQ(m.stages[0].commFwdMs, 0.0);
  EXPECT_DOUBLE_EQ(m.devices[0].loadMs, 20.0);
  EXPECT_DOUBLE_EQ(m.devices[1].loadMs, 0.0);
  EXPECT_DOUBLE_EQ(m.imbalance, 2.0);
  EXPECT_EQ(m.devices[0].numStages, 2u);
  // Tied w0 once; its stash follows the most demanding reader stage.
  EXPECT_EQ(m.devices[0].paramBytes, 150u);
  EXPECT_EQ(m.devices[0].stashBytes, 150u);
  EXPECT_EQ(m.devices[1].memoryBytes, 0u);
}

TEST(Objective, Recomputation) {
  Graph g = smallGraph();
  Hardware hw = uniformHardware(2, 1.0);
  ObjectiveConfig config;
  config.recompute = true;
  PlanMetrics m = unwrap(evaluatePlan(g, hw, twoStages(), config));
  EXPECT_DOUBLE_EQ(m.stages[0].computeMs, 16.0);
  EXPECT_DOUBLE_EQ(m.stages[1].computeMs, 11.0);
  // Stage 0 has no inputs from elsewhere: keeps nothing, rebuilds 30 B.
  EXPECT_EQ(m.stages[0].activationBytes, 30u);
  // Stage 1 keeps v1 for its one micro-batch and rebuilds 70 B.
  EXPECT_EQ(m.stages[1].activationBytes, 2'000'070u);
  EXPECT_DOUBLE_EQ(m.lowerBoundMs, 13.5);
}

TEST(Objective, OneRecomputationAtATimePerDevice) {
  // Three stages of a chain, 0 and 2 on device 0: each node keeps 1000 B of
  // activations. Under recomputation a device rebuilds one micro-batch at a
  // time, so device 0 holds its stages' kept inputs plus the larger of their
  // rebuilt micro-batches, not the sum of both; the verifier agrees.
  GraphBuilder b;
  for (int i = 0; i < 6; ++i)
    b.addNode("c/op" + std::to_string(i), "test.op",
              {1.0, 1.0, i < 2 ? 3000u : 1000u, 10});
  for (int i = 0; i + 1 < 6; ++i)
    b.addValue(NodeId(i), 10, {NodeId(i + 1)});
  Graph g = unwrap(b.build());
  Plan plan{{0, 0, 1, 1, 2, 2}, {0, 1, 0}};
  ObjectiveConfig config;
  config.recompute = true;
  config.optimizer = Optimizer::SGD;
  PlanMetrics m = unwrap(evaluatePlan(g, uniformHardware(2), plan, config));
  // Stage 0: no inputs, rebuilds 6000 B; stage 2: keeps 10 B for its one
  // micro-batch in flight, rebuilds 2000 B.
  EXPECT_EQ(m.stages[0].activationBytes, 6000u);
  EXPECT_EQ(m.stages[2].activationBytes, 2010u);
  EXPECT_EQ(m.devices[0].activationBytes, 6010u);
  // The verifier's independent count: fits at exactly that figure.
  EXPECT_FALSE(
      bool(verifyPlan(g, uniformHardware(2, 1.0, 0.0, 6010), plan, config)));
  llvm::Error tight =
      verifyPlan(g, uniformHardware(2, 1.0, 0.0, 6009), plan, config);
  EXPECT_TRUE(bool(tight));
  llvm::consumeError(std::move(tight));
}

TEST(Objective, SchedulesAndOptimizers) {
  Graph g = smallGraph();
  Hardware hw = uniformHardware(2, 1.0);
  ObjectiveConfig config;
  config.schedule = Kind::GPipe;
  config.microBatches = 4;
  config.optimizer = Optimizer::SGD;
  PlanMetrics m = unwrap(evaluatePlan(g, hw, twoStages(), config));
  EXPECT_EQ(m.stages[0].inFlight, 4u);
  EXPECT_EQ(m.stages[1].inFlight, 4u);
  EXPECT_EQ(m.devices[0].stashBytes, 0u); // sync: one version
  EXPECT_EQ(m.devices[0].optimizerBytes, 0u);
  EXPECT_EQ(m.devices[0].memoryBytes, 150u + 150u + 4u * 30u);

  config.schedule = Kind::OneFOneB;
  config.optimizer = Optimizer::Momentum;
  m = unwrap(evaluatePlan(g, hw, twoStages(), config));
  EXPECT_EQ(m.stages[0].inFlight, 2u);
  EXPECT_EQ(m.devices[0].optimizerBytes, 150u);

  // Adafactor's factored moments are counted as no state; Adam keeps two.
  config.optimizer = Optimizer::Adafactor;
  m = unwrap(evaluatePlan(g, hw, twoStages(), config));
  EXPECT_EQ(m.devices[0].optimizerBytes, 0u);
  config.optimizer = Optimizer::Adam;
  m = unwrap(evaluatePlan(g, hw, twoStages(), config));
  EXPECT_EQ(m.devices[0].optimizerBytes, 300u);

  config.schedule = Kind::Async;
  config.versioning = WeightVersions::DoubleBuffered;
  EXPECT_EQ(extraWeightVersions(5, config), 1u);
  config.versioning = WeightVersions::None;
  EXPECT_EQ(extraWeightVersions(5, config), 0u);
  config.versioning = WeightVersions::Stash;
  EXPECT_EQ(extraWeightVersions(5, config), 4u);
  EXPECT_EQ(extraWeightVersions(1, config), 0u);
}

TEST(Objective, MemoryBudgetAndReserve) {
  Graph g = smallGraph();
  Hardware hw = uniformHardware(2, 1.0, 0.0, /*memory=*/810);
  ObjectiveConfig config;
  EXPECT_TRUE(unwrap(evaluatePlan(g, hw, twoStages(), config)).memoryFits);
  config.reservedBytesPerDevice = 1;
  PlanMetrics m = unwrap(evaluatePlan(g, hw, twoStages(), config));
  EXPECT_FALSE(m.memoryFits);
  EXPECT_EQ(m.devices[0].budgetBytes, 810u);
}

TEST(Objective, MemoryScheduleCountsWhatThatScheduleKeeps) {
  // Async keeps stage 0's two micro-batches and a stashed version (810 B on
  // device 0); a plan for GPipe with one micro-batch keeps one and no stash
  // (150 + 150 + 300 + 30 = 630 B), with the same async objective.
  Graph g = smallGraph();
  Hardware hw = uniformHardware(2, 1.0, 0.0, /*memory=*/700);
  ObjectiveConfig config;
  config.microBatches = 1;
  PlanMetrics async = unwrap(evaluatePlan(g, hw, twoStages(), config));
  EXPECT_EQ(async.devices[0].memoryBytes, 810u);
  EXPECT_FALSE(async.memoryFits);
  EXPECT_NE(message(verifyPlan(g, hw, twoStages(), config)), "");

  config.memorySchedule = Kind::GPipe;
  PlanMetrics sync = unwrap(evaluatePlan(g, hw, twoStages(), config));
  EXPECT_EQ(sync.stages[0].inFlight, 1u);
  EXPECT_EQ(sync.devices[0].stashBytes, 0u);
  EXPECT_EQ(sync.devices[0].memoryBytes, 630u);
  EXPECT_TRUE(sync.memoryFits);
  EXPECT_EQ(message(verifyPlan(g, hw, twoStages(), config)), "");
  EXPECT_DOUBLE_EQ(sync.asyncMsPerMicroBatch, async.asyncMsPerMicroBatch);
  EXPECT_EQ(trainingSetupOf(config).schedule, Kind::GPipe);
}

TEST(Objective, ASetupOfZbAutoIsCheckedAsItsPlansAre) {
  // A module whose setup records zb-auto (a sync-schedule plan's) is read
  // back with zb-h1's counts, as the planner checked it: with M = 4, stage
  // 0 (height 1) keeps min(2, 4) micro-batches, not zb-auto's formula's 4.
  ftpipe::schedule::TrainingSetup setup;
  setup.schedule = Kind::ZeroBubbleAuto;
  setup.microBatches = 4;
  ObjectiveConfig config = objectiveConfigOf(setup);
  EXPECT_EQ(config.schedule, Kind::ZeroBubbleAuto);
  EXPECT_EQ(config.memoryKind(), Kind::ZeroBubbleH1);
  PlanMetrics m = unwrap(
      evaluatePlan(smallGraph(), uniformHardware(2), twoStages(), config));
  EXPECT_EQ(m.stages[0].inFlight, 2u);
  setup.schedule = Kind::OneFOneB;
  EXPECT_FALSE(objectiveConfigOf(setup).memorySchedule.has_value());
}

TEST(Objective, HeterogeneousDevicesScaleCompute) {
  Graph g = smallGraph();
  HardwareSpec spec = uniformHardware(2).spec();
  spec.devices[1].tflops = 2.0;
  Hardware hw = unwrap(Hardware::create(spec));
  PlanMetrics m = unwrap(evaluatePlan(g, hw, twoStages(), {}));
  EXPECT_DOUBLE_EQ(m.stages[1].computeMs, 4.0);
  // Lower bound: 20 ms of device-0 work over a total speed of 3.
  EXPECT_NEAR(m.lowerBoundMs, 20.0 / 3.0, 1e-12);
  ObjectiveConfig flat;
  flat.scaleComputeByDevice = false;
  EXPECT_DOUBLE_EQ(
      unwrap(evaluatePlan(g, hw, twoStages(), flat)).stages[1].computeMs, 8.0);
}

TEST(Objective, RejectsMalformedPlans) {
  Graph g = smallGraph();
  Hardware hw = uniformHardware(2);
  auto err = [&](Plan p) {
    llvm::Expected<PlanMetrics> m = evaluatePlan(g, hw, p, {});
    return m ? std::string() : llvm::toString(m.takeError());
  };
  EXPECT_NE(err(Plan{{0, 0, 1}, {0, 1}}).find("3 nodes"), std::string::npos);
  EXPECT_NE(err(Plan{{0, 0, 2, 1}, {0, 1}}).find("stage 2"), std::string::npos);
  EXPECT_NE(err(Plan{{0, 0, 1, 1}, {0, 5}}).find("device 5"),
            std::string::npos);
  // n0 and n3 in stage 0, n1 and n2 in stage 1: 0 -> 1 -> 0.
  EXPECT_NE(err(Plan{{0, 1, 1, 0}, {0, 1}}).find("cycle"), std::string::npos);
  ObjectiveConfig bad;
  bad.microBatches = 0;
  llvm::Expected<PlanMetrics> m = evaluatePlan(g, hw, twoStages(), bad);
  EXPECT_FALSE(bool(m));
  llvm::consumeError(m.takeError());
}

TEST(Objective, SingleStagePlanOfRandomGraph) {
  RandomGraphOptions o;
  o.numNodes = 200;
  Graph g = unwrap(generateRandomGraph(o));
  Hardware hw = unwrap(getHardwarePreset("rtx2080ti-pcie-x8"));
  PlanMetrics m =
      unwrap(evaluatePlan(g, hw, Plan::singleStage(g.numNodes()), {}));
  EXPECT_NEAR(m.asyncMsPerMicroBatch, g.totalComputeMs(), 1e-9);
  EXPECT_NEAR(m.imbalance, 8.0, 1e-9);
  EXPECT_EQ(m.devices[0].paramBytes, g.totalParamBytes());
}

} // namespace
