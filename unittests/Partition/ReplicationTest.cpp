//===- ReplicationTest.cpp - Cheap values made where they are read --------===//
//
// Replicated nodes (Plan::nodeReplicated): how the objective and the
// verifier count them (compute, parameters and kept inputs in every stage
// that reads them, no transfer), that the two agree on memory on random
// plans, which nodes chooseReplicatedNodes picks on a T5-like graph, and
// that solveWithReplication is never worse than planning without.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Replication.h"
#include "FTPipe/Partition/SeqPipe.h"
#include "FTPipe/Partition/Simulator.h"
#include "FTPipe/Partition/Verify.h"

#include "TestUtil.h"

using namespace ftpipe::partition;
using namespace ftpipe::partition::test;

namespace {

/// A T5-like graph: a chain of `n` layers (f = 10, b = 20, 100 activation
/// bytes, 1000-byte values, a 5000-byte weight each) that all read a
/// "position bias" of `biasBytes` made by two cheap nodes (f = b = 0.1) from
/// a 100-byte mask (a graph input) and a 10-byte weight: node 0 makes a
/// 400-byte table, node 1 the bias from it; layers are nodes 2 .. n + 1.
Graph biasGraph(size_t n, uint64_t biasBytes) {
  GraphBuilder b;
  NodeId table = b.addNode("model/bias/table", "test.gather", {0.1, 0.1, 0, 0});
  NodeId bias = b.addNode("model/bias/add", "test.add", {0.1, 0.1, 0, 0});
  ParamId small = b.addParam("bias.weight", 10);
  b.addParamUse(table, small);
  ValueId mask = b.addValue(kNoNode, 100, {}, /*needsGrad=*/false);
  b.addConsumer(mask, table);
  b.addValue(table, 400, {bias});
  ValueId biasValue = b.addValue(bias, biasBytes);
  addLayersReading(b, biasValue, n, {10.0, 20.0, 100, 1000}, 1000, 5000);
  return unwrap(b.build());
}

/// Two layers per stage, stage s on device s; the bias nodes in stage 0.
Plan twoLayersPerStage(size_t n) {
  Plan plan;
  plan.nodeStage = {0, 0};
  for (size_t i = 0; i < n; ++i)
    plan.nodeStage.push_back(StageId(i / 2));
  for (size_t s = 0; s < (n + 1) / 2; ++s)
    plan.stageDevice.push_back(DeviceId(s));
  return plan;
}

} // namespace

TEST(Replication, ObjectiveCountsReplicasInsteadOfTransfers) {
  Graph g = biasGraph(6, 1000000);
  Hardware hw = uniformHardware(3, 1.0); // 1 GB/s: 1e6 bytes take 1 ms
  ObjectiveConfig cfg;
  cfg.recompute = true;
  cfg.optimizer = Optimizer::SGD;
  Plan sent = twoLayersPerStage(6);
  PlanMetrics s = unwrap(evaluatePlan(g, hw, sent, cfg));
  // Stage 0 sends the bias to stages 1 and 2 (and a layer's output to 1).
  EXPECT_EQ(s.devices[0].sentBytes, 2u * 1000000u + 1000u);
  EXPECT_EQ(s.stages[1].receivedBytes, 1000000u + 1000u + 1000u);

  Plan replicated = sent;
  replicated.nodeReplicated.assign(g.numNodes(), false);
  replicated.nodeReplicated[0] = replicated.nodeReplicated[1] = true;
  std::vector<std::vector<StageId>> at = unwrap(replicaStages(g, replicated));
  EXPECT_EQ(at[0], (std::vector<StageId>{0, 1, 2}));
  EXPECT_EQ(at[1], (std::vector<StageId>{0, 1, 2}));
  EXPECT_TRUE(at[2].empty());
  PlanMetrics r = unwrap(evaluatePlan(g, hw, replicated, cfg));
  // No bias crosses: only the layers' 1000-byte outputs.
  EXPECT_EQ(r.devices[0].sentBytes, 1000u);
  EXPECT_EQ(r.devices[1].sentBytes, 1000u + 1000u); // forward + gradient
  // Every stage computes both bias nodes: 2 x (0.1 + 0.1 + 0.1 recomputed).
  EXPECT_NEAR(r.stages[1].computeMs, 2 * 40.0 + 0.6, 1e-9);
  EXPECT_NEAR(r.totalComputeMs, 6 * 40.0 + 3 * 0.6, 1e-9);
  // The 10-byte weight is on every device; stage 1 keeps the mask and
  // its received layer output per micro-batch in flight (2), and rebuilds
  // two layers' activations.
  EXPECT_EQ(r.devices[1].paramBytes, 2u * 5000u + 10u);
  EXPECT_EQ(r.stages[1].activationBytes, 2u * (100u + 1000u) + 200u);
  EXPECT_EQ(message(verifyPlan(g, hw, replicated, cfg)), "");
  // The simulator sees the same stage graph.
  EXPECT_EQ(message(simulatePlan(g, hw, replicated, cfg, false).takeError()),
            "");
}

