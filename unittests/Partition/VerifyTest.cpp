//===- VerifyTest.cpp - Plan verifier and property tests --------*- C++ -*-===//
//
// verifyPlan must accept every valid plan and name the first problem of an
// invalid one. Property tests over random DAG families and seeds: random
// contiguous plans are accepted and scored consistently; plans with a cycle
// in the stage graph are rejected by both the verifier and the objective;
// the verifier's memory verdict flips exactly at the objective's figure.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/Verify.h"
#include "FTPipe/Partition/Objective.h"

#include "TestUtil.h"

using namespace ftpipe::partition;
using namespace ftpipe::partition::test;

namespace {

Graph diamond() {
  GraphBuilder b;
  for (int i = 0; i < 4; ++i)
    b.addNode("n" + std::to_string(i), "t", {1, 1, 8, 8});
  b.addValue(0, 8, {1, 2});
  b.addEdge(1, 3, 8);
  b.addEdge(2, 3, 8);
  b.addParamUse(3, b.addParam("w", 1000));
  return unwrap(b.build());
}

TEST(Verify, AcceptsValidPlans) {
  Graph g = diamond();
  Hardware hw = uniformHardware(2);
  EXPECT_EQ(message(verifyPlan(g, hw, Plan::singleStage(4), {})), "");
  EXPECT_EQ(message(verifyPlan(g, hw, Plan{{0, 1, 2, 3}, {0, 1, 1, 0}}, {})),
            "");
  // Non-adjacent stages on one device, acyclic stage graph.
  EXPECT_EQ(message(verifyPlan(g, hw, Plan{{0, 1, 0, 2}, {0, 1, 0}}, {})), "");
}

TEST(Verify, NamesTheProblem) {
  Graph g = diamond();
  Hardware hw = uniformHardware(2);
  EXPECT_NE(message(verifyPlan(g, hw, Plan{{0, 0}, {0}}, {}))
                .find("places 2 nodes but the graph has 4"),
            std::string::npos);
  EXPECT_NE(message(verifyPlan(g, hw, Plan{{0, 0, 0, 3}, {0, 1}}, {}))
                .find("node 3 ('n3') is in stage 3"),
            std::string::npos);
  EXPECT_NE(message(verifyPlan(g, hw, Plan{{0, 0, 0, 0}, {2}}, {}))
                .find("stage 0 is on device 2"),
            std::string::npos);
  EXPECT_NE(message(verifyPlan(g, hw, Plan{{0, 0, 0, 0}, {0, 1}}, {}))
                .find("stage 1 holds no node"),
            std::string::npos);
  VerifyOptions allowEmpty;
  allowEmpty.allowEmptyStages = true;
  EXPECT_EQ(
      message(verifyPlan(g, hw, Plan{{0, 0, 0, 0}, {0, 1}}, {}, allowEmpty)),
      "");
  // n0, n3 in stage 0; n1 in stage 1: 0 -> 1 -> 0.
  std::string cycle =
      message(verifyPlan(g, hw, Plan{{0, 1, 0, 0}, {0, 1}}, {}));
  EXPECT_NE(cycle.find("stage graph has a cycle: stage 0 -> stage 1 -> "
                       "stage 0"),
            std::string::npos)
      << cycle;
  EXPECT_NE(cycle.find("value 1 flows from node 1 in stage 1 to node 3"),
            std::string::npos)
      << cycle;
}

TEST(Verify, MemoryMessage) {
  Graph g = diamond();
  Hardware hw = uniformHardware(2, 1.0, 0.0, /*memory=*/1000);
  std::string err = message(verifyPlan(g, hw, Plan::singleStage(4), {}));
  EXPECT_NE(err.find("device 0 needs"), std::string::npos) << err;
  EXPECT_NE(err.find("but has 0.00 GiB"), std::string::npos) << err;
  VerifyOptions noMemory;
  noMemory.checkMemory = false;
  EXPECT_EQ(message(verifyPlan(g, hw, Plan::singleStage(4), {}, noMemory)), "");
}

//===----------------------------------------------------------------------===//
// Properties over random DAGs
//===----------------------------------------------------------------------===//

struct PropertyCase {
  GraphFamily family;
  uint64_t seed;
  size_t devices;
};

class PlanProperties : public ::testing::TestWithParam<PropertyCase> {};

ObjectiveConfig configFor(uint64_t seed) {
  ObjectiveConfig c;
  const Kind kinds[] = {Kind::Async, Kind::GPipe, Kind::OneFOneB};
  c.schedule = kinds[seed % 3];
  c.optimizer = Optimizer((seed / 3) % 3);
  c.recompute = (seed / 9) % 2;
  c.microBatches = 1 + seed % 7;
  return c;
}

TEST_P(PlanProperties, ContiguousPlansAreValidAndConsistent) {
  const PropertyCase &pc = GetParam();
  RandomGraphOptions o;
  o.family = pc.family;
  o.seed = pc.seed;
  o.numNodes = 20 + uint32_t(pc.seed * 13 % 120);
  Graph g = unwrap(generateRandomGraph(o));
  Hardware hw = uniformHardware(pc.devices, 2.0, 5.0);
  for (uint64_t k = 0; k < 8; ++k) {
    size_t stages = 1 + (pc.seed + k) % (2 * pc.devices);
    Plan plan = randomContiguousPlan(g, stages, pc.devices, pc.seed * 31 + k);
    ObjectiveConfig config = configFor(pc.seed + k);
    ASSERT_EQ(message(verifyPlan(g, hw, plan, config)), "");
    PlanMetrics m = unwrap(evaluatePlan(g, hw, plan, config));
    // Loads add up; the bound holds; the busiest device is the objective.
    double sumCompute = 0.0, maxLoad = 0.0;
    for (const DeviceMetrics &d : m.devices) {
      sumCompute += d.computeMs;
      maxLoad = std::max(maxLoad, d.loadMs);
      EXPECT_GE(d.loadMs, d.computeMs);
    }
    EXPECT_NEAR(sumCompute, m.totalComputeMs, 1e-9 * sumCompute);
    EXPECT_EQ(m.asyncMsPerMicroBatch, maxLoad);
    EXPECT_GE(m.asyncMsPerMicroBatch, m.lowerBoundMs * (1 - 1e-12));
    EXPECT_GE(m.imbalance, 1.0 - 1e-12);
    // Every parameter is somewhere: device param bytes cover the total.
    uint64_t params = 0;
    for (const DeviceMetrics &d : m.devices)
      params += d.paramBytes;
    EXPECT_GE(params, g.totalParamBytes());

    // The verifier's memory verdict flips exactly at the objective's figure.
    uint64_t peak = 0;
    for (const DeviceMetrics &d : m.devices)
      peak = std::max(peak, d.memoryBytes);
    Hardware exact = uniformHardware(pc.devices, 2.0, 5.0, peak);
    EXPECT_EQ(message(verifyPlan(g, exact, plan, config)), "");
    EXPECT_TRUE(unwrap(evaluatePlan(g, exact, plan, config)).memoryFits);
    Hardware tight = uniformHardware(pc.devices, 2.0, 5.0, peak - 1);
    std::string err = message(verifyPlan(g, tight, plan, config));
    EXPECT_NE(err.find("needs"), std::string::npos) << err;
    EXPECT_FALSE(unwrap(evaluatePlan(g, tight, plan, config)).memoryFits);
  }
}

TEST_P(PlanProperties, CyclicStageGraphsAreRejected) {
  const PropertyCase &pc = GetParam();
  RandomGraphOptions o;
  o.family = pc.family;
  o.seed = pc.seed;
  o.numNodes = 30;
  Graph g = unwrap(generateRandomGraph(o));
  Hardware hw = uniformHardware(pc.devices);
  // u -> v -> w with u, w in stage 0 and v in stage 1 closes a cycle.
  for (NodeId v = 1; v + 1 < g.numNodes(); ++v) {
    if (g.preds(v).empty() || g.succs(v).empty())
      continue;
    Plan plan{std::vector<StageId>(g.numNodes(), 0),
              {0, DeviceId(1 % pc.devices)}};
    plan.nodeStage[v] = 1;
    std::string err = message(verifyPlan(g, hw, plan, {}));
    EXPECT_NE(err.find("cycle"), std::string::npos) << err;
    llvm::Expected<PlanMetrics> m = evaluatePlan(g, hw, plan, {});
    ASSERT_FALSE(bool(m));
    EXPECT_NE(llvm::toString(m.takeError()).find("cycle"), std::string::npos);
  }
}

std::vector<PropertyCase> propertyCases() {
  std::vector<PropertyCase> cases;
  for (GraphFamily f :
       {GraphFamily::Chain, GraphFamily::Layered, GraphFamily::Wide})
    for (uint64_t seed = 1; seed <= 6; ++seed)
      for (size_t devices : {1, 2, 4, 8})
        cases.push_back({f, seed, devices});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(RandomDAGs, PlanProperties,
                         ::testing::ValuesIn(propertyCases()));

} // namespace
