//===- ForwardingTest.cpp - Values passed along the stages that read them -===//
//
// Forwarded nodes (Plan::nodeForwarded): how the stage graph routes their
// results (producer -> first reader -> next reader ..., a reader on a device
// that already has the value taking it there), which bytes each
// device then sends, that the objective, the verifier and the simulator
// reject readers that do not run one after another, and, on random DAGs and
// plans, that forwarding every forwardable node keeps the stage graph's
// heights, verifies and simulates without deadlock, and that
// forwardSharedValues is never worse than the plan it starts from.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Forwarding.h"
#include "FTPipe/Partition/Simulator.h"
#include "FTPipe/Partition/Verify.h"

#include "TestUtil.h"

using namespace ftpipe::partition;
using namespace ftpipe::partition::test;

namespace {

/// Node 0 makes a `biasBytes` value (with a gradient) that layers 1..n all
/// read; the layers form a chain of 10-byte values. f = 1, b = 2 per layer.
Graph sharedValueChain(size_t n, uint64_t biasBytes) {
  GraphBuilder b;
  NodeId bias = b.addNode("model/bias", "test.bias", {0.1, 0.1, 0, 0});
  ValueId biasValue = b.addValue(bias, biasBytes);
  addLayersReading(b, biasValue, n, {1.0, 2.0, 0, 10}, 10);
  return unwrap(b.build());
}

/// Node 0 and layer i in stage i on device i (layer 0 with node 0).
Plan stagePerLayer(size_t n) {
  Plan plan;
  plan.nodeStage.push_back(0);
  for (size_t i = 0; i < n; ++i) {
    plan.nodeStage.push_back(StageId(i));
    plan.stageDevice.push_back(DeviceId(i));
  }
  return plan;
}

const StageEdge *findEdge(const StageGraph &sg, StageId src, StageId dst) {
  for (const StageEdge &e : sg.edges)
    if (e.src == src && e.dst == dst)
      return &e;
  return nullptr;
}

TEST(Forwarding, ValuePassesFromReaderToReader) {
  Graph g = sharedValueChain(4, 1000);
  Hardware hw = uniformHardware(4);
  ObjectiveConfig cfg;
  Plan star = stagePerLayer(4);
  Plan forwarded = star;
  forwarded.nodeForwarded = {true, false, false, false, false};

  StageGraph before = unwrap(buildStageGraph(g, hw, star, cfg));
  StageGraph after = unwrap(buildStageGraph(g, hw, forwarded, cfg));
  // Star: stage 0 sends the bias to stages 1, 2 and 3.
  ASSERT_NE(findEdge(before, 0, 3), nullptr);
  EXPECT_EQ(findEdge(before, 0, 3)->fwdBytes, 1000u);
  // Forwarded: 0 -> 1 -> 2 -> 3, each hop the bias and the layer's value.
  EXPECT_EQ(findEdge(after, 0, 2), nullptr);
  EXPECT_EQ(findEdge(after, 0, 3), nullptr);
  for (StageId s = 0; s < 3; ++s) {
    const StageEdge *e = findEdge(after, s, s + 1);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->fwdBytes, 1010u);
    EXPECT_EQ(e->fwdTensors, 2u);
    EXPECT_EQ(e->bwdBytes, 1010u);
    EXPECT_EQ(e->passBytes, s == 0 ? 0u : 1000u);
    EXPECT_EQ(e->passGradBytes, s == 0 ? 0u : 1000u);
    EXPECT_EQ(e->firstHopGradBytes, s == 0 ? 1000u : 0u);
  }
  EXPECT_EQ(after.height, before.height);
  EXPECT_EQ(after.topoOrder, before.topoOrder);

  // Device 0 sends the bias once instead of three times; devices 1 and 2
  // pass it on (forward) and back (its gradient).
  PlanMetrics m0 = unwrap(evaluatePlan(g, hw, star, cfg));
  PlanMetrics m1 = unwrap(evaluatePlan(g, hw, forwarded, cfg));
  EXPECT_EQ(m0.devices[0].sentBytes, 3000u + 10u);
  EXPECT_EQ(m1.devices[0].sentBytes, 1000u + 10u);
  EXPECT_EQ(m1.devices[1].sentBytes, 1010u + 1010u);
  EXPECT_EQ(m1.devices[3].sentBytes, 1010u);
  EXPECT_EQ(message(verifyPlan(g, hw, forwarded, cfg)), "");
  EXPECT_TRUE(unwrap(forwardableNodes(g, hw, star, cfg))[0]);
}