TEST(Replication, ReplicatedNodesMayNotReadSentValues) {
  Graph g = biasGraph(4, 1000);
  Hardware hw = uniformHardware(2);
  Plan plan = twoLayersPerStage(4);
  plan.nodeReplicated.assign(g.numNodes(), false);
  plan.nodeReplicated[1] = true; // reads node 0, which is not replicated
  std::string verdict = message(verifyPlan(g, hw, plan, {}));
  EXPECT_NE(verdict.find("replicated but reads value"), std::string::npos)
      << verdict;
  llvm::Expected<PlanMetrics> m = evaluatePlan(g, hw, plan, {});
  ASSERT_FALSE(bool(m));
  EXPECT_NE(llvm::toString(m.takeError()).find("is replicated"),
            std::string::npos);
  plan.nodeReplicated.assign(3, true); // wrong length
  EXPECT_NE(message(verifyPlan(g, hw, plan, {})), "");
  llvm::Expected<PlanMetrics> wrong = evaluatePlan(g, hw, plan, {});
  ASSERT_FALSE(bool(wrong));
  EXPECT_NE(llvm::toString(wrong.takeError()).find("replication"),
            std::string::npos);
}

TEST(Replication, VerifierAndObjectiveAgreeOnMemory) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    SCOPED_TRACE(testing::Message() << "seed=" << seed);
    Graph g = biasGraph(4 + seed % 9, 1000 * seed);
    size_t P = 2 + seed % 3;
    Plan plan = randomContiguousPlan(g, 2 + seed % 4, P, seed);
    plan.nodeReplicated.assign(g.numNodes(), false);
    plan.nodeReplicated[0] = plan.nodeReplicated[1] = true;
    for (bool recompute : {false, true}) {
      ObjectiveConfig cfg;
      cfg.recompute = recompute;
      PlanMetrics m = unwrap(evaluatePlan(g, uniformHardware(P), plan, cfg));
      uint64_t most = 0;
      for (const DeviceMetrics &d : m.devices)
        most = std::max(most, d.memoryBytes);
      // A stage holding only the bias nodes is empty once they replicate.
      VerifyOptions options;
      options.allowEmptyStages = true;
      EXPECT_EQ(message(verifyPlan(g, uniformHardware(P, 1.0, 0.0, most), plan,
                                   cfg, options)),
                "");
      EXPECT_NE(message(verifyPlan(g, uniformHardware(P, 1.0, 0.0, most - 1),
                                   plan, cfg, options)),
                "");
      ++checked;
    }
  }
  EXPECT_EQ(checked, 48);
}

