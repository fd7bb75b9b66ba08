//===- ReplicaSearchTest.cpp - Depth x replicas chosen by simulation ------===//
//
// searchReplicas on random graphs: every depth is tried with its even
// layout, the chosen option is the simulated best of the feasible ones, and
// each option's figures are those scoreReplicated gives its plan. And on
// chains with known answers: a model that fits on one device and whose
// weights are small runs fastest as replicas; one whose weights fill every
// device stays a pure pipeline; slow links between replicas price the
// all-reduce; a bottleneck stage that cannot be cut is replicated alone
// (PipeDream's per-stage replication); replica pipelines with few
// micro-batches cut half-way to the chain bound's shares gain on the
// balanced ones; a gain under kReplicaMinGain keeps the pure pipeline; the
// memory cap of the bound by hand. Neither Seq-Pipe's plans nor
// Mixed-Pipe's (devices of several stages, apart or not) simulate below the
// step bound (ReplicaBound.h), under any schedule. Over several
// partitioners (ReplicaChoice.h): another partitioner's pure pipeline beats
// a replicated option that beats its own; the rule holds over Seq-Pipe's
// and Mixed-Pipe's searches of random DAGs; with a sync schedule its step
// ranks the options. A width W tries W identical pipelines alone; zb-auto's
// steps run lists within memory.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Partition/ReplicaSearch.h"
#include "FTPipe/Partition/MixedPipe.h"
#include "FTPipe/Partition/ReplicaChoice.h"
#include "FTPipe/Partition/SeqPipe.h"
#include "FTPipe/Partition/Simulator.h"
#include "FTPipe/Schedule/MemoryCheck.h"

#include "MixedPipeTestUtil.h"

#include <cmath>
#include <limits>

using namespace ftpipe::partition;
using namespace ftpipe::partition::test;
using ftpipe::schedule::ReplicaLayout;

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

/// searchReplicas with greedyPlan as the partitioner.
ReplicaSearchResult searchGreedy(const Graph &graph, const Hardware &hw,
                                 const ObjectiveConfig &config) {
  return unwrap(
      searchReplicas(graph, hw, config, [&](const Hardware &pipeline) {
        return greedyPlan(graph, pipeline, config);
      }));
}

/// 1F1B with SGD (weights and gradients only) and M micro-batches.
ObjectiveConfig sgdOneFOneB(uint32_t microBatches) {
  ObjectiveConfig config;
  config.schedule = Kind::OneFOneB;
  config.optimizer = Optimizer::SGD;
  config.microBatches = microBatches;
  return config;
}

/// W when every device of the option has W replicas, else 0.
uint32_t widthOf(const ReplicaOption &option) {
  const std::vector<int64_t> &r = option.layout.replicas;
  return llvm::all_equal(llvm::ArrayRef(r)) ? uint32_t(r.front()) : 0;
}

/// The option of the even layout of `depth`.
const ReplicaOption &evenOption(const ReplicaSearchResult &result,
                                uint32_t depth, uint32_t processes) {
  for (const ReplicaOption &option : result.options)
    if (option.layout.replicas == evenLayout(depth, processes).replicas)
      return option;
  ADD_FAILURE() << "no option of depth " << depth;
  return result.options.front();
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
  ReplicaSearchResult result = searchGreedy(g, hw, config);
  // Depths 8 down to 1, each with its even layout first; every layout
  // runs on the 8 processes.
  uint32_t depth = 9;
  for (const ReplicaOption &option : result.options) {
    EXPECT_EQ(option.layout.processes(), 8);
    EXPECT_LE(option.depth(), depth);
    if (option.depth() < depth)
      EXPECT_EQ(option.layout.replicas, evenLayout(option.depth(), 8).replicas);
    depth = option.depth();
  }
  EXPECT_EQ(depth, 1u);
  const ReplicaOption &best = result.chosen();
  ASSERT_TRUE(best.feasible);
  // The pure pipeline (the first option) stays unless replicas beat it by
  // kReplicaMinGain; otherwise the fastest option is chosen.
  const ReplicaOption &pureOption = result.options.front();
  if (best.layout.replicated() && pureOption.feasible)
    EXPECT_LT(best.simulatedMsPerMiniBatch,
              pureOption.simulatedMsPerMiniBatch * (1 - kReplicaMinGain));
  double floorMs = best.layout.replicated()
                       ? best.simulatedMsPerMiniBatch
                       : best.simulatedMsPerMiniBatch * (1 - kReplicaMinGain);
  StepBoundFigures figures = stepBoundFigures(g, hw, config);
  for (const ReplicaOption &option : result.options) {
    if (!option.feasible)
      continue;
    EXPECT_LE(floorMs, option.simulatedMsPerMiniBatch)
        << describeLayout(best.layout) << " against "
        << describeLayout(option.layout);
    // The figures are those of the option's plan scored on its own.
    ReplicaOption again =
        unwrap(scoreReplicated(g, hw, option.plan, option.layout, config));
    EXPECT_EQ(again.simulatedMsPerMiniBatch, option.simulatedMsPerMiniBatch);
    EXPECT_EQ(again.objectiveMs, option.objectiveMs);
    // No replicated run beats the busiest replica's share of the compute.
    Hardware pipeline = unwrap(pipelineHardware(hw, option.layout));
    PlanMetrics m = unwrap(evaluatePlan(g, pipeline, option.plan, config));
    for (auto [d, device] : llvm::enumerate(m.devices)) {
      int64_t r = option.layout.replicas[d];
      uint32_t perReplica = (config.microBatches + r - 1) / r;
      EXPECT_GE(option.simulatedMsPerMiniBatch,
                device.computeMs * perReplica * (1 - 1e-9));
    }
    // No option beats the step bound of its layout (any plan), nor a
    // replicated one the lowest over the layouts.
    EXPECT_GE(
        option.simulatedMsPerMiniBatch,
        stepBoundMs(figures, option.layout.replicas, config.microBatches) *
            (1 - 1e-9))
        << describeOption(option);
    if (option.layout.replicated())
      EXPECT_GE(option.simulatedMsPerMiniBatch,
                result.stepBound.ms * (1 - 1e-9))
          << describeOption(option);
    // A chain's replicated options are no faster than the chain bound
    // (ReplicaBound.h): their transfers and all-reduces only add.
    if (family == GraphFamily::Chain && option.layout.replicated()) {
      EXPECT_GE(option.simulatedMsPerMiniBatch,
                result.replicatedBound.ms * (1 - 1e-9))
          << describeOption(option);
    }
  }
  // Never slower than the plan without replicas (replicas=none's: the same
  // partitioner on every device, each once), where it can be scored (a
  // plan that leaves a device empty cannot).
  llvm::Expected<Plan> pure = greedyPlan(g, hw, config);
  ASSERT_TRUE(static_cast<bool>(pure)) << llvm::toString(pure.takeError());
  llvm::Expected<ReplicaOption> none = scoreReplicated(
      g, hw, *pure, ftpipe::schedule::ReplicaLayout::none(8), config);
  if (!none) {
    llvm::consumeError(none.takeError());
    return;
  }
  if (none->feasible) {
    EXPECT_LE(best.simulatedMsPerMiniBatch, none->simulatedMsPerMiniBatch);
  }
  if (family == GraphFamily::Chain) {
    EXPECT_LE(result.pureBoundMs, none->simulatedMsPerMiniBatch * (1 + 1e-9));
  }
}