TEST(Forwarding, SourcesPreferAnEarlierReaderOnTheSameDevice) {
  // Devices of the readers, in the order the stages run.
  std::vector<size_t> sources = forwardingSources({0, 1, 0, 2, 1, 1});
  EXPECT_EQ(sources, (std::vector<size_t>{~size_t(0), 0, 0, 2, 1, 4}));
  EXPECT_EQ(forwardingSources({}), std::vector<size_t>{});
}

TEST(Forwarding, SecondReaderOnADeviceTakesTheValueThere) {
  // Readers: stage 1 (device 1), stage 2 (device 2), stage 3 (device 1):
  // stage 3 takes the bias from stage 1 on device 1, so device 2 passes
  // nothing on and sends back only the bias's gradient to stage 1.
  Graph g = sharedValueChain(4, 1000);
  Hardware hw = uniformHardware(3);
  ObjectiveConfig cfg;
  Plan plan{{0, 0, 1, 2, 3}, {0, 1, 2, 1}};
  plan.nodeForwarded = {true, false, false, false, false};
  StageGraph sg = unwrap(buildStageGraph(g, hw, plan, cfg));
  const StageEdge *local = findEdge(sg, 1, 3);
  ASSERT_NE(local, nullptr);
  EXPECT_EQ(local->passBytes, 1000u);
  EXPECT_EQ(findEdge(sg, 2, 3)->passBytes, 0u);
  PlanMetrics m = unwrap(evaluatePlan(g, hw, plan, cfg));
  // Device 2: layer 2's value forward, the gradients of layer 1's value and
  // of the bias back.
  EXPECT_EQ(m.devices[2].sentBytes, 10u + 10u + 1000u);
  // Device 1: the bias and layer 1's value to stage 2, their gradients to
  // stage 0, and the gradient of layer 2's value from stage 3 to stage 2.
  EXPECT_EQ(m.devices[1].sentBytes, 1010u + 1010u + 10u);
  EXPECT_EQ(message(verifyPlan(g, hw, plan, cfg)), "");
}

TEST(Forwarding, PassedValuesDoNotWaitForTheStageThatPassesThem) {
  // Slow links (the bias takes 10 ms a hop): passed on when a stage's
  // forward starts and its gradient added after the stage's backward, the
  // bias does not lengthen the chain, so the forwarded plan simulates as
  // fast as the star one, whose producer sends on three links at once.
  Graph g = sharedValueChain(4, 10000);
  Hardware hw = uniformHardware(4, 1.0);
  ObjectiveConfig cfg;
  cfg.recompute = false;
  Plan star = stagePerLayer(4);
  Plan forwarded = star;
  forwarded.nodeForwarded = {true, false, false, false, false};
  double simStar =
      unwrap(simulatePlan(g, hw, star, cfg, false)).msPerMicroBatch;
  double simForwarded =
      unwrap(simulatePlan(g, hw, forwarded, cfg, false)).msPerMicroBatch;
  EXPECT_LE(simForwarded, simStar * (1 + 1e-9));
  // Sent when the stage ends instead, the same bytes would hold up every
  // hop: the makespan of a GPipe run shows the difference.
  ObjectiveConfig gpipe = cfg;
  gpipe.schedule = Kind::GPipe;
  SimResult a = unwrap(simulatePlan(g, hw, star, gpipe, false));
  SimResult b = unwrap(simulatePlan(g, hw, forwarded, gpipe, false));
  EXPECT_LE(b.makespanMs, a.makespanMs * (1 + 1e-9));
}

TEST(Forwarding, ReadersMustRunOneAfterAnother) {
  // The bias is read by two branches that do not depend on each other.
  GraphBuilder b;
  NodeId bias = b.addNode("bias", "test.bias", {0.1, 0.1, 0, 0});
  ValueId biasValue = b.addValue(bias, 1000);
  NodeId left = b.addNode("left", "test.op", {1.0, 2.0, 0, 10});
  NodeId right = b.addNode("right", "test.op", {1.0, 2.0, 0, 10});
  NodeId join = b.addNode("join", "test.op", {1.0, 2.0, 0, 10});
  b.addConsumer(biasValue, left);
  b.addConsumer(biasValue, right);
  b.addEdge(left, join, 10);
  b.addEdge(right, join, 10);
  Graph g = unwrap(b.build());
  Hardware hw = uniformHardware(4);
  ObjectiveConfig cfg;
  Plan plan{{0, 1, 2, 3}, {0, 1, 2, 3}};
  EXPECT_FALSE(unwrap(forwardableNodes(g, hw, plan, cfg))[0]);
  plan.nodeForwarded = {true, false, false, false};
  std::string error = message(buildStageGraph(g, hw, plan, cfg).takeError());
  EXPECT_NE(error.find("do not depend on each other"), std::string::npos)
      << error;
  error = message(verifyPlan(g, hw, plan, cfg));
  EXPECT_NE(error.find("do not run one after another"), std::string::npos)
      << error;
  plan.nodeForwarded = {true};
  EXPECT_NE(message(buildStageGraph(g, hw, plan, cfg).takeError()), "");
  EXPECT_NE(message(verifyPlan(g, hw, plan, cfg)), "");
}