TEST(Replication, ChoosesCheapValuesOnly) {
  Hardware hw = uniformHardware(4, 1.0, 20.0);
  ObjectiveConfig cfg;
  // A big bias is cheaper to make (0.4 ms) than to send (1 ms).
  std::vector<bool> chosen =
      chooseReplicatedNodes(biasGraph(6, 1000000), hw, cfg);
  EXPECT_TRUE(chosen[0] && chosen[1]);
  EXPECT_EQ(std::count(chosen.begin(), chosen.end(), true), 2);
  // A small one is not (0.4 ms against 1 us + 20 us of latency).
  chosen = chooseReplicatedNodes(biasGraph(6, 1000), hw, cfg);
  EXPECT_EQ(std::count(chosen.begin(), chosen.end(), true), 0);
  // Nor on one device.
  chosen =
      chooseReplicatedNodes(biasGraph(6, 1000000), uniformHardware(1), cfg);
  EXPECT_EQ(std::count(chosen.begin(), chosen.end(), true), 0);
  // Nor when its weights (with gradients and Adam's state: 4 x) outweigh
  // the value: 40 bytes against 30 (the 400-byte table still pays).
  chosen =
      chooseReplicatedNodes(biasGraph(6, 30), uniformHardware(4, 1e-3), cfg);
  EXPECT_TRUE(chosen[0]);
  EXPECT_FALSE(chosen[1]);
}

TEST(Replication, PlanningGraphMakesReplicatedResultsFree) {
  Graph g = biasGraph(4, 1000000);
  std::vector<bool> replicated(g.numNodes(), false);
  replicated[0] = replicated[1] = true;
  Graph planning = unwrap(replicationPlanningGraph(g, replicated));
  ASSERT_EQ(planning.numNodes(), g.numNodes());
  EXPECT_EQ(planning.cost(1).fwdMs, 0.0);
  EXPECT_TRUE(planning.params(0).empty());
  EXPECT_EQ(planning.cost(2).fwdMs, 10.0);
  for (ValueId v = 0; v < planning.numValues(); ++v)
    if (g.producer(v) == 1) {
      EXPECT_EQ(planning.producer(v), kNoNode);
      EXPECT_EQ(planning.valueBytes(v), 0u);
    }
}

TEST(Replication, SolveIsNeverWorseNorSimulatesSlower) {
  int replicatedPlans = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(testing::Message() << "seed=" << seed);
    Graph g = biasGraph(6 + seed % 7, 200000 * seed);
    size_t P = 2 + seed % 3;
    // Slow links: the bias costs more to send than to compute.
    Hardware hw = uniformHardware(P, 0.05, 20.0);
    ObjectiveConfig cfg;
    cfg.recompute = seed % 2;
    auto dp = [&](const Graph &graph,
                  const ObjectiveConfig &c) -> llvm::Expected<Plan> {
      SeqPipeConfig seq;
      seq.objective = c;
      llvm::Expected<SeqPipeResult> result = seqPipeDP(graph, hw, seq);
      if (!result)
        return result.takeError();
      return std::move(result->plan);
    };
    Plan plain = unwrap(dp(g, cfg));
    Plan chosen = unwrap(solveWithReplication(g, hw, cfg, dp));
    ASSERT_EQ(message(verifyPlan(g, hw, chosen, cfg)), "");
    double a = unwrap(evaluatePlan(g, hw, chosen, cfg)).asyncMsPerMicroBatch;
    double b = unwrap(evaluatePlan(g, hw, plain, cfg)).asyncMsPerMicroBatch;
    EXPECT_LE(a, b * (1 + 1e-12));
    double simChosen =
        unwrap(simulatePlan(g, hw, chosen, cfg, false)).msPerMicroBatch;
    double simPlain =
        unwrap(simulatePlan(g, hw, plain, cfg, false)).msPerMicroBatch;
    EXPECT_LE(simChosen, simPlain * (1 + 1e-9));
    replicatedPlans += !chosen.nodeReplicated.empty();
  }
  EXPECT_GT(replicatedPlans, 0);
}