// Mixed-Pipe's plans put several stages, adjacent or not, on a device
// (paired runs: a chunk of each half of the order), so they are no chains:
// under every synchronous schedule, with and without recomputation, no
// option it makes simulates below the step bound of its layout (async has none:
// its simulated mini-batch is an estimated period, and this test found it below
// the work bound).
TEST_P(ReplicaSearchProperties, MixedPipePlansStayAboveTheStepBound) {
  auto [family, seed] = GetParam();
  Graph g = makeGraph(family, 40, uint64_t(seed) + 28);
  Hardware hw = makeHardware(6);
  ObjectiveConfig config;
  const Kind kinds[] = {Kind::GPipe, Kind::OneFOneB, Kind::ZeroBubbleH1,
                        Kind::ZeroBubbleAuto};
  config.schedule = kinds[seed % 4];
  config.microBatches = 2 + 3 * uint32_t(seed % 3);
  config.recompute = seed % 2 == 0;
  MixedPipeConfig mixed;
  mixed.objective = config;
  ReplicaSearchResult result =
      unwrap(searchReplicas(g, hw, config, [&](const Hardware &pipeline) {
        llvm::Expected<MixedPipeResult> run = runMixedPipe(g, pipeline, mixed);
        if (!run)
          return llvm::Expected<Plan>(run.takeError());
        return llvm::Expected<Plan>(std::move(run->plan));
      }));
  size_t checked = 0;
  for (const ReplicaOption &option : result.options) {
    if (!option.feasible)
      continue;
    ++checked;
    // Recomputation counts where every stage of the plan recomputes.
    StepBoundFigures figures = stepBoundFigures(
        g, hw, config, config.recompute && option.plan.stageRecompute.empty());
    EXPECT_GE(
        option.simulatedMsPerMiniBatch,
        stepBoundMs(figures, option.layout.replicas, config.microBatches) *
            (1 - 1e-9))
        << describeOption(option) << " under " << nameOf(config.schedule).str();
    if (option.layout.replicated())
      EXPECT_GE(option.simulatedMsPerMiniBatch,
                result.stepBound.ms * (1 - 1e-9))
          << describeOption(option);
    // Nor below its own plan's bound (any list of it on its layout), which
    // is at least the layout's.
    EXPECT_GE(option.simulatedMsPerMiniBatch, option.boundMs * (1 - 1e-9))
        << describeOption(option) << " under " << nameOf(config.schedule).str();
    EXPECT_GE(
        option.boundMs * (1 + 1e-9),
        stepBoundMs(figures, option.layout.replicas, config.microBatches) *
            (config.schedule == Kind::Async ? 0.0 : 1.0))
        << describeOption(option);
  }
  EXPECT_GT(checked, 1u);
}