TEST(Forwarding, NotBothReplicatedAndForwarded) {
  Graph g = sharedValueChain(3, 1000);
  Hardware hw = uniformHardware(3);
  Plan plan = stagePerLayer(3);
  plan.nodeReplicated = {true, false, false, false};
  plan.nodeForwarded = {true, false, false, false};
  EXPECT_NE(message(buildStageGraph(g, hw, plan, {}).takeError()), "");
  EXPECT_NE(message(verifyPlan(g, hw, plan, {})), "");
}

TEST(Forwarding, RandomPlansKeepHeightsVerifyAndNeverGetWorse) {
  int forwardedPlans = 0;
  for (GraphFamily family : {GraphFamily::Layered, GraphFamily::Wide}) {
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      SCOPED_TRACE(testing::Message()
                   << "family=" << int(family) << " seed=" << seed);
      RandomGraphOptions options;
      options.family = family;
      options.numNodes = 60;
      options.seed = seed;
      Graph g = unwrap(generateRandomGraph(options));
      size_t P = 2 + seed % 4;
      Hardware hw = uniformHardware(P, 0.5 + seed % 3, 5.0);
      ObjectiveConfig cfg;
      cfg.recompute = seed % 2;
      cfg.schedule = seed % 3 == 0 ? Kind::OneFOneB : Kind::Async;
      Plan plan = randomContiguousPlan(g, 3 + seed % 6, P, seed);
      std::vector<bool> candidates = unwrap(forwardableNodes(g, hw, plan, cfg));
      Plan all = plan;
      all.nodeForwarded = candidates;
      StageGraph before = unwrap(buildStageGraph(g, hw, plan, cfg));
      StageGraph after = unwrap(buildStageGraph(g, hw, all, cfg));
      EXPECT_EQ(after.height, before.height);
      EXPECT_EQ(message(verifyPlan(g, hw, all, cfg)), "");
      for (Kind schedule : {Kind::Async, Kind::GPipe, Kind::OneFOneB}) {
        ObjectiveConfig c = cfg;
        c.schedule = schedule;
        EXPECT_EQ(message(simulatePlan(g, hw, all, c, false).takeError()), "");
      }

      Plan chosen = unwrap(forwardSharedValues(g, hw, plan, cfg));
      ASSERT_EQ(message(verifyPlan(g, hw, chosen, cfg)), "");
      PlanMetrics m0 = unwrap(evaluatePlan(g, hw, plan, cfg));
      PlanMetrics m1 = unwrap(evaluatePlan(g, hw, chosen, cfg));
      EXPECT_LE(m1.asyncMsPerMicroBatch, m0.asyncMsPerMicroBatch * (1 + 1e-9));
      uint64_t sent0 = 0, sent1 = 0;
      for (DeviceId d = 0; d < P; ++d) {
        sent0 = std::max(sent0, m0.devices[d].sentBytes);
        sent1 = std::max(sent1, m1.devices[d].sentBytes);
        EXPECT_EQ(m1.devices[d].memoryBytes, m0.devices[d].memoryBytes);
      }
      EXPECT_LE(sent1, sent0);
      double sim0 =
          unwrap(simulatePlan(g, hw, plan, cfg, false)).msPerMicroBatch;
      double sim1 =
          unwrap(simulatePlan(g, hw, chosen, cfg, false)).msPerMicroBatch;
      EXPECT_LE(sim1, sim0 * (1 + 1e-9));
      if (llvm::is_contained(chosen.nodeForwarded, true)) {
        ++forwardedPlans;
        EXPECT_LT(sent1, sent0);
      }
    }
  }
  // The property is not vacuous: some plans do forward.
  EXPECT_GT(forwardedPlans, 5);
}

} // namespace
