//===- ReplicaSearchTest.cpp - Depth x replicas chosen by simulation ------===//
//
// searchReplicas on random graphs: every width dividing P is tried, the
// chosen option is the simulated best of the feasible ones, and each
// option's figures are those scoreReplicated gives its plan. And on chains
// with known answers: a model that fits on one device and whose weights are
// small runs fastest as replicas; one whose weights fill every device stays
// a pure pipeline; slow links between replicas price the all-reduce.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/ReplicaSearch.h"
#include "FTPipe/Partition/SeqPipe.h"

#include "TestUtil.h"

using namespace ftpipe::partition;
using namespace ftpipe::partition::test;

namespace {

/// Seq-Pipe's greedy plan on the pipeline's devices (no polishing).
llvm::Expected<Plan> greedyPlan(const Graph &graph, const Hardware &pipeline,
                                const ObjectiveConfig &objective) {
  SeqPipeConfig config;
  config.objective = objective;
  config.polishSimulations = 0;
  llvm::Expected<SeqPipeResult> result = seqPipeGreedy(graph, pipeline, config);
  if (!result)
    return result.takeError();
  return std::move(result->plan);
}

/// A chain of `n` layers, each reading a weight of `paramBytes`.
Graph layers(size_t n, double fwd, double bwd, uint64_t bytes,
             uint64_t paramBytes) {
  GraphBuilder b;
  for (size_t i = 0; i < n; ++i) {
    NodeId node =
        b.addNode("layer" + std::to_string(i), "test.op", {fwd, bwd, 0, bytes});
    b.addParamUse(node, b.addParam("w" + std::to_string(i), paramBytes));
  }
  for (size_t i = 0; i + 1 < n; ++i)
    b.addValue(NodeId(i), bytes, {NodeId(i + 1)}, true);
  return unwrap(b.build());
}

class ReplicaSearchProperties
    : public ::testing::TestWithParam<std::tuple<GraphFamily, int>> {};

TEST_P(ReplicaSearchProperties, ChoosesTheSimulatedBestOfThoseTried) {
  auto [family, seed] = GetParam();
  RandomGraphOptions o;
  o.family = family;
  o.seed = uint64_t(seed);
  o.numNodes = 48;
  Graph g = unwrap(generateRandomGraph(o));
  Hardware hw = uniformHardware(8, 0.5 + seed % 3, 5.0);
  ObjectiveConfig config;
  config.schedule = seed % 2 ? Kind::OneFOneB : Kind::GPipe;
  config.microBatches = 4 + 4 * (seed % 2);
  ReplicaSearchResult result =
      unwrap(searchReplicas(g, hw, config, [&](const Hardware &pipeline) {
        return greedyPlan(g, pipeline, config);
      }));
  // Widths 1, 2, 4, 8, in order, each with depth 8 / width.
  ASSERT_EQ(result.options.size(), 4u);
  for (auto [i, option] : llvm::enumerate(result.options)) {
    EXPECT_EQ(option.width, 1u << i);
    EXPECT_EQ(option.depth * option.width, 8u);
  }
  const ReplicaOption &best = result.chosen();
  ASSERT_TRUE(best.feasible);
  for (const ReplicaOption &option : result.options) {
    if (!option.feasible)
      continue;
    EXPECT_LE(best.simulatedMsPerMiniBatch, option.simulatedMsPerMiniBatch)
        << best.depth << " x " << best.width << " against " << option.depth
        << " x " << option.width;
    // The figures are those of the option's plan scored on its own.
    ReplicaOption again =
        unwrap(scoreReplicated(g, hw, option.plan, option.width, config));
    EXPECT_EQ(again.simulatedMsPerMiniBatch, option.simulatedMsPerMiniBatch);
    EXPECT_EQ(again.objectiveMs, option.objectiveMs);
    // No replicated run beats the busiest replica's share of the compute.
    Hardware pipeline = unwrap(pipelineHardware(hw, option.width));
    PlanMetrics m = unwrap(evaluatePlan(g, pipeline, option.plan, config));
    double busiest = 0;
    for (const DeviceMetrics &d : m.devices)
      busiest = std::max(busiest, d.computeMs);
    uint32_t perReplica =
        (config.microBatches + option.width - 1) / option.width;
    EXPECT_GE(option.simulatedMsPerMiniBatch,
              busiest * perReplica * (1 - 1e-9));
  }
}

INSTANTIATE_TEST_SUITE_P(
    RandomDAGs, ReplicaSearchProperties,
    ::testing::Combine(::testing::Values(GraphFamily::Chain,
                                         GraphFamily::Layered,
                                         GraphFamily::Wide),
                       ::testing::Range(1, 5)));

TEST(ReplicaSearch, SmallWeightsRunAsReplicas) {
  // 8 layers of 1 + 2 ms, small weights, fast links: at M = 8 the 4-deep
  // pipeline fills and drains (66 ms), 4 replicas of the whole model do not.
  Graph g = layers(8, 1.0, 2.0, 1000, 1000);
  Hardware hw = uniformHardware(4, 100.0, 1.0);
  ObjectiveConfig config;
  config.schedule = Kind::OneFOneB;
  config.microBatches = 8;
  ReplicaSearchResult result =
      unwrap(searchReplicas(g, hw, config, [&](const Hardware &pipeline) {
        return greedyPlan(g, pipeline, config);
      }));
  for (const ReplicaOption &option : result.options)
    EXPECT_TRUE(option.feasible) << option.failure;
  EXPECT_GT(result.chosen().width, 1u);
  EXPECT_LT(result.chosen().simulatedMsPerMiniBatch,
            result.options.front().simulatedMsPerMiniBatch);
  // Data parallel over 4: 2 micro-batches of 24 ms each per replica.
  EXPECT_NEAR(result.options.back().simulatedMsPerMiniBatch, 48.0, 0.5);
}

TEST(ReplicaSearch, WeightsThatNeedEveryDeviceStayAPipeline) {
  // 8 layers of 1 GB weights (Adam: 4 GB each with gradients and state) on
  // 4 devices of 9 GB: only 2 layers fit on a device.
  Graph g = layers(8, 1.0, 2.0, 1000, 1ull << 30);
  Hardware hw = uniformHardware(4, 100.0, 1.0, 9ull << 30);
  ObjectiveConfig config;
  config.schedule = Kind::OneFOneB;
  ReplicaSearchResult result =
      unwrap(searchReplicas(g, hw, config, [&](const Hardware &pipeline) {
        return greedyPlan(g, pipeline, config);
      }));
  EXPECT_EQ(result.chosen().width, 1u);
  for (const ReplicaOption &option : result.options)
    if (option.width > 1) {
      EXPECT_FALSE(option.feasible);
      EXPECT_FALSE(option.failure.empty());
    }
}

TEST(ReplicaSearch, SlowLinksPriceTheAllReduce) {
  // 4 layers of 1 + 2 ms with 100 MB of weights each, M = 4: as 4 replicas
  // each device all-reduces 400 MB.
  Graph g = layers(4, 1.0, 2.0, 1000, 100'000'000);
  ObjectiveConfig config;
  config.schedule = Kind::GPipe;
  config.microBatches = 4;
  auto plan = [&](const Hardware &hw) {
    return unwrap(searchReplicas(g, hw, config, [&](const Hardware &pipeline) {
      return greedyPlan(g, pipeline, config);
    }));
  };
  ReplicaSearchResult fast = plan(uniformHardware(4, 1000.0, 1.0));
  ReplicaSearchResult slow = plan(uniformHardware(4, 1.0, 1.0));
  const ReplicaOption &fastWide = fast.options.back(),
                      &slowWide = slow.options.back();
  ASSERT_EQ(slowWide.width, 4u);
  // Ring: 2 (r - 1) steps of 400 MB / 4 over a 1 GB/s link (1e6 bytes/ms).
  EXPECT_NEAR(slowWide.allReduceMs, 6 * 100.0 + 6 * 1e-3, 1e-6);
  EXPECT_NEAR(slowWide.objectiveMs,
              fastWide.objectiveMs - fastWide.allReduceMs / 4 +
                  slowWide.allReduceMs / 4,
              1e-6);
  EXPECT_GE(slowWide.simulatedMsPerMiniBatch,
            fastWide.simulatedMsPerMiniBatch + 600.0 - 1.0);
  EXPECT_EQ(fast.chosen().width, 4u);
  EXPECT_LT(slow.chosen().width, 4u);
}

TEST(ReplicaSearch, PipelineHardwareTakesReplicaZeroOfEachDevice) {
  HardwareSpec spec;
  spec.name = "mixed";
  for (int i = 0; i < 4; ++i)
    spec.devices.push_back({i < 2 ? "big" : "small", 1ull << 34,
                            i < 2 ? 2.0 : 1.0, 100.0, 0.0, 0});
  spec.intraNode = {1.0, 0.0};
  spec.network = {1.0, 0.0};
  Hardware hw = unwrap(Hardware::create(spec));
  Hardware pipeline = unwrap(pipelineHardware(hw, 2));
  ASSERT_EQ(pipeline.numDevices(), 2u);
  EXPECT_EQ(pipeline.device(0).name, "big");
  EXPECT_EQ(pipeline.device(1).name, "small");
  // Width 4 would replicate a big device on small ones.
  std::string error = message(pipelineHardware(hw, 4).takeError());
  EXPECT_NE(error.find("replicas must be alike"), std::string::npos) << error;
  error = message(pipelineHardware(hw, 3).takeError());
  EXPECT_NE(error.find("do not divide"), std::string::npos) << error;
}

} // namespace