TEST_P(ReplicaSearchProperties, OneChoiceOverSeqPipeAndMixedPipe) {
  auto [family, seed] = GetParam();
  Graph g = makeGraph(family, 40, uint64_t(seed) + 11);
  Hardware hw = makeHardware(4);
  ObjectiveConfig config = sgdOneFOneB(2 + 2 * uint32_t(seed % 3));
  MixedPipeConfig mixed;
  mixed.objective = config;
  auto greedy = [&](const Hardware &pipeline) {
    return greedyPlan(g, pipeline, config);
  };
  auto mixedPipe = [&](const Hardware &pipeline) -> llvm::Expected<Plan> {
    llvm::Expected<MixedPipeResult> run = runMixedPipe(g, pipeline, mixed);
    if (!run)
      return run.takeError();
    return std::move(run->plan);
  };
  ReplicaChoice choice = unwrap(searchReplicasOver(
      g, hw, config, {{"seq-greedy", greedy}, {"mixed-pipe", mixedPipe}}));
  ASSERT_EQ(choice.searches.size(), 2u);
  const ReplicaOption &chosen = choice.chosenOption();
  ASSERT_TRUE(chosen.feasible);
  // Replicas only where they beat every pure pipeline by kReplicaMinGain,
  // then the fastest option of all; else the fastest pure pipeline, which
  // no option beats by kReplicaMinGain.
  double floorMs = chosen.layout.replicated()
                       ? chosen.simulatedMsPerMiniBatch
                       : chosen.simulatedMsPerMiniBatch * (1 - kReplicaMinGain);
  for (const MethodSearch &method : choice.searches) {
    ASSERT_TRUE(method.search) << method.failure;
    for (const ReplicaOption &option : method.search->options) {
      if (!option.feasible)
        continue;
      EXPECT_LE(floorMs * (1 - 1e-9), option.simulatedMsPerMiniBatch)
          << method.method << " " << describeOption(option);
      if (!option.layout.replicated())
        EXPECT_LE(chosen.simulatedMsPerMiniBatch * (1 - 1e-9) *
                      (chosen.layout.replicated() ? 1 - kReplicaMinGain : 1),
                  option.simulatedMsPerMiniBatch)
            << method.method << " " << describeOption(option);
    }
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
  ReplicaSearchResult result = searchGreedy(g, hw, config);
  for (const ReplicaOption &option : result.options)
    EXPECT_TRUE(option.feasible) << option.failure;
  EXPECT_TRUE(result.chosen().layout.replicated());
  EXPECT_LT(result.chosen().simulatedMsPerMiniBatch,
            result.options.front().simulatedMsPerMiniBatch);
  // Data parallel over 4: 2 micro-batches of 24 ms each per replica.
  EXPECT_NEAR(evenOption(result, 1, 4).simulatedMsPerMiniBatch, 48.0, 0.5);
}

TEST(ReplicaSearch, SmallGainsKeepThePurePipeline) {
  // 8 layers of 1 + 2 ms, small weights, fast links, 2 devices: at M = 64
  // the pipeline's fill and drain is about 1.5 % of its step, so 2 replicas
  // of the whole model are faster by less than kReplicaMinGain and the pure
  // pipeline stays; at M = 4 (20 %) the replicas are chosen.
  Graph g = layers(8, 1.0, 2.0, 1000, 1000);
  Hardware hw = uniformHardware(2, 100.0, 1.0);
  ReplicaSearchResult many = searchGreedy(g, hw, sgdOneFOneB(64));
  const ReplicaOption &pure = many.options.front();
  const ReplicaOption &replicas = evenOption(many, 1, 2);
  ASSERT_TRUE(pure.feasible && replicas.feasible);
  EXPECT_LT(replicas.simulatedMsPerMiniBatch, pure.simulatedMsPerMiniBatch);
  EXPECT_GT(replicas.simulatedMsPerMiniBatch,
            pure.simulatedMsPerMiniBatch * (1 - kReplicaMinGain));
  EXPECT_FALSE(many.chosen().layout.replicated())
      << describeOption(many.chosen());
  ReplicaSearchResult few = searchGreedy(g, hw, sgdOneFOneB(4));
  EXPECT_TRUE(few.chosen().layout.replicated()) << describeOption(few.chosen());
}

TEST(ReplicaSearch, WeightsThatNeedEveryDeviceStayAPipeline) {
  // 8 layers of 1 GB weights (Adam: 4 GB each with gradients and state) on
  // 4 devices of 9 GB: only 2 layers fit on a device.
  Graph g = layers(8, 1.0, 2.0, 1000, 1ull << 30);
  Hardware hw = uniformHardware(4, 100.0, 1.0, 9ull << 30);
  ObjectiveConfig config;
  config.schedule = Kind::OneFOneB;
  ReplicaSearchResult result = searchGreedy(g, hw, config);
  EXPECT_FALSE(result.chosen().layout.replicated());
  for (const ReplicaOption &option : result.options)
    if (option.layout.replicated()) {
      EXPECT_FALSE(option.feasible);
      EXPECT_FALSE(option.failure.empty());
    }
}

TEST(ReplicaSearch, ReplicasHoldTheirAllReducesBuffer) {
  // 4 layers of 1 MB weights (SGD: 2 MB with the gradients), 2 a device as
  // 2 x 2: each device keeps 4 MB and a little of activations; its
  // replicas all-reduce each stage's 2 MB of gradients from a copy of them,
  // beside the 4 MB. On devices of 5 MB the plan fits but its replicas do
  // not; on 7 MB they do.
  Graph g = layers(4, 1.0, 2.0, 1000, 1'000'000);
  ObjectiveConfig config = sgdOneFOneB(4);
  ReplicaLayout twoByTwo;
  twoByTwo.replicas = {2, 2};
  for (uint64_t memory : {5'000'000ull, 7'000'000ull}) {
    Hardware hw = uniformHardware(4, 1000.0, 0.0, memory);
    Hardware pipeline = unwrap(pipelineHardware(hw, twoByTwo));
    Plan plan = unwrap(greedyPlan(g, pipeline, config));
    PlanMetrics metrics = unwrap(evaluatePlan(g, pipeline, plan, config));
    EXPECT_TRUE(metrics.memoryFits);
    for (const ftpipe::schedule::DeviceMemoryInputs &inputs :
         metrics.memoryInputs) {
      EXPECT_EQ(ftpipe::schedule::allReduceBufferBytes(inputs, 2), 2'000'000u);
      EXPECT_EQ(ftpipe::schedule::allReduceBufferBytes(inputs, 1), 0u);
    }
    ReplicaOption option =
        unwrap(scoreReplicated(g, hw, plan, twoByTwo, config));
    EXPECT_EQ(option.feasible, memory == 7'000'000ull) << option.failure;
    for (auto [d, bytes] : llvm::enumerate(option.memoryBytes)) {
      const DeviceMetrics &device = metrics.devices[d];
      EXPECT_EQ(bytes, std::max(device.memoryBytes, device.memoryBytes -
                                                        device.activationBytes +
                                                        2'000'000));
    }
    if (!option.feasible)
      EXPECT_NE(option.failure.find("all-reduce buffer"), std::string::npos)
          << option.failure;
  }
}

TEST(ReplicaSearch, SlowLinksPriceTheAllReduce) {
  // 4 layers of 1 + 2 ms with 100 MB of weights each, M = 4: as 4 replicas
  // each device all-reduces 400 MB.
  Graph g = layers(4, 1.0, 2.0, 1000, 100'000'000);
  ObjectiveConfig config;
  config.schedule = Kind::GPipe;
  config.microBatches = 4;
  auto plan = [&](const Hardware &hw) { return searchGreedy(g, hw, config); };
  ReplicaSearchResult fast = plan(uniformHardware(4, 1000.0, 1.0));
  ReplicaSearchResult slow = plan(uniformHardware(4, 1.0, 1.0));
  const ReplicaOption &fastWide = evenOption(fast, 1, 4),
                      &slowWide = evenOption(slow, 1, 4);
  ASSERT_EQ(widthOf(slowWide), 4u);
  // Ring: 2 (r - 1) steps of 400 MB / 4 over a 1 GB/s link (1e6 bytes/ms).
  EXPECT_NEAR(slowWide.allReduceMs, 6 * 100.0 + 6 * 1e-3, 1e-6);
  EXPECT_NEAR(slowWide.objectiveMs,
              fastWide.objectiveMs - fastWide.allReduceMs / 4 +
                  slowWide.allReduceMs / 4,
              1e-6);
  EXPECT_GE(slowWide.simulatedMsPerMiniBatch,
            fastWide.simulatedMsPerMiniBatch + 600.0 - 1.0);
  EXPECT_EQ(widthOf(fast.chosen()), 4u);
  EXPECT_NE(widthOf(slow.chosen()), 4u);
}

TEST(ReplicaSearch, CutForOverlapSplitsOneStageReplicatedDevices) {
  Graph g = layers(8, 1.0, 2.0, 1000, 2'000'000);
  Plan whole = Plan::singleStage(8);
  Plan cut = cutForOverlap(g, whole, ReplicaLayout{{2}}, 4);
  // Equal backward shares, the later nodes in the new stages, all on the
  // device.
  EXPECT_EQ(cut.nodeStage, (std::vector<StageId>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(cut.stageDevice, (std::vector<DeviceId>{0, 0, 0, 0}));
  // Not replicated, fewer nodes than parts, or several stages: unchanged.
  EXPECT_EQ(cutForOverlap(g, whole, ReplicaLayout{{1}}, 4), whole);
  EXPECT_EQ(cutForOverlap(g, whole, ReplicaLayout{{2}}, 9), whole);
  EXPECT_EQ(cutForOverlap(g, cut, ReplicaLayout{{2}}, 2), cut);
  // On every device: of several stages, the one whose backward ends last
  // (the earliest nodes) is cut, its later node in a new stage.
  Plan again = cutForOverlap(g, cut, ReplicaLayout{{2}}, 2, true);
  EXPECT_EQ(again.nodeStage, (std::vector<StageId>{0, 4, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(again.stageDevice, (std::vector<DeviceId>(5, 0)));
  EXPECT_EQ(cutForOverlap(g, cut, ReplicaLayout{{2}}, 3, true), cut);
  EXPECT_EQ(cutForOverlap(g, whole, ReplicaLayout{{2}}, 4, true), cut);
}

TEST(ReplicaSearch, OneStageReplicasAreCutSoTheirAllReduceOverlaps) {
  // 8 layers of 1 + 2 ms with 2 MB of weights each on 2 devices at 1 GB/s,
  // GPipe, M = 4. The pure pipeline of depth 2 takes about (4 + 1) x 12 =
  // 60 ms; the whole model twice, 2 x 24 ms, plus its 16 ms all-reduce
  // after the whole backward, 64; cut in 4 stages on the device, the
  // all-reduce of each 4 MB part runs while the earlier parts' backwards
  // do, and the step ends about 4 ms after the backward.
  Graph g = layers(8, 1.0, 2.0, 1000, 2'000'000);
  ObjectiveConfig config;
  config.schedule = Kind::GPipe;
  config.microBatches = 4;
  ReplicaSearchResult result = unwrap(searchReplicas(
      g, uniformHardware(2, 1.0), config, [&](const Hardware &pipeline) {
        return greedyPlan(g, pipeline, config);
      }));
  const ReplicaOption &uncut = evenOption(result, 1, 2);
  const ReplicaOption *pure = nullptr, *cut = nullptr;
  for (const ReplicaOption &option : result.options) {
    if (option.depth() == 2)
      pure = &option;
    if (option.cutParts == 4)
      cut = &option;
  }
  ASSERT_TRUE(pure && cut && uncut.feasible && cut->feasible);
  EXPECT_EQ(uncut.cutParts, 0u);
  EXPECT_EQ(cut->plan.numStages(), 4u);
  EXPECT_EQ(describeOption(*cut), "2 (cut in 4)");
  EXPECT_GT(uncut.simulatedMsPerMiniBatch, pure->simulatedMsPerMiniBatch);
  EXPECT_LT(cut->simulatedMsPerMiniBatch, pure->simulatedMsPerMiniBatch);
  EXPECT_LT(cut->objectiveMs, uncut.objectiveMs);
  EXPECT_EQ(result.chosen().cutParts, 4u);
}

/// searchReplicas over 8 layers of 1 + 2 ms (1000 bytes of weights each) on
/// 4 alike devices of `memoryBytes`, 1F1B, M = 4, SGD, with Seq-Pipe
/// greedy's plans and the `replicas` requested.
static llvm::Expected<ReplicaSearchResult>
searchEightLayers(llvm::ArrayRef<int64_t> replicas,
                  uint64_t memoryBytes = 1ull << 50) {
  Graph g = layers(8, 1.0, 2.0, 1000, 1000);
  ObjectiveConfig config = sgdOneFOneB(4);
  return searchReplicas(
      g, uniformHardware(4, 1000.0, 0.0, memoryBytes), config,
      [&](const Hardware &pipeline) { return greedyPlan(g, pipeline, config); },
      replicas);
}

TEST(ReplicaSearch, AWidthTriesItsIdenticalPipelinesAlone) {
  // With a width of 2 every option is 2 pipelines of depth 2 (the even
  // layout, its cuts and its uneven plans; no other depth, no per-device
  // layout), and the fastest of them is chosen although the search over
  // every layout chooses another.
  ReplicaSearchResult two = unwrap(searchEightLayers({2}));
  ASSERT_FALSE(two.options.empty());
  for (const ReplicaOption &option : two.options) {
    EXPECT_EQ(option.layout.replicas, (std::vector<int64_t>{2, 2}));
    if (option.feasible)
      EXPECT_GE(option.rankMs(), two.chosen().rankMs());
  }
  EXPECT_TRUE(two.chosen().feasible);
  ReplicaSearchResult any = unwrap(searchEightLayers({}));
  EXPECT_NE(any.chosen().layout.replicas, two.chosen().layout.replicas);
  // Width 1 is the pure pipeline alone.
  ReplicaSearchResult one = unwrap(searchEightLayers({1}));
  ASSERT_EQ(one.options.size(), 1u);
  EXPECT_EQ(one.chosen().layout.replicas, (std::vector<int64_t>(4, 1)));
  // A width that does not divide the devices is refused, as is one whose
  // pipelines do not fit: 4 layers' weights and gradients (8000 bytes) on a
  // device of 6000, where the pure pipeline's 2 layers (4000) fit.
  EXPECT_EQ(message(searchEightLayers({3}).takeError()),
            "3 identical pipelines do not divide the 4 devices: each needs 4 "
            "/ 3 of them");
  EXPECT_NE(message(searchEightLayers({8}).takeError()), "");
  EXPECT_TRUE(unwrap(searchEightLayers({1}, 6000)).chosen().feasible);
  std::string tooLarge = message(searchEightLayers({2}, 6000).takeError());
  EXPECT_EQ(tooLarge.rfind("2 identical pipelines of depth 2 are not "
                           "feasible:\n  2 x 2: ",
                           0),
            0u)
      << tooLarge;
}

TEST(ReplicaSearch, AFactorPerDeviceTriesThatLayoutAlone) {
  // Factors per plan device (the passes' replicas=1,2,1) try that layout
  // alone: its pipeline of 3 devices, its cuts and its uneven plans, each
  // checked for memory as those replicas; 2,2 is the width 2's layout.
  // Factors that do not add up to the devices, or a factor of 0, are
  // refused, as is a layout whose pipeline does not fit (8 layers' weights
  // and gradients, 16000 bytes, on 2 devices of 6000).
  ReplicaSearchResult spread = unwrap(searchEightLayers({1, 2, 1}));
  ASSERT_FALSE(spread.options.empty());
  for (const ReplicaOption &option : spread.options) {
    EXPECT_EQ(option.layout.replicas, (std::vector<int64_t>{1, 2, 1}));
    EXPECT_FALSE(option.memoryBytes.empty());
  }
  EXPECT_TRUE(spread.chosen().feasible);
  ReplicaSearchResult even = unwrap(searchEightLayers({2, 2}));
  ReplicaSearchResult width = unwrap(searchEightLayers({2}));
  ASSERT_EQ(even.options.size(), width.options.size());
  for (auto [a, b] : llvm::zip(even.options, width.options)) {
    EXPECT_EQ(a.layout.replicas, b.layout.replicas);
    EXPECT_EQ(a.simulatedMsPerMiniBatch, b.simulatedMsPerMiniBatch);
  }
  EXPECT_EQ(message(searchEightLayers({1, 2}).takeError()),
            "the layout 1,2 runs 3 processes, not the 4 devices");
  EXPECT_NE(message(searchEightLayers({0, 4}).takeError()), "");
  std::string tooLarge = message(searchEightLayers({3, 1}, 6000).takeError());
  EXPECT_EQ(tooLarge.rfind("the layout 3,1 is not feasible:\n  2 x 3,1: ", 0),
            0u)
      << tooLarge;
}

TEST(ReplicaSearch, MemoryCheckIsTheSearchsCheck) {
  // schedule::checkMemory, which ftpipe-compile applies to a layout given
  // for a plan made already and ftpipe-run to its setup, is the memory every
  // option of the search is scored by: the largest of the plan's, the
  // replayed lists' and the weights' state with the all-reduce buffer, and
  // the first device over its budget named.
  Graph g = layers(8, 1.0, 2.0, 1000, 1000);
  ObjectiveConfig config = sgdOneFOneB(4);
  Hardware hw = uniformHardware(4, 1000.0);
  ReplicaLayout layout;
  layout.replicas = {1, 2, 1};
  Hardware pipeline = unwrap(pipelineHardware(hw, layout));
  Plan p = unwrap(greedyPlan(g, pipeline, config));
  ReplicaOption scored = unwrap(scoreReplicated(g, hw, p, layout, config));
  PlanMetrics metrics = unwrap(evaluatePlan(g, pipeline, p, config));
  StageGraph sg = unwrap(buildStageGraph(g, pipeline, p, config));
  std::vector<uint64_t> planned;
  for (const DeviceMetrics &device : metrics.devices)
    planned.push_back(device.memoryBytes);
  ftpipe::schedule::MemoryCheck memory =
      ftpipe::schedule::checkMemory(sg.topology(3), metrics.memoryInputs,
                                    trainingSetupOf(config), layout, planned);
  std::vector<uint64_t> bytes;
  for (const ftpipe::schedule::DeviceNeed &need : memory.devices)
    bytes.push_back(need.bytes);
  EXPECT_EQ(bytes, scored.memoryBytes);
  EXPECT_TRUE(memory.fits());
  for (auto [d, figure] : llvm::enumerate(bytes))
    EXPECT_GE(figure, planned[d]);
  // Under a budget one byte below the fullest device's figure, that device
  // is named.
  uint64_t fullest = *llvm::max_element(bytes);
  size_t device = llvm::find(bytes, fullest) - bytes.begin();
  std::vector<ftpipe::schedule::DeviceMemoryInputs> tight =
      metrics.memoryInputs;
  for (ftpipe::schedule::DeviceMemoryInputs &inputs : tight)
    inputs.budgetBytes = fullest - 1;
  ftpipe::schedule::MemoryCheck refused = ftpipe::schedule::checkMemory(
      sg.topology(3), tight, trainingSetupOf(config), layout, planned);
  EXPECT_EQ(refused.failure.rfind(
                "does not fit in memory as replicas 1,2,1: device " +
                    std::to_string(device) + " needs " +
                    std::to_string(fullest) + " bytes of its " +
                    std::to_string(fullest - 1) + " bytes",
                0),
            0u)
      << refused.failure;
}

TEST(ReplicaSearch, ZeroBubbleAutoStepsRunListsWithinMemory) {
  // The step of an option under sync-schedule zb-auto is that of zb-auto's
  // lists within each device's memory, as the unreplicated candidates'
  // (synchronousStepMs) and ftpipe-run's: on 8 layers that split their
  // backward (I 1 ms, W 1 ms) with 1000 bytes of activations each, on 4
  // devices, M = 8, over budgets from ample to tight, the pure pipeline's
  // step equals synchronousStepMs of its plan, and under some budget it is
  // longer than that of zb-auto's lists with no memory bound (which the
  // search ranked by before).
  GraphBuilder b;
  for (int i = 0; i < 8; ++i)
    b.addNode("layer" + std::to_string(i), "test.op",
              {1.0, 2.0, 1000, 1000, 1.0});
  for (int i = 0; i + 1 < 8; ++i)
    b.addValue(NodeId(i), 1000, {NodeId(i + 1)}, true);
  Graph g = unwrap(b.build());
  ObjectiveConfig config = sgdOneFOneB(8);
  ObjectiveConfig zbAuto = config;
  zbAuto.schedule = Kind::ZeroBubbleAuto;
  int bound = 0;
  for (uint64_t budget = 4000; budget <= 40000; budget += 2000) {
    Hardware hw = uniformHardware(4, 1000.0, 0.0, budget);
    llvm::Expected<ReplicaSearchResult> search = searchReplicas(
        g, hw, config,
        [&](const Hardware &pipeline) {
          return greedyPlan(g, pipeline, config);
        },
        /*width=*/1, Kind::ZeroBubbleAuto);
    if (!search) {
      llvm::consumeError(search.takeError());
      continue;
    }
    const ReplicaOption &pure = search->chosen();
    double step =
        synchronousStepMs(g, hw, pure.plan, config, Kind::ZeroBubbleAuto);
    EXPECT_EQ(pure.syncStepMs, step) << budget;
    double unbounded =
        unwrap(simulatePlan(g, hw, pure.plan, zbAuto, false)).msPerMiniBatch;
    EXPECT_GE(pure.syncStepMs, unbounded - 1e-9) << budget;
    bound += pure.syncStepMs > unbounded + 1e-9;
  }
  EXPECT_GT(bound, 0);
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
  Hardware pipeline = unwrap(pipelineHardware(hw, evenLayout(2, 4)));
  ASSERT_EQ(pipeline.numDevices(), 2u);
  EXPECT_EQ(pipeline.device(0).name, "big");
  EXPECT_EQ(pipeline.device(1).name, "small");
  // 1,1,2: the plan's devices on big, big and the two small ones.
  ftpipe::schedule::ReplicaLayout perDevice;
  perDevice.replicas = {1, 1, 2};
  pipeline = unwrap(pipelineHardware(hw, perDevice));
  ASSERT_EQ(pipeline.numDevices(), 3u);
  EXPECT_EQ(pipeline.device(1).name, "big");
  EXPECT_EQ(pipeline.device(2).name, "small");
  // Width 4 would replicate a big device on small ones.
  std::string error =
      message(pipelineHardware(hw, evenLayout(1, 4)).takeError());
  EXPECT_NE(error.find("replicas must be alike"), std::string::npos) << error;
  error = message(pipelineHardware(hw, evenLayout(2, 6)).takeError());
  EXPECT_NE(error.find("need 6 devices"), std::string::npos) << error;
}

TEST(ReplicaSearch, EvenLayouts) {
  EXPECT_EQ(evenLayout(3, 8).replicas, (std::vector<int64_t>{3, 3, 2}));
  EXPECT_EQ(evenLayout(4, 8).replicas, (std::vector<int64_t>{2, 2, 2, 2}));
  EXPECT_EQ(describeLayout(evenLayout(4, 8)), "2");
  EXPECT_EQ(describeLayout(evenLayout(3, 8)), "3,3,2");
}

TEST(ReplicaSearch, ABottleneckStageIsReplicatedAlone) {
  // Three layers, the middle one 4 times the others' work, each with
  // weights that fill most of a device: each device holds one layer (SGD:
  // weights and gradients), so only depth 3 fits, on 4 devices. The even
  // layout 2,1,1 replicates the first layer, still waiting for the middle
  // one; PipeDream's rule gives the spare device to the middle: 1,2,1.
  GraphBuilder b;
  double work[] = {1.0, 4.0, 1.0};
  for (int i = 0; i < 3; ++i) {
    NodeId node = b.addNode("layer" + std::to_string(i), "test.op",
                            {work[i], 2 * work[i], 0, 1000});
    b.addParamUse(node, b.addParam("w" + std::to_string(i), 1'000'000));
  }
  for (int i = 0; i + 1 < 3; ++i)
    b.addValue(NodeId(i), 1000, {NodeId(i + 1)}, true);
  Graph g = unwrap(b.build());
  Hardware hw = uniformHardware(4, 100.0, 1.0, 3'000'000);
  ObjectiveConfig config = sgdOneFOneB(8);
  ReplicaSearchResult result = searchGreedy(g, hw, config);
  const ReplicaOption &chosen = result.chosen();
  ASSERT_TRUE(chosen.feasible) << chosen.failure;
  EXPECT_EQ(chosen.layout.replicas, (std::vector<int64_t>{1, 2, 1}));
  const ReplicaOption &even = evenOption(result, 3, 4);
  ASSERT_TRUE(even.feasible) << even.failure;
  // The middle layer's 8 x 12 ms halved, against the whole of it.
  EXPECT_LT(chosen.simulatedMsPerMiniBatch, 0.7 * even.simulatedMsPerMiniBatch);
  for (const ReplicaOption &option : result.options)
    if (option.depth() < 3)
      EXPECT_FALSE(option.feasible) << describeLayout(option.layout);
}

TEST(ReplicaSearch, MemoryCapByHand) {
  // 4 layers of 1 + 2 ms with 1000 bytes of weights (SGD: 2000 with the
  // gradients): 5000 bytes hold two layers and half of a third.
  Graph g = layers(4, 1.0, 2.0, 1000, 1000);
  ObjectiveConfig config;
  config.optimizer = Optimizer::SGD;
  EXPECT_DOUBLE_EQ(memoryCapMs(g, config, 5000, false), 7.5);
  // Recomputing adds each forward again: 2.5 x 4 ms.
  EXPECT_DOUBLE_EQ(memoryCapMs(g, config, 5000, true), 10.0);
  // Adam's two states: 4000 bytes a layer.
  config.optimizer = Optimizer::Adam;
  EXPECT_DOUBLE_EQ(memoryCapMs(g, config, 5000, false), 3.75);
  // Reserved bytes leave less room; everything fitting leaves no cap.
  config.reservedBytesPerDevice = 1000;
  EXPECT_DOUBLE_EQ(memoryCapMs(g, config, 5000, false), 3.0);
  EXPECT_EQ(memoryCapMs(g, config, 17000, false),
            std::numeric_limits<double>::infinity());
  // A node without weights costs no memory: it comes first, whole.
  GraphBuilder b;
  NodeId heavy = b.addNode("heavy", "test.op", {1.0, 2.0, 0, 1000});
  b.addParamUse(heavy, b.addParam("w", 1000));
  NodeId free = b.addNode("free", "test.op", {10.0, 20.0, 0, 1000});
  b.addValue(heavy, 1000, {free}, true);
  config = ObjectiveConfig();
  config.optimizer = Optimizer::SGD;
  EXPECT_DOUBLE_EQ(memoryCapMs(unwrap(b.build()), config, 1000, false), 31.5);
}

TEST(ReplicaSearch, UnevenPipelinesFillTheBubbles) {
  // 12 layers of 1 + 2 ms, 1 MB of weights each (SGD: 2 MB with the
  // gradients, and a replicated device's all-reduce works on a copy of a
  // stage's gradients) on 8 devices of 23 MB: the model needs 2 devices. 4
  // pipelines of depth 2 have 2 of the M = 8 micro-batches each (1F1B:
  // F F B B on the first device, F B F B on the second). Balanced, 6
  // layers a device: the first device's backwards wait for the second's,
  // 54 ms. The chain bound's shares are 2/3 and 1/3; half-way (speeds in
  // the ratio sqrt(1/2)) the first device takes 7 layers, the second 5:
  // its first backward is back at 22 ms, and the first device's
  // backwards run 22-36 and 37-51: 51 ms.
  Graph g = layers(12, 1.0, 2.0, 1000, 1'000'000);
  Hardware hw = uniformHardware(8, 1000.0, 0.0, 23'000'000);
  ObjectiveConfig config = sgdOneFOneB(8);
  ReplicaSearchResult result = searchGreedy(g, hw, config);
  const ReplicaOption &balanced = evenOption(result, 2, 8);
  const ReplicaOption *uneven = nullptr;
  for (const ReplicaOption &option : result.options)
    if (option.uneven == 0.5 &&
        option.layout.replicas == balanced.layout.replicas && !option.cutParts)
      uneven = &option;
  ASSERT_TRUE(uneven && balanced.feasible && uneven->feasible);
  EXPECT_EQ(describeOption(*uneven), "4 uneven");
  EXPECT_EQ(uneven->plan.stageDevice, (std::vector<DeviceId>{0, 1}));
  EXPECT_EQ(llvm::count(uneven->plan.nodeStage, 0), 7);
  EXPECT_NEAR(balanced.simulatedMsPerMiniBatch, 54.0, 0.5);
  EXPECT_NEAR(uneven->simulatedMsPerMiniBatch, 51.0, 0.5);
  EXPECT_LE(result.chosen().simulatedMsPerMiniBatch,
            uneven->simulatedMsPerMiniBatch);
  // The share-weighted devices: the second at sqrt(1/2) of the first's
  // speed, with its memory.
  Hardware weighted = unwrap(shareWeightedHardware(
      unwrap(pipelineHardware(hw, balanced.layout)), balanced.layout, 8));
  EXPECT_DOUBLE_EQ(weighted.device(1).tflops,
                   weighted.device(0).tflops * std::sqrt(0.5));
  EXPECT_EQ(weighted.device(1).memoryBytes, hw.device(1).memoryBytes);
}

} // namespace

namespace {
/// A search of the given options: simulated ms and replicas (1: none).
MethodSearch searchOf(std::string method,
                      std::vector<std::pair<double, int64_t>> options) {
  MethodSearch search;
  search.method = std::move(method);
  search.search.emplace();
  for (auto [ms, replicas] : options) {
    ReplicaOption option;
    option.layout.replicas = {replicas, replicas};
    option.feasible = true;
    option.simulatedMsPerMiniBatch = ms;
    search.search->options.push_back(std::move(option));
  }
  return search;
}
} // namespace

TEST(ReplicaChoice, AnotherPartitionersPurePipelineBeatsReplicas) {
  // Mixed-Pipe's replicated option (110 ms) beats its own pure pipeline
  // (130 ms) by 15 %, but not Seq-Pipe's (100 ms): Seq-Pipe's pure pipeline
  // is chosen, although Seq-Pipe's own replicas (98 ms) are faster by 2 %.
  ReplicaChoice choice = unwrap(
      chooseReplicas({searchOf("seq-greedy", {{100.0, 1}, {98.0, 2}}),
                      searchOf("mixed-pipe", {{130.0, 1}, {110.0, 2}})}));
  EXPECT_EQ(choice.chosenMethod(), "seq-greedy");
  EXPECT_EQ(choice.chosen.option, 0u);
  EXPECT_FALSE(choice.chosenOption().layout.replicated());
  ASSERT_TRUE(choice.bestReplicated);
  EXPECT_EQ(choice.bestReplicated->method, 0u);
  EXPECT_EQ(choice.bestReplicated->option, 1u);
  // Each search's own fastest.
  const MethodSearch &mixed = choice.searches[1];
  ASSERT_TRUE(mixed.bestPure && mixed.bestReplicated);
  EXPECT_EQ(*mixed.bestPure, 0u);
  EXPECT_EQ(*mixed.bestReplicated, 1u);
  // Mixed-Pipe alone chooses its replicas.
  ReplicaChoice alone = unwrap(
      chooseReplicas({searchOf("mixed-pipe", {{130.0, 1}, {110.0, 2}})}));
  EXPECT_EQ(alone.chosen.option, 1u);
}

TEST(ReplicaChoice, ReplicasThatBeatEveryPurePipelineWin) {
  // Mixed-Pipe's replicas (90 ms) beat Seq-Pipe's pure pipeline (100 ms) by
  // 10 %; an infeasible faster option and a failed search count for none.
  MethodSearch failed;
  failed.method = "seq-dp";
  failed.failure = "no plan";
  MethodSearch mixed =
      searchOf("mixed-pipe", {{120.0, 1}, {90.0, 2}, {50.0, 2}});
  mixed.search->options[2].feasible = false;
  ReplicaChoice choice = unwrap(chooseReplicas(
      {failed, searchOf("seq-greedy", {{100.0, 1}}), std::move(mixed)}));
  EXPECT_EQ(choice.chosenMethod(), "mixed-pipe");
  EXPECT_EQ(choice.chosen.option, 1u);
  ASSERT_TRUE(choice.bestPure);
  EXPECT_EQ(choice.bestPure->method, 1u);
  // At 96 ms they gain 4 %: the pure pipeline stays.
  ReplicaChoice small =
      unwrap(chooseReplicas({searchOf("seq-greedy", {{100.0, 1}}),
                             searchOf("mixed-pipe", {{120.0, 1}, {96.0, 2}})}));
  EXPECT_EQ(small.chosenMethod(), "seq-greedy");
  // Replicas alone, and nothing feasible.
  EXPECT_EQ(unwrap(chooseReplicas({searchOf("m", {{90.0, 2}})})).chosen.option,
            0u);
  llvm::Error none = chooseReplicas({failed}).takeError();
  ASSERT_TRUE(bool(none));
  EXPECT_NE(llvm::toString(std::move(none)).find("seq-dp: no plan"),
            std::string::npos);
}

TEST(ReplicaChoice, TheSyncStepRanksTheOptions) {
  // Under the async schedule the pure pipeline (100 ms) and the replicas
  // (99 ms) are alike, so the pipeline stays; the synchronous step the plan
  // will run under (syncStepMs: 175 ms against 100 ms) makes the replicas
  // win, and an option that cannot run it (an infinite step) is never
  // chosen over one that can.
  MethodSearch search = searchOf("seq-greedy", {{100.0, 1}, {99.0, 2}});
  ReplicaChoice async = unwrap(chooseReplicas({search}));
  EXPECT_EQ(async.chosen.option, 0u);
  search.search->options[0].syncStepMs = 175.0;
  search.search->options[1].syncStepMs = 100.0;
  ReplicaChoice sync = unwrap(chooseReplicas({search}));
  EXPECT_EQ(sync.chosen.option, 1u);
  EXPECT_DOUBLE_EQ(sync.chosenOption().rankMs(), 100.0);
  search.search->options[1].syncStepMs =
      std::numeric_limits<double>::infinity();
  EXPECT_EQ(unwrap(chooseReplicas({search})).chosen.option, 0u);
}
